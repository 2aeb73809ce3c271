import { afterAll, beforeAll, beforeEach, describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../provider/emulator/index.js";
import { COALESCE, DeleteCoalescer, type CoalescerClock } from "../../provider/runtime/deleteCoalescer.js";
import { calls, clientOf, emulator } from "../support/emulator.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await emulator({ rateLimits: false });
});
afterAll(async () => emu.close());
beforeEach(() => emu.clearRequests());

/** A clock that moves only when told to, firing the timers that fall due. */
class ManualClock implements CoalescerClock {
  private t = 0;
  private seq = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    this.timers.set(++this.seq, { at: this.t + ms, fn });
    return this.seq;
  };
  clearTimeout = (id: unknown) => void this.timers.delete(id as number);
  /** Moves time on, firing due timers in order. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.timers].filter(([, x]) => x.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
    }
    this.t = end;
  }
}

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
    const [single, current, previous] = keys(3);
    const first = c.delete(single);
    clock.advance(COALESCE.minQuietMs);
    await first;
    emu.clearRequests();
    // Learned: one delete at a time. A resource that deletes two keys at once still makes one call.
    await Promise.all([c.delete(current), c.delete(previous)]);
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
    expect(emu.state.hasKey(current)).toBe(false);
    expect(emu.state.hasKey(previous)).toBe(false);
  });

  test("once the parallelism is learned, a full batch goes at once, without a quiet period", async () => {
    const clock = new ManualClock();
    const c = coalescer(clock);
    const first = arrive(c, clock, keys(8), 10);
    clock.advance(COALESCE.minQuietMs);
    await Promise.all(first);
    emu.clearRequests();
    // The engine sends the next 8 as slots free up: the 8th goes out with no timer advanced.
    const second = arrive(c, clock, keys(8), 10);
    await Promise.all(second);
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

  test("deletes arriving while a batch is on the wire raise the learned parallelism", async () => {
    const clock = new ManualClock();
    const c = coalescer(clock);
    // The quiet period ends before the engine's 8 slots are all used: a batch of 5 goes early.
    const early = arrive(c, clock, keys(5), 1);
    clock.advance(COALESCE.minQuietMs);
    const late = arrive(c, clock, keys(3), 1); // while the 5 are on the wire: 8 outstanding
    await Promise.all(early);
    emu.clearRequests();
    // The 3 wait for 5 more (8 in all), not for a timer, and go in one call.
    const refill = arrive(c, clock, keys(5), 1);
    await Promise.all([...late, ...refill]);
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
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

  test("--parallel 1: once learned, each delete that follows an answer at once goes at once", async () => {
    const clock = new ManualClock();
    const c = coalescer(clock);
    const first = c.delete(keys(1)[0]);
    clock.advance(COALESCE.minQuietMs);
    await first;
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
