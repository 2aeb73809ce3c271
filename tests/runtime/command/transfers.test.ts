import { describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../../provider/emulator/index.js";
import { startFresh, subAccountBatch } from "../../../provider/runtime/index.js";
import { useRuntimeEmulator } from "../../support/emulator.js";
import { checkedInputs } from "../../support/check.js";

// Issue 36: one owner while a deployment moves sub-accounts from one batch to another (command/transfers.ts, the
// releases under way): a taker waits for its giver's update; a release is recorded even when the update fails.

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

type Props = Record<string, unknown>;
const pricing = [{ model: "model-a", pricingFactor: 1.2 }];
const batch = (alias: string, more: Props = {}) =>
  checkedInputs(subAccountBatch, { alias, balance: 1, count: 1, modelPricing: pricing, ...more });
const mask = (t: string) => `sk-...${t.slice(-4)}`;

describe("one owner while a deployment moves sub-accounts (issue 36: a killed run, a resource renamed)", () => {
  const console = (count: number) =>
    emu.state
      .createSubAccounts({ alias: "c", balance: 1, modelPricing: [{ model: "model-a", pricing_factor: 1.2 }], count })
      .map((s) => s.token);
  const live = () => new Set(emu.state.listSubAccounts().map((s) => s.token));

  test("a batch that adopts a token another batch's running update releases waits for that update to end before it writes", async () => {
    const [x, y] = console(2);
    const giver = await subAccountBatch.create(await batch("giver", { count: 2, adoptTokens: [x, y] }));
    const taker = await subAccountBatch.create(await batch("taker", { count: 1 }));
    startFresh();
    // The giver releases y and creates one more (slow); the taker adopts y. Without the wait the taker's list and
    // edit finish first: a run killed then would leave both states holding y.
    emu.setFaults([{ kind: "latency", ops: ["sub-account/create"], ms: 400 }]);
    const ended: string[] = [];
    const gives = subAccountBatch
      .update(giver.id, giver.outs, await batch("giver", { count: 2, adoptTokens: [x] }))
      .then(() => ended.push("giver"));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const takes = subAccountBatch
      .update(taker.id, taker.outs, await batch("taker", { count: 2, adoptTokens: [y] }))
      .then((r) => (ended.push("taker"), r));
    const [, took] = await Promise.all([gives, takes]);
    expect(ended).toEqual(["giver", "taker"]);
    expect(took.outs.tokens).toContain(y);
  });

  test("a taker whose update begins before the giver's (its diff announced the release) waits for it too; one announced and never begun holds it up a second at most", async () => {
    const [x, y, z] = console(3);
    const giver = await subAccountBatch.create(await batch("giver", { count: 3, adoptTokens: [x, y, z] }));
    const taker = await subAccountBatch.create(await batch("taker", { count: 1 }));
    startFresh();
    emu.setFaults([{ kind: "latency", ops: ["sub-account/create"], ms: 300 }]);
    const givesTo = await batch("giver", { count: 3, adoptTokens: [x, z] });
    await subAccountBatch.diff(giver.id, giver.outs, givesTo);
    const ended: string[] = [];
    const takes = subAccountBatch
      .update(taker.id, taker.outs, await batch("taker", { count: 2, adoptTokens: [y] }))
      .then((r) => (ended.push("taker"), r));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const gives = subAccountBatch.update(giver.id, giver.outs, givesTo).then((r) => (ended.push("giver"), r));
    const [took] = await Promise.all([takes, gives]);
    expect(ended).toEqual(["giver", "taker"]);

    // Next command: the giver's diff announces that z goes, and its update never comes (the engine stopped).
    startFresh();
    emu.setFaults([]);
    const given = await gives;
    await subAccountBatch.diff(giver.id, given.outs, await batch("giver", { count: 2, adoptTokens: [x] }));
    const started = Date.now();
    const second = await subAccountBatch.update(
      taker.id,
      took.outs,
      await batch("taker", { count: 3, adoptTokens: [y, z] }),
    );
    expect(second.outs.tokens).toContain(z);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test("a taker registered before its giver, its update begun before the giver's diff arrived (as the engine may order them), waits for the giver all the same", async () => {
    const [x, y] = console(2);
    const giver = await subAccountBatch.create(await batch("giver", { count: 2, adoptTokens: [x, y] }));
    const taker = await subAccountBatch.create(await batch("taker", { count: 1 }));
    startFresh();
    emu.setFaults([{ kind: "latency", ops: ["sub-account/create"], ms: 300 }]);
    const [takesTo, givesTo] = [
      await batch("taker", { count: 2, adoptTokens: [y] }),
      await batch("giver", { count: 2, adoptTokens: [x] }),
    ];
    // The engine: the taker's check and diff, its update at once; the giver's check and diff a moment later.
    await subAccountBatch.check({}, takesTo);
    await subAccountBatch.diff(taker.id, taker.outs, takesTo);
    const ended: string[] = [];
    // The taker's update starts first: it runs up to its first wait before the giver's check and diff arrive.
    const takes = subAccountBatch.update(taker.id, taker.outs, takesTo).then(() => ended.push("taker"));
    await subAccountBatch.check({}, givesTo);
    await subAccountBatch.diff(giver.id, giver.outs, givesTo);
    const gives = subAccountBatch.update(giver.id, giver.outs, givesTo).then(() => ended.push("giver"));
    await Promise.all([takes, gives]);
    expect(ended).toEqual(["giver", "taker"]);
  });

  test("two batches that swap sub-accounts in one command do not wait for each other: both updates go at once and end", async () => {
    const [x, y] = console(2);
    const a = await subAccountBatch.create(await batch("a", { adoptTokens: [x], alias: "a" }));
    const b = await subAccountBatch.create(await batch("b", { adoptTokens: [y], alias: "b" }));
    startFresh();
    const [toA, toB] = [await batch("a", { adoptTokens: [y] }), await batch("b", { adoptTokens: [x] })];
    await subAccountBatch.diff(a.id, a.outs, toA);
    await subAccountBatch.diff(b.id, b.outs, toB);
    emu.clearRequests();
    // Each edit (the alias of the sub-account it takes) answers after 1.5 s: one update waiting for the other
    // would send its edit only after the other's answer.
    emu.setFaults([{ kind: "latency", ops: ["sub-account/edit"], ms: 1500 }]);
    const [gotA, gotB] = await Promise.all([
      subAccountBatch.update(a.id, a.outs, toA),
      subAccountBatch.update(b.id, b.outs, toB),
    ]);
    expect([gotA.outs.tokens, gotB.outs.tokens]).toEqual([[y], [x]]);
    const edits = emu.requests().filter((r) => r.op === "sub-account/edit");
    expect(edits).toHaveLength(2);
    expect(Math.abs(edits[1].at - edits[0].at)).toBeLessThan(1500);
  });

  test("an update that releases a token and then fails records the release: its failure's state no longer holds it", async () => {
    const [x, y] = console(2);
    const giver = await subAccountBatch.create(await batch("giver", { count: 2, adoptTokens: [x, y] }));
    startFresh();
    const gone = `sk-${"0".repeat(40)}`;
    const err = await subAccountBatch
      .update(giver.id, giver.outs, await batch("giver", { count: 2, adoptTokens: [x, gone] }))
      .catch((e: Error) => e);
    expect((err as Error).message).toContain("adoptTokens[1]");
    const kept = (err as unknown as { properties: { tokens: string[]; adoptTokens: string[]; count: number } })
      .properties;
    expect(kept).toMatchObject({ tokens: [x], adoptTokens: [x], count: 1 });
  });

  test("an update adopting a token another batch of the command keeps fails naming it masked, writing nothing", async () => {
    const [x] = console(1);
    const holder = await subAccountBatch.create(await batch("holder", { adoptTokens: [x] }));
    const other = await subAccountBatch.create(await batch("other"));
    startFresh();
    await subAccountBatch.diff(holder.id, holder.outs, await batch("holder", { adoptTokens: [x] }));
    emu.clearRequests();
    const err = await subAccountBatch
      .update(other.id, other.outs, await batch("other", { count: 2, adoptTokens: [x] }))
      .catch((e: Error) => e);
    expect((err as Error).message).toContain(
      `adoptTokens[0] (${mask(x)}) is held by another SubAccountBatch of this deployment`,
    );
    expect(emu.calls()).toEqual({});
  });

  test("a batch renamed without an alias (removed, and one declared in its place adopts its sub-accounts): the old one's delete leaves them", async () => {
    const [x, y] = console(2);
    const old = await subAccountBatch.create(await batch("old", { count: 3, adoptTokens: [x, y] }));
    const created = old.outs.tokens.find((t) => t !== x && t !== y)!;
    startFresh();
    // The engine runs the new resource's create, then deletes the removed one.
    const renamed = await subAccountBatch.create(await batch("new", { count: 2, adoptTokens: [x, y] }));
    await subAccountBatch.delete(old.id, old.outs);
    expect(renamed.outs.tokens.sort()).toEqual([x, y].sort());
    expect(live().has(x) && live().has(y)).toBe(true);
    expect(live().has(created)).toBe(false);
  });

  test("a state that still holds a token its killed run released, beside the batch that took it: deleting it leaves that token", async () => {
    const [x, y] = console(2);
    const giver = await subAccountBatch.create(await batch("giver", { count: 2, adoptTokens: [x, y] }));
    startFresh();
    const taker = await subAccountBatch.create(await batch("taker", { adoptTokens: [y] }));
    // Both states hold y (the giver's update that released it was killed). The next command: the giver is removed.
    startFresh();
    await subAccountBatch.diff(taker.id, taker.outs, await batch("taker", { adoptTokens: [y] }));
    await subAccountBatch.delete(giver.id, giver.outs);
    expect(live().has(y)).toBe(true);
    expect(live().has(x)).toBe(false);
  });
});
