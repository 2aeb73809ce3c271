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
