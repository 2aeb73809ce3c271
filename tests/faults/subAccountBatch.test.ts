import { describe, expect, test } from "@jest/globals";
import type { Emulator, FaultKind } from "../../provider/emulator/index.js";
import { fingerprint } from "../../provider/api/redact.js";
import { LATE_WRITES, lookWaits } from "../../provider/api/assumptions.js";
import { startFresh, subAccountBatch, type SubAccountBatchOutputs } from "../../provider/runtime/index.js";
import { cleanFailure, only, statuses, useFaultEmulator } from "../support/faults.js";
import type { SecretLedger } from "../support/secrets.js";
import { checkedInputs } from "../support/check.js";

// The SubAccountBatch provider's methods under each fault the emulator injects. Unlike keys, sub-accounts can be
// listed by alias: a batch create whose answer was lost is found and adopted rather than made twice.

let emu: Emulator;
let ledger: SecretLedger;

// Every test removes what it made: no sub-account is left behind by any fault.
useFaultEmulator(
  (c) => ({ emu, ledger } = c),
  (e) => e.state.listSubAccounts().map((r) => r.alias),
);

type Props = Record<string, unknown>;
type Batch = { id: string; outs: SubAccountBatchOutputs };
const pricing = [{ model: "model-a", pricingFactor: 1.5 }];

const inputs = (news: Props) => checkedInputs(subAccountBatch, { balance: 5, modelPricing: pricing, ...news });

function seen(outs: SubAccountBatchOutputs): SubAccountBatchOutputs {
  ledger.record(...outs.tokens);
  ledger.expectCleanOutputs(outs);
  expect(outs.tokens).toEqual(outs.subAccounts.map((s) => s.token));
  expect(outs.count).toBe(outs.tokens.length);
  return outs;
}

async function create(news: Props): Promise<Batch> {
  const { id, outs } = await subAccountBatch.create(await inputs(news));
  return { id, outs: seen(outs) };
}

async function update(b: Batch, news: Props): Promise<Batch> {
  const { outs } = await subAccountBatch.update(b.id, b.outs, await inputs(news));
  return { id: b.id, outs: seen(outs) };
}

/** A refresh of the batch, as its own `pulumi refresh` makes it: in a new process, which keeps no list from before. */
async function read(b: Batch): Promise<Props> {
  startFresh();
  return (await subAccountBatch.read(b.id, b.outs)).props;
}

/** A failure, checked to hold no secret in any form. */
const failed = (op: () => Promise<unknown>) => cleanFailure(ledger, op);

const n = (s: Record<string, number>, k: string) => s[k] ?? 0;

/** The platform holds exactly the batch's sub-accounts, as declared: no duplicate, none untracked. */
function expectExactly(b: Batch | undefined, alias: string): void {
  const live = emu.state.listSubAccounts().filter((s) => s.alias === alias);
  // Compared by fingerprint: a failure message must not print a token.
  expect(live.map((s) => fingerprint(s.token)).sort()).toEqual((b?.outs.tokens ?? []).map(fingerprint).sort());
  if (b) {
    for (const s of live) expect(s.model_pricing).toEqual([{ model: "model-a", pricing_factor: 1.5 }]);
  }
}

describe("SubAccountBatch under rate-limit storms and latency", () => {
  test("429s (with Retry-After on writes, without on list and delete) and latency: create, scale up with a new alias, scale down, refresh and delete complete, each write once", async () => {
    emu.setFaults([
      only(["sub-account/create", "sub-account/edit"], { kind: "429", count: 4 }),
      only(["sub-account/list", "sub-account/delete"], { kind: "429", count: 2, retryAfter: false }),
      { kind: "latency", ms: 100, rate: 0.5 },
    ]);
    const b = await create({ alias: "storm", count: 2 });
    expectExactly(b, "storm");
    const up = await update(b, { alias: "storm-2", count: 3 });
    expect(up.outs.tokens.slice(0, 2)).toEqual(b.outs.tokens);
    expectExactly(up, "storm-2");
    const down = await update(up, { alias: "storm-2", count: 1 });
    expectExactly(down, "storm-2");
    expect(await read(down)).toEqual(down.outs);
    await subAccountBatch.delete(down.id, down.outs);
    expectExactly(undefined, "storm-2");
    const s = statuses(emu);
    expect(n(s, "sub-account/create 429") + n(s, "sub-account/edit 429")).toBe(4);
    expect(n(s, "sub-account/list 429") + n(s, "sub-account/delete 429")).toBe(2);
    // Each create is followed by the edit that sets the declared alias; the scale-up's edit also renames the two kept.
    expect(["create", "edit", "list", "delete"].map((op) => n(s, `sub-account/${op} 200`))).toEqual([2, 2, 1, 2]);
  });

  test("a storm that does not end: the create fails with a clear 429, nothing was created, and the re-run converges", async () => {
    emu.setFaults([only(["sub-account/create"], { kind: "429" })]);
    const err = await failed(() => create({ alias: "endless", count: 2 }));
    expect(err.message).toMatch(/^429 rate_limited: .+ \(POST sub-account\/create\)$/);
    expect(statuses(emu)).toEqual({ "sub-account/create 429": 12 });
    expectExactly(undefined, "endless");

    emu.setFaults([]);
    const b = await create({ alias: "endless", count: 2 });
    expectExactly(b, "endless");
    await subAccountBatch.delete(b.id, b.outs);
  });
});

describe("SubAccountBatch under server errors", () => {
  test("5xx on the list: a refresh retries; a 5xx that lasts fails naming status and operation, the state is left as it was, and the re-run converges", async () => {
    const b = await create({ alias: "reads", count: 2 });
    emu.clearRequests();
    emu.setFaults([only(["sub-account/list"], { kind: "503", count: 2 })]);
    expect(await read(b)).toEqual(b.outs);
    expect(statuses(emu)).toEqual({ "sub-account/list 503": 2, "sub-account/list 200": 1 });

    emu.setFaults([only(["sub-account/list"], { kind: "500" })]);
    const err = await failed(() => read(b));
    expect(err.message).toMatch(/^500 internal_error: .+ \(GET sub-account\/list\)$/);
    expectExactly(b, "reads");

    emu.setFaults([]);
    expect(await read(b)).toEqual(b.outs);
    await subAccountBatch.delete(b.id, b.outs);
    expectExactly(undefined, "reads");
  });

  test("5xx on edit and delete: retried, applied once", async () => {
    const b = await create({ alias: "writes", count: 3 });
    emu.clearRequests();
    emu.setFaults([only(["sub-account/edit", "sub-account/delete"], { kind: "500", count: 2 })]);
    const changed = await update(b, { alias: "writes-2", count: 2 });
    expectExactly(changed, "writes-2");
    await subAccountBatch.delete(changed.id, changed.outs);
    expectExactly(undefined, "writes-2");
    const s = statuses(emu);
    expect(n(s, "sub-account/edit 500") + n(s, "sub-account/delete 500")).toBe(2);
    expect([n(s, "sub-account/edit 200"), n(s, "sub-account/delete 200")]).toEqual([1, 2]);
  });
});

describe("SubAccountBatch when a create's answer is lost or unusable", () => {
  test.each(["drop-after", "malformed", "wrong-type"] as FaultKind[])(
    "%s on the batch create (committed, no usable answer): the sub-accounts are found by the create's marked alias and adopted; one create, no duplicate",
    async (kind) => {
      const alias = `lost-${kind}`;
      emu.setFaults([only(["sub-account/create"], { kind, count: 1 })]);
      const b = await create({ alias, count: 3 });
      expect(statuses(emu)).toEqual({
        [`sub-account/create ${kind === "drop-after" ? 0 : 200}`]: 1,
        "sub-account/list 200": 1,
        "sub-account/edit 200": 1,
      });
      expect(b.outs.count).toBe(3);
      expectExactly(b, alias);
      await subAccountBatch.delete(b.id, b.outs);
      expectExactly(undefined, alias);
    },
  );

  test.each(["drop-before", "500", "503"] as FaultKind[])(
    "%s on the batch create (nothing committed): the list shows none were made, so the create is sent again; fully applied, once",
    async (kind) => {
      const alias = `again-${kind}`;
      emu.setFaults([only(["sub-account/create"], { kind, count: 1 })]);
      const b = await create({ alias, count: 2 });
      expect(emu.requests().map((r) => `${r.op} ${r.status}`)).toEqual([
        `sub-account/create ${kind === "drop-before" ? 0 : kind}`,
        // Nothing found: looked for again after each wait (a platform may show a create late), then sent again.
        ...Array(1 + lookWaits(LATE_WRITES.boundMs).length).fill("sub-account/list 200"),
        "sub-account/create 200",
        "sub-account/edit 200",
      ]);
      expectExactly(b, alias);
      await subAccountBatch.delete(b.id, b.outs);
    },
  );

  test("a lost answer while scaling up is recovered the same way; the sub-accounts kept are not taken for new ones", async () => {
    const b = await create({ alias: "grow", count: 2 });
    emu.clearRequests();
    emu.setFaults([only(["sub-account/create"], { kind: "drop-after", count: 1 })]);
    const up = await update(b, { alias: "grow", count: 4 });
    expect(statuses(emu)).toEqual({ "sub-account/create 0": 1, "sub-account/list 200": 1, "sub-account/edit 200": 1 });
    expect(up.outs.tokens.slice(0, 2)).toEqual(b.outs.tokens);
    expect(new Set(up.outs.tokens).size).toBe(4);
    expectExactly(up, "grow");
    await subAccountBatch.delete(up.id, up.outs);
  });

  test("a lost answer, and the list that would find what was made fails too: the error says the sub-accounts may exist and how to find them", async () => {
    emu.setFaults([
      only(["sub-account/create"], { kind: "drop-after", count: 1 }),
      only(["sub-account/list"], { kind: "503" }),
    ]);
    const err = await failed(() => create({ alias: "unlisted", count: 2 }));
    expect(err.mayHaveSucceeded).toBe(true);
    // The alias the create gave them, its own: the declared one with a marker.
    expect(err.message).toMatch(
      /the sub-accounts may have been created although no answer came back \(POST sub-account\/create\); looking for sub-accounts with alias "unlisted~[0-9a-f]{12}" failed too: .*\. List sub-accounts with alias "unlisted~[0-9a-f]{12}" \(getSubAccounts/,
    );
    expect(err.message).toMatch(/503 service_unavailable: .*\(GET sub-account\/list\)/);
    expect(statuses(emu)).toEqual({ "sub-account/create 0": 1, "sub-account/list 503": 4 });
    // What the error points to: the two sub-accounts exist, untracked. Removing them (as a user would, once
    // listed) and re-running converges.
    const made = emu.state.listSubAccounts().filter((s) => s.alias.startsWith("unlisted~"));
    expect(made.map((s) => s.alias)).toHaveLength(2);
    emu.state.deleteSubAccounts(made.map((s) => s.token));
    emu.setFaults([]);
    const b = await create({ alias: "unlisted", count: 2 });
    expectExactly(b, "unlisted");
    await subAccountBatch.delete(b.id, b.outs);
  });

  test("the create fails again after a lost answer found nothing: a clear error, nothing made, and the re-run converges", async () => {
    emu.setFaults([
      only(["sub-account/create"], { kind: "drop-before", count: 1 }),
      only(["sub-account/create"], { kind: "503", count: 1 }),
    ]);
    const err = await failed(() => create({ alias: "twice", count: 2 }));
    expect(err.message).toMatch(
      /503 service_unavailable: .*the sub-accounts may have been created although no answer came back \(POST sub-account\/create\)\. List sub-accounts with alias "twice~[0-9a-f]{12}"/,
    );
    expectExactly(undefined, "twice");
    const b = await create({ alias: "twice", count: 2 });
    expectExactly(b, "twice");
    await subAccountBatch.delete(b.id, b.outs);
  });
});

describe("SubAccountBatch under dropped connections and bad answers on edit, delete and list", () => {
  test("dropped after the commit on edit and delete: retried; a delete whose answer was lost counts as done (one list finds nothing left)", async () => {
    const b = await create({ alias: "drops", count: 3 });
    emu.clearRequests();
    emu.setFaults([
      only(["sub-account/edit"], { kind: "drop-after", count: 1 }),
      only(["sub-account/delete"], { kind: "drop-after", count: 1 }),
    ]);
    const changed = await update(b, { alias: "drops-2", count: 2 });
    expectExactly(changed, "drops-2");
    expect(statuses(emu)).toEqual({
      "sub-account/delete 0": 1,
      "sub-account/delete 404": 1,
      "sub-account/list 200": 1,
      "sub-account/edit 0": 1,
      "sub-account/edit 200": 1,
    });
    await subAccountBatch.delete(changed.id, changed.outs);
    expectExactly(undefined, "drops-2");
  });

  test.each(["malformed", "wrong-type"] as const)(
    "%s answers to list, edit and delete: a list fails clearly, the state not touched; a write answered with a body that is not JSON is confirmed by one list, one in the platform's JSON with a bad field fails (its re-run converges) but for a delete, done",
    async (kind) => {
      const alias = `bad-${kind}`;
      const b = await create({ alias, count: 2 });
      const foreign = kind === "malformed";
      const field = (name: string) =>
        foreign ? "the response is not the platform's" : `the response field ${name} is invalid`;

      emu.setFaults([only(["sub-account/list"], { kind, count: 1 })]);
      let err = await failed(() => read(b));
      expect(err.message).toContain(field("items"));
      expect(err.message).toMatch(/\(GET sub-account\/list\)$/);
      expect(await read(b)).toEqual(b.outs);

      emu.setFaults([only(["sub-account/edit"], { kind, count: 1 })]);
      let edited: Awaited<ReturnType<typeof update>>;
      if (foreign) {
        emu.clearRequests();
        edited = await update(b, { alias: `${alias}-2`, count: 2 });
        expect(statuses(emu)["sub-account/list 200"]).toBeGreaterThanOrEqual(1);
      } else {
        err = await failed(() => update(b, { alias: `${alias}-2`, count: 2 }));
        expect(err.message).toContain(field("success"));
        expect(err.message).toMatch(/\(POST sub-account\/edit\)$/);
        edited = await update(b, { alias: `${alias}-2`, count: 2 });
      }
      expectExactly(edited, `${alias}-2`);

      // A 2xx in the platform's JSON to a delete says it was done, whatever its fields: the delete succeeds. One that
      // is not the platform's is confirmed by one list that no longer shows them.
      emu.setFaults([only(["sub-account/delete"], { kind, count: 1 })]);
      emu.clearRequests();
      await subAccountBatch.delete(edited.id, edited.outs);
      expect(
        emu
          .requests()
          .filter((r) => r.op === "sub-account/delete")
          .map((r) => r.fault),
      ).toEqual([kind]);
      expect(statuses(emu)).toEqual(
        foreign ? { "sub-account/delete 200": 1, "sub-account/list 200": 1 } : { "sub-account/delete 200": 1 },
      );
      expectExactly(undefined, `${alias}-2`);
    },
  );
});
