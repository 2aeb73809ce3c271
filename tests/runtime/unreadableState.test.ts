import { describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../provider/emulator/index.js";
import { apiKey, StateError, subAccountBatch, type Props } from "../../provider/runtime/index.js";
import { checkedInputs } from "../support/check.js";
import { calls, expectNoSecret, secretsOf, useRuntimeEmulator } from "../support/emulator.js";
import { writeCalls } from "../support/emulatorCalls.js";

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

const pricing = [{ model: "model-a", pricingFactor: 1 }];

async function batch(
  alias: string,
  count = 2,
): Promise<{ id: string; outs: Props; news: Awaited<ReturnType<typeof subAccountBatch.check>>["inputs"] }> {
  const news = await checkedInputs(subAccountBatch, { alias, balance: 10, count, modelPricing: pricing });
  const { id, outs } = await subAccountBatch.create(news);
  emu.clearRequests();
  return { id, outs, news };
}

async function key(
  alias: string,
): Promise<{ id: string; outs: Props; news: Awaited<ReturnType<typeof apiKey.check>>["inputs"] }> {
  const news = await checkedInputs(apiKey, { alias, securityConfig: { spendLimit: { monthly: 5 } } });
  const { id, outs } = await apiKey.create(news);
  emu.clearRequests();
  return { id, outs, news };
}

const without = (state: Props, field: string): Props =>
  Object.fromEntries(Object.entries(state).filter(([k]) => k !== field));
const liveAliases = (alias: string) => emu.state.listSubAccounts().filter((s) => s.alias === alias);

/** The rejection of a promise, which must be a StateError. */
async function stateErrorOf(p: Promise<unknown>): Promise<StateError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StateError);
  return err as StateError;
}

describe("a batch state edited by hand without tokens (issue 37: `TypeError: tokens is not iterable` at refresh, and a destroy that deleted nothing)", () => {
  test("read (preview --refresh), diff and update stop with the named error: resource type, field, what was expected, what to do; no API call", async () => {
    const { id, outs, news } = await batch("no-tokens-read");
    const state = without(outs, "tokens");
    for (const p of [
      subAccountBatch.read(id, state),
      subAccountBatch.diff(id, state, news),
      subAccountBatch.update(id, state, news),
    ]) {
      const err = await stateErrorOf(p);
      expect(err.message).toMatch(
        /^SubAccountBatch: the state \(version 1\) cannot be read: tokens: expected array, received undefined; nothing was changed\./,
      );
      expect(err.message).toContain("`pulumi state edit`");
      expect(err.message).toContain("`pulumi refresh`");
      expectNoSecret(err.message, secretsOf(emu));
    }
    expect(writeCalls(calls(emu))).toEqual({});
  });

  test("the advice says to put the tokens back, never to empty them (followed literally, `tokens: []` then a refresh dropped the batch and left its sub-accounts)", async () => {
    const { id, outs } = await batch("no-tokens-advice");
    const err = await stateErrorOf(subAccountBatch.read(id, without(outs, "tokens")));
    expect(err.message).toContain(
      "Put the field back as it was with `pulumi state edit` (its last value is in `pulumi stack export --version N`, N from `pulumi stack history`",
    );
    expect(err.message).toContain(
      'Never empty it nor write `[]` or `""` in its place: a resource whose state holds nothing is taken for deleted by that refresh',
    );
  });

  // Issue 53: the advice followed word for word: the field `tokens` "corrected" to what was expected (an array, `[]`),
  // then `pulumi refresh`, then a destroy. The refresh dropped the batch, and its live sub-accounts outlived the destroy.
  test("followed word for word (`tokens: []`, `pulumi refresh`, then a destroy): the refresh keeps the batch and writes its tokens back, the destroy leaves nothing", async () => {
    const { id, outs } = await batch("no-tokens-literal", 3);
    const err = await stateErrorOf(subAccountBatch.read(id, without(outs, "tokens")));
    expect(err.message).toContain("`pulumi state edit`");
    expect(err.message).toContain("then run `pulumi refresh`");
    const edited = { ...outs, tokens: [] };
    const refreshed = await subAccountBatch.read(id, edited);
    expect(refreshed.id).toBe(id);
    expect([...(refreshed.props as { tokens: string[] }).tokens].sort()).toEqual([...(outs.tokens as string[])].sort());
    await subAccountBatch.delete(id, refreshed.props as Props);
    expect(liveAliases("no-tokens-literal")).toEqual([]);
  });

  test("a state whose tokens and subAccounts are both emptied: a refresh changes nothing and says what to put back; the sub-accounts stay named by nobody's delete", async () => {
    const { id, outs } = await batch("no-tokens-both", 2);
    const err = await subAccountBatch.read(id, { ...outs, tokens: [], subAccounts: [] }).catch((e: Error) => e);
    expect((err as Error).message).toMatch(
      /counts 2 sub-account\(s\) and names none .* nothing was changed\. Put back what it held/,
    );
    expect(liveAliases("no-tokens-both")).toHaveLength(2);
    await subAccountBatch.delete(id, outs);
  });

  test("delete deletes the sub-accounts its subAccounts name, with one call, and fails no more (they are what the batch held)", async () => {
    const { id, outs } = await batch("no-tokens-delete");
    expect(liveAliases("no-tokens-delete")).toHaveLength(2);
    await subAccountBatch.delete(id, without(outs, "tokens"));
    expect(writeCalls(calls(emu))).toEqual({ "sub-account/delete": 1 });
    expect(liveAliases("no-tokens-delete")).toHaveLength(0);
  });

  test("delete of a state that names no sub-account it can read (neither list) fails, deletes nothing, and says so", async () => {
    const { id, outs } = await batch("no-lists");
    const err = await stateErrorOf(subAccountBatch.delete(id, without(without(outs, "tokens"), "subAccounts")));
    expect(err.message).toMatch(/cannot tell which sub-accounts to delete, so nothing was deleted/);
    expect(writeCalls(calls(emu))).toEqual({});
    expect(liveAliases("no-lists")).toHaveLength(2);
  });

  test("delete of a state with one unreadable entry deletes the others, then fails: the resource stays in the state", async () => {
    const { id, outs } = await batch("one-bad-entry", 3);
    const tokens = outs.tokens as string[];
    const subAccounts = outs.subAccounts as Props[];
    const state = {
      ...outs,
      tokens: [tokens[0], 42],
      subAccounts: [subAccounts[0], { ...subAccounts[1], token: null }],
    };
    const err = await stateErrorOf(subAccountBatch.delete(id, state));
    expect(err.message).toMatch(
      /deleted the 1 sub-account\(s\) it names, but 2 more entries name no sub-account it can read, so the resource stays in the state/,
    );
    expect(writeCalls(calls(emu))).toEqual({ "sub-account/delete": 1 });
    expect(liveAliases("one-bad-entry").map((s) => s.token)).not.toContain(tokens[0]);
  });

  test("delete of a state whose connection does not read deletes nothing: which account the tokens are on is unknown", async () => {
    const { id, outs } = await batch("bad-connection");
    const err = await stateErrorOf(subAccountBatch.delete(id, { ...outs, alias: 7, connection: "elsewhere" }));
    expect(err.message).toMatch(/cannot tell which account they are on, so nothing was deleted/);
    expect(writeCalls(calls(emu))).toEqual({});
  });
});

describe("an ApiKey state that does not parse", () => {
  test("read, diff and update stop with the named error; a delete of a state whose other fields fail still deletes the key it names", async () => {
    const { id, outs, news } = await key("bad-alias");
    const state = { ...outs, alias: ["not", "a", "string"], enabled: "yes" };
    for (const p of [apiKey.read(id, state), apiKey.diff(id, state, news), apiKey.update(id, state, news)]) {
      const err = await stateErrorOf(p);
      expect(err.message).toMatch(
        /^ApiKey: the state \(version 1\) cannot be read: alias: expected string, received array; enabled: expected boolean, received string/,
      );
      expectNoSecret(err.message, secretsOf(emu));
    }
    expect(writeCalls(calls(emu))).toEqual({});
    await apiKey.delete(id, state);
    expect(writeCalls(calls(emu))).toEqual({ "api-key/delete": 1 });
    expect(emu.state.hasKey(outs.key as string)).toBe(false);
  });

  test("delete of a state without a readable key fails and deletes nothing", async () => {
    const { id, outs } = await key("no-key");
    const err = await stateErrorOf(apiKey.delete(id, { ...outs, key: "not a key" }));
    expect(err.message).toMatch(
      /^ApiKey: the state \(version 1\) cannot be read: key: .*cannot tell which key to delete, so nothing was deleted/,
    );
    expect(writeCalls(calls(emu))).toEqual({});
    expect(emu.state.hasKey(outs.key as string)).toBe(true);
  });
});
