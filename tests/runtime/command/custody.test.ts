import { afterEach, beforeEach, describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../../provider/emulator/index.js";
import { apiKey, currentSession, startFresh, subAccountBatch } from "../../../provider/runtime/index.js";
import { useRuntimeEmulator } from "../../support/emulator.js";
import { writeCalls } from "../../support/emulatorCalls.js";
import { checkedInputs } from "../../support/check.js";

// Issue 36: one object, one owner, at the provider too (programs that bypass the resource classes): in one command
// (one session), a batch create may not adopt a token another batch holds and keeps, and two ApiKey creates may
// not adopt one key. The error names the key masked; nothing is written.

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

type Props = Record<string, unknown>;
const pricing = [{ model: "model-a", pricingFactor: 1.2 }];
const batch = (alias: string, more: Props = {}) =>
  checkedInputs(subAccountBatch, { alias, balance: 1, count: 1, modelPricing: pricing, ...more });
const mask = (t: string) => `sk-...${t.slice(-4)}`;

describe("one owner per sub-account in one command", () => {
  test("a create adopting a token that another batch created and keeps (seen by its diff) fails naming it masked, writing nothing", async () => {
    const a = await subAccountBatch.create(await batch("a"));
    const [t] = a.outs.tokens;
    // The next command: a's diff, then b's create adopting a's created token.
    startFresh();
    await subAccountBatch.diff(a.id, a.outs, await batch("a"));
    emu.clearRequests();
    const err = await subAccountBatch.create(await batch("b", { adoptTokens: [t] })).catch((e: Error) => e);
    expect((err as Error).message).toContain(
      `adoptTokens[0] (${mask(t)}) is held by another SubAccountBatch of this deployment: one sub-account has one owner`,
    );
    expect((err as Error).message).not.toContain(t);
    expect(writeCalls(emu.calls())).toEqual({});
    expect(emu.calls()).toEqual({});
  });

  test("two creates adopting one console token: the second fails; a token one batch releases may be adopted by another in the same command", async () => {
    const [x, y] = emu.state
      .createSubAccounts({
        alias: "c",
        balance: 1,
        modelPricing: [{ model: "model-a", pricing_factor: 1.2 }],
        count: 2,
      })
      .map((s) => s.token);
    startFresh();
    const first = await subAccountBatch.create(await batch("c", { count: 2, adoptTokens: [x, y] }));
    const err = await subAccountBatch.create(await batch("c-twin", { adoptTokens: [y] })).catch((e: Error) => e);
    expect((err as Error).message).toContain(`adoptTokens[0] (${mask(y)}) is held by another SubAccountBatch`);

    // Next command: c keeps x and releases y (a non-empty list without it); another batch adopts y.
    startFresh();
    await subAccountBatch.diff(first.id, first.outs, await batch("c", { count: 2, adoptTokens: [x] }));
    const taker = await subAccountBatch.create(await batch("c-new", { adoptTokens: [y] }));
    expect(taker.outs.tokens).toEqual([y]);
  });
});

describe("one owner per key in one command", () => {
  test("two ApiKey creates adopting one key: the second fails naming it masked and writes nothing; the next command may adopt it", async () => {
    const key = emu.state.createKey("ci").key;
    const inputs = async (alias: string) => checkedInputs(apiKey, { alias, adoptKey: key });
    startFresh();
    await apiKey.create(await inputs("ci"));
    emu.clearRequests();
    const err = await apiKey.create(await inputs("ci-copy")).catch((e: Error) => e);
    expect((err as Error).message).toBe(
      `adoptKey: the key ${mask(key)} is adopted by another ApiKey created in this deployment: one key has one owner, so only one resource may adopt it; nothing was changed. Remove adoptKey from one of them`,
    );
    expect(emu.calls()).toEqual({});
    startFresh();
    await expect(apiKey.create(await inputs("ci"))).resolves.toMatchObject({ outs: { alias: "ci" } });
  });
});

// Issue 53: an adopter has the id of what it adopts. After an up --target of the adopter alone, both states hold the
// objects, and the next plain up diffs the adopter and deletes the giver under the same id: the giver's delete took
// what the diff kept for that id as its own, and deleted the adopter's sub-accounts and key.
describe("a giver removed from the program after an up --target of the adopter alone (the same id for both)", () => {
  const live = () => new Set(emu.state.listSubAccounts().map((s) => s.token));
  test("a batch that adopted every sub-account of another: the next command diffs it and deletes the other, whose delete leaves them", async () => {
    const given = await subAccountBatch.create(await batch("given", { count: 2 }));
    startFresh();
    const adopter = await subAccountBatch.create(await batch("adopter", { count: 2, adoptTokens: given.outs.tokens }));
    expect(adopter.id).toBe(given.id);
    startFresh();
    await subAccountBatch.diff(
      adopter.id,
      adopter.outs,
      await batch("adopter", { count: 2, adoptTokens: given.outs.tokens }),
    );
    await subAccountBatch.delete(given.id, given.outs);
    expect(given.outs.tokens.every((t) => live().has(t))).toBe(true);
    startFresh();
    await subAccountBatch.delete(adopter.id, adopter.outs);
    expect(given.outs.tokens.some((t) => live().has(t))).toBe(false);
  });

  test("an ApiKey whose adopted key another adopted: the next command diffs that one and deletes this one, whose delete leaves the key", async () => {
    const key = emu.state.createKey("moved").key;
    const a = await apiKey.create(await checkedInputs(apiKey, { alias: "moved", adoptKey: key }));
    startFresh();
    const b = await apiKey.create(await checkedInputs(apiKey, { alias: "moved", adoptKey: key }));
    expect(b.id).toBe(a.id);
    startFresh();
    await apiKey.diff(b.id, b.outs, await checkedInputs(apiKey, { alias: "moved", adoptKey: key }));
    await apiKey.delete(a.id, a.outs);
    expect(emu.state.hasKey(key)).toBe(true);
  });

  test("a replacement the engine forces (up --replace: the diff plans none, the new one is created first) still deletes what the replaced batch and key hold", async () => {
    const old = await subAccountBatch.create(await batch("forced"));
    const oldKey = await apiKey.create(await checkedInputs(apiKey, { alias: "forced" }));
    startFresh();
    expect((await subAccountBatch.diff(old.id, old.outs, await batch("forced"))).replaces).toEqual([]);
    expect(
      (await apiKey.diff(oldKey.id, oldKey.outs, await checkedInputs(apiKey, { alias: "forced" }))).replaces,
    ).toEqual([]);
    const made = await subAccountBatch.create(await batch("forced"));
    const madeKey = await apiKey.create(await checkedInputs(apiKey, { alias: "forced" }));
    await subAccountBatch.delete(old.id, old.outs);
    await apiKey.delete(oldKey.id, oldKey.outs);
    expect(live().has(old.outs.tokens[0])).toBe(false);
    expect(emu.state.hasKey(oldKey.outs.key)).toBe(false);
    startFresh();
    await subAccountBatch.delete(made.id, made.outs);
    await apiKey.delete(madeKey.id, madeKey.outs);
  });

  test("a replacement (another base URL) still deletes what the replaced batch holds: its diff planned it", async () => {
    const old = await subAccountBatch.create(await batch("replaced"));
    startFresh();
    const { replaces } = await subAccountBatch.diff(
      old.id,
      old.outs,
      await batch("replaced", { connection: { baseUrl: "http://127.0.0.1:9" } }),
    );
    expect(replaces).toEqual(["connection"]);
    await subAccountBatch.delete(old.id, old.outs);
    expect(live().has(old.outs.tokens[0])).toBe(false);
  });
});

describe("one owner per key while a deployment renames a resource", () => {
  test("an ApiKey removed while one declared in its place adopts its key: the old one's delete leaves the key", async () => {
    const key = emu.state.createKey("ci").key;
    startFresh();
    const old = await apiKey.create(await checkedInputs(apiKey, { alias: "ci", adoptKey: key }));
    startFresh();
    await apiKey.create(await checkedInputs(apiKey, { alias: "ci", adoptKey: key }));
    await apiKey.delete(old.id, old.outs);
    expect(emu.state.listKeys().map((k) => k.key)).toContain(key);
  });

  test("a create adopting the key another ApiKey of the command holds (seen by its diff) fails naming it masked, writing nothing", async () => {
    startFresh();
    const holder = await apiKey.create(await checkedInputs(apiKey, { alias: "ci" }));
    startFresh();
    await apiKey.diff(holder.id, holder.outs, await checkedInputs(apiKey, { alias: "ci" }));
    emu.clearRequests();
    const err = await apiKey
      .create(await checkedInputs(apiKey, { alias: "ci-copy", adoptKey: holder.outs.key }))
      .catch((e: Error) => e);
    expect((err as Error).message).toBe(
      `adoptKey: the key ${mask(holder.outs.key)} is held by another ApiKey of this deployment: one key has one owner, so only one resource may adopt it; nothing was changed. Remove adoptKey from one of them`,
    );
    expect(emu.calls()).toEqual({});
  });
});

describe("one owner across the clients of a command (issue 42: custody is the session's, not a client's)", () => {
  // A batch never needs the admin key: a connection that names another one reaches the same account through
  // another client of the session.
  const OTHER_ADMIN = "LLM_ACCOUNTS_TEST_OTHER_ADMIN_KEY";
  const other = { connection: { adminKeyEnv: OTHER_ADMIN } };
  const console = () =>
    emu.state.createSubAccounts({
      alias: "c",
      balance: 1,
      modelPricing: [{ model: "model-a", pricing_factor: 1.2 }],
      count: 1,
    })[0].token;
  beforeEach(() => void (process.env[OTHER_ADMIN] = `${emu.adminKey}-other`));
  afterEach(() => void delete process.env[OTHER_ADMIN]);

  test("a create adopting a token that a batch on the same account through another admin key keeps fails naming it masked, writing nothing", async () => {
    const a = await subAccountBatch.create(await batch("a", other));
    const [t] = a.outs.tokens;
    startFresh();
    await subAccountBatch.diff(a.id, a.outs, await batch("a", other));
    expect(currentSession().client(other.connection)).not.toBe(currentSession().client(undefined));
    emu.clearRequests();
    const err = await subAccountBatch.create(await batch("b", { adoptTokens: [t] })).catch((e: Error) => e);
    expect((err as Error).message).toContain(
      `adoptTokens[0] (${mask(t)}) is held by another SubAccountBatch of this deployment: one sub-account has one owner`,
    );
    expect(emu.calls()).toEqual({});
  });

  test("a delete leaves what a create through another admin key adopted in its place (a batch renamed without an alias)", async () => {
    const t = console();
    const a = await subAccountBatch.create(await batch("a", { ...other, adoptTokens: [t] }));
    startFresh();
    // The renamed batch is created first and adopts t; the old one is deleted last, unseen by any diff.
    const b = await subAccountBatch.create(await batch("b", { adoptTokens: [t] }));
    expect(b.outs.tokens).toEqual([t]);
    await subAccountBatch.delete(a.id, a.outs);
    expect(emu.state.hasSubAccount(t)).toBe(true);
  });
});

describe("a create that took what it adopts and failed, recording nothing (issue 43, under --continue-on-error)", () => {
  const doubt = (resource: string, t: string) =>
    `this ${resource}'s delete would delete ${mask(t)}, which another ${resource} of this deployment adopts, but whose create failed: nothing was deleted`;

  test("a batch renamed without an alias whose create fails: the old one's delete fails, deleting nothing, so that its state keeps the sub-account", async () => {
    const [t] = emu.state
      .createSubAccounts({
        alias: "c",
        balance: 1,
        modelPricing: [{ model: "model-a", pricing_factor: 1.2 }],
        count: 1,
      })
      .map((s) => s.token);
    const old = await subAccountBatch.create(await batch("c", { adoptTokens: [t] }));
    startFresh();
    // The whole list is refused, then its first page: the create fails at its one list, before any write.
    emu.setFaults([{ kind: "400", ops: ["sub-account/list"], count: 2 }]);
    await expect(subAccountBatch.create(await batch("c", { adoptTokens: [t] }))).rejects.toThrow("injected fault");
    emu.clearRequests();
    const err = await subAccountBatch.delete(old.id, old.outs).catch((e: Error) => e);
    expect((err as Error).message).toContain(doubt("SubAccountBatch", t));
    expect((err as Error).message).not.toContain(t);
    expect(writeCalls(emu.calls())).toEqual({});
    expect(emu.state.hasSubAccount(t)).toBe(true);
    // The next command: the create succeeds, and the old one's delete leaves what it adopted.
    startFresh();
    await subAccountBatch.create(await batch("c", { adoptTokens: [t] }));
    await subAccountBatch.delete(old.id, old.outs);
    expect(emu.state.hasSubAccount(t)).toBe(true);
  });

  test("an ApiKey renamed without an alias whose create fails: the old one's delete fails, deleting nothing", async () => {
    const key = emu.state.createKey("ci").key;
    const old = await apiKey.create(await checkedInputs(apiKey, { alias: "ci", adoptKey: key }));
    startFresh();
    emu.setFaults([{ kind: "500", ops: ["api-key/get"] }]);
    await expect(apiKey.create(await checkedInputs(apiKey, { alias: "ci", adoptKey: key }))).rejects.toThrow();
    emu.setFaults([]);
    emu.clearRequests();
    const err = await apiKey.delete(old.id, old.outs).catch((e: Error) => e);
    expect((err as Error).message).toContain(doubt("ApiKey", key));
    expect(writeCalls(emu.calls())).toEqual({});
    expect(emu.state.hasKey(key)).toBe(true);
  });
});
