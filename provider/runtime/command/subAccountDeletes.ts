import { SUB_ACCOUNT_MAX_SKS } from "../../api/assumptions.js";
import { AuthenticationError, BadRequestError, deleteTookEffect, NotFoundError } from "../../client/errors.js";
import type { SubAccountsApi } from "../../client/subAccounts.js";
import { DeleteSchedule, type CoalescerOptions, type Waiter } from "./deleteSchedule.js";

/**
 * Deletes tokens in one call. The platform rejects the whole batch when a token is gone already (a 404, or a 400 as
 * the spec's "rejected as a whole" allows): then one list finds those that remain, and one more call deletes them,
 * read the same way when fewer remain (its lost answer's retry meets them gone). A 400 when the list still shows
 * every token refused them, not a gone one: it fails as it came, nothing sent again. Where the list cannot be read,
 * each token is deleted alone instead (deleteEach).
 */
export async function deleteTokens(api: SubAccountsApi, tokens: string[]): Promise<void> {
  if (tokens.length === 0) return;
  try {
    await api.delete(tokens);
  } catch (err) {
    if (deleteTookEffect(err)) return;
    if (!(err instanceof NotFoundError) && !(err instanceof BadRequestError)) throw err;
    const wanted = new Set(tokens);
    const listed = await api.list().catch((listErr: unknown) => {
      if (listErr instanceof AuthenticationError) throw listErr;
      return undefined;
    });
    // A list the package cannot read: each token alone, where a 404 can name no other (a destroy needs no list).
    if (listed === undefined) return deleteEach(api, tokens, err);
    const remaining = listed.filter((s) => wanted.has(s.token)).map((s) => s.token);
    if (err instanceof BadRequestError && remaining.length === wanted.size) throw err;
    if (remaining.length < wanted.size) return deleteTokens(api, remaining);
    await api.delete(remaining);
  }
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

  private async shared(waiters: Waiter<string[]>[]): Promise<void> {
    const done =
      waiters.length > 1 &&
      (await this.api.delete([...new Set(waiters.flatMap((w) => w.item))]).then(
        () => true,
        (err: unknown) => deleteTookEffect(err),
      ));
    if (done) for (const w of waiters) w.resolve();
    else await Promise.all(waiters.map((w) => deleteTokens(this.api, w.item).then(w.resolve, w.reject)));
  }
}
