import { SUB_ACCOUNT_MAX_SKS } from "../../api/assumptions.js";
import {
  AuthenticationError,
  BadRequestError,
  deleteTookEffect,
  LlmAccountsError,
  NotFoundError,
  UnknownAnswerError,
} from "../../client/errors.js";
import { AmbiguousAnswerError } from "../../client/refusals.js";
import { named, type SubAccountsApi } from "../../client/subAccounts.js";
import { lookUntil } from "./sharedList.js";
import { DeleteSchedule, type CoalescerOptions, type Waiter } from "./deleteSchedule.js";

/**
 * Deletes tokens in one call. The platform rejects the whole batch when a token is gone already (a 404, or a 400 as
 * the spec's "rejected as a whole" allows): then one list finds those that remain, and one more call deletes them,
 * read the same way when fewer remain (its lost answer's retry meets them gone). A 400 when the list still shows
 * every token refused them, not a gone one: it fails as it came, nothing sent again; unless it answered a delete sent
 * again after a lost answer, whose first send may have deleted them on a platform whose list lags: the list is read
 * again within the platform's bound first. An answer that is not the platform's (or that the profile gives two
 * meanings) is confirmed by the list: done when none remains, else it fails naming those that remain. Where the list
 * cannot be read (a form the package cannot read; a refused credential still stops), each token is deleted alone
 * instead (deleteEach): a destroy needs no list.
 */
export async function deleteTokens(api: SubAccountsApi, tokens: string[]): Promise<void> {
  if (tokens.length === 0) return;
  try {
    await api.delete(tokens);
  } catch (err) {
    if (deleteTookEffect(err)) return;
    // Not the platform's: confirmed by the list. A 404, a 400, or an answer the profile gives two meanings: looked at.
    const unknown = err instanceof UnknownAnswerError;
    if (
      !unknown &&
      !(err instanceof NotFoundError) &&
      !(err instanceof BadRequestError) &&
      !(err instanceof AmbiguousAnswerError)
    )
      throw err;
    const wanted = new Set(tokens);
    const look = async () =>
      (await api.listedAfter(err, tokens)).filter((s) => wanted.has(s.token)).map((s) => s.token);
    let remaining: string[];
    try {
      remaining = await look();
    } catch (listErr) {
      if (listErr instanceof AuthenticationError) throw listErr;
      // A list the package cannot read: each token alone, where a 404 can name no other (a destroy needs no list).
      return deleteEach(api, tokens, err);
    }
    if ((err as LlmAccountsError).afterLostAnswer && remaining.length === wanted.size) {
      remaining = await lookUntil(api, look, (r) => r.length < wanted.size, { first: { found: remaining } });
    }
    if (unknown && remaining.length > 0) throw notDeleted(err as LlmAccountsError, remaining);
    if (unknown) return;
    if (!(err instanceof NotFoundError) && remaining.length === wanted.size) throw err;
    if (remaining.length < wanted.size) return deleteTokens(api, remaining);
    await api.delete(remaining);
  }
}

/** A delete answered with `err` (unknown) whose look still lists `remaining`: not deleted, named masked. */
function notDeleted(err: LlmAccountsError, remaining: readonly string[]): LlmAccountsError {
  return new LlmAccountsError(`${err.message}; the sub-account list still shows ${named(remaining)}: not deleted`, {
    operation: err.operation,
    status: err.status,
  });
}

/**
 * deleteTokens without a list: one delete per token, so that a 404 names the one token it was sent for (gone); any
 * other refusal of one fails as it came. A single token refused with a 400 cannot be told gone from refused without
 * the list: `refusal` (the batch's) is thrown then.
 */
async function deleteEach(api: SubAccountsApi, tokens: string[], refusal: unknown): Promise<void> {
  if (tokens.length === 1 && refusal instanceof NotFoundError) return;
  for (const token of tokens) {
    try {
      await api.delete([token]);
    } catch (err) {
      if (deleteTookEffect(err) || err instanceof NotFoundError) continue;
      throw tokens.length === 1 && err instanceof BadRequestError ? refusal : err;
    }
  }
}

/**
 * Gathers the deletes of the SubAccountBatch resources of one client of a session (`SessionClient.batchDeletes`) into
 * shared `sub-account/delete` calls, on the schedule of the client's key deletes (DeleteSchedule: the engine's
 * `--parallel` bounds both together). The batches that go together are sent in as few calls as the `sks` cap
 * allows. A shared call that fails, unless it took effect (deleteTookEffect), is sent again batch by batch as a
 * lone batch's delete is (deleteTokens: a gone token of one batch, or a refusal of its tokens, is that batch's
 * alone). Each batch's delete resolves only when its own tokens are confirmed deleted.
 */
export class SubAccountDeletes {
  private readonly lane: (tokens: string[]) => Promise<void>;

  /** On `schedule`, or on one of its own made with these options (tests). */
  constructor(
    private readonly api: SubAccountsApi,
    schedule: DeleteSchedule | CoalescerOptions = new DeleteSchedule(),
  ) {
    const own = schedule instanceof DeleteSchedule ? schedule : new DeleteSchedule(schedule);
    this.lane = own.lane<string[]>(Infinity, (batch) => this.settle(batch));
  }

  /** Deletes one batch's tokens, together with whatever other deletes arrive meanwhile. */
  delete(tokens: string[]): Promise<void> {
    return tokens.length === 0 ? Promise.resolve() : this.lane(tokens);
  }

  /**
   * The waiting batches, in shared deletes of at most SUB_ACCOUNT_MAX_SKS tokens (what one request may name; a batch
   * is never split between two), each sent in parts of the learned `sks` cap (SubAccountsApi.delete).
   */
  private async settle(batch: Waiter<string[]>[]): Promise<void> {
    const groups: Waiter<string[]>[][] = [];
    let size = Infinity;
    for (const w of batch) {
      if (size + w.item.length > SUB_ACCOUNT_MAX_SKS) groups.push([]), (size = 0);
      groups.at(-1)!.push(w);
      size += w.item.length;
    }
    await Promise.all(groups.map((g) => this.shared(g)));
  }

  /**
   * One shared call for `waiters`; failed, each batch is sent again alone (deleteTokens), but for an answer that is not
   * the platform's: then one list tells each batch whether its tokens are gone (done) or not (it fails, naming them).
   */
  private async shared(waiters: Waiter<string[]>[]): Promise<void> {
    if (waiters.length === 1)
      return deleteTokens(this.api, waiters[0].item).then(waiters[0].resolve, waiters[0].reject);
    const tokens = [...new Set(waiters.flatMap((w) => w.item))];
    const failure = await this.api.delete(tokens).then(
      () => undefined,
      (err: unknown) => (deleteTookEffect(err) ? undefined : err),
    );
    if (failure === undefined) return void waiters.forEach((w) => w.resolve());
    if (!(failure instanceof UnknownAnswerError))
      return void (await Promise.all(waiters.map((w) => deleteTokens(this.api, w.item).then(w.resolve, w.reject))));
    const left = await this.api.listedAfter(failure, tokens).then(
      (items) => new Set(items.map((i) => i.token)),
      (err: unknown) => err,
    );
    for (const w of waiters) {
      const remaining = left instanceof Set ? w.item.filter((t) => left.has(t)) : [];
      if (!(left instanceof Set)) w.reject(left);
      else if (remaining.length === 0) w.resolve();
      else w.reject(notDeleted(failure, remaining));
    }
  }
}
