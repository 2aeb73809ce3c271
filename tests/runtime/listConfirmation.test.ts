import { describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../provider/emulator/index.js";
import { subAccountBatch } from "../../provider/runtime/index.js";
import { calls, useRuntimeEmulator } from "../support/emulator.js";
import { found } from "../support/readOutcome.js";

// Issue 28: a list that misses a sub-account is not proof that it is gone. On a platform that pages by offset
// (here 4 a page), a console delete and a create between two pages leave the total unchanged and shift the
// offsets: the list skips a live sub-account. A refresh confirms what seems gone before dropping it.

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e), { subAccountListCap: 4 });

const pricing = [{ model: "model-a", pricingFactor: 1 }];

async function batchOf(alias: string, count: number) {
  const { inputs } = await subAccountBatch.check({}, { alias, balance: 1, count, modelPricing: pricing });
  return subAccountBatch.create(inputs);
}

describe("a batch's refresh confirms what a list misses", () => {
  test("a live sub-account skipped by a torn paged list stays in the batch: one sk-filtered list confirms it", async () => {
    const before = emu.state
      .createSubAccounts({ alias: "console", balance: 1, modelPricing: [], count: 4 })
      .map((s) => s.token);
    const { id, outs } = await batchOf("torn", 3);
    let torn = false;
    emu.afterSubAccountList((page) => {
      if (page !== 1 || torn) return;
      torn = true;
      // Between page 1 and page 2: one console delete on page 1 and one create at the end, total unchanged.
      emu.state.deleteSubAccounts([before[0]]);
      emu.state.createSubAccounts({ alias: "console", balance: 1, modelPricing: [], count: 1 });
    });
    emu.clearRequests();
    const read = found(await subAccountBatch.read(id, outs));
    expect(read.props.count).toBe(3);
    expect(read.props.tokens).toEqual(outs.tokens);
    // The whole list (2 pages) and one confirmation of the one it missed.
    expect(calls(emu)).toEqual({ "sub-account/list": 3 });
  });

  test("one really deleted: confirmed gone with one call, then dropped", async () => {
    const { id, outs } = await batchOf("really", 2);
    emu.state.deleteSubAccounts([outs.tokens[0]]);
    emu.clearRequests();
    const read = found(await subAccountBatch.read(id, outs));
    expect(read.props.tokens).toEqual([outs.tokens[1]]);
    const listed = emu.state.listSubAccounts().length;
    expect(calls(emu)).toEqual({ "sub-account/list": Math.ceil(listed / 4) + 1 });
  });

  test("nothing missing: no confirmation call", async () => {
    const { id, outs } = await batchOf("whole", 2);
    emu.clearRequests();
    found(await subAccountBatch.read(id, outs));
    expect(calls(emu)).toEqual({ "sub-account/list": Math.ceil(emu.state.listSubAccounts().length / 4) });
  });

  test("more than three seem gone: one new list of the account confirms them all", async () => {
    const { id, outs } = await batchOf("many", 5);
    emu.state.deleteSubAccounts(outs.tokens.slice(0, 4));
    emu.clearRequests();
    const read = found(await subAccountBatch.read(id, outs));
    expect(read.props.tokens).toEqual([outs.tokens[4]]);
    const pages = Math.ceil(emu.state.listSubAccounts().length / 4);
    expect(calls(emu)).toEqual({ "sub-account/list": 2 * pages });
  });
});
