import { describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../provider/emulator/index.js";
import { apiKey, startFresh, subAccountBatch } from "../../provider/runtime/index.js";
import { useRuntimeEmulator } from "../support/emulator.js";
import { writeCalls } from "../support/emulatorCalls.js";
import { checkedInputs } from "../support/check.js";

// Issue 36: one object, one owner, at the provider too (programs that bypass the resource classes): in one command
// (one session), a batch create may not adopt a token another batch holds and keeps, and two ApiKey creates may
// not adopt one key. The error names the key masked; nothing is written.

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

type Props = Record<string, unknown>;
const pricing = [{ model: "model-a", pricingFactor: 1.2 }];
const batch = (alias: string, more: Props = {}) => checkedInputs(subAccountBatch, { alias, balance: 1, count: 1, modelPricing: pricing, ...more });
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
    expect((err as Error).message).toContain(`adoptTokens[0] (${mask(t)}) is held by another SubAccountBatch of this deployment: one sub-account has one owner`);
    expect((err as Error).message).not.toContain(t);
    expect(writeCalls(emu.calls())).toEqual({});
    expect(emu.calls()).toEqual({});
  });

  test("two creates adopting one console token: the second fails; a token one batch releases may be adopted by another in the same command", async () => {
    const [x, y] = emu.state.createSubAccounts({ alias: "c", balance: 1, modelPricing: [{ model: "model-a", pricing_factor: 1.2 }], count: 2 }).map((s) => s.token);
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
