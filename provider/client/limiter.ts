import { performance } from "node:perf_hooks";
import { DEFAULT_RATE_LIMITS, MINUTE_MS, type RateLimit } from "../api/assumptions.js";
import type { Operation } from "../api/operations.js";
import { fingerprint } from "../api/redact.js";
import type { RateLimitOptions } from "./settings.js";

/**
 * How much longer than its window a slot is held: a thousandth of the window and a millisecond. The server counts
 * a window on its own clock, which may run up to that much faster than ours (0.1%: a minute's window is held 61 ms
 * longer), and a local server's arrival can be within a millisecond of its answer. Measured on 2026-11-28: holding
 * exactly the window on Date.now (whole milliseconds, and a wall clock that NTP moved by 0.7 ms against the
 * monotonic one within a minute) drew one 429 in 5,001 gets of a 5,000-key import at the emulator's one-minute window.
 */
export const windowMarginMs = (windowMs: number): number => windowMs / 1000 + 1;

/** The limiters' clock: monotonic and in fractions of a millisecond, as the emulator's (performance.now). */
const monotonicNow = (): number => performance.now();

/**
 * Keeps a caller under "at most `limit` requests in any `windowMs`", as a server that counts arrivals in a
 * sliding window sees them. A slot is taken when a request is sent and is held until `windowMs` (and its margin,
 * windowMarginMs) after its response came back: the server's arrival time lies between the two, so the next
 * request that reuses the slot arrives at least a full window after it, whatever the latency. Waiters are served
 * in order.
 */
export class SlidingWindowLimiter {
  /** Release times of slots whose requests have completed, ascending. */
  private releases: number[] = [];
  /** Requests sent and not completed yet. */
  private inFlight = 0;
  private queue: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;

  private readonly holdMs: number;

  constructor(
    readonly limit: RateLimit,
    private readonly now: () => number = monotonicNow,
  ) {
    this.holdMs = limit.windowMs + windowMarginMs(limit.windowMs);
  }

  /** Waits for a slot; call the returned function when the response (or failure) arrives. */
  async acquire(): Promise<() => void> {
    if (this.queue.length > 0 || !this.tryTake()) {
      await new Promise<void>((resolve) => {
        this.queue.push(resolve);
        this.pump();
      });
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.inFlight -= 1;
      this.releases.push(this.now() + this.holdMs);
      this.pump();
    };
  }

  private tryTake(): boolean {
    const now = this.now();
    while (this.releases.length > 0 && this.releases[0] <= now) this.releases.shift();
    if (this.inFlight + this.releases.length < this.limit.limit) {
      this.inFlight += 1;
      return true;
    }
    return false;
  }

  private pump(): void {
    while (this.queue.length > 0 && this.tryTake()) this.queue.shift()!();
    if (this.queue.length === 0 || this.timer || this.releases.length === 0) return;
    const wait = Math.max(0, this.releases[0] - this.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, wait);
  }
}

/** Counts requests in a long window (the usage summary's 2000 a day) and refuses past the budget. */
export class BudgetCounter {
  private sent: number[] = [];
  constructor(
    readonly limit: RateLimit,
    private readonly now: () => number = monotonicNow,
  ) {}

  /** Takes one from the budget, or returns how long until one is free. */
  take(): { ok: true } | { ok: false; retryAfterMs: number } {
    const now = this.now();
    while (this.sent.length > 0 && this.sent[0] <= now - this.limit.windowMs) this.sent.shift();
    if (this.sent.length >= this.limit.limit)
      return { ok: false, retryAfterMs: this.sent[0] + this.limit.windowMs - now };
    this.sent.push(now);
    return { ok: true };
  }
}

/** The limiters of one operation: sliding windows that wait for a slot, and long-window budgets that refuse. */
export interface OperationLimiters {
  windows: SlidingWindowLimiter[];
  budgets: BudgetCounter[];
}

/** The limits of an operation under the given options: the defaults of spec 8, replaced or rescaled. */
function limitsFor(op: Operation, options: RateLimitOptions | undefined): RateLimit[] {
  if (options === false) return [];
  const scale = (options?.windowMs ?? MINUTE_MS) / MINUTE_MS;
  const override = options?.perOperation?.[op.name];
  const base: RateLimit[] =
    override === undefined
      ? (DEFAULT_RATE_LIMITS[op.name] ?? [])
      : typeof override === "number"
        ? [{ limit: override, windowMs: MINUTE_MS }, ...(DEFAULT_RATE_LIMITS[op.name] ?? []).slice(1)]
        : override;
  return base.map((l) => ({ limit: l.limit, windowMs: l.windowMs * scale }));
}

/**
 * The limiters of a set of clients, by origin, credential, operation and limits: every client given the same
 * registry waits on the same limiters for the same ones (the platform counts per credential, whichever client
 * sends). A client made without one uses PROCESS_LIMITERS, as does every runtime session (runtime/command/session.ts).
 */
export class RateLimiters {
  private readonly shared = new Map<string, OperationLimiters>();

  /** The limiters of an operation sent to `origin` with `credential` under `options`. */
  for(op: Operation, origin: string, credential: string, options: RateLimitOptions | undefined): OperationLimiters {
    const limits = limitsFor(op, options);
    const id = `${origin}|${fingerprint(credential)}|${op.name}|${JSON.stringify(limits)}`;
    let entry = this.shared.get(id);
    if (!entry) {
      // Long windows (a day) are budgets that refuse; waiting a day inside a deployment helps nobody.
      entry = {
        windows: limits.filter((l) => l.windowMs <= 10 * MINUTE_MS).map((l) => new SlidingWindowLimiter(l)),
        budgets: limits.filter((l) => l.windowMs > 10 * MINUTE_MS).map((l) => new BudgetCounter(l)),
      };
      this.shared.set(id, entry);
    }
    return entry;
  }
}

/**
 * The limiters of the process: those of every client made without its own registry, and of every runtime
 * session, each new session keeping them. They are what the platform counts, per credential over a window that
 * does not restart when a session does, so a process never forgets them (as before the session object).
 */
export const PROCESS_LIMITERS = new RateLimiters();
