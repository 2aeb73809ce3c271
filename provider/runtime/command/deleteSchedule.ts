import { SYSTEM_CLOCK, type Clock } from "../../client/clock.js";
import { QuietPeriod } from "./quietPeriod.js";

/** Turns coalescing off (one resource's delete per call): the benchmark's baseline. */
export const COALESCING_SWITCH = "LLM_ACCOUNTS_DELETE_COALESCING";

/**
 * When the waiting deletes go out. The engine starts deletes one after another, each after a checkpoint write, so
 * they arrive spread out (tens of ms apart for a few hundred resources, more as the state grows and on a loaded
 * machine), and it never has more than `--parallel` of them running, of any type. They go once no delete has arrived
 * for `gapFactor` times the longest gap seen (at least `minQuietMs`), when one kind's call is full, or at the latest
 * `maxWaitMs` after the first. Once the engine's parallelism is known, they go at once when that many deletes wait:
 * then no other delete can be coming until one of them is answered. It is known when two flushes in a row went after
 * a quiet period with the same number of deletes outstanding and none arrived while they were on the wire (the
 * engine was waiting for us); a delete arriving while a flush is on the wire shows that its quiet period was the
 * engine pausing (a checkpoint, a loaded machine), and one arriving beyond the parallelism shows it wrong: both are
 * forgotten. A pause costs one more call, never one call per resource. What is learned holds for one burst of
 * deletes: after a pause longer than a quiet period, it is learned again.
 */
export const COALESCE = { minQuietMs: 500, gapFactor: 4, maxQuietMs: 10_000, maxWaitMs: 10 * 60_000 };

/** The parts of the clock a schedule uses: time, and timers (injectable, so that the schedule is tested without waiting). */
export type CoalescerClock = Pick<Clock, "now" | "setTimeout" | "clearTimeout">;

/** Settings of a schedule: its timing, the switch, and the clock. */
export type CoalescerOptions = typeof COALESCE & { enabled: boolean; clock?: CoalescerClock };

/** One delete waiting for its call: what it deletes, and its caller's answer (settled once). */
export interface Waiter<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** One kind of delete: its waiters, the most one call takes, and what sends them (it settles every waiter). */
interface Lane {
  pending: Waiter<unknown>[];
  max: number;
  send: (batch: Waiter<unknown>[]) => Promise<void>;
}

/**
 * The schedule of the deletes of one client of a session (SessionClient): key deletes and sub-account batch deletes
 * each have a lane, and the schedule counts the deletes of all lanes, since the engine's `--parallel` bounds them
 * together (a destroy interleaves keys and batches). A flush sends each lane's waiters: at most one call of each
 * kind (more only past a lane's `max`). Switched off, every delete is sent alone, at once.
 */
export class DeleteSchedule {
  private readonly lanes: Lane[] = [];
  private readonly quiet: QuietPeriod;
  private readonly clock: CoalescerClock;
  private maxTimer: unknown;
  /** Deletes called and not yet answered (waiting here or on the wire), of every lane. */
  private outstanding = 0;
  /** The engine's parallelism once known (0 until then); see COALESCE. */
  private parallelism = 0;
  /** The deletes outstanding when the last flush went after a quiet period, none arriving since it went (0 if any did). */
  private candidate = 0;
  /** When the last outstanding delete was answered, and the quiet period its flush used. */
  private idleSince = 0;
  private lastQuiet = 0;
  private flushQueued = false;

  constructor(
    private readonly options: CoalescerOptions = { ...COALESCE, enabled: process.env[COALESCING_SWITCH] !== "off" },
  ) {
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.quiet = new QuietPeriod(options, this.clock);
  }

  /** A new kind of delete: the function that deletes one `item`, together with whatever other deletes arrive meanwhile. */
  lane<T>(max: number, send: (batch: Waiter<T>[]) => Promise<void>): (item: T) => Promise<void> {
    const lane: Lane = { pending: [], max, send: send as Lane["send"] };
    this.lanes.push(lane);
    return (item) => this.arrive(lane, item);
  }

  private waiting(): number {
    return this.lanes.reduce((n, l) => n + l.pending.length, 0);
  }

  private arrive(lane: Lane, item: unknown): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (!this.options.enabled) {
        void this.send(lane, [this.waiter(item, resolve, reject, () => {})]);
        return;
      }
      const now = this.clock.now();
      this.quiet.arrive(now);
      // Deletes that come after a pause longer than a quiet period are another burst (a later step of the
      // deployment, not the engine waiting for us): what was learned before says nothing about it.
      if (this.outstanding === 0 && now - this.idleSince > this.lastQuiet) this.forget();
      // A flush on the wire while this one arrives: the engine was not waiting for it when it went.
      if (this.outstanding > this.waiting()) this.candidate = 0;
      this.outstanding++;
      if (this.outstanding > this.parallelism) this.parallelism = 0;
      const done = () => {
        if (--this.outstanding === 0) this.idleSince = this.clock.now();
      };
      lane.pending.push(this.waiter(item, resolve, reject, done));
      if (lane.pending.length >= lane.max) {
        this.flush();
        return;
      }
      if (this.parallelism > 0 && this.waiting() >= this.parallelism) {
        // At the end of this tick, not now: one resource may delete several keys at once (a rotated key and
        // its previous one), and those must go in the same call whatever was learned.
        if (!this.flushQueued) {
          this.flushQueued = true;
          queueMicrotask(() => this.flush());
        }
        return;
      }
      this.quiet.after(() => this.flushAfterQuiet());
      this.maxTimer ??= this.clock.setTimeout(() => this.flush(), this.options.maxWaitMs);
    });
  }

  /** A waiter whose answer is given once, and counted as answered once. */
  private waiter(
    item: unknown,
    resolve: () => void,
    reject: (err: unknown) => void,
    done: () => void,
  ): Waiter<unknown> {
    let settled = false;
    const once = (fn: () => void) => () => {
      if (settled) return;
      settled = true;
      done();
      fn();
    };
    return { item, resolve: once(resolve), reject: (err) => once(() => reject(err))() };
  }

  /** A flush that waited out its quiet period: the second in a row with as many deletes outstanding tells the parallelism. */
  private flushAfterQuiet(): void {
    if (this.outstanding === this.candidate) this.parallelism = this.outstanding;
    else this.candidate = this.outstanding;
    this.flush();
  }

  private forget(): void {
    this.parallelism = 0;
    this.candidate = 0;
  }

  private flush(): void {
    this.flushQueued = false;
    if (this.maxTimer !== undefined) this.clock.clearTimeout(this.maxTimer);
    this.maxTimer = undefined;
    this.lastQuiet = this.quiet.ms;
    this.quiet.end();
    for (const lane of this.lanes) {
      while (lane.pending.length > 0) void this.send(lane, lane.pending.splice(0, lane.max));
    }
  }

  /** Sends a lane's waiters; a sender that throws fails those it left unanswered. */
  private async send(lane: Lane, batch: Waiter<unknown>[]): Promise<void> {
    try {
      await lane.send(batch);
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}
