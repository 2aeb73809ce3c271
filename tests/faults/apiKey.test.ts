import { describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../provider/emulator/index.js";
import { fingerprint } from "../../provider/api/redact.js";
import { apiKey, startFresh, type ApiKeyOutputs } from "../../provider/runtime/index.js";
import { cleanFailure, only, retryWaits, statuses, useFaultEmulator } from "../support/faults.js";
import type { SecretLedger } from "../support/secrets.js";
import { checkedInputs } from "../support/check.js";

// The ApiKey provider's methods under each fault the emulator injects. A "re-run" is the same method called
// again with the state the engine would have: none after a failed create, the old outputs after a failed update.

let emu: Emulator;
let ledger: SecretLedger;

// Every test removes what it made: no key is left behind by any fault.
useFaultEmulator(
  (c) => ({ emu, ledger } = c),
  (e) => e.state.listKeys().map((r) => r.alias),
);

type Props = Record<string, unknown>;
type Created = { id: string; outs: ApiKeyOutputs };

const inputs = (news: Props) => checkedInputs(apiKey, news);

async function create(news: Props): Promise<Created> {
  const created = await apiKey.create(await inputs(news));
  ledger.record(created.outs.key);
  ledger.expectCleanOutputs(created.outs);
  return created;
}

async function update(k: Created, news: Props): Promise<Created> {
  const { outs } = await apiKey.update(k.id, k.outs, await inputs(news));
  ledger.expectCleanOutputs(outs);
  return { id: k.id, outs };
}

async function remove(...keys: Created[]): Promise<void> {
  await Promise.all(keys.map((k) => apiKey.delete(k.id, k.outs)));
}

/** A failure, checked to hold no secret in any form. */
const failed = (op: () => Promise<unknown>) => cleanFailure(ledger, op);

/** The keys the platform holds with this alias (what a look in the web console would show). */
function live(alias: string) {
  return emu.state.listKeys().filter((k) => k.alias === alias);
}

/** The platform holds exactly the keys of these resources under the alias: none missing, none extra. */
function expectExactly(alias: string, keys: Created[]): void {
  // Compared by fingerprint: a failure message must not print a key.
  expect(
    live(alias)
      .map((k) => fingerprint(k.key))
      .sort(),
  ).toEqual(keys.map((k) => fingerprint(k.outs.key)).sort());
}

const ALL_OPS = ["api-key/create", "api-key/status", "api-key/edit", "api-key/get", "api-key/delete"];

describe("ApiKey under rate-limit storms", () => {
  test("429s with Retry-After on every operation: each call waits for the hint and is sent again; the lifecycle completes, every write lands once", async () => {
    emu.setFaults(ALL_OPS.map((op) => only([op], { kind: "429", count: 3 })));
    const k = await create({ alias: "storm", enabled: false });
    expectExactly("storm", [k]);
    const changed = await update(k, { alias: "storm-2", enabled: true });
    const read = await apiKey.read(k.id, changed.outs);
    expect(read.props).toEqual(changed.outs);
    await remove({ id: k.id, outs: read.props as unknown as ApiKeyOutputs });
    expect(statuses(emu)).toEqual({
      "api-key/create 429": 3,
      "api-key/create 200": 1,
      "api-key/status 429": 3,
      "api-key/status 200": 2,
      "api-key/edit 429": 3,
      "api-key/edit 200": 1,
      "api-key/get 429": 3,
      // The update's get before its edit (an edit replaces the whole config), and the read's.
      "api-key/get 200": 2,
      "api-key/delete 429": 3,
      "api-key/delete 200": 1,
    });
    expectExactly("storm-2", []);
  });

  test("429s without Retry-After: the client backs off on its own, then the create lands once", async () => {
    emu.setFaults([only(["api-key/create"], { kind: "429", count: 3, retryAfter: false })]);
    retryWaits.splice(0);
    const k = await create({ alias: "storm-no-hint" });
    expect(statuses(emu)).toEqual({ "api-key/create 429": 3, "api-key/create 200": 1 });
    // Exponential backoff from 200 ms, jittered down to half at most: not a tight loop.
    const waits = retryWaits;
    expect(waits).toHaveLength(3);
    expect(waits[0]).toBeGreaterThanOrEqual(100);
    expect(waits[1]).toBeGreaterThanOrEqual(200);
    expect(waits[2]).toBeGreaterThanOrEqual(400);
    expectExactly("storm-no-hint", [k]);
    await remove(k);
  });

  test("a storm that does not end: the create fails with a clear 429 after its retries, nothing was created, and the re-run converges", async () => {
    emu.setFaults([only(["api-key/create"], { kind: "429" })]);
    const err = await failed(() => create({ alias: "endless" }));
    expect(err.name).toBe("RateLimitError");
    expect(err.message).toMatch(/^429 rate_limited: .+ \(POST api-key\/create\)$/);
    expect(statuses(emu)).toEqual({ "api-key/create 429": 12 });
    expectExactly("endless", []);

    emu.setFaults([]);
    const k = await create({ alias: "endless" });
    expectExactly("endless", [k]);
    await remove(k);
  });
});

describe("ApiKey under server errors", () => {
  test("5xx on reads: a refresh retries through a 500 and a 503; a 5xx that lasts fails naming status and operation, the state is left as it was, and the re-run converges", async () => {
    const k = await create({ alias: "reads" });
    emu.clearRequests();
    emu.setFaults([only(["api-key/get"], { kind: "500", count: 1 }), only(["api-key/get"], { kind: "503", count: 1 })]);
    expect((await apiKey.read(k.id, k.outs)).props).toEqual(k.outs);
    expect(statuses(emu)).toEqual({ "api-key/get 500": 1, "api-key/get 503": 1, "api-key/get 200": 1 });

    emu.clearRequests();
    emu.setFaults([only(["api-key/get"], { kind: "503" })]);
    const err = await failed(() => apiKey.read(k.id, k.outs));
    expect(err.name).toBe("ServerError");
    expect(err.message).toMatch(/^503 service_unavailable: .+ \(POST api-key\/get\)$/);
    expect(statuses(emu)).toEqual({ "api-key/get 503": 4 });
    expectExactly("reads", [k]);

    emu.setFaults([]);
    expect((await apiKey.read(k.id, k.outs)).props).toEqual(k.outs);
    await remove(k);
  });

  test("5xx on edit, status and delete (writes that set a state): retried, and applied once", async () => {
    const k = await create({ alias: "writes" });
    emu.clearRequests();
    emu.setFaults(
      ["api-key/edit", "api-key/status", "api-key/delete"].map((op) => only([op], { kind: "500", count: 2 })),
    );
    const changed = await update(k, { alias: "writes-2", enabled: false });
    expect(emu.state.getKey(k.outs.key)).toMatchObject({ alias: "writes-2", enabled: false });
    await remove(changed);
    expect(statuses(emu)).toEqual({
      "api-key/get 200": 1,
      "api-key/edit 500": 2,
      "api-key/edit 200": 1,
      "api-key/status 500": 2,
      "api-key/status 200": 1,
      "api-key/delete 500": 2,
      "api-key/delete 200": 1,
    });
    expectExactly("writes-2", []);
  });

  test("a 5xx on create is never retried: the error says the key may exist and how to find it; here none was made, and the re-run converges", async () => {
    emu.setFaults([only(["api-key/create"], { kind: "500", count: 1 })]);
    const err = await failed(() => create({ alias: "create-500" }));
    expect(err.mayHaveSucceeded).toBe(true);
    expect(err.message).toMatch(
      /^500 internal_error: .*the key may have been created although no answer came back \(POST api-key\/create\)\. The API cannot list keys: look in the web console .*alias .*adoptKey`$/,
    );
    expect(statuses(emu)).toEqual({ "api-key/create 500": 1 });
    expectExactly("create-500", []);

    const k = await create({ alias: "create-500" });
    expectExactly("create-500", [k]);
    await remove(k);
  });

  test("declared disabled and the status call fails for good: the new key is deleted again, nothing is left, and the re-run converges", async () => {
    emu.setFaults([only(["api-key/status"], { kind: "503" })]);
    const err = await failed(() => create({ alias: "disable-fails", enabled: false }));
    expect(err.message).toMatch(/created but could not be disabled, so it was deleted again; nothing is left behind/);
    expect(err.message).toMatch(/503 service_unavailable/);
    expectExactly("disable-fails", []);

    emu.setFaults([]);
    const k = await create({ alias: "disable-fails", enabled: false });
    expect(emu.state.getKey(k.outs.key)?.enabled).toBe(false);
    expectExactly("disable-fails", [k]);
    await remove(k);
  });

  test.each([
    ["answered with a body it cannot read", { kind: "wrong-type" as const, count: 1 }, { "api-key/delete 200": 1 }],
    // The retry after the lost answer finds the key gone (404).
    [
      "unanswered after it took effect",
      { kind: "drop-after" as const, count: 1 },
      { "api-key/delete 0": 1, "api-key/delete 404": 1 },
    ],
    // Every answer lost (the first try took effect): one get finds it gone.
    [
      "unanswered at every try",
      { kind: "drop-after" as const, rate: 1 },
      { "api-key/delete 0": 4, "api-key/get 404": 1 },
    ],
  ])(
    "declared disabled, the status answer unreadable, and the delete that undoes the key %s: the key is gone, so nothing is kept in the state",
    async (_, deleteFault, deleteCalls) => {
      // Before, any failure of that delete kept the key in the state: a later run without refresh then held a key
      // that did not exist (the soak's seed 424242, history 477: a rotation kept it as the previous key).
      emu.setFaults([
        only(["api-key/status"], { kind: "wrong-type", count: 1 }),
        only(["api-key/delete"], deleteFault),
      ]);
      const err = await failed(() => create({ alias: "undone", enabled: false }));
      expect(err.message).toMatch(/created but could not be disabled, so it was deleted again; nothing is left behind/);
      expect(err.properties).toBeUndefined();
      expectExactly("undone", []);
      const calls = statuses(emu);
      expect(
        Object.fromEntries(
          Object.entries(calls).filter(([op]) => op.startsWith("api-key/delete") || op.startsWith("api-key/get")),
        ),
      ).toEqual(deleteCalls);
    },
  );

  test("declared disabled, and both status and delete fail: the key is recorded as created-but-failed, and the next update disables it", async () => {
    emu.setFaults([only(["api-key/status", "api-key/delete"], { kind: "503" })]);
    const news = await inputs({ alias: "half-made", enabled: false });
    const err = await failed(() => apiKey.create(news));
    expect(err.message).toMatch(
      /created but could not be disabled .*kept in the state and the next update disables it/,
    );
    // What the engine records (not enumerable: never in JSON or logs of the error).
    const id = err.id as string;
    const recorded = err.properties as ApiKeyOutputs;
    expect(recorded).toMatchObject({ alias: "half-made", enabled: true });
    expect(Object.keys(err)).not.toContain("properties");
    ledger.record(recorded.key);
    ledger.expectCleanOutputs(recorded);
    expectExactly("half-made", [{ id, outs: recorded }]);

    emu.setFaults([]);
    expect((await apiKey.diff(id, recorded, news)).changes).toBe(true);
    const fixed = await update({ id, outs: recorded }, { alias: "half-made", enabled: false });
    expect(emu.state.getKey(recorded.key)?.enabled).toBe(false);
    expectExactly("half-made", [fixed]);
    await remove(fixed);
  });
});

describe("ApiKey under added latency", () => {
  test("every operation completes, once, and concurrent deletes still go out in one call", async () => {
    emu.setFaults([{ kind: "latency", ms: 200 }]);
    const keys = await Promise.all([0, 1, 2].map((i) => create({ alias: `slow-${i}` })));
    const changed = await update(keys[0], {
      alias: "slow-0",
      enabled: false,
      securityConfig: { geo: { countries: ["SG"] } },
    });
    expect((await apiKey.read(changed.id, changed.outs)).props).toEqual(changed.outs);
    await remove(changed, keys[1], keys[2]);
    expect(statuses(emu)).toEqual({
      "api-key/create 200": 3,
      "api-key/edit 200": 1,
      "api-key/status 200": 1,
      "api-key/get 200": 2,
      "api-key/delete 200": 1,
    });
    for (let i = 0; i < 3; i++) expectExactly(`slow-${i}`, []);
  });
});

describe("ApiKey under dropped connections", () => {
  test("dropped before the create: not retried blindly; the error says the key may exist; none was made, and the re-run converges", async () => {
    emu.setFaults([only(["api-key/create"], { kind: "drop-before", count: 1 })]);
    const err = await failed(() => create({ alias: "drop-before" }));
    expect(err.name).toBe("ConnectionError");
    expect(err.mayHaveSucceeded).toBe(true);
    expect(err.message).toMatch(
      /^connection to http:\/\/127\.0\.0\.1:\d+ failed: \w+; the key may have been created .*\(POST api-key\/create\)\. .*web console.*adoptKey`$/,
    );
    expect(statuses(emu)).toEqual({ "api-key/create 0": 1 });
    expectExactly("drop-before", []);

    const k = await create({ alias: "drop-before" });
    expectExactly("drop-before", [k]);
    await remove(k);
  });

  test("dropped after the create was committed: no second create; the error says how to find the key; adopting the key found by alias converges to exactly one key", async () => {
    const declared = { alias: "lost-answer", securityConfig: { geo: { countries: ["SG"] } } };
    emu.setFaults([only(["api-key/create"], { kind: "drop-after", count: 1 })]);
    const err = await failed(() => create(declared));
    expect(err.mayHaveSucceeded).toBe(true);
    expect(err.message).toMatch(
      /the key may have been created although no answer came back \(POST api-key\/create\)\. The API cannot list keys: look in the web console for a key with alias "lost-answer" created just now, and delete it or adopt it with `adoptKey`/,
    );
    expect(statuses(emu)).toEqual({ "api-key/create 0": 1 });

    // The web console shows the key; the user adopts it, as the error says. No key is created again.
    const found = live("lost-answer");
    expect(found.map((k) => k.alias)).toHaveLength(1);
    emu.clearRequests();
    const adopted = await create({ ...declared, adoptKey: found[0].key });
    expect(adopted.outs.key).toBe(found[0].key);
    expect(statuses(emu)).toEqual({ "api-key/get 200": 1 });
    expectExactly("lost-answer", [adopted]);
    // A delete in the next command: in this one, the create adopted the key, and a delete would leave it (one owner).
    startFresh();
    await remove(adopted);
  });

  test("dropped around edit (after the commit), status (before it) and delete (after it): retried, applied once; a delete whose answer was lost counts as done", async () => {
    const k = await create({ alias: "drops" });
    emu.clearRequests();
    emu.setFaults([
      only(["api-key/edit"], { kind: "drop-after", count: 1 }),
      only(["api-key/status"], { kind: "drop-before", count: 1 }),
      only(["api-key/delete"], { kind: "drop-after", count: 1 }),
    ]);
    const changed = await update(k, { alias: "drops-2", enabled: false });
    expect(emu.state.getKey(k.outs.key)).toMatchObject({ alias: "drops-2", enabled: false });
    await remove(changed);
    expect(statuses(emu)).toEqual({
      "api-key/get 200": 1,
      "api-key/edit 0": 1,
      "api-key/edit 200": 1,
      "api-key/status 0": 1,
      "api-key/status 200": 1,
      "api-key/delete 0": 1,
      "api-key/delete 404": 1,
    });
    expectExactly("drops-2", []);
  });
});

describe("ApiKey under malformed and wrongly typed answers", () => {
  test("a create answered with a body that is not JSON: the error says so and that the key may exist; adopting it converges", async () => {
    emu.setFaults([only(["api-key/create"], { kind: "malformed", count: 1 })]);
    const err = await failed(() => create({ alias: "malformed-create" }));
    expect(err.name).toBe("UnknownAnswerError");
    expect(err.message).toMatch(
      /^the response is not the platform's \(HTTP 200, .*\) from http:.*\/api-key\/create: nothing is concluded from it; the key may have been created .*\(POST api-key\/create\)\. .*adoptKey`$/,
    );
    const found = live("malformed-create");
    expect(found.map((k) => k.alias)).toHaveLength(1);
    const adopted = await create({ alias: "malformed-create", adoptKey: found[0].key });
    expectExactly("malformed-create", [adopted]);
    // A delete in the next command: in this one, the create adopted the key, and a delete would leave it (one owner).
    startFresh();
    await remove(adopted);
  });

  test("a create answered with wrongly typed fields, the key among them: the error names the key's field; no outputs are made from the bad body; adopting the key converges", async () => {
    emu.setFaults([only(["api-key/create"], { kind: "wrong-type", count: 1 })]);
    const err = await failed(() => create({ alias: "typed-create" }));
    // Only the key is needed of a create's answer (the other fields are taken from the request): its field is named.
    expect(err.message).toMatch(
      /^the response field key is invalid: Invalid input: expected string, received object; the key may have been created .*\(POST api-key\/create\)\. .*adoptKey`$/,
    );
    const found = live("typed-create");
    expect(found.map((k) => k.alias)).toHaveLength(1);
    const adopted = await create({ alias: "typed-create", adoptKey: found[0].key });
    expectExactly("typed-create", [adopted]);
    // A delete in the next command: in this one, the create adopted the key, and a delete would leave it (one owner).
    startFresh();
    await remove(adopted);
  });

  test.each(["malformed", "wrong-type"] as const)(
    "%s answers to get, edit, status and delete: a get fails clearly, the state not touched; a write answered with a body that is not JSON is confirmed by one get, one in the platform's JSON with a bad field fails (its re-run converges) but for a delete, done",
    async (kind) => {
      const alias = `bad-${kind}`;
      const k = await create({ alias });
      const foreign = kind === "malformed";
      const field = (name: string) =>
        foreign ? "the response is not the platform's" : `the response field ${name} is invalid`;

      // Refresh: fails; the state keeps the old outputs; the re-run reads them back unchanged.
      emu.setFaults([only(["api-key/get"], { kind, count: 1 })]);
      let err = await failed(() => apiKey.read(k.id, k.outs));
      expect(err.message).toContain(`${field("alias")}`);
      expect(err.message).toMatch(/\(POST api-key\/get\)$/);
      expect((await apiKey.read(k.id, k.outs)).props).toEqual(k.outs);

      // Edit: committed, answer unusable. Not the platform's: one get shows the edit made, so it is done. The
      // platform's JSON with a bad field: the update fails; the re-run from the old outputs converges.
      emu.setFaults([only(["api-key/edit"], { kind, count: 1 })]);
      emu.clearRequests();
      let edited: Awaited<ReturnType<typeof update>>;
      if (foreign) {
        edited = await update(k, { alias: `${alias}-2` });
        expect(statuses(emu)).toEqual({ "api-key/get 200": 2, "api-key/edit 200": 1 });
      } else {
        err = await failed(() => update(k, { alias: `${alias}-2` }));
        expect(err.message).toContain(field("alias"));
        expect(err.message).toMatch(/\(POST api-key\/edit\)$/);
        edited = await update(k, { alias: `${alias}-2` });
      }
      expect(emu.state.getKey(k.outs.key)?.alias).toBe(`${alias}-2`);

      // Status: the same.
      emu.setFaults([only(["api-key/status"], { kind, count: 1 })]);
      let disabled: Awaited<ReturnType<typeof update>>;
      if (foreign) disabled = await update(edited, { alias: `${alias}-2`, enabled: false });
      else {
        err = await failed(() => update(edited, { alias: `${alias}-2`, enabled: false }));
        expect(err.message).toContain(field("enabled"));
        disabled = await update(edited, { alias: `${alias}-2`, enabled: false });
      }
      expect(disabled.outs.enabled).toBe(false);
      expectExactly(`${alias}-2`, [disabled]);

      // Delete: committed, answer unusable. The platform's 2xx says it was done, so the delete succeeds (the state
      // must not keep a key that is gone); an answer that is not the platform's is confirmed by one get (404).
      emu.setFaults([only(["api-key/delete"], { kind, count: 1 })]);
      emu.clearRequests();
      await remove(disabled);
      expect(
        emu
          .requests()
          .filter((r) => r.op === "api-key/delete")
          .map((r) => r.fault),
      ).toEqual([kind]);
      expect(statuses(emu)).toEqual(
        foreign ? { "api-key/delete 200": 1, "api-key/get 404": 1 } : { "api-key/delete 200": 1 },
      );
      expectExactly(`${alias}-2`, []);
    },
  );
});
