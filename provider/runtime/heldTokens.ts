import { maskKey } from "../api/redact.js";
import { LlmAccountsError } from "../client/errors.js";

/**
 * Sub-account tokens that batches hold or made, as this session saw them: the outputs diff and read get, what
 * create and update return, what a create's answer named. Needed only for a batch that an earlier version kept as
 * unconfirmed (`unconfirmedSince` without `unconfirmedAlias`: its lost create carried no marked alias, see
 * batchRecovery.ts), whose recovery goes by alias, balance and time and never takes one of them: a
 * batch create made by another request (the batch that replaced a twin left pending, made after that twin's
 * lost create) has the same alias and balance and is newer, and only this process knows whose it is. The engine
 * deletes last, after every declared resource's diff, create and update in the same plugin process, so the
 * delete of a pending twin sees them all. The set is a companion of one client of the session
 * (`SessionClient.heldTokens`, runtime/session.ts), so forgotten at startFresh(), as a new plugin process starts
 * with nothing.
 */

/** A batch holds (or a create made) these tokens: no lost create's recovery takes them. */
export function hold(held: Set<string>, tokens: Iterable<string>): void {
  for (const t of tokens) held.add(t);
}

/** What a lost create's recovery must leave: the batch's own tokens and every token a batch holds or made. */
export function notToTake(held: ReadonlySet<string>, own: Iterable<string>): Set<string> {
  return new Set([...held, ...own]);
}

/**
 * Tokens a batch keeps in this command (its own, less those its new `adoptTokens` releases; what a create adopted),
 * beside the held set they belong to: what another batch's create may not adopt. A token released by one batch
 * may be adopted by another in the same deployment, so released ones are not kept.
 */
const keptBeside = new WeakMap<Set<string>, Set<string>>();

function keptOf(held: Set<string>): Set<string> {
  let kept = keptBeside.get(held);
  if (!kept) keptBeside.set(held, (kept = new Set()));
  return kept;
}

/** A batch holds `tokens` and keeps all but `released` (diff: its state's tokens and what its new input releases). */
export function holdKept(held: Set<string>, tokens: Iterable<string>, released: Iterable<string>): void {
  const out = new Set(released);
  const kept = keptOf(held);
  for (const t of tokens) {
    held.add(t);
    if (!out.has(t)) kept.add(t);
  }
}

/**
 * A create's `adoptTokens`, taken for it before anything is read or written: fails, naming the first such token
 * masked, when another batch of this command keeps one (one sub-account, one owner, also for programs that bypass
 * the resource classes); else they are kept from now on.
 */
export function takeForCreate(held: Set<string>, adoptTokens: readonly string[]): void {
  const kept = keptOf(held);
  const i = adoptTokens.findIndex((t) => kept.has(t));
  if (i >= 0) {
    throw new LlmAccountsError(
      `adoptTokens[${i}] (${maskKey(adoptTokens[i])}) is held by another SubAccountBatch of this deployment: one sub-account has one owner, ` +
        "so only one resource may hold it; nothing was changed. Remove it from this batch's adoptTokens (or release it from the other by listing the tokens that one keeps)",
    );
  }
  for (const t of adoptTokens) {
    kept.add(t);
    held.add(t);
  }
}
