import { API_KEY_DELETE_MAX } from "../api/assumptions.js";
import type { ApiKeysApi } from "../client/apiKeys.js";
import { SYSTEM_CLOCK, type Clock } from "../client/clock.js";
import { BadRequestError, deleteTookEffect, NotFoundError } from "../client/errors.js";
import { QuietPeriod } from "./quietPeriod.js";

/** Turns coalescing off (one key per call): the benchmark's baseline. */
export const COALESCING_SWITCH = "LLM_ACCOUNTS_DELETE_COALESCING";

/**
 * When a batch goes out. The engine starts deletes one after another, each after a checkpoint write, so
 * they arrive spread out (tens of ms apart for a few hundred resources, more as the state grows), and it
 * never has more than `--parallel` of them running. A batch goes at once when as many deletes wait here as
 * this process has seen outstanding together (the engine's parallelism, learned from earlier batches and from
 * deletes arriving while a batch was on the wire): then no other delete can be coming until one of them is
 * answered. What is learned holds for one burst of deletes: after a pause longer than a quiet period, it
 * is learned again. Until that is learned, and for the last batch of a destroy, a batch goes once no delete has
 * arrived for `gapFactor` times the longest gap seen in it (at least `minQuietMs`), when it holds 1000 keys,
 * or at the latest `maxWaitMs` after its first key.
 */
export const COALESCE = { minQuietMs: 250, gapFactor: 4, maxQuietMs: 10_000, maxWaitMs: 10 * 60_000 };

/** The parts of the clock a coalescer uses: time, and timers (injectable, so that the schedule is tested without waiting). */
export type CoalescerClock = Pick<Clock, "now" | "setTimeout" | "clearTimeout">;

/** Settings of a coalescer: the schedule, the switch, and the clock. */
export type CoalescerOptions = typeof COALESCE & { enabled: boolean; clock?: CoalescerClock };

interface Pending {
  key: string;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Gathers the deletes of every ApiKey resource of one client of a session (`SessionClient.deletes`,
 * runtime/session.ts; one a process as the plugin runs it) into `api-key/delete` calls of up to 1000
 * keys. The engine runs up to `--parallel` deletes at once; they wait here until all the engine can send
 * are here, or until no more arrive (see COALESCE), and then go out together. A rejected batch (one bad key
 * rejects all) is split to isolate the bad key; a key that no longer exists counts as deleted. Each caller
 * resolves only after the platform confirmed its key.
 */
export class DeleteCoalescer {
  private pending: Pending[] = [];
  private readonly quiet: QuietPeriod;
  private maxTimer: unknown;
  /** Deletes called and not yet answered (waiting here or on the wire). */
  private outstanding = 0;
  /** The most deletes seen outstanding together once a batch went out: the engine's parallelism, or less. */
  private parallelism = 0;
  /** When the last outstanding delete was answered, and the quiet period its batch used. */
  private idleSince = 0;
  private lastQuiet = 0;
  private flushQueued = false;
  private readonly clock: CoalescerClock;

  constructor(
    private readonly api: ApiKeysApi,
    private readonly options: CoalescerOptions = { ...COALESCE, enabled: process.env[COALESCING_SWITCH] !== "off" },
  ) {
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.quiet = new QuietPeriod(options, this.clock);
  }

  /** Deletes one key, together with whatever other deletes arrive meanwhile. */
  delete(key: string): Promise<void> {
    if (!this.options.enabled) return this.deleteBatch([key]);
    return new Promise<void>((resolve, reject) => {
      const now = this.clock.now();
      this.quiet.arrive(now);
      // Deletes that come after a pause longer than a quiet period are another burst (a later step of the
      // deployment, not the engine waiting for us): what was learned before says nothing about it.
      if (this.outstanding === 0 && now - this.idleSince > this.lastQuiet) this.parallelism = 0;
      this.outstanding++;
      const done = () => {
        if (--this.outstanding === 0) this.idleSince = this.clock.now();
      };
      this.pending.push({ key, resolve: () => (done(), resolve()), reject: (err) => (done(), reject(err)) });
      if (this.parallelism > 0) this.parallelism = Math.max(this.parallelism, this.outstanding);
      if (this.pending.length >= API_KEY_DELETE_MAX) {
        this.flush();
        return;
      }
      if (this.parallelism > 0 && this.pending.length >= this.parallelism) {
        // At the end of this tick, not now: one resource may delete several keys at once (a rotated key and
        // its previous one), and those must go in the same batch whatever was learned.
        if (!this.flushQueued) {
          this.flushQueued = true;
          queueMicrotask(() => this.flush());
        }
        return;
      }
      this.quiet.after(() => this.flush());
      this.maxTimer ??= this.clock.setTimeout(() => this.flush(), this.options.maxWaitMs);
    });
  }

  private flush(): void {
    this.flushQueued = false;
    if (this.maxTimer !== undefined) this.clock.clearTimeout(this.maxTimer);
    this.maxTimer = undefined;
    this.lastQuiet = this.quiet.ms;
    this.quiet.end();
    this.parallelism = Math.max(this.parallelism, this.outstanding);
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, API_KEY_DELETE_MAX);
      void this.settle(batch);
    }
  }

  private async settle(batch: Pending[]): Promise<void> {
    // The same key may be deleted twice in one process (a replaced resource and its twin): send it once.
    const byKey = new Map<string, Pending[]>();
    for (const p of batch) byKey.set(p.key, [...(byKey.get(p.key) ?? []), p]);
    const results = await this.deleteMany([...byKey.keys()]);
    for (const [key, waiters] of byKey) {
      const err = results.get(key);
      for (const w of waiters) (err ? w.reject(err) : w.resolve());
    }
  }

  /** Deletes keys, splitting rejected batches; returns the error of each key that could not be deleted. */
  private async deleteMany(keys: string[]): Promise<Map<string, unknown>> {
    const failures = new Map<string, unknown>();
    try {
      await this.api.delete(keys);
      return failures;
    } catch (err) {
      if (deleteTookEffect(err)) return failures;
      const rejectedAsBatch = err instanceof NotFoundError || err instanceof BadRequestError;
      if (!rejectedAsBatch) {
        for (const k of keys) failures.set(k, err);
        return failures;
      }
      if (keys.length === 1) {
        // A key that is already gone is what a delete wants.
        if (!(err instanceof NotFoundError)) failures.set(keys[0], err);
        return failures;
      }
    }
    const half = Math.ceil(keys.length / 2);
    const [a, b] = await Promise.all([this.deleteMany(keys.slice(0, half)), this.deleteMany(keys.slice(half))]);
    return new Map([...a, ...b]);
  }

  private async deleteBatch(keys: string[]): Promise<void> {
    const failures = await this.deleteMany(keys);
    const first = failures.values().next();
    if (!first.done) throw first.value;
  }
}
