import { SYSTEM_CLOCK, type Clock } from "../../client/clock.js";

/** The bounds of a quiet period: `gapFactor` times the longest gap seen, at least `minQuietMs`, at most `maxQuietMs`. */
export interface QuietSettings {
  minQuietMs: number;
  gapFactor: number;
  maxQuietMs: number;
}

/** Timers, injectable so that a schedule can be tested without waiting. */
export type Timers = Pick<Clock, "setTimeout" | "clearTimeout">;

/**
 * Calls that arrive together (the deletes or reads the engine starts one after another), and the wait after the
 * last of them before deciding that no more are coming: the quiet period, `gapFactor` times the longest gap seen
 * between them within bounds. The one scheduler of the delete coalescer and the shared list. `end()` starts the
 * next round of arrivals afresh.
 */
export class QuietPeriod {
  private arrivals = 0;
  private lastArrival = 0;
  private longestGap = 0;
  private timer: unknown;

  constructor(
    private readonly settings: QuietSettings,
    private readonly timers: Timers = SYSTEM_CLOCK,
  ) {}

  /** Notes an arrival at `now`. */
  arrive(now: number): void {
    if (this.arrivals > 0) this.longestGap = Math.max(this.longestGap, now - this.lastArrival);
    this.lastArrival = now;
    this.arrivals++;
  }

  /** The quiet period now: no arrival for this long means no more are coming. */
  get ms(): number {
    const { minQuietMs, gapFactor, maxQuietMs } = this.settings;
    return Math.min(maxQuietMs, Math.max(minQuietMs, gapFactor * this.longestGap));
  }

  /** Runs `fn` once no call has arrived for the quiet period; a later call replaces the wait of an earlier one. */
  after(fn: () => void): void {
    this.stop();
    this.timer = this.timers.setTimeout(fn, this.ms);
  }

  /** Ends the round: the wait is cancelled and the gaps seen are forgotten. */
  end(): void {
    this.stop();
    this.arrivals = 0;
    this.longestGap = 0;
  }

  private stop(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
