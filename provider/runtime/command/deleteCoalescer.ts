import { API_KEY_DELETE_MAX } from "../../api/assumptions.js";
import { KeysNotConfirmedError, type ApiKeysApi } from "../../client/apiKeys.js";
import { BadRequestError, deleteTookEffect, NotFoundError, type ApiError } from "../../client/errors.js";
import { AmbiguousAnswerError } from "../../client/refusals.js";
import { maskKey } from "../../api/redact.js";
import { DeleteSchedule, type CoalescerOptions, type Waiter } from "./deleteSchedule.js";
import { lookUntil } from "./sharedList.js";

export { COALESCE, COALESCING_SWITCH, type CoalescerClock, type CoalescerOptions } from "./deleteSchedule.js";

/**
 * Gathers the deletes of every ApiKey resource of one client of a session (`SessionClient.deletes`,
 * runtime/command/session.ts; one a process as the plugin runs it) into `api-key/delete` calls of up to 1000
 * keys. The engine runs up to `--parallel` deletes at once; they wait until all the engine can send are here, or
 * until no more arrive (the client's DeleteSchedule, shared with its sub-account batch deletes), and then go out
 * together. A batch rejected with a 404 (one bad key rejects all) is split to isolate the bad key; one rejected with
 * a 400 is looked at, one get per key (deleteLive), and a key the platform refuses (in use, locked) fails alone, the
 * others sent again without it (refusedAmong). A key that no longer exists counts as deleted; an answer that is not
 * the platform's is confirmed by looking (ApiKeysApi.delete). Each caller resolves only after the platform
 * confirmed its key.
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
      for (const w of waiters) err ? w.reject(err) : w.resolve();
    }
  }

  /**
   * Deletes keys, splitting rejected batches; returns the error of each key that could not be deleted. `live`: every
   * key was just seen live by a get, so a 400 refuses one of them (refusedAmong) and needs no look again.
   */
  private async deleteMany(keys: string[], live = false): Promise<Map<string, unknown>> {
    const failures = new Map<string, unknown>();
    try {
      await this.api.delete(keys);
      return failures;
    } catch (err) {
      if (deleteTookEffect(err)) return failures;
      // An answer that could not be read, and a get showed these still there: they alone failed.
      if (err instanceof KeysNotConfirmedError) return new Map(err.keys.map((k) => [k, err]));
      // A 400, or an answer the profile gives two meanings (refused or gone): looked at, key by key.
      if (err instanceof BadRequestError || err instanceof AmbiguousAnswerError)
        return live ? this.refusedAmong(keys, err) : this.deleteLive(keys, err);
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
   * may say so for a key deleted elsewhere. One get per key tells which are gone (ApiKeysApi.find: a 404, or a 400
   * naming the key once the admin key is known to be taken); the live ones are deleted in one call, read as the
   * first was (deleteMany). When every key is live, the 400 refused one or more of them (refusedAmong). A refusal
   * that answered a delete sent again after a lost answer may be that first send's work on a platform whose reads
   * lag: the live ones are looked at again, within the platform's bound, before they count as refused.
   */
  private async deleteLive(keys: string[], refusal: ApiError): Promise<Map<string, unknown>> {
    const failures = new Map<string, unknown>();
    const lookAll = async (among: string[]) => {
      const looked = await Promise.all(
        among.map((k) =>
          this.api.find(k).then(
            (view) => ({ k, live: view !== undefined }),
            (error: unknown) => ({ k, error }),
          ),
        ),
      );
      const live: string[] = [];
      for (const l of looked) {
        if ("error" in l) failures.set(l.k, l.error);
        else if (l.live) live.push(l.k);
      }
      return live;
    };
    let live = await lookAll(keys);
    if (refusal.afterLostAnswer && live.length > 0)
      live = await lookUntil(
        this.api,
        () => lookAll(live),
        (still) => still.length === 0,
        { first: { found: live } },
      );
    if (live.length === 0) return failures;
    const all = live.length + failures.size === keys.length;
    // Read as the first delete was: its lost answer's retry may meet them gone too (fewer keys each time: it ends).
    for (const [k, err] of all ? await this.refusedAmong(live, refusal) : await this.deleteMany(live))
      failures.set(k, err);
    return failures;
  }

  /**
   * Live keys of a batch the platform refused (a key in use, locked): the refusal is one key's (or a few), so it fails
   * those alone and the others are sent again without them. The refused key is the one its message names (masked,
   * as it names keys), else found by splitting the batch in halves, each sent again (a half that is refused again
   * is split again, down to the key). Every key sent here was just seen live.
   */
  private async refusedAmong(keys: string[], refusal: ApiError): Promise<Map<string, unknown>> {
    if (keys.length === 1) return new Map([[keys[0], refusal]]);
    const said = `${refusal.code ?? ""} ${refusal.apiMessage ?? refusal.message}`;
    const named = keys.filter((k) => said.includes(maskKey(k)));
    if (named.length === 1) {
      const others = await this.deleteMany(
        keys.filter((k) => k !== named[0]),
        true,
      );
      return new Map([[named[0], refusal], ...others]);
    }
    const half = Math.ceil(keys.length / 2);
    const [a, b] = await Promise.all([
      this.deleteMany(keys.slice(0, half), true),
      this.deleteMany(keys.slice(half), true),
    ]);
    return new Map([...a, ...b]);
  }
}
