import { performance } from "node:perf_hooks";
import { DEFAULT_RATE_LIMITS, MINUTE_MS, type RateLimit } from "../api/assumptions.js";

/** Limits per operation name that replace the defaults (windows given in real time; they are scaled too). */
export type RateLimitOverrides = Partial<Record<string, RateLimit[]>>;

/** The limits in force: the defaults of spec 8 with overrides, every window scaled by `rateWindowMs / 1 minute`. */
export function effectiveLimits(
  overrides: RateLimitOverrides | false | undefined,
  rateWindowMs: number,
): Record<string, RateLimit[]> {
  if (overrides === false) return {};
  const scale = rateWindowMs / MINUTE_MS;
  const merged: Record<string, RateLimit[]> = { ...DEFAULT_RATE_LIMITS };
  for (const [name, limits] of Object.entries(overrides ?? {})) if (limits) merged[name] = limits;
  return Object.fromEntries(
    Object.entries(merged).map(([name, limits]) => [
      name,
      limits.map((l) => ({ limit: l.limit, windowMs: l.windowMs * scale })),
    ]),
  );
}

/**
 * Sliding-window limits per credential and operation: at most `limit` accepted requests arrived within the
 * last `windowMs`, for every window of the operation.
 */
export class RateLimiter {
  /** Arrival times (monotonic ms, ascending) of the accepted requests of each bucket. */
  private readonly arrivals = new Map<string, number[]>();

  constructor(
    private readonly limits: Record<string, RateLimit[]>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Milliseconds until the bucket has a free slot in every window, or 0 when a request may go now. */
  waitMs(bucket: string, op: string): number {
    const limits = this.limits[op] ?? [];
    const times = this.prune(bucket, op);
    const now = this.now();
    let wait = 0;
    for (const { limit, windowMs } of limits) {
      const inWindow = times.filter((t) => t > now - windowMs);
      if (inWindow.length < limit) continue;
      // A slot frees when enough of the oldest arrivals leave the window to bring the count below the limit.
      const freeing = limit > 0 ? inWindow[inWindow.length - limit] : now;
      wait = Math.max(wait, freeing + windowMs - now);
    }
    return wait > 0 ? Math.max(1, Math.ceil(wait)) : 0;
  }

  /** Counts one accepted request against the bucket. */
  record(bucket: string, op: string): void {
    if (!this.limits[op]?.length) return;
    const key = `${bucket}|${op}`;
    const times = this.arrivals.get(key) ?? [];
    times.push(this.now());
    this.arrivals.set(key, times);
  }

  private prune(bucket: string, op: string): number[] {
    const key = `${bucket}|${op}`;
    const times = this.arrivals.get(key);
    if (!times) return [];
    const longest = Math.max(0, ...(this.limits[op] ?? []).map((l) => l.windowMs));
    const cutoff = this.now() - longest;
    let drop = 0;
    while (drop < times.length && times[drop] <= cutoff) drop++;
    if (drop > 0) times.splice(0, drop);
    return times;
  }
}
