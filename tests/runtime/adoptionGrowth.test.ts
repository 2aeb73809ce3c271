import { describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../provider/emulator/index.js";
import { startFresh, subAccountBatch } from "../../provider/runtime/index.js";
import { calls, useRuntimeEmulator } from "../support/emulator.js";
import { checkedInputs } from "../support/check.js";

// Issue 28: adding a token to adoptTokens never deletes a sub-account. The update reaches `count`, so a token that
// joins with `count` unchanged would push out the newest sub-account the batch created: the diff (preview) fails
// instead, naming count and the value it needs. Each test's first create is one `up`, and what follows another
// command: a new session (startFresh), as a new plugin process starts with nothing kept.

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

type Props = Record<string, unknown>;
const pricing = [{ model: "model-a", pricingFactor: 1.2 }];

function seed(alias: string, count: number): string[] {
  const made = emu.state
    .createSubAccounts({ alias, balance: 40, modelPricing: [{ model: "model-a", pricing_factor: 1.2 }], count })
    .map((s) => s.token);
  emu.clearRequests();
  return made;
}

const checked = (news: Props) => checkedInputs(subAccountBatch, news);

const live = (alias: string) =>
  emu.state
    .listSubAccounts()
    .filter((s) => s.alias === alias)
    .map((s) => s.token)
    .sort();

describe("adoptTokens growth", () => {
  test("a token added with count unchanged: the diff fails naming count and the value it needs; nothing is deleted or written", async () => {
    const [a, x] = seed("grow", 2);
    const first = await subAccountBatch.create(
      await checked({ alias: "grow", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a] }),
    );
    const before = live("grow");
    expect(before).toHaveLength(3); // a, x and the one the batch created
    startFresh();
    emu.clearRequests();
    const grown = await checked({ alias: "grow", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a, x] });
    await expect(subAccountBatch.diff(first.id, first.outs, grown)).rejects.toThrow(
      "count: 2 is too low to adopt 1 more sub-account(s) listed in adoptTokens: with the 2 this batch holds that makes 3, " +
        "and reaching 2 would delete 1 it holds. Set count to 3",
    );
    expect(emu.requests()).toHaveLength(0);
    expect(live("grow")).toEqual(before);
    const message = await subAccountBatch.diff(first.id, first.outs, grown).catch((err: Error) => err.message);
    for (const t of before) expect(message).not.toContain(t.slice(3));
  });

  test("the same with count raised to the value named: one list, no write, the token joins and every sub-account stays", async () => {
    const [a, x] = seed("grow-ok", 2);
    const first = await subAccountBatch.create(
      await checked({ alias: "grow-ok", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a] }),
    );
    const before = live("grow-ok");
    startFresh();
    emu.clearRequests();
    const grown = await checked({ alias: "grow-ok", balance: 5, count: 3, modelPricing: pricing, adoptTokens: [a, x] });
    expect((await subAccountBatch.diff(first.id, first.outs, grown)).changes).toBe(true);
    const { outs } = await subAccountBatch.update(first.id, first.outs, grown);
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    expect([...outs.tokens].sort()).toEqual(before);
    expect(outs.adoptTokens).toEqual([a, x]);
  });

  test("a batch that never adopted (count 2, all created) given adoptTokens [x] with count 2: fails the same way", async () => {
    const [x] = seed("grow-new", 1);
    const first = await subAccountBatch.create(
      await checked({ alias: "grow-new", balance: 5, count: 2, modelPricing: pricing }),
    );
    startFresh();
    emu.clearRequests();
    const grown = await checked({ alias: "grow-new", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [x] });
    await expect(subAccountBatch.diff(first.id, first.outs, grown)).rejects.toThrow("Set count to 3");
    expect(emu.requests()).toHaveLength(0);
  });

  test("one token released and another added with count unchanged: a swap, allowed, nothing deleted", async () => {
    const [a, b, x] = seed("swap", 3);
    const first = await subAccountBatch.create(
      await checked({ alias: "swap", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a, b] }),
    );
    startFresh();
    emu.clearRequests();
    const swapped = await checked({ alias: "swap", balance: 5, count: 2, modelPricing: pricing, adoptTokens: [a, x] });
    await subAccountBatch.diff(first.id, first.outs, swapped);
    const { outs } = await subAccountBatch.update(first.id, first.outs, swapped);
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    expect([...outs.tokens].sort()).toEqual([a, x].sort());
    expect(live("swap")).toEqual([a, b, x].sort());
  });
});
