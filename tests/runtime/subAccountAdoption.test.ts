import { describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../provider/emulator/index.js";
import {
  startFresh,
  subAccountBatch,
  type SubAccountBatchInputs,
  type SubAccountBatchOutputs,
} from "../../provider/runtime/index.js";
import { calls, emulator, expectNoSecret, useRuntimeEmulator } from "../support/emulator.js";
import { found, inputsAfterRefresh } from "../support/readOutcome.js";
import { checkedInputs } from "../support/check.js";

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

const checked = (news: Props, olds: Props = {}) => checkedInputs(subAccountBatch, news, olds);

async function adopt(news: Props): Promise<{ id: string; outs: SubAccountBatchOutputs }> {
  const inputs = await checked(news);
  emu.clearRequests();
  return subAccountBatch.create(inputs);
}

const tokensOf = (alias: string) =>
  emu.state
    .listSubAccounts()
    .filter((s) => s.alias === alias)
    .map((s) => s.token);

describe("SubAccountBatch adoptTokens: check", () => {
  test("a malformed or repeated token is named by position, never echoed; count below the adopted number fails", async () => {
    const [t] = seed("chk", 1);
    const { failures } = await subAccountBatch.check(
      {},
      { alias: "a", balance: 1, count: 2, modelPricing: pricing, adoptTokens: [t, "sk-admin-abcdefgh", t] },
    );
    expect(failures).toEqual([
      { property: "adoptTokens[1]", reason: "must be a sub-account key that begins with sk- (not an admin key)" },
      { property: "adoptTokens[2]", reason: "is the same key as adoptTokens[0]" },
      {
        property: "count",
        reason: "2 must be at least the number of adoptTokens (3): every adopted sub-account counts",
      },
    ]);
    expectNoSecret(JSON.stringify(failures), [t, "sk-admin-abcdefgh"]);
  });

  test("not a list: one failure on adoptTokens; null means none", async () => {
    expect(
      (
        await subAccountBatch.check(
          {},
          { alias: "a", balance: 1, count: 1, modelPricing: pricing, adoptTokens: "sk-abcdefgh" },
        )
      ).failures,
    ).toEqual([{ property: "adoptTokens", reason: "must be a list of sub-account keys (sk-...)" }]);
    expect(
      (await checked({ alias: "a", balance: 1, count: 1, modelPricing: pricing, adoptTokens: null })).adoptTokens,
    ).toBeUndefined();
  });
});

describe("SubAccountBatch adoptTokens: create", () => {
  test("everything already matches: one list, nothing written, balances kept", async () => {
    const seeded = seed("match", 3, wirePricing, 40);
    const { id, outs } = await adopt({
      alias: "match",
      balance: 99,
      count: 3,
      modelPricing: pricing,
      adoptTokens: seeded,
    });
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    expect([...outs.tokens].sort()).toEqual([...seeded].sort());
    expect(outs.adoptTokens).toEqual(seeded);
    expect(
      emu.state
        .listSubAccounts()
        .filter((s) => seeded.includes(s.token))
        .map((s) => s.balance),
    ).toEqual(Array(3).fill("40.000000"));
    expectNoSecret(id, seeded);
  });

  test("alias and pricing differ and count is larger: one list, one edit, one create of the rest", async () => {
    const [a] = seed("old-name", 1);
    const [b] = seed("aligned", 1);
    const { outs } = await adopt({
      alias: "aligned",
      balance: 7,
      count: 4,
      modelPricing: pricing,
      adoptTokens: [a, b],
    });
    expect(calls(emu)).toEqual({ "sub-account/list": 1, "sub-account/edit": 1, "sub-account/create": 1 });
    expect(outs.count).toBe(4);
    expect(tokensOf("aligned").sort()).toEqual([...outs.tokens].sort());
    expect(outs.tokens.slice(0, 2).sort()).toEqual([a, b].sort());
  });

  test("a missing token (deleted, or of another account) fails naming its position masked; nothing is changed", async () => {
    const [a, gone] = seed("miss", 2);
    emu.state.deleteSubAccounts([gone]);
    const other = await emulator({ rateLimits: false });
    const foreign = other.state.createSubAccounts({ alias: "x", balance: 1, modelPricing: wirePricing, count: 1 })[0]
      .token;
    await other.close();
    emu.clearRequests();
    const inputs = await checked({
      alias: "miss-new",
      balance: 1,
      count: 5,
      modelPricing: pricing,
      adoptTokens: [a, gone, foreign],
    });
    const err = (await subAccountBatch.create(inputs).catch((e: Error) => e)) as Error;
    expect(err.message).toBe(
      `adoptTokens[1] (sk-...${gone.slice(-4)}), adoptTokens[2] (sk-...${foreign.slice(-4)}): no such sub-account in this account ` +
        "(deleted, or a key of another account); nothing was changed",
    );
    // One list of the account, then one list by token for each missing one before it is called missing.
    expect(calls(emu)).toEqual({ "sub-account/list": 3 });
    expect(emu.state.getSubAccount(a)?.alias).toBe("miss");
    expectNoSecret(err.message + String(err.stack), [a, gone, foreign]);
  });
});

describe("SubAccountBatch adoptTokens: changes after creation", () => {
  test("a batch that adopts is updated, never replaced, for a change of adoptTokens or balance", async () => {
    const [a, b] = seed("norep", 2);
    const { id, outs } = await adopt({ alias: "norep", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a] });
    // b joins: count grows with it (issue 28: adopting never deletes the sub-account the batch created).
    const news = await checked({ alias: "norep", balance: 6, count: 3, modelPricing: pricing, adoptTokens: [b, a] });
    expect(await subAccountBatch.diff(id, outs, news)).toEqual({
      changes: true,
      replaces: [],
      deleteBeforeReplace: false,
    });
    const reordered = await checked({ alias: "norep", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a] });
    expect((await subAccountBatch.diff(id, outs, reordered)).changes).toBe(false);
  });

  test("overlapping change [a, b] -> [b, c]: one list, a released and kept on the platform, b untouched, c adopted, the count filled by one create", async () => {
    const [a, b, c] = seed("ov", 3);
    const first = await adopt({ alias: "ov", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a, b] });
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    startFresh();
    emu.clearRequests();
    const news = await checked(
      { alias: "ov", balance: 5, count: 3, modelPricing: pricing, adoptTokens: [b, c] },
      first.outs,
    );
    const { outs } = await subAccountBatch.update(first.id, first.outs, news);
    expect(calls(emu)).toEqual({ "sub-account/list": 1, "sub-account/create": 1, "sub-account/edit": 1 });
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
    startFresh();
    emu.clearRequests();
    const { outs } = await subAccountBatch.update(
      first.id,
      first.outs,
      await checked({ alias: "down", balance: 5, count: 1, modelPricing: pricing, adoptTokens: [a] }),
    );
    expect(calls(emu)).toEqual({ "sub-account/delete": 1 });
    expect(outs.tokens).toEqual([a]);
    for (const t of created) expect(emu.state.hasSubAccount(t)).toBe(false);
  });

  test("adoptTokens added to a batch created without it (a 0.1.0 state): its own tokens stay, the new one is adopted with one list", async () => {
    const [x] = seed("later", 1);
    const { id, outs } = await adopt({ alias: "later", balance: 5, count: 2, modelPricing: pricing });
    expect(outs.adoptTokens).toBeUndefined();
    startFresh();
    emu.clearRequests();
    const news = await checked({ alias: "later", balance: 5, count: 3, modelPricing: pricing, adoptTokens: [x] });
    expect((await subAccountBatch.diff(id, outs, news)).replaces).toEqual([]);
    const up = await subAccountBatch.update(id, outs, news);
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    expect(up.outs.tokens.sort()).toEqual([...outs.tokens, x].sort());
  });

  test("destroy deletes adopted and created sub-accounts with one batch delete", async () => {
    const [a] = seed("gone", 1);
    const { id, outs } = await adopt({ alias: "gone", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a] });
    startFresh();
    emu.clearRequests();
    await subAccountBatch.delete(id, outs);
    expect(calls(emu)).toEqual({ "sub-account/delete": 1 });
    expect(tokensOf("gone")).toEqual([]);
  });
});

/** A batch as the state holds it between commands: the inputs check stored, and the outputs. */
type Stored = { id: string; inputs: SubAccountBatchInputs; outs: SubAccountBatchOutputs };

/** One `pulumi up` of a program: check against the stored inputs, diff, and the update the diff asks for. */
async function up(stored: Stored, news: Props): Promise<Stored & { changed: boolean }> {
  const inputs = await checked(news, stored.inputs);
  const { changes, replaces } = await subAccountBatch.diff(stored.id, stored.outs, inputs);
  expect(replaces).toEqual([]);
  if (!changes) return { ...stored, inputs, changed: false };
  const { outs } = await subAccountBatch.update(stored.id, stored.outs, inputs);
  return { id: stored.id, inputs, outs, changed: true };
}

/** A refresh the engine keeps (`pulumi refresh`, `up --refresh`): read's outputs, and its inputs when it gives any. */
async function refresh(stored: Stored): Promise<Stored> {
  const read = found(await subAccountBatch.read(stored.id, stored.outs));
  return { id: read.id, inputs: inputsAfterRefresh(read, stored.inputs), outs: read.props };
}

/**
 * A batch adopting `tokens` (and creating the rest of `count`), as its first `pulumi up` leaves it; what follows is
 * another command, so a new session (a plugin process serves one command and starts with nothing kept).
 */
async function adopted(alias: string, tokens: string[], count = tokens.length, balance = 5): Promise<Stored> {
  const inputs = await checked({ alias, balance, count, modelPricing: pricing, adoptTokens: tokens });
  const { id, outs } = await subAccountBatch.create(inputs);
  startFresh();
  emu.clearRequests();
  return { id, inputs, outs };
}

describe("SubAccountBatch adoption, day two: an adopted sub-account is owned like a created one", () => {
  test("one deleted in the console: the next up --refresh recreates one to reach count (one create, no list), nothing fails", async () => {
    const [a, b, c] = seed("vanish", 3);
    const first = await adopted("vanish", [a, b, c]);
    emu.state.deleteSubAccounts([b]);
    const refreshed = await refresh(first);
    expect(refreshed.outs.count).toBe(2);
    emu.clearRequests();
    const repaired = await up(refreshed, {
      alias: "vanish",
      balance: 5,
      count: 3,
      modelPricing: pricing,
      adoptTokens: [a, b, c],
    });
    expect(calls(emu)).toEqual({ "sub-account/create": 1, "sub-account/edit": 1 });
    expect(repaired.outs.count).toBe(3);
    expect(repaired.outs.tokens).toEqual(expect.arrayContaining([a, c]));
    expect(tokensOf("vanish").sort()).toEqual([...repaired.outs.tokens].sort());
    // Converged: the gate that follows (a command of its own) sees nothing to do, and the next up calls nothing.
    startFresh();
    const again = await refresh(repaired);
    startFresh();
    emu.clearRequests();
    expect(
      (await up(again, { alias: "vanish", balance: 5, count: 3, modelPricing: pricing, adoptTokens: [a, b, c] }))
        .changed,
    ).toBe(false);
    expect(emu.requests()).toHaveLength(0);
  });

  test("every adopted one deleted: the batch stays in the state (not gone) and the next up creates count", async () => {
    const [a, b] = seed("all-gone", 2);
    const first = await adopted("all-gone", [a, b]);
    emu.state.deleteSubAccounts([a, b]);
    const read = await subAccountBatch.read(first.id, first.outs);
    expect(read.id).toBe(first.id);
    const refreshed = await refresh(first);
    expect(refreshed.outs.count).toBe(0);
    emu.clearRequests();
    const repaired = await up(refreshed, {
      alias: "all-gone",
      balance: 5,
      count: 2,
      modelPricing: pricing,
      adoptTokens: [a, b],
    });
    expect(calls(emu)).toEqual({ "sub-account/create": 1, "sub-account/edit": 1 });
    expect(tokensOf("all-gone")).toHaveLength(2);
    expect(repaired.outs.tokens).not.toContain(a);
  });

  test("a token newly added to adoptTokens must still exist: named masked, nothing written", async () => {
    const [a, gone] = seed("late-add", 2);
    const first = await adopted("late-add", [a], 2);
    emu.state.deleteSubAccounts([gone]);
    emu.clearRequests();
    const inputs = await checked(
      { alias: "late-add", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a, gone] },
      first.inputs,
    );
    const err = (await subAccountBatch.update(first.id, first.outs, inputs).catch((e: Error) => e)) as Error;
    expect(err.message).toBe(
      `adoptTokens[1] (sk-...${gone.slice(-4)}): no such sub-account in this account (deleted, or a key of another account); nothing was changed`,
    );
    // One list of the account, then one list by token before the missing one is called missing.
    expect(calls(emu)).toEqual({ "sub-account/list": 2 });
  });
});

describe("SubAccountBatch adoption, day two: adoptTokens matters at adoption only", () => {
  test.each([
    ["removed", undefined],
    ["emptied", []],
  ])("adoptTokens %s after adoption: no diff, no call; the state keeps the adopted set", async (_how, adoptTokens) => {
    const [a, b] = seed("cleanup", 2);
    const first = await adopted("cleanup", [a, b], 3);
    const after = await up(first, {
      alias: "cleanup",
      balance: 5,
      count: 3,
      modelPricing: pricing,
      ...(adoptTokens ? { adoptTokens } : {}),
    });
    expect(after.changed).toBe(false);
    expect(emu.requests()).toHaveLength(0);
    expect(after.outs.adoptTokens).toEqual([a, b]);
    // A refresh finds nothing drifted: it does not bring the tokens back among the inputs either.
    expect((await refresh(after)).inputs.adoptTokens).toEqual(adoptTokens);
  });

  test("with adoptTokens removed, a later balance change or a lower count never replaces the batch nor deletes an adopted one", async () => {
    const [a, b] = seed("kept", 2);
    const first = await adopted("kept", [a, b], 4);
    const created = first.outs.tokens.filter((t) => t !== a && t !== b);
    const news = { alias: "kept", balance: 9, count: 2, modelPricing: pricing };
    const inputs = await checked(news, first.inputs);
    expect(await subAccountBatch.diff(first.id, first.outs, inputs)).toEqual({
      changes: true,
      replaces: [],
      deleteBeforeReplace: false,
    });
    const after = await up(first, news);
    expect(calls(emu)).toEqual({ "sub-account/delete": 1 });
    expect([...after.outs.tokens].sort()).toEqual([a, b].sort());
    for (const t of created) expect(emu.state.hasSubAccount(t)).toBe(false);
    expect(after.outs.adoptTokens).toEqual([a, b]);
  });

  test("count below the adopted sub-accounts the batch holds, adoptTokens removed: the diff (preview) fails naming count, nothing written", async () => {
    const [a, b] = seed("floor", 2);
    const first = await adopted("floor", [a, b]);
    const inputs = await checked({ alias: "floor", balance: 5, count: 1, modelPricing: pricing }, first.inputs);
    const err = (await subAccountBatch.diff(first.id, first.outs, inputs).catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(/^count: 1 is below the 2 sub-accounts this batch adopted and holds/);
    expectNoSecret(err.message, [a, b]);
    expect(emu.requests()).toHaveLength(0);
  });

  test("releasing stays explicit: a token taken out of a non-empty list leaves the batch and the adopted set, and stays on the platform", async () => {
    const [a, b] = seed("release", 2);
    const first = await adopted("release", [a, b]);
    const after = await up(first, { alias: "release", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a] });
    expect(calls(emu)).toEqual({ "sub-account/create": 1, "sub-account/edit": 1 });
    expect(after.outs.adoptTokens).toEqual([a]);
    expect(after.outs.tokens).not.toContain(b);
    expect(emu.state.hasSubAccount(b)).toBe(true);
  });

  test("a state of the previous version (the adopted set is the adoptTokens it echoed): removing adoptTokens changes nothing", async () => {
    const [a, b] = seed("prev", 2);
    const first = await adopted("prev", [a, b]);
    // Exactly what the previous version wrote: the same fields, adoptTokens echoing the input.
    const { adoptTokens: _kept, ...rest } = first.outs;
    const previous: SubAccountBatchOutputs = { ...rest, adoptTokens: [a, b] };
    const after = await up(
      { ...first, outs: previous },
      { alias: "prev", balance: 6, count: 2, modelPricing: pricing },
    );
    expect(after.changed).toBe(true);
    expect(emu.requests()).toHaveLength(0);
    expect(after.outs.adoptTokens).toEqual([a, b]);
    expect(after.outs.tokens.sort()).toEqual([a, b].sort());
  });

  test("a state without any adoption (0.1.0): nothing is adopted, so a balance change still replaces", async () => {
    const plain = await subAccountBatch.create(
      await checked({ alias: "plain", balance: 5, count: 1, modelPricing: pricing }),
    );
    const inputs = await checked({ alias: "plain", balance: 6, count: 1, modelPricing: pricing });
    expect((await subAccountBatch.diff(plain.id, plain.outs, inputs)).replaces).toEqual(["balance"]);
  });
});

describe("SubAccountBatch refresh: the inputs stored change only where the platform drifted", () => {
  test("nothing drifted: the stored inputs stay exactly as check wrote them", async () => {
    const [a] = seed("still", 1);
    const first = await adopted("still", [a], 2);
    expect((await refresh(first)).inputs).toEqual(first.inputs);
  });

  test("drift: the platform's values, without adoptTokens (a read cannot tell whether the program still gives them, nor keep them secret if not)", async () => {
    const [a, b] = seed("drifted", 2);
    const first = await adopted("drifted", [a, b]);
    emu.state.deleteSubAccounts([b]);
    const read = found(await subAccountBatch.read(first.id, first.outs));
    expect(read.inputs).toEqual({ alias: "drifted", balance: 5, count: 1, modelPricing: pricing });
    expect(read.props.adoptTokens).toEqual([a, b]);
  });
});
