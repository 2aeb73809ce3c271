import { describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../provider/emulator/index.js";
import { subAccountBatch, type SubAccountBatchInputs, type SubAccountBatchOutputs } from "../../provider/runtime/index.js";
import { calls, emulator, expectNoSecret, useRuntimeEmulator } from "../support/emulator.js";
import { found } from "../support/readOutcome.js";

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

type Props = Record<string, unknown>;
const pricing = [{ model: "model-a", pricingFactor: 1.2 }];
const wirePricing = [{ model: "model-a", pricing_factor: 1.2 }];

/** Sub-accounts made out of band, as in the web console; their tokens. */
function seed(alias: string, count: number, modelPricing = wirePricing, balance = 40): string[] {
  const made = emu.state.createSubAccounts({ alias, balance, modelPricing, count }).map((s) => s.token);
  emu.clearRequests();
  return made;
}

async function checked(news: Props, olds: Props = {}): Promise<SubAccountBatchInputs> {
  const { inputs, failures } = await subAccountBatch.check(olds, news);
  expect(failures).toEqual([]);
  return inputs;
}

async function adopt(news: Props): Promise<{ id: string; outs: SubAccountBatchOutputs }> {
  const inputs = await checked(news);
  emu.clearRequests();
  return subAccountBatch.create(inputs);
}

const tokensOf = (alias: string) => emu.state.listSubAccounts().filter((s) => s.alias === alias).map((s) => s.token);

describe("SubAccountBatch adoptTokens: check", () => {
  test("a malformed or repeated token is named by position, never echoed; count below the adopted number fails", async () => {
    const [t] = seed("chk", 1);
    const { failures } = await subAccountBatch.check({}, { alias: "a", balance: 1, count: 2, modelPricing: pricing, adoptTokens: [t, "sk-admin-abcdefgh", t] });
    expect(failures).toEqual([
      { property: "adoptTokens[1]", reason: "must be a sub-account key that begins with sk- (not an admin key)" },
      { property: "adoptTokens[2]", reason: "is the same key as adoptTokens[0]" },
      { property: "count", reason: "2 must be at least the number of adoptTokens (3): every adopted sub-account counts" },
    ]);
    expectNoSecret(JSON.stringify(failures), [t, "sk-admin-abcdefgh"]);
  });

  test("not a list: one failure on adoptTokens; null means none", async () => {
    expect((await subAccountBatch.check({}, { alias: "a", balance: 1, count: 1, modelPricing: pricing, adoptTokens: "sk-abcdefgh" })).failures).toEqual([
      { property: "adoptTokens", reason: "must be a list of sub-account keys (sk-...)" },
    ]);
    expect((await checked({ alias: "a", balance: 1, count: 1, modelPricing: pricing, adoptTokens: null })).adoptTokens).toBeUndefined();
  });
});

describe("SubAccountBatch adoptTokens: create", () => {
  test("everything already matches: one list, nothing written, balances kept", async () => {
    const seeded = seed("match", 3, wirePricing, 40);
    const { id, outs } = await adopt({ alias: "match", balance: 99, count: 3, modelPricing: pricing, adoptTokens: seeded });
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    expect([...outs.tokens].sort()).toEqual([...seeded].sort());
    expect(outs.adoptTokens).toEqual(seeded);
    expect(emu.state.listSubAccounts().filter((s) => seeded.includes(s.token)).map((s) => s.balance)).toEqual(Array(3).fill("40.000000"));
    expectNoSecret(id, seeded);
  });

  test("alias and pricing differ and count is larger: one list, one edit, one create of the rest", async () => {
    const [a] = seed("old-name", 1);
    const [b] = seed("aligned", 1);
    const { outs } = await adopt({ alias: "aligned", balance: 7, count: 4, modelPricing: pricing, adoptTokens: [a, b] });
    expect(calls(emu)).toEqual({ "sub-account/list": 1, "sub-account/edit": 1, "sub-account/create": 1 });
    expect(outs.count).toBe(4);
    expect(tokensOf("aligned").sort()).toEqual([...outs.tokens].sort());
    expect(outs.tokens.slice(0, 2).sort()).toEqual([a, b].sort());
  });

  test("a missing token (deleted, or of another account) fails naming its position masked; nothing is changed", async () => {
    const [a, gone] = seed("miss", 2);
    emu.state.deleteSubAccounts([gone]);
    const other = await emulator({ rateLimits: false });
    const foreign = other.state.createSubAccounts({ alias: "x", balance: 1, modelPricing: wirePricing, count: 1 })[0].token;
    await other.close();
    emu.clearRequests();
    const inputs = await checked({ alias: "miss-new", balance: 1, count: 5, modelPricing: pricing, adoptTokens: [a, gone, foreign] });
    const err = (await subAccountBatch.create(inputs).catch((e: Error) => e)) as Error;
    expect(err.message).toBe(
      `adoptTokens[1] (sk-...${gone.slice(-4)}), adoptTokens[2] (sk-...${foreign.slice(-4)}): no such sub-account in this account ` +
        "(deleted, or a key of another account); nothing was changed",
    );
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    expect(emu.state.getSubAccount(a)?.alias).toBe("miss");
    expectNoSecret(err.message + String(err.stack), [a, gone, foreign]);
  });
});

describe("SubAccountBatch adoptTokens: changes after creation", () => {
  test("a batch that adopts is updated, never replaced, for a change of adoptTokens or balance", async () => {
    const [a, b] = seed("norep", 2);
    const { id, outs } = await adopt({ alias: "norep", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a] });
    const news = await checked({ alias: "norep", balance: 6, count: 2, modelPricing: pricing, adoptTokens: [b, a] });
    expect(await subAccountBatch.diff(id, outs, news)).toEqual({ changes: true, replaces: [], deleteBeforeReplace: false });
    const reordered = await checked({ alias: "norep", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a] });
    expect((await subAccountBatch.diff(id, outs, reordered)).changes).toBe(false);
  });

  test("overlapping change [a, b] -> [b, c]: one list, a released and kept on the platform, b untouched, c adopted, the count filled by one create", async () => {
    const [a, b, c] = seed("ov", 3);
    const first = await adopt({ alias: "ov", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a, b] });
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    emu.clearRequests();
    const news = await checked({ alias: "ov", balance: 5, count: 3, modelPricing: pricing, adoptTokens: [b, c] }, first.outs);
    const { outs } = await subAccountBatch.update(first.id, first.outs, news);
    expect(calls(emu)).toEqual({ "sub-account/list": 1, "sub-account/create": 1 });
    expect(outs.tokens).toContain(b);
    expect(outs.tokens).toContain(c);
    expect(outs.tokens).not.toContain(a);
    expect(outs.count).toBe(3);
    for (const t of [a, b, c]) expect(emu.state.hasSubAccount(t)).toBe(true);
  });

  test("count down never deletes an adopted sub-account: the newest created one goes", async () => {
    const [a] = seed("down", 1);
    const first = await adopt({ alias: "down", balance: 5, count: 3, modelPricing: pricing, adoptTokens: [a] });
    const created = first.outs.tokens.filter((t) => t !== a);
    emu.clearRequests();
    const { outs } = await subAccountBatch.update(first.id, first.outs, await checked({ alias: "down", balance: 5, count: 1, modelPricing: pricing, adoptTokens: [a] }));
    expect(calls(emu)).toEqual({ "sub-account/delete": 1 });
    expect(outs.tokens).toEqual([a]);
    for (const t of created) expect(emu.state.hasSubAccount(t)).toBe(false);
  });

  test("adoptTokens added to a batch created without it (a 0.1.0 state): its own tokens stay, the new one is adopted with one list", async () => {
    const [x] = seed("later", 1);
    const { id, outs } = await adopt({ alias: "later", balance: 5, count: 2, modelPricing: pricing });
    expect(outs.adoptTokens).toBeUndefined();
    emu.clearRequests();
    const news = await checked({ alias: "later", balance: 5, count: 3, modelPricing: pricing, adoptTokens: [x] });
    expect((await subAccountBatch.diff(id, outs, news)).replaces).toEqual([]);
    const up = await subAccountBatch.update(id, outs, news);
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    expect(up.outs.tokens.sort()).toEqual([...outs.tokens, x].sort());
  });

  test("an adopted token deleted out of band: refresh drops it, the next update fails naming it masked and writes nothing", async () => {
    const [a, b] = seed("vanish", 2);
    const first = await adopt({ alias: "vanish", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a, b] });
    emu.state.deleteSubAccounts([b]);
    const read = found(await subAccountBatch.read(first.id, first.outs));
    expect(read.inputs.adoptTokens).toEqual([a, b]);
    expect(read.props.count).toBe(1);
    emu.clearRequests();
    const news = await checked({ alias: "vanish", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a, b] });
    const err = (await subAccountBatch.update(first.id, read.props, news).catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(/^adoptTokens\[1\] \(sk-\.\.\..{4}\): no such sub-account/);
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
  });

  test("destroy deletes adopted and created sub-accounts with one batch delete", async () => {
    const [a] = seed("gone", 1);
    const { id, outs } = await adopt({ alias: "gone", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a] });
    emu.clearRequests();
    await subAccountBatch.delete(id, outs);
    expect(calls(emu)).toEqual({ "sub-account/delete": 1 });
    expect(tokensOf("gone")).toEqual([]);
  });
});
