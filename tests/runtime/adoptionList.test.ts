import { describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../provider/emulator/index.js";
import { startFresh, subAccountBatch } from "../../provider/runtime/index.js";
import { useRuntimeEmulator } from "../support/emulator.js";
import { checkedInputs } from "../support/check.js";

// Issue 36: the first `up` after an import creates every adopting batch in one command; their creates find the
// adopted tokens in the command's shared list (command/sharedList.ts), so the account is listed once however many batches
// adopt (it was one list per batch: 201 for 200), and a token missing from it is asked for again before failing.

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

const pricing = [{ model: "model-a", pricingFactor: 1.2 }];
const adopting = (alias: string, tokens: string[]) =>
  checkedInputs(subAccountBatch, {
    alias,
    balance: 1,
    count: tokens.length,
    modelPricing: pricing,
    adoptTokens: tokens,
  });

describe("adopting batches of one command share one list", () => {
  test("200 batches created at once, each adopting one sub-account: one list of the account, no write", async () => {
    const tokens = emu.state
      .createSubAccounts({
        alias: "team",
        balance: 5,
        modelPricing: [{ model: "model-a", pricing_factor: 1.2 }],
        count: 100,
      })
      .map((s) => s.token);
    tokens.push(
      ...emu.state
        .createSubAccounts({
          alias: "team",
          balance: 5,
          modelPricing: [{ model: "model-a", pricing_factor: 1.2 }],
          count: 100,
        })
        .map((s) => s.token),
    );
    const inputs = await Promise.all(tokens.map((t) => adopting("team", [t])));
    startFresh();
    emu.clearRequests();
    const made = await Promise.all(inputs.map((i) => subAccountBatch.create(i)));
    expect(made.map((m) => m.outs.tokens[0])).toEqual(tokens);
    expect(emu.calls()).toEqual({ "sub-account/list": 1 });
  });

  test("a token missing from the shared list is asked for again (one list by token) before the create fails, naming it masked", async () => {
    const [kept, gone] = emu.state
      .createSubAccounts({
        alias: "pair",
        balance: 5,
        modelPricing: [{ model: "model-a", pricing_factor: 1.2 }],
        count: 2,
      })
      .map((s) => s.token);
    emu.state.deleteSubAccount(gone);
    const inputs = await adopting("pair", [kept, gone]);
    startFresh();
    emu.clearRequests();
    const err = await subAccountBatch.create(inputs).catch((e: Error) => e);
    expect((err as Error).message).toContain(
      `adoptTokens[1] (sk-...${gone.slice(-4)}): no such sub-account in this account`,
    );
    expect(emu.calls()).toEqual({ "sub-account/list": 2 });
  });

  test("more than three tokens missing from the shared list: one new list of the account confirms them, not one call each", async () => {
    const made = emu.state
      .createSubAccounts({
        alias: "many",
        balance: 5,
        modelPricing: [{ model: "model-a", pricing_factor: 1.2 }],
        count: 5,
      })
      .map((s) => s.token);
    emu.state.deleteSubAccounts(made.slice(1));
    const inputs = await adopting("many", made);
    startFresh();
    emu.clearRequests();
    const err = await subAccountBatch.create(inputs).catch((e: Error) => e);
    expect((err as Error).message).toContain("adoptTokens[1] (sk-...");
    expect((err as Error).message).toContain("adoptTokens[4] (sk-...");
    expect(emu.calls()).toEqual({ "sub-account/list": 2 });
  });

  test("a list taken before a write of the same session is not reused after it: the next adopting create lists again", async () => {
    const [first, second] = emu.state
      .createSubAccounts({
        alias: "old",
        balance: 5,
        modelPricing: [{ model: "model-a", pricing_factor: 1.2 }],
        count: 2,
      })
      .map((s) => s.token);
    const renaming = await adopting("renamed", [first]);
    const next = await adopting("renamed", [second]);
    startFresh();
    emu.clearRequests();
    // The first create renames what it adopts (one edit): the list it read is stale from then on.
    await subAccountBatch.create(renaming);
    expect(emu.calls()).toEqual({ "sub-account/list": 1, "sub-account/edit": 1 });
    emu.state.deleteSubAccounts([second]);
    emu.clearRequests();
    const err = await subAccountBatch.create(next).catch((e: Error) => e);
    expect((err as Error).message).toContain(
      `adoptTokens[0] (sk-...${second.slice(-4)}): no such sub-account in this account`,
    );
    expect(emu.calls()).toEqual({ "sub-account/list": 2 });
  });
});
