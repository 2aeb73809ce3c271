import { afterAll, beforeAll, beforeEach, describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../../provider/emulator/index.js";
import { COALESCE, DeleteCoalescer } from "../../../provider/runtime/command/deleteCoalescer.js";
import { calls, clientOf, emulator } from "../../support/emulator.js";
import { engineSlots, ManualClock } from "../../support/manualClock.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await emulator({ rateLimits: false });
});
afterAll(async () => emu.close());
beforeEach(() => emu.clearRequests());

const keys = (n: number) => Array.from({ length: n }, (_, i) => emu.state.createKey(`co-${i}`).key);
/** Lets the HTTP calls already sent be answered. */
const settled = () => new Promise((r) => setTimeout(r, 50));

function coalescer(clock: ManualClock): DeleteCoalescer {
  return new DeleteCoalescer(clientOf(emu, { rateLimits: false }).apiKeys, { ...COALESCE, enabled: true, clock });
}

/** Starts deletes `gapMs` apart on the manual clock, as the engine does one after another. */
function arrive(c: DeleteCoalescer, clock: ManualClock, ks: string[], gapMs: number): Promise<void>[] {
  return ks.map((k, i) => {
    if (i > 0) clock.advance(gapMs);
    return c.delete(k);
  });
}

describe("delete coalescer schedule", () => {
  test("first batch: goes after the quiet period, not before; the keys are gone", async () => {
    const clock = new ManualClock();
    const c = coalescer(clock);
    const ks = keys(8);
    const done = arrive(c, clock, ks, 10);
    clock.advance(COALESCE.minQuietMs - 1);
    await settled();
    expect(calls(emu)).toEqual({});
    clock.advance(1);
    await Promise.all(done);
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
    for (const k of ks) expect(emu.state.hasKey(k)).toBe(false);
  });

  test("keys one resource deletes together (a rotated key and its previous one) go in one batch, whatever was learned", async () => {
    const clock = new ManualClock();
    const c = coalescer(clock);
    const [one, two, current, previous] = keys(4);
    for (const k of [one, two]) {
      const single = c.delete(k);
      clock.advance(COALESCE.minQuietMs);
      await single;
    }
    emu.clearRequests();
    // Learned: one delete at a time. A resource that deletes two keys at once still makes one call.
    await Promise.all([c.delete(current), c.delete(previous)]);
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
    expect(emu.state.hasKey(current)).toBe(false);
    expect(emu.state.hasKey(previous)).toBe(false);
  });

  test("two batches of the same size after a quiet period tell the parallelism: the next full batch goes at once", async () => {
    const clock = new ManualClock();
    const c = coalescer(clock);
    for (let i = 0; i < 2; i++) {
      const batch = arrive(c, clock, keys(8), 10);
      await settled();
      expect(calls(emu)).toEqual({}); // not known yet: each waits its quiet period
      clock.advance(COALESCE.minQuietMs);
      await Promise.all(batch);
      emu.clearRequests();
    }
    // The engine sends the next 8 as slots free up: the 8th goes out with no timer advanced.
    const third = arrive(c, clock, keys(8), 10);
    await Promise.all(third);
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
    // A short last batch (fewer than the parallelism) still goes after its quiet period.
    emu.clearRequests();
    const last = arrive(c, clock, keys(3), 10);
    await settled();
    expect(calls(emu)).toEqual({});
    clock.advance(COALESCE.minQuietMs);
    await Promise.all(last);
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
  });

  test("deletes arriving while a batch is on the wire show that its quiet period was a pause: nothing is learned from it", async () => {
    const clock = new ManualClock();
    const c = coalescer(clock);
    // The quiet period ends before the engine's 8 slots are all used: a batch of 5 goes early.
    const early = arrive(c, clock, keys(5), 1);
    clock.advance(COALESCE.minQuietMs);
    const late = arrive(c, clock, keys(3), 1); // while the 5 are on the wire: 8 outstanding
    await Promise.all(early);
    emu.clearRequests();
    // The 3 and 5 more (8 in all) wait for their quiet period, then go in one call.
    const refill = arrive(c, clock, keys(5), 1);
    await settled();
    expect(calls(emu)).toEqual({});
    clock.advance(COALESCE.minQuietMs);
    await Promise.all([...late, ...refill]);
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
  });

  test("a loaded machine: the engine pausing after the first delete of 200 costs one more call, not one per key", async () => {
    const clock = new ManualClock();
    const c = coalescer(clock);
    const first = c.delete(keys(1)[0]);
    clock.advance(COALESCE.minQuietMs + 100); // the engine stalls (a checkpoint, another process): the first goes alone
    await first;
    // The other 199 arrive 30 ms apart, each after the last answer could come back.
    const rest: Promise<void>[] = [];
    for (const k of keys(199)) {
      clock.advance(30);
      rest.push(c.delete(k));
      await new Promise((r) => setTimeout(r, 5));
    }
    clock.advance(COALESCE.gapFactor * 30 + COALESCE.minQuietMs);
    await Promise.all(rest);
    expect(calls(emu)).toEqual({ "api-key/delete": 2 });
  });

  test("a delete beyond the known parallelism shows it wrong: the batch waits for its quiet period again", async () => {
    const clock = new ManualClock();
    const c = coalescer(clock);
    for (let i = 0; i < 2; i++) {
      const batch = arrive(c, clock, keys(2), 10);
      clock.advance(COALESCE.minQuietMs);
      await Promise.all(batch);
    }
    emu.clearRequests();
    // Known: 2. The engine now sends 6 (the first 2 go at once, as known; 4 more arrive while they are on the wire).
    const six = arrive(c, clock, keys(2), 10);
    await Promise.resolve();
    six.push(...arrive(c, clock, keys(4), 10));
    await settled();
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
    clock.advance(COALESCE.minQuietMs);
    await Promise.all(six);
    expect(calls(emu)).toEqual({ "api-key/delete": 2 }); // the other 4 together, after the quiet period
  });

  test("1000 keys arriving together: one call, sent on the 1000th without waiting", async () => {
    const clock = new ManualClock();
    const c = coalescer(clock);
    await Promise.all(arrive(c, clock, keys(1000), 0));
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
  });

  test("a slow stream: the quiet period follows the longest gap seen (4x), so the batch is not cut short", async () => {
    const clock = new ManualClock();
    const c = coalescer(clock);
    const gap = COALESCE.minQuietMs / 2;
    const done = arrive(c, clock, keys(4), gap); // quiet = 4 x gap, twice the minimum
    clock.advance(COALESCE.gapFactor * gap - 1);
    await settled();
    expect(calls(emu)).toEqual({});
    clock.advance(1);
    await Promise.all(done);
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
  });

  test("--parallel 1: once learned (two single batches), each delete that follows an answer at once goes at once", async () => {
    const clock = new ManualClock();
    const c = coalescer(clock);
    for (const k of keys(2)) {
      const single = c.delete(k);
      clock.advance(COALESCE.minQuietMs);
      await single;
    }
    emu.clearRequests();
    for (const k of keys(3)) await c.delete(k); // no timer advanced: each went out on arrival
    expect(calls(emu)).toEqual({ "api-key/delete": 3 });
  });

  test("after a pause longer than a quiet period, what was learned is forgotten: 3 deletes go in one call", async () => {
    const clock = new ManualClock();
    const c = coalescer(clock);
    const single = c.delete(keys(1)[0]);
    clock.advance(COALESCE.minQuietMs);
    await single;
    clock.advance(COALESCE.minQuietMs + 1); // the deployment does other work
    emu.clearRequests();
    const three = arrive(c, clock, keys(3), 1);
    await settled();
    expect(calls(emu)).toEqual({});
    clock.advance(COALESCE.minQuietMs);
    await Promise.all(three);
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
  });

  test("switched off: one call per key", async () => {
    const c = new DeleteCoalescer(clientOf(emu, { rateLimits: false }).apiKeys, { ...COALESCE, enabled: false });
    await Promise.all(keys(3).map((k) => c.delete(k)));
    expect(calls(emu)).toEqual({ "api-key/delete": 3 });
  });
});

describe("delete coalescer fed as the engine feeds it", () => {
  /**
   * An engine of `parallel` slots deleting `n` keys: it starts a delete in each slot, one after another
   * `checkpointMs` apart (a checkpoint write each), and starts the next one in a slot once its delete is answered.
   */
  async function destroy(n: number, parallel: number, checkpointMs: number): Promise<number> {
    const clock = new ManualClock();
    const c = coalescer(clock);
    const ks = keys(n);
    await engineSlots(
      ks.map((k) => () => c.delete(k)),
      parallel,
      checkpointMs,
      clock,
    );
    return calls(emu)["api-key/delete"] ?? 0;
  }

  test("N keys, --parallel P, all of the engine's slots deleting keys: ceil(N / P) calls (the bench's floor), whatever the remainder", async () => {
    for (const [n, parallel] of [
      [100, 8],
      [97, 8],
      [60, 16],
    ] as const) {
      emu.clearRequests();
      expect(await destroy(n, parallel, 20)).toBe(Math.ceil(n / parallel));
    }
  }, 60_000);
});
