import { describe, expect, test } from "@jest/globals";
import { LATE_WRITES, lookWaits } from "../../../provider/api/assumptions.js";
import type { Emulator } from "../../../provider/emulator/index.js";
import { startFresh, subAccountBatch, type SubAccountBatchOutputs } from "../../../provider/runtime/index.js";
import { calls, useRuntimeEmulator } from "../../support/emulator.js";
import { checkedInputs } from "../../support/check.js";

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

type Props = Record<string, unknown>;
const pricing = [{ model: "model-a", pricingFactor: 1.2 }];

const checked = (news: Props) => checkedInputs(subAccountBatch, news);

async function created(news: Props): Promise<{ id: string; outs: SubAccountBatchOutputs }> {
  return subAccountBatch.create(await checked(news));
}

function live(alias: string) {
  return emu.state.listSubAccounts().filter((s) => s.alias === alias);
}

describe("SubAccountBatch provider", () => {
  test("create: one batch create under a marked alias, one edit that sets the declared one; outputs in creation order; the id holds no token", async () => {
    const { id, outs } = await created({ alias: "team-a", balance: 50, count: 3, modelPricing: pricing });
    expect(calls(emu)).toEqual({ "sub-account/create": 1, "sub-account/edit": 1 });
    expect(outs.subAccounts.map((s) => s.id)).toEqual(
      [...outs.subAccounts.map((s) => s.id)].sort((a, b) => Number(a) - Number(b)),
    );
    expect(outs.tokens).toEqual(outs.subAccounts.map((s) => s.token));
    expect(outs.count).toBe(3);
    for (const t of outs.tokens) expect(id).not.toContain(t);
  });

  test("count 2 -> 4 -> 1: one create of the difference and its edit, then one delete of the newest surplus", async () => {
    const { id, outs } = await created({ alias: "scale", balance: 5, count: 2, modelPricing: pricing });
    emu.clearRequests();
    const up = await subAccountBatch.update(
      id,
      outs,
      await checked({ alias: "scale", balance: 5, count: 4, modelPricing: pricing }),
    );
    expect(calls(emu)).toEqual({ "sub-account/create": 1, "sub-account/edit": 1 });
    expect(up.outs.tokens.slice(0, 2)).toEqual(outs.tokens);
    expect(live("scale")).toHaveLength(4);
    emu.clearRequests();
    const down = await subAccountBatch.update(
      id,
      up.outs,
      await checked({ alias: "scale", balance: 5, count: 1, modelPricing: pricing }),
    );
    expect(calls(emu)).toEqual({ "sub-account/delete": 1 });
    expect(down.outs.tokens).toEqual([outs.tokens[0]]);
    expect(live("scale").map((s) => s.token)).toEqual([outs.tokens[0]]);
  });

  test("alias or pricing changed: one batch edit of every sub-account", async () => {
    const { id, outs } = await created({ alias: "ed", balance: 5, count: 3, modelPricing: pricing });
    emu.clearRequests();
    const news = await checked({
      alias: "ed2",
      balance: 5,
      count: 3,
      modelPricing: [{ model: "model-b", pricingFactor: 2 }],
    });
    expect((await subAccountBatch.diff(id, outs, news)).replaces).toEqual([]);
    await subAccountBatch.update(id, outs, news);
    // The edit removes model-a: one list looks that it is gone (a platform whose edit merges keeps it; issue 43).
    expect(calls(emu)).toEqual({ "sub-account/edit": 1, "sub-account/list": 1 });
    expect(live("ed2").map((s) => s.model_pricing)).toEqual(Array(3).fill([{ model: "model-b", pricing_factor: 2 }]));
  });

  test("after drift of one sub-account, update edits only that one: the others are left out of the edit", async () => {
    const { id, outs } = await created({ alias: "one-off", balance: 5, count: 3, modelPricing: pricing });
    emu.state.editSubAccounts([outs.tokens[1]], "one-off-console", [{ model: "model-z", pricing_factor: 7 }]);
    const refreshed = await subAccountBatch.read(id, outs);
    const before = new Map(emu.state.listSubAccounts().map((s) => [s.token, s.updated_at]));
    emu.clearRequests();
    emu.setClockOffset(3_600_000); // an edit from now on stamps updated_at an hour later
    const { outs: after } = await subAccountBatch
      .update(
        id,
        refreshed.props as SubAccountBatchOutputs,
        await checked({ alias: "one-off", balance: 5, count: 3, modelPricing: pricing }),
      )
      .finally(() => emu.setClockOffset(0));
    // The edit removes the console's model-z: one list looks that it is gone (issue 43, merged-pricing).
    expect(calls(emu)).toEqual({ "sub-account/edit": 1, "sub-account/list": 1 });
    const now = new Map(emu.state.listSubAccounts().map((s) => [s.token, s.updated_at]));
    expect([0, 1, 2].map((i) => now.get(outs.tokens[i]) !== before.get(outs.tokens[i]))).toEqual([false, true, false]);
    expect(live("one-off").map((s) => [s.alias, s.model_pricing])).toEqual(
      Array(3).fill(["one-off", [{ model: "model-a", pricing_factor: 1.2 }]]),
    );
    expect(after.subAccounts.map((s) => s.alias)).toEqual(["one-off", "one-off", "one-off"]);
  });

  test("balance changed: replacement, with balance named as the reason", async () => {
    const { id, outs } = await created({ alias: "bal", balance: 5, count: 1, modelPricing: pricing });
    expect(
      await subAccountBatch.diff(
        id,
        outs,
        await checked({ alias: "bal", balance: 6, count: 1, modelPricing: pricing }),
      ),
    ).toEqual({
      changes: true,
      replaces: ["balance"],
      deleteBeforeReplace: false,
    });
  });

  test("no change: no diff, including deprecated autoFollowing that converts to the stored factor", async () => {
    const { id, outs } = await created({
      alias: "same",
      balance: 5,
      count: 2,
      modelPricing: [{ model: "model-a", autoFollowing: true }],
    });
    const news = await checked({
      alias: "same",
      balance: 5,
      count: 2,
      modelPricing: [{ model: "model-a", autoFollowing: true }],
    });
    expect(outs.modelPricing).toEqual([{ model: "model-a", pricingFactor: 1 }]);
    expect((await subAccountBatch.diff(id, outs, news)).changes).toBe(false);
  });

  test("diff: a sub-account whose alias or pricing differs from the declared ones is a change, even when the batch's alias and pricing match", async () => {
    // A refresh gives the batch one alias, taken from one sub-account: after an edit that failed past a create, the
    // outputs named the marked alias, the refresh the declared one of the older sub-account, and the sub-account
    // still under its marked alias went unseen (two-stack soak, seed 20261123, history 1973).
    const { id, outs } = await created({ alias: "mixed", balance: 5, count: 2, modelPricing: pricing });
    const news = await checked({ alias: "mixed", balance: 5, count: 2, modelPricing: pricing });
    expect((await subAccountBatch.diff(id, outs, news)).changes).toBe(false);
    const stray = (alias: string, modelPricing = pricing) => ({
      ...outs,
      subAccounts: [outs.subAccounts[0], { ...outs.subAccounts[1], alias, modelPricing }],
    });
    expect((await subAccountBatch.diff(id, stray("mixed~0123456789ab"), news)).changes).toBe(true);
    expect(
      (await subAccountBatch.diff(id, stray("mixed", [{ model: "model-a", pricingFactor: 2 }]), news)).changes,
    ).toBe(true);
  });

  test("read: one list call, and one more confirming the one it misses; a sub-account deleted elsewhere drops out and the next update recreates it", async () => {
    const { id, outs } = await created({ alias: "oob", balance: 5, count: 3, modelPricing: pricing });
    emu.state.deleteSubAccounts([outs.tokens[1]]);
    emu.clearRequests();
    const read = await subAccountBatch.read(id, outs);
    expect(calls(emu)).toEqual({ "sub-account/list": 2 });
    if (!("inputs" in read)) throw new Error("the batch read as gone");
    expect(read.props.count).toBe(2);
    const news = await checked({ alias: "oob", balance: 5, count: 3, modelPricing: pricing });
    expect((await subAccountBatch.diff(id, read.props, news)).changes).toBe(true);
    emu.clearRequests();
    const { outs: repaired } = await subAccountBatch.update(id, read.props, news);
    expect(calls(emu)).toEqual({ "sub-account/create": 1, "sub-account/edit": 1 });
    expect(repaired.count).toBe(3);
    expect(live("oob")).toHaveLength(3);
  });

  test("read: alias and pricing drift are detected", async () => {
    const { id, outs } = await created({ alias: "dr", balance: 5, count: 2, modelPricing: pricing });
    emu.state.editSubAccounts([outs.tokens[0]], "dr-renamed", [{ model: "model-a", pricing_factor: 9 }]);
    const read = await subAccountBatch.read(id, outs);
    expect(read.props).toMatchObject({ alias: "dr-renamed", modelPricing: [{ model: "model-a", pricingFactor: 9 }] });
  });

  test("read of a batch whose sub-accounts are all gone: an empty id", async () => {
    const { id, outs } = await created({ alias: "allgone", balance: 5, count: 1, modelPricing: pricing });
    emu.state.deleteSubAccounts(outs.tokens);
    expect((await subAccountBatch.read(id, outs)).id).toBe("");
  });

  test("delete: one batch delete", async () => {
    const { id, outs } = await created({ alias: "del", balance: 5, count: 3, modelPricing: pricing });
    emu.clearRequests();
    await subAccountBatch.delete(id, outs);
    expect(calls(emu)).toEqual({ "sub-account/delete": 1 });
    expect(live("del")).toHaveLength(0);
  });

  test("delete when some were deleted elsewhere: the rest are still deleted", async () => {
    const { id, outs } = await created({ alias: "del2", balance: 5, count: 3, modelPricing: pricing });
    emu.state.deleteSubAccounts([outs.tokens[0]]);
    await subAccountBatch.delete(id, outs);
    expect(live("del2")).toHaveLength(0);
  });

  test("a lost response on create is recovered by listing the alias: no duplicates", async () => {
    emu.setFaults([{ kind: "drop-after", ops: ["sub-account/create"], count: 1 }]);
    const { outs } = await created({ alias: "lost", balance: 5, count: 2, modelPricing: pricing });
    expect(calls(emu)).toEqual({ "sub-account/create": 1, "sub-account/edit": 1, "sub-account/list": 1 });
    expect(outs.count).toBe(2);
    expect(
      live("lost")
        .map((s) => s.token)
        .sort(),
    ).toEqual([...outs.tokens].sort());
  });

  test("a create dropped before it was processed is sent again once the list shows nothing was made", async () => {
    emu.setFaults([{ kind: "drop-before", ops: ["sub-account/create"], count: 1 }]);
    const { outs } = await created({ alias: "dropped", balance: 5, count: 2, modelPricing: pricing });
    // The list that finds nothing is asked again after each wait (a platform may show a create late) before the create goes again.
    expect(calls(emu)).toEqual({
      "sub-account/create": 2,
      "sub-account/edit": 1,
      "sub-account/list": 1 + lookWaits(LATE_WRITES.boundMs).length,
    });
    expect(live("dropped")).toHaveLength(2);
    expect(outs.count).toBe(2);
  });

  test("a lost create's refresh, update and delete take exactly what carries its marked alias, never another stack's batch of the same alias and balance", async () => {
    emu.setFaults([
      { kind: "drop-after", ops: ["sub-account/create"], count: 1 },
      { kind: "500", ops: ["sub-account/list"] },
    ]);
    const inputs = await checked({ alias: "shared", balance: 5, count: 2, modelPricing: pricing });
    const err = (await subAccountBatch.create(inputs).catch((e: unknown) => e)) as {
      id: string;
      properties: SubAccountBatchOutputs;
    };
    emu.setFaults([]);
    const kept = err.properties;
    expect(kept.unconfirmedAlias).toMatch(/^shared~[0-9a-f]{12}$/);
    expect(kept.tokens).toEqual([]);
    // Another stack (another plugin process) creates the same batch meanwhile; this process knows nothing of it.
    const theirs = emu.state
      .createSubAccounts({ alias: "shared", balance: 5, modelPricing: [], count: 2 })
      .map((s) => s.token);
    const ours = emu.state
      .listSubAccounts()
      .filter((s) => s.alias === kept.unconfirmedAlias)
      .map((s) => s.token);
    expect(ours).toHaveLength(2);
    startFresh();
    const read = await subAccountBatch.read(err.id, kept);
    expect([...read.props.tokens!].sort()).toEqual([...ours].sort());
    // The refresh shows them as they are (the marked alias): the next up's update gives them the declared one.
    const news = await checked({ alias: "shared", balance: 5, count: 2, modelPricing: pricing });
    expect((await subAccountBatch.diff(err.id, read.props as SubAccountBatchOutputs, news)).changes).toBe(true);
    startFresh();
    emu.clearRequests();
    const { outs } = await subAccountBatch.update(err.id, kept, news);
    expect(calls(emu)).toEqual({ "sub-account/list": 1, "sub-account/edit": 1 });
    expect([...outs.tokens].sort()).toEqual([...ours].sort());
    expect(
      live("shared")
        .map((s) => s.token)
        .sort(),
    ).toEqual([...theirs, ...ours].sort());
    // A delete of the batch as the failed create left it, before any refresh or update: the same.
    const again = emu.state
      .createSubAccounts({ alias: kept.unconfirmedAlias!, balance: 5, modelPricing: [], count: 2 })
      .map((s) => s.token);
    startFresh();
    await subAccountBatch.delete(err.id, kept);
    expect(
      live("shared")
        .map((s) => s.token)
        .sort(),
    ).toEqual([...theirs, ...ours].sort());
    expect(emu.state.listSubAccounts().filter((s) => again.includes(s.token))).toEqual([]);
    await subAccountBatch.delete(err.id, outs);
    expect(
      live("shared")
        .map((s) => s.token)
        .sort(),
    ).toEqual([...theirs].sort());
  });

  test("the edit that sets the declared alias fails after the create: the state keeps the sub-accounts under their marked alias, and the next up aligns them", async () => {
    emu.setFaults([{ kind: "500", ops: ["sub-account/edit"] }]);
    const inputs = await checked({ alias: "unmarked", balance: 5, count: 2, modelPricing: pricing });
    const err = (await subAccountBatch.create(inputs).catch((e: unknown) => e)) as {
      id: string;
      properties: SubAccountBatchOutputs;
    };
    emu.setFaults([]);
    expect(err.properties.tokens).toHaveLength(2);
    expect(err.properties.alias).toMatch(/^unmarked~[0-9a-f]{12}$/);
    expect((await subAccountBatch.diff(err.id, err.properties, inputs)).changes).toBe(true);
    emu.clearRequests();
    const { outs } = await subAccountBatch.update(err.id, err.properties, inputs);
    expect(calls(emu)).toEqual({ "sub-account/edit": 1 });
    expect(
      live("unmarked")
        .map((s) => s.token)
        .sort(),
    ).toEqual([...outs.tokens].sort());
    expect(outs.alias).toBe("unmarked");
  });

  test("a state written before the marker (unconfirmedSince only): its delete takes nothing another batch of this process holds or made, with the same alias and balance", async () => {
    // A lost create, unconfirmed since a second ago, that made nothing; then a batch of its alias and balance.
    const twin = {
      ...(await checked({ alias: "twin", balance: 5, count: 1, modelPricing: pricing })),
      subAccounts: [],
      tokens: [],
      count: 0,
    };
    const unconfirmed: SubAccountBatchOutputs = {
      ...twin,
      unconfirmedSince: new Date(Date.now() - 1000).toISOString(),
    };
    const { outs } = await created({ alias: "twin", balance: 5, count: 1, modelPricing: pricing });
    await subAccountBatch.delete("sab-twin", unconfirmed);
    expect(live("twin").map((s) => s.token)).toEqual(outs.tokens);
    // A later command (a new plugin process) that diffs the batch before it deletes the twin: the same.
    startFresh();
    const news = await checked({ alias: "twin", balance: 5, count: 1, modelPricing: pricing });
    expect((await subAccountBatch.diff("sab-new", outs, news)).changes).toBe(false);
    await subAccountBatch.delete("sab-twin", unconfirmed);
    expect(live("twin").map((s) => s.token)).toEqual(outs.tokens);
    // Nobody holds it: the unconfirmed batch's delete takes it, as what its lost create may have made.
    startFresh();
    await subAccountBatch.delete("sab-twin", unconfirmed);
    expect(live("twin")).toEqual([]);
  });
});
