import { describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../../provider/emulator/index.js";
import { DeleteCoalescer } from "../../../provider/runtime/command/deleteCoalescer.js";
import { COALESCE, DeleteSchedule } from "../../../provider/runtime/command/deleteSchedule.js";
import { SubAccountDeletes } from "../../../provider/runtime/command/subAccountDeletes.js";
import { subAccountBatch, type SubAccountBatchOutputs } from "../../../provider/runtime/index.js";
import { checkedInputs } from "../../support/check.js";
import { calls, clientOf, useRuntimeEmulator } from "../../support/emulator.js";
import { engineSlots, ManualClock } from "../../support/manualClock.js";

/**
 * The deletes of SubAccountBatch resources share `sub-account/delete` calls as key deletes share theirs (issue 41),
 * on one schedule with them; a shared call that fails is sent again batch by batch, so that each batch's delete
 * fails or succeeds as it would alone.
 */
let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

const pricing = [{ model: "model-a", pricingFactor: 1 }];

async function batches(
  prefix: string,
  n: number,
  count: number,
): Promise<{ id: string; outs: SubAccountBatchOutputs }[]> {
  const made = [];
  for (let i = 0; i < n; i++)
    made.push(
      await subAccountBatch.create(
        await checkedInputs(subAccountBatch, { alias: `${prefix}-${i}`, balance: 5, count, modelPricing: pricing }),
      ),
    );
  emu.clearRequests();
  return made;
}

const liveTokens = () => new Set(emu.state.listSubAccounts().map((s) => s.token));

describe("SubAccountBatch deletes share calls", () => {
  test("5 batch deletes started together: one sub-account/delete of all their tokens", async () => {
    const made = await batches("together", 5, 2);
    await Promise.all(made.map((b) => subAccountBatch.delete(b.id, b.outs)));
    expect(calls(emu)).toEqual({ "sub-account/delete": 1 });
    expect(emu.state.listSubAccounts()).toHaveLength(0);
  });

  test("a learned sks cap of 4: 4 batches of 3 go in ceil(12 / 4) = 3 calls, not one call per batch", async () => {
    const made = await batches("capped", 4, 3);
    const api = clientOf(emu, { rateLimits: false }).subAccounts;
    api.sksCap = 4;
    const deletes = new SubAccountDeletes(api, { ...COALESCE, minQuietMs: 20, enabled: true });
    await Promise.all(made.map((b) => deletes.delete(b.outs.tokens)));
    expect(calls(emu)).toEqual({ "sub-account/delete": 3 });
    expect(emu.state.listSubAccounts()).toHaveLength(0);
  });

  test("one batch's token deleted elsewhere (the shared call's 404): each batch is sent again alone, the others deleted, that batch done", async () => {
    const made = await batches("gone", 3, 2);
    emu.state.deleteSubAccounts([made[1].outs.tokens[0]]);
    await Promise.all(made.map((b) => subAccountBatch.delete(b.id, b.outs)));
    expect(emu.state.listSubAccounts()).toHaveLength(0);
    // The shared call, one a batch, and the gone one's list and the delete of its remaining sub-account.
    expect(calls(emu)).toEqual({ "sub-account/delete": 1 + 3 + 1, "sub-account/list": 1 });
  });

  test("the shared call and then one batch's own call refused (400, every token live): only that batch fails, its sub-accounts kept", async () => {
    const made = await batches("refused", 3, 2);
    emu.setFaults([{ kind: "400", ops: ["sub-account/delete"], count: 2 }]);
    const results = await Promise.allSettled(made.map((b) => subAccountBatch.delete(b.id, b.outs)));
    const failed = made.filter((_, i) => results[i].status === "rejected");
    expect(failed).toHaveLength(1);
    expect((results.find((r) => r.status === "rejected") as PromiseRejectedResult).reason).toMatchObject({
      status: 400,
    });
    expect([...liveTokens()].sort()).toEqual([...failed[0].outs.tokens].sort());
  });

  test("switched off: one call per batch", async () => {
    const made = await batches("off", 3, 1);
    const deletes = new SubAccountDeletes(clientOf(emu, { rateLimits: false }).subAccounts, {
      ...COALESCE,
      enabled: false,
    });
    await Promise.all(made.map((b) => deletes.delete(b.outs.tokens)));
    expect(calls(emu)).toEqual({ "sub-account/delete": 3 });
  });
});

describe("key and batch deletes on one schedule, fed as the engine feeds them", () => {
  /**
   * An engine of `parallel` slots deleting `n` resources, keys and batches alternating: it starts a delete in each
   * free slot `checkpointMs` apart and frees the slot when the delete is answered. Returns the calls of each kind and
   * the time it took on the manual clock: the arrivals' `n * checkpointMs` and the quiet periods the schedule waited.
   */
  async function destroy(
    n: number,
    parallel: number,
    checkpointMs: number,
    shared: boolean,
  ): Promise<{ keyCalls: number; batchCalls: number; ms: number }> {
    const clock = new ManualClock();
    const options = { ...COALESCE, enabled: true, clock };
    const client = clientOf(emu, { rateLimits: false });
    const schedule = new DeleteSchedule(options);
    const keys = new DeleteCoalescer(client.apiKeys, shared ? schedule : options);
    const subAccounts = new SubAccountDeletes(client.subAccounts, shared ? schedule : options);
    const resources = Array.from({ length: n }, (_, i) =>
      i % 2 === 0
        ? () => keys.delete(emu.state.createKey(`mixed-${i}`).key)
        : () =>
            subAccounts.delete(
              emu.state
                .createSubAccounts({ alias: `mixed-${i}`, balance: 5, modelPricing: [], count: 2 })
                .map((s) => s.token),
            ),
    );
    emu.clearRequests();
    await engineSlots(resources, parallel, checkpointMs, clock);
    const c = calls(emu);
    return { keyCalls: c["api-key/delete"] ?? 0, batchCalls: c["sub-account/delete"] ?? 0, ms: clock.now() };
  }

  test("40 keys and batches, --parallel 8: each flush sends one call of each kind, ceil(40 / 8) flushes, no quiet period waited once the parallelism is learned", async () => {
    const { keyCalls, batchCalls, ms } = await destroy(40, 8, 20, true);
    expect(keyCalls).toBe(Math.ceil(40 / 8));
    expect(batchCalls).toBe(Math.ceil(40 / 8));
    expect(emu.state.listSubAccounts().filter((s) => s.alias.startsWith("mixed-"))).toHaveLength(0);
    // Two quiet periods learn the parallelism; the other flushes go as the 8th delete arrives.
    expect(ms).toBeLessThan(40 * 20 + 3 * COALESCE.minQuietMs);
  }, 60_000);

  test("two schedules, each seeing half the slots, would wait a quiet period every time (what one schedule avoids)", async () => {
    const { ms } = await destroy(40, 8, 20, false);
    expect(ms).toBeGreaterThanOrEqual(40 * 20 + 3 * COALESCE.minQuietMs);
  }, 60_000);
});
