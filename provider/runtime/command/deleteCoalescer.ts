import { API_KEY_DELETE_MAX } from "../../api/assumptions.js";
import type { ApiKeysApi } from "../../client/apiKeys.js";
import { SYSTEM_CLOCK, type Clock } from "../../client/clock.js";
import { BadRequestError, deleteTookEffect, NotFoundError } from "../../client/errors.js";
import { QuietPeriod } from "./quietPeriod.js";

/** Turns coalescing off (one key per call): the benchmark's baseline. */
export const COALESCING_SWITCH = "LLM_ACCOUNTS_DELETE_COALESCING";

/**
 * When a batch goes out. The engine starts deletes one after another, each after a checkpoint write, so
 * they arrive spread out (tens of ms apart for a few hundred resources, more as the state grows and on a loaded
 * machine), and it never has more than `--parallel` of them running. A batch goes once no delete has arrived for
 * `gapFactor` times the longest gap seen in it (at least `minQuietMs`), when it holds 1000 keys, or at the latest
 * `maxWaitMs` after its first key. Once the engine's parallelism is known, a batch goes at once when that many
 * deletes wait: then no other delete can be coming until one of them is answered. It is known when two batches in
 * a row went after a quiet period with the same number of deletes outstanding and none arrived while they were on
 * the wire (the engine was waiting for us); a delete arriving while a batch is on the wire shows that its quiet
 * period was the engine pausing (a checkpoint, a loaded machine), and one arriving beyond the parallelism shows it
 * wrong: both are forgotten. A pause costs one more call, never one call per key. What is learned holds for one
 * burst of deletes: after a pause longer than a quiet period, it is learned again.
 */
export const COALESCE = { minQuietMs: 500, gapFactor: 4, maxQuietMs: 10_000, maxWaitMs: 10 * 60_000 };

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
 * runtime/command/session.ts; one a process as the plugin runs it) into `api-key/delete` calls of up to 1000
 * keys. The engine runs up to `--parallel` deletes at once; they wait here until all the engine can send
 * are here, or until no more arrive (see COALESCE), and then go out together. A batch rejected with a 404 (one
 * bad key rejects all) is split to isolate the bad key; one rejected with a 400 is looked at, one get per key
 * (deleteLive). A key that no longer exists counts as deleted. Each caller
 * resolves only after the platform confirmed its key.
 */
export class DeleteCoalescer {
  private pending: Pending[] = [];
  private readonly quiet: QuietPeriod;
  private maxTimer: unknown;
  /** Deletes called and not yet answered (waiting here or on the wire). */
  private outstanding = 0;
  /** The engine's parallelism once known (0 until then); see COALESCE. */
  private parallelism = 0;
  /** The deletes outstanding when the last batch went after a quiet period, none arriving since it went (0 if any did). */
  private candidate = 0;
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
      if (this.outstanding === 0 && now - this.idleSince > this.lastQuiet) this.forget();
      // A batch on the wire while this one arrives: the engine was not waiting for it when it went.
      if (this.outstanding > this.pending.length) this.candidate = 0;
      this.outstanding++;
      if (this.outstanding > this.parallelism) this.parallelism = 0;
      const done = () => {
        if (--this.outstanding === 0) this.idleSince = this.clock.now();
      };
      this.pending.push({ key, resolve: () => (done(), resolve()), reject: (err) => (done(), reject(err)) });
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
      this.quiet.after(() => this.flushAfterQuiet());
      this.maxTimer ??= this.clock.setTimeout(() => this.flush(), this.options.maxWaitMs);
    });
  }

  /** A batch that waited out its quiet period: the second in a row with as many deletes outstanding tells the parallelism. */
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
      if (err instanceof BadRequestError) return this.deleteLive(keys, err);
      if (!(err instanceof NotFoundError)) {
        for (const k of keys) failures.set(k, err);
        return failures;
      }
      // A key that is already gone is what a delete wants.
      if (keys.length === 1) return failures;
    }
    const half = Math.ceil(keys.length / 2);
    const [a, b] = await Promise.all([this.deleteMany(keys.slice(0, half)), this.deleteMany(keys.slice(half))]);
    return new Map([...a, ...b]);
  }

  /**
   * A batch refused with a 400: the spec rejects a batch "as a whole when any key fails validation", and a platform
   * may say so for a key deleted elsewhere. One get per key tells which are gone (a 404, or a 400 naming the key:
   * ApiKeysApi.find); the live ones are deleted in one call, read as the first was (deleteMany). When every key is
   * live, the 400 refused them, not a gone one: each fails with it, and nothing is sent again.
   */
  private async deleteLive(keys: string[], refusal: unknown): Promise<Map<string, unknown>> {
    const failures = new Map<string, unknown>();
    const looked = await Promise.all(keys.map((k) => this.api.find(k).then((view) => ({ k, live: view !== undefined }), (error: unknown) => ({ k, error }))));
    const live: string[] = [];
    for (const l of looked) {
      if ("error" in l) failures.set(l.k, l.error);
      else if (l.live) live.push(l.k);
    }
    if (live.length === 0) return failures;
    if (live.length + failures.size === keys.length) {
      for (const k of live) failures.set(k, refusal);
      return failures;
    }
    // Read as the first delete was: its lost answer's retry may meet them gone too (fewer keys each time: it ends).
    for (const [k, err] of await this.deleteMany(live)) failures.set(k, err);
    return failures;
  }

  private async deleteBatch(keys: string[]): Promise<void> {
    const failures = await this.deleteMany(keys);
    const first = failures.values().next();
    if (!first.done) throw first.value;
  }
}
