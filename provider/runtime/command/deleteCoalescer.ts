import { API_KEY_DELETE_MAX } from "../../api/assumptions.js";
import type { ApiKeysApi } from "../../client/apiKeys.js";
import { BadRequestError, deleteTookEffect, NotFoundError } from "../../client/errors.js";
import { DeleteSchedule, type CoalescerOptions, type Waiter } from "./deleteSchedule.js";

export { COALESCE, COALESCING_SWITCH, type CoalescerClock, type CoalescerOptions } from "./deleteSchedule.js";

/**
 * Gathers the deletes of every ApiKey resource of one client of a session (`SessionClient.deletes`,
 * runtime/command/session.ts; one a process as the plugin runs it) into `api-key/delete` calls of up to 1000
 * keys. The engine runs up to `--parallel` deletes at once; they wait until all the engine can send are here, or
 * until no more arrive (the client's DeleteSchedule, shared with its sub-account batch deletes), and then go out
 * together. A batch rejected with a 404 (one bad key rejects all) is split to isolate the bad key; one rejected with
 * a 400 is looked at, one get per key (deleteLive). A key that no longer exists counts as deleted. Each caller
 * resolves only after the platform confirmed its key.
 */
export class DeleteCoalescer {
  private readonly lane: (key: string) => Promise<void>;

  /** On `schedule`, or on one of its own made with these options (tests). */
  constructor(
    private readonly api: ApiKeysApi,
    schedule: DeleteSchedule | CoalescerOptions = new DeleteSchedule(),
  ) {
    const own = schedule instanceof DeleteSchedule ? schedule : new DeleteSchedule(schedule);
    this.lane = own.lane<string>(API_KEY_DELETE_MAX, (batch) => this.settle(batch));
  }

  /** Deletes one key, together with whatever other deletes arrive meanwhile. */
  delete(key: string): Promise<void> {
    return this.lane(key);
  }

  private async settle(batch: Waiter<string>[]): Promise<void> {
    // The same key may be deleted twice in one process (a replaced resource and its twin): send it once.
    const byKey = new Map<string, Waiter<string>[]>();
    for (const w of batch) byKey.set(w.item, [...(byKey.get(w.item) ?? []), w]);
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
}
