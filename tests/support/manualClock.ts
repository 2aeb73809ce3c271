import type { CoalescerClock } from "../../provider/runtime/command/deleteSchedule.js";

/** A clock that moves only when told to, firing the timers that fall due. */
export class ManualClock implements CoalescerClock {
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

/**
 * An engine of `parallel` slots running `deletes` as it runs a destroy: a delete in each free slot, one after another
 * `checkpointMs` apart on `clock` (a checkpoint write each), the slot freed when its delete is answered. While every
 * slot is busy, time moves on the manual clock only once nothing was answered for 100 ms (a flush waiting for its quiet
 * period), not while answers are on their way, so that the clock's reading counts the waits of the schedule.
 */
export async function engineSlots(
  deletes: (() => Promise<void>)[],
  parallel: number,
  checkpointMs: number,
  clock: ManualClock,
): Promise<void> {
  let next = 0;
  let freed = parallel;
  let inFlight = 0;
  const all: Promise<void>[] = [];
  while (next < deletes.length || inFlight > 0) {
    if (freed > 0 && next < deletes.length) {
      for (; freed > 0 && next < deletes.length; freed--) {
        clock.advance(checkpointMs);
        inFlight++;
        all.push(deletes[next++]().then(() => void (inFlight--, freed++)));
      }
    } else {
      const before = freed;
      for (let i = 0; i < 20 && freed === before; i++) await new Promise((r) => setTimeout(r, 5));
      if (freed === before) clock.advance(checkpointMs);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.all(all);
}
