import { describe, expect, test } from "@jest/globals";
import { QuietPeriod } from "../../../provider/runtime/command/quietPeriod.js";

const settings = { minQuietMs: 10, gapFactor: 4, maxQuietMs: 100 };

/** Timers that fire only when told to. */
function manualTimers() {
  const armed = new Map<number, { fn: () => void; ms: number }>();
  let seq = 0;
  return {
    armed,
    setTimeout: (fn: () => void, ms: number) => (armed.set(++seq, { fn, ms }), seq),
    clearTimeout: (id: unknown) => void armed.delete(id as number),
  };
}

describe("QuietPeriod", () => {
  test("the wait is gapFactor times the longest gap between arrivals, within its bounds", () => {
    const quiet = new QuietPeriod(settings, manualTimers());
    quiet.arrive(0);
    expect(quiet.ms).toBe(10);
    quiet.arrive(5);
    quiet.arrive(6);
    expect(quiet.ms).toBe(20);
    quiet.arrive(56);
    expect(quiet.ms).toBe(100);
  });

  test("a later wait replaces the earlier one; end() cancels it and forgets the gaps", () => {
    const timers = manualTimers();
    const quiet = new QuietPeriod(settings, timers);
    const fired: string[] = [];
    quiet.arrive(0);
    quiet.after(() => fired.push("first"));
    quiet.arrive(8);
    quiet.after(() => fired.push("second"));
    expect([...timers.armed.values()].map((t) => t.ms)).toEqual([32]);
    [...timers.armed.values()][0].fn();
    expect(fired).toEqual(["second"]);
    quiet.end();
    expect(timers.armed.size).toBe(0);
    quiet.arrive(1000);
    expect(quiet.ms).toBe(10);
  });
});
