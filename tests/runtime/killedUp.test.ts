import { describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../provider/emulator/index.js";
import { identityMark, markedAlias } from "../../provider/runtime/subAccountBatch/recovery.js";
import { startFresh, subAccountBatch, type Props } from "../../provider/runtime/index.js";
import { checkedInputs } from "../support/check.js";
import { calls, clientOf, useRuntimeEmulator } from "../support/emulator.js";

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

/**
 * Issue 36, "a killed up": a process killed between a batch's create and its edit leaves sub-accounts under the
 * create's marked alias, unrecorded. The mark is the resource's own (identityMark of its project, stack, type and
 * name, the input `mark` the class gives), so the next run of the same resource finds them: a create or a
 * scale-up takes them (only the rest is created), a refresh adopts them, a delete deletes them, and an update that
 * creates nothing takes them where its state could not name them (no mark, another balance).
 */
const mark = identityMark(["proj", "dev", "SubAccountBatch", "team"]);
const declared = (count: number, extra: Props = {}) =>
  checkedInputs(subAccountBatch, {
    alias: "team",
    balance: 5,
    count,
    modelPricing: [{ model: "model-a", pricingFactor: 1 }],
    mark,
    ...extra,
  });

/** What the killed run made: `count` sub-accounts under the resource's marked alias, never edited. */
async function leftByKilledRun(count: number, balance = 5): Promise<string[]> {
  const made = await clientOf(emu).subAccounts.create({
    alias: markedAlias("team", mark, "tilde"),
    balance,
    modelPricing: [{ model: "model-a", pricingFactor: 1 }],
    count,
  });
  emu.clearRequests();
  return made.map((s) => s.token);
}

const aliases = () => emu.state.listSubAccounts().map((s) => s.alias);
const clear = async (outs: Props) => {
  startFresh();
  await subAccountBatch.delete("id", outs);
  expect(emu.state.listSubAccounts()).toEqual([]);
};

describe("a killed up costs nothing and leaves nothing", () => {
  test("the mark is the resource's: the same for the same project, stack and name; another for another of each", () => {
    expect(mark).toMatch(/^[0-9a-f]{12}$/);
    expect(identityMark(["proj", "dev", "SubAccountBatch", "team"])).toBe(mark);
    for (const other of [
      ["proj", "prod", "SubAccountBatch", "team"],
      ["other", "dev", "SubAccountBatch", "team"],
      ["proj", "dev", "SubAccountBatch", "team-2"],
    ]) {
      expect(identityMark(other)).not.toBe(mark);
    }
  });

  test("create after a killed create: one list finds the 2 it made, one create of the 1 missing, one edit: 3 in all, none twice", async () => {
    const left = await leftByKilledRun(2);
    const { outs } = await subAccountBatch.create(await declared(3));
    expect(calls(emu)).toEqual({ "sub-account/list": 1, "sub-account/create": 1, "sub-account/edit": 1 });
    expect(outs.tokens).toEqual(expect.arrayContaining(left));
    expect(outs.mark).toBe(mark);
    expect(aliases()).toEqual(["team", "team", "team"]);
    await clear(outs);
  });

  test("a create with nothing left behind: one list more than before (create 1, edit 1)", async () => {
    const { outs } = await subAccountBatch.create(await declared(2));
    expect(calls(emu)).toEqual({ "sub-account/list": 1, "sub-account/create": 1, "sub-account/edit": 1 });
    await clear(outs);
  });

  test("a killed scale-up: the next up's update takes what it made (no create), a refresh before it adopts them, and a delete deletes them", async () => {
    const { id, outs } = await subAccountBatch.create(await declared(2));
    await leftByKilledRun(2);
    startFresh();
    const up = await subAccountBatch.update(id, outs, await declared(4));
    expect(calls(emu)).toEqual({ "sub-account/list": 1, "sub-account/edit": 1 });
    expect(up.outs.tokens).toHaveLength(4);
    expect(aliases()).toEqual(Array(4).fill("team"));

    await leftByKilledRun(1);
    startFresh();
    const read = await subAccountBatch.read(id, up.outs);
    expect((read.props as { tokens: string[] }).tokens).toHaveLength(5);
    await leftByKilledRun(1);
    startFresh();
    await subAccountBatch.delete(id, read.props as Props);
    expect(emu.state.listSubAccounts()).toEqual([]);
  });

  test("a killed scale-up whose next update creates nothing (its count lowered): it takes what the kill left where the state names another mark or none (one list), and the count deletes it", async () => {
    // A state written before the mark: a refresh cannot look under it, and this update creates nothing.
    const { id, outs } = await subAccountBatch.create(await declared(2, { mark: undefined }));
    // The killed run declared count 3 with the mark: it made 1 under it, then died before its edit.
    const [left] = await leftByKilledRun(1);
    startFresh();
    const up = await subAccountBatch.update(id, outs, await declared(2));
    expect(calls(emu)).toEqual({ "sub-account/list": 1, "sub-account/delete": 1 });
    expect(up.outs.tokens).toEqual(outs.tokens);
    expect(up.outs.mark).toBe(mark);
    expect(emu.state.hasSubAccount(left)).toBe(false);
    // With the mark in the state, an update that creates nothing makes no list: a refresh or a delete finds them.
    startFresh();
    emu.clearRequests();
    await subAccountBatch.update(id, up.outs, await declared(2, { alias: "team-2" }));
    expect(calls(emu)).toEqual({ "sub-account/edit": 1 });
    await clear(up.outs);
  });

  test("a killed scale-up of an adopting batch declared with another balance than its state's: the next update that creates nothing takes what the kill left", async () => {
    // Adopted at balance 9, the batch's state says 9; a balance declared later applies to the sub-accounts it creates.
    const [console] = emu.state
      .createSubAccounts({ alias: "console", balance: 9, modelPricing: [], count: 1 })
      .map((s) => s.token);
    const { id, outs } = await subAccountBatch.create(await declared(1, { balance: 9, adoptTokens: [console] }));
    expect(outs.balance).toBe(9);
    // The killed run declared balance 5 and count 2: it made 1 under the mark at balance 5.
    const [left] = await leftByKilledRun(1);
    startFresh();
    const up = await subAccountBatch.update(id, outs, await declared(1, { adoptTokens: [console] }));
    expect(up.outs.tokens).toEqual([console]);
    expect(emu.state.hasSubAccount(left)).toBe(false);
    await clear(up.outs);
  });

  test("under the mark but of another balance (a replaced twin's, or another run's of another balance): never taken", async () => {
    const twin = await leftByKilledRun(1, 9);
    const { outs } = await subAccountBatch.create(await declared(1));
    expect(outs.tokens).not.toContain(twin[0]);
    expect(emu.state.listSubAccounts().filter((s) => s.token === twin[0])).toHaveLength(1);
    await clientOf(emu).subAccounts.delete(twin);
    await clear(outs);
  });

  test("a sub-account an edit left under the mark is held, not left behind: a scale-up after a failed edit neither takes it twice nor loses it", async () => {
    emu.setFaults([{ kind: "500", ops: ["sub-account/edit"], count: 10 }]);
    const failed = (await subAccountBatch.create(await declared(2)).then(
      () => {
        throw new Error("the create should have failed at its edit");
      },
      (e: unknown) => e,
    )) as { id: string; properties: Props };
    emu.setFaults([]);
    const held = failed.properties;
    expect((held.tokens as string[]).length).toBe(2);
    expect(aliases().every((a) => a.endsWith(mark))).toBe(true);
    startFresh();
    const up = await subAccountBatch.update(failed.id, held, await declared(3));
    expect(up.outs.tokens).toHaveLength(3);
    expect(new Set(up.outs.tokens).size).toBe(3);
    expect(aliases()).toEqual(["team", "team", "team"]);
    await clear(up.outs);
  });

  test("a batch without a mark (a state or program before it): a random mark per create and no list, as before", async () => {
    const { outs } = await subAccountBatch.create(await declared(2, { mark: undefined }));
    expect(calls(emu)).toEqual({ "sub-account/create": 1, "sub-account/edit": 1 });
    await clear(outs);
  });
});
