import { API_KEY_DELETE_MAX } from "../client/assumptions.js";
import type { ApiKeysApi } from "../client/apiKeys.js";
import { BadRequestError, NotFoundError, ResponseValidationError } from "../client/errors.js";

/** Turns coalescing off (one key per call): the benchmark's baseline. */
export const COALESCING_SWITCH = "LLM_ACCOUNTS_DELETE_COALESCING";

/**
 * When a batch goes out. The engine starts deletes one after another, each after a checkpoint write, so
 * they arrive spread out (tens of ms apart for a few hundred resources, more as the state grows), and they
 * stop arriving when all have come or when `--parallel` of them wait here. Either way it is time to send:
 * a batch goes once no delete has arrived for GAP_FACTOR times the longest gap seen in it (at least
 * MIN_QUIET_MS), when it holds 1000 keys, or at the latest MAX_WAIT_MS after its first key.
 */
export const COALESCE = { minQuietMs: 250, gapFactor: 4, maxQuietMs: 10_000, maxWaitMs: 10 * 60_000 };

interface Pending {
  key: string;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Gathers the deletes of every ApiKey resource in this process into `api-key/delete` calls of up to 1000
 * keys. The engine runs up to `--parallel` deletes at once; they wait here until no more arrive (see
 * COALESCE) and then go out together. A rejected batch (one bad key rejects all) is split to isolate the bad key; a key
 * that no longer exists counts as deleted. Each caller resolves only after the platform confirmed its key.
 */
export class DeleteCoalescer {
  private pending: Pending[] = [];
  private quietTimer: NodeJS.Timeout | undefined;
  private maxTimer: NodeJS.Timeout | undefined;
  private lastArrival = 0;
  private longestGap = 0;

  constructor(
    private readonly api: ApiKeysApi,
    private readonly options: typeof COALESCE & { enabled: boolean } = { ...COALESCE, enabled: process.env[COALESCING_SWITCH] !== "off" },
  ) {}

  /** Deletes one key, together with whatever other deletes arrive meanwhile. */
  delete(key: string): Promise<void> {
    if (!this.options.enabled) return this.deleteBatch([key]);
    return new Promise<void>((resolve, reject) => {
      const now = Date.now();
      if (this.pending.length > 0) this.longestGap = Math.max(this.longestGap, now - this.lastArrival);
      this.lastArrival = now;
      this.pending.push({ key, resolve, reject });
      if (this.pending.length >= API_KEY_DELETE_MAX) {
        this.flush();
        return;
      }
      const { minQuietMs, gapFactor, maxQuietMs, maxWaitMs } = this.options;
      const quiet = Math.min(maxQuietMs, Math.max(minQuietMs, gapFactor * this.longestGap));
      if (this.quietTimer) clearTimeout(this.quietTimer);
      this.quietTimer = setTimeout(() => this.flush(), quiet);
      this.maxTimer ??= setTimeout(() => this.flush(), maxWaitMs);
    });
  }

  private flush(): void {
    clearTimeout(this.quietTimer);
    clearTimeout(this.maxTimer);
    this.quietTimer = this.maxTimer = undefined;
    this.longestGap = 0;
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
      // A 2xx whose body could not be read: the platform did delete them.
      if (err instanceof ResponseValidationError) return failures;
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

const coalescers = new WeakMap<ApiKeysApi, DeleteCoalescer>();

/** The process-wide coalescer of a client's key deletes. */
export function coalescerFor(api: ApiKeysApi): DeleteCoalescer {
  let c = coalescers.get(api);
  if (!c) {
    c = new DeleteCoalescer(api);
    coalescers.set(api, c);
  }
  return c;
}
