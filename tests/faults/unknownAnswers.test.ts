import { afterAll, beforeAll, beforeEach, describe, expect, test } from "@jest/globals";
import type { Profile } from "../../provider/api/profile.js";
import { maskKey } from "../../provider/api/redact.js";
import { OPERATIONS } from "../../provider/api/operations.js";
import type { Emulator, FaultSpec, Reading } from "../../provider/emulator/index.js";
import {
  apiKey,
  startFresh,
  subAccountBatch,
  type ApiKeyOutputs,
  type Props,
  type SubAccountBatchOutputs,
} from "../../provider/runtime/index.js";
import { checkedInputs } from "../support/check.js";
import { emulator } from "../support/emulator.js";
import { failure, statuses } from "../support/faults.js";

/**
 * Read, then conclude (issue 53): a write counts as done, and an object as gone, only on an answer read as the
 * platform's or when a look shows it. A maintenance page, a gateway's 404 page, an empty 200 or `null` is unknown:
 * the package looks (a key's get, the sub-account list) and otherwise stops naming the object, which stays in state.
 * A refusal of the admin key stops before anything is dropped; a refusal of one key of a gathered delete fails that
 * key alone; a signature the profile gives two meanings is decided by looking. Through the runtime's provider
 * methods, as the plugin calls them, against the emulator over HTTP.
 */

const MANAGEMENT_OPS = Object.values(OPERATIONS)
  .filter((o) => o.group === "management")
  .map((o) => o.name);
const on = (ops: string[], kind: FaultSpec["kind"]): FaultSpec => ({ kind, ops });

let emu: Emulator;

async function start(readings: Reading[] = [], profile?: Profile): Promise<void> {
  emu = await emulator({ rateLimits: false, readings });
  startFresh({
    stackConfig: {
      baseUrl: emu.baseUrl,
      adminKey: emu.adminKey,
      accountKey: emu.accountKey,
      rateLimits: "off",
      ...(profile && { profile: JSON.stringify(profile) }),
    },
    clientOverrides: { clock: { now: () => Date.now(), sleep: async () => undefined } },
  });
}

type Key = { id: string; outs: ApiKeyOutputs };
async function key(alias: string, news: Props = {}): Promise<Key> {
  return apiKey.create(await checkedInputs(apiKey, { alias, ...news }));
}
async function batch(alias: string, count: number): Promise<{ id: string; outs: SubAccountBatchOutputs }> {
  return subAccountBatch.create(
    await checkedInputs(subAccountBatch, {
      alias,
      balance: 1,
      count,
      modelPricing: [{ model: "model-a", pricingFactor: 1 }],
    }),
  );
}
const lives = (k: Key) => emu.state.hasKey(k.outs.key);
/** A new command, as a new plugin process starts one, with nothing injected. */
function nextCommand(): void {
  startFresh();
  emu.setFaults([]);
  emu.clearRequests();
}

describe("answers that are not the platform's are unknown: looked at, never done or gone", () => {
  beforeAll(() => start());
  afterAll(() => emu.close());
  beforeEach(nextCommand);

  test("a maintenance page (HTTP 200 text/html) to api-key/delete: one get shows the key, the delete fails naming it, the key stays live", async () => {
    const k = await key("maintenance-delete");
    nextCommand();
    emu.setFaults([on(["api-key/delete"], "maintenance")]);
    const err = await failure(() => apiKey.delete(k.id, k.outs as unknown as Props));
    expect(err.message).toContain(
      `is not the platform's (HTTP 200, text/html "Down for maintenance") from ${emu.baseUrl}/api/v1/management/api-key/delete`,
    );
    expect(err.message).toContain(`for ${maskKey(k.outs.key)}: a get shows it still there: not deleted`);
    expect(lives(k)).toBe(true);
    expect(statuses(emu)).toEqual({ "api-key/delete 200": 1, "api-key/get 200": 1 });
  });

  test("a maintenance page to api-key/edit and api-key/status: one get shows each unchanged, the update fails naming the key; nothing taken for done", async () => {
    const k = await key("maintenance-edit");
    nextCommand();
    emu.setFaults([on(["api-key/edit", "api-key/status"], "maintenance")]);
    const renamed = await checkedInputs(apiKey, { alias: "renamed", enabled: true });
    const edit = await failure(() => apiKey.update(k.id, k.outs as unknown as Props, renamed));
    expect(edit.message).toContain(
      `for ${maskKey(k.outs.key)}: a get shows its alias or security_config as before: not edited`,
    );
    nextCommand();
    emu.setFaults([on(["api-key/status"], "maintenance")]);
    const disabled = await checkedInputs(apiKey, { alias: "maintenance-edit", enabled: false });
    const status = await failure(() => apiKey.update(k.id, k.outs as unknown as Props, disabled));
    expect(status.message).toContain(`for ${maskKey(k.outs.key)}: a get shows it enabled still: not changed`);
    expect(emu.state.getKey(k.outs.key)).toMatchObject({ alias: "maintenance-edit", enabled: true });
    nextCommand();
    await apiKey.delete(k.id, k.outs as unknown as Props);
  });

  test("an empty 200 to api-key/delete is no delete (a 204 would be); null to a get is no answer: the key stays, named", async () => {
    const k = await key("empty-delete");
    nextCommand();
    emu.setFaults([on(["api-key/delete"], "empty-200")]);
    const err = await failure(() => apiKey.delete(k.id, k.outs as unknown as Props));
    expect(err.message).toContain("(HTTP 200, an empty body)");
    expect(lives(k)).toBe(true);
    nextCommand();
    emu.state.deleteKey(k.outs.key);
    emu.setFaults([on(["api-key/get"], "null-200")]);
    const read = await failure(() => apiKey.read(k.id, k.outs as unknown as Props));
    expect(read.message).toContain(
      `is not the platform's (HTTP 200, JSON that is not its: "null") from ${emu.baseUrl}/api/v1/management/api-key/get`,
    );
  });

  test("maintenance on every call: the delete's look cannot tell either; it fails naming the base URL, the key stays", async () => {
    const k = await key("maintenance-all");
    nextCommand();
    emu.setFaults([{ kind: "maintenance" }]);
    const err = await failure(() => apiKey.delete(k.id, k.outs as unknown as Props));
    expect(err.message).toContain(
      `looking (a get of ${maskKey(k.outs.key)}) could not tell either: the response is not the platform's (HTTP 200, text/html "Down for maintenance") from ${emu.baseUrl}/api/v1/management/api-key/get`,
    );
    expect(lives(k)).toBe(true);
  });

  test("a gateway's 404 page on every call (a base URL missing the API's path): a refresh fails naming the address and drops nothing; a destroy fails, the keys stay", async () => {
    const [a, b] = [await key("gateway-a"), await key("gateway-b")];
    nextCommand();
    emu.setFaults([{ kind: "gateway-404" }]);
    const read = await failure(() => apiKey.read(a.id, a.outs as unknown as Props));
    expect(read.message).toContain(
      `is not the platform's (HTTP 404, text/html "404 Not Found") from ${emu.baseUrl}/api/v1/management/api-key/get`,
    );
    const deleted = await Promise.allSettled([a, b].map((k) => apiKey.delete(k.id, k.outs as unknown as Props)));
    expect(deleted.map((d) => d.status)).toEqual(["rejected", "rejected"]);
    expect([lives(a), lives(b)]).toEqual([true, true]);
  });

  test("a maintenance page to sub-account/delete: one list shows them, the delete fails naming them (masked), they stay", async () => {
    const made = await batch("maintenance-batch", 2);
    nextCommand();
    emu.setFaults([on(["sub-account/delete"], "maintenance")]);
    const err = await failure(() => subAccountBatch.delete(made.id, made.outs as unknown as Props));
    expect(err.message).toContain(
      `the sub-account list still shows ${made.outs.tokens.map(maskKey).join(", ")}: not deleted`,
    );
    expect(emu.state.listSubAccounts().filter((s) => s.alias.startsWith("maintenance-batch"))).toHaveLength(2);
    expect(statuses(emu)).toEqual({ "sub-account/delete 200": 1, "sub-account/list 200": 1 });
    nextCommand();
    await subAccountBatch.delete(made.id, made.outs as unknown as Props);
  });
});

describe("a refusal of the admin key (an IP allow-list: 400 naming the key) stops before anything is dropped or deleted", () => {
  beforeAll(() => start());
  afterAll(() => emu.close());
  beforeEach(nextCommand);

  test("refresh: the get's 400 naming a key is looked at with one balance, refused too: the read fails naming the answer, the key is not dropped", async () => {
    const k = await key("allow-list");
    nextCommand();
    emu.setFaults([on(MANAGEMENT_OPS, "credential-400")]);
    const err = await failure(() => apiKey.read(k.id, k.outs as unknown as Props));
    expect(err.message).toMatch(
      /^400 ip_not_allowed: the key sk-admin-\.\.\.\w{4} is not allowed from this address \(IP allow-list\) \(POST api-key\/get\): a refusal that may be about the admin key/,
    );
    expect(err.message).toContain("nothing was concluded, dropped or deleted");
    expect(statuses(emu)).toEqual({ "api-key/get 400": 1, "account/balance 400": 1 });
    nextCommand();
    emu.setFaults([on(MANAGEMENT_OPS, "credential-400")]);
    await expect(apiKey.delete(k.id, k.outs as unknown as Props)).rejects.toThrow(
      /a refusal that may be about the admin key/,
    );
    expect(lives(k)).toBe(true);
    nextCommand();
    await apiKey.delete(k.id, k.outs as unknown as Props);
  });
});

describe("one refusal fails one: a key the platform refuses in a gathered delete fails alone", () => {
  beforeAll(() => start());
  afterAll(() => emu.close());
  beforeEach(nextCommand);

  test("named by the refusal (in use): it fails alone, the others are sent again without it in one call", async () => {
    const keys = [await key("gathered-a"), await key("gathered-b"), await key("gathered-c")];
    emu.state.lockKey(keys[1].outs.key);
    nextCommand();
    const results = await Promise.allSettled(keys.map((k) => apiKey.delete(k.id, k.outs as unknown as Props)));
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(((results[1] as PromiseRejectedResult).reason as Error).message).toContain(
      `key ${maskKey(keys[1].outs.key)} is in use`,
    );
    expect(keys.map(lives)).toEqual([false, true, false]);
    expect(statuses(emu)).toEqual({ "api-key/delete 400": 1, "api-key/get 200": 3, "api-key/delete 200": 1 });
    emu.state.lockKey(keys[1].outs.key, false);
    nextCommand();
    await apiKey.delete(keys[1].id, keys[1].outs as unknown as Props);
  });

  test("not named: found by splitting the gathering; the others are deleted", async () => {
    const keys = [await key("split-a"), await key("split-b"), await key("split-c"), await key("split-d")];
    emu.state.lockKey(keys[2].outs.key, true, false);
    nextCommand();
    const results = await Promise.allSettled(keys.map((k) => apiKey.delete(k.id, k.outs as unknown as Props)));
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(keys.map(lives)).toEqual([false, false, true, false]);
    // The gathering, then its halves ([a, b] deleted; [c, d] refused), then c and d alone.
    expect(statuses(emu)).toEqual({ "api-key/delete 400": 3, "api-key/get 200": 4, "api-key/delete 200": 2 });
    emu.state.lockKey(keys[2].outs.key, false);
    nextCommand();
    await apiKey.delete(keys[2].id, keys[2].outs as unknown as Props);
  });
});

describe("a get that answers null for a key deleted elsewhere, on a platform that refuses gone keys with 400", () => {
  beforeAll(() => start(["gone-400"]));
  afterAll(() => emu.close());
  beforeEach(nextCommand);

  test("destroy: the refused gathering's live keys are deleted; the gone one, whose get answers null, fails alone naming it", async () => {
    const keys = [await key("null-a"), await key("null-b"), await key("null-c")];
    emu.state.deleteKey(keys[1].outs.key);
    nextCommand();
    emu.setFaults([on(["api-key/get"], "null-200")]);
    const results = await Promise.allSettled(keys.map((k) => apiKey.delete(k.id, k.outs as unknown as Props)));
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect([lives(keys[0]), lives(keys[2])]).toEqual([false, false]);
  });
});

describe("a profile that gives one signature two meanings (400 invalid_key: refused and gone) is decided by looking", () => {
  const AMBIGUOUS: Profile = {
    version: 1,
    done: { shape: "plain" },
    refused: [{ status: 400, code: "invalid_key" }, { status: 400, code: "invalid_token" }, { status: 400 }],
    goneKey: [{ status: 400, code: "invalid_key" }],
    goneSubAccount: [{ status: 400, code: "invalid_token" }],
    transient: [],
    unauthorised: [{ status: 401 }],
  };
  beforeAll(() => start(["gone-400"], AMBIGUOUS));
  afterAll(() => emu.close());
  beforeEach(nextCommand);

  test("refresh of a key deleted in the console: gone (the balance shows the admin key taken), not a stopped gate", async () => {
    const k = await key("ambiguous-read", {});
    emu.state.deleteKey(k.outs.key);
    nextCommand();
    expect(await apiKey.read(k.id, k.outs as unknown as Props)).toEqual({ id: "", props: {} });
  });

  test("destroy of a batch one of whose sub-accounts was deleted in the console: one list tells, the others are deleted", async () => {
    const made = await batch("ambiguous-batch", 3);
    emu.state.deleteSubAccounts([made.outs.tokens[0]]);
    nextCommand();
    await subAccountBatch.delete(made.id, made.outs as unknown as Props);
    expect(emu.state.listSubAccounts().filter((s) => s.alias.startsWith("ambiguous-batch"))).toEqual([]);
    expect(statuses(emu)).toEqual({
      "sub-account/delete 400": 1,
      "sub-account/list 200": 1,
      "sub-account/delete 200": 1,
    });
  });

  test("destroy of two keys, one deleted in the console: one get each tells, the live one is deleted", async () => {
    const [a, b] = [await key("ambiguous-a"), await key("ambiguous-b")];
    emu.state.deleteKey(b.outs.key);
    nextCommand();
    await Promise.all([a, b].map((k) => apiKey.delete(k.id, k.outs as unknown as Props)));
    expect(lives(a)).toBe(false);
    expect(statuses(emu)).toEqual({
      "api-key/delete 400": 1,
      "api-key/get 200": 1,
      "api-key/get 400": 1,
      "api-key/delete 200": 1,
    });
  });
});
