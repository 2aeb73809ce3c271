import type { SubAccountsApi } from "../client/subAccounts.js";
import { oncePer } from "./oncePer.js";

/**
 * Sub-account tokens that batches hold or made, as this process saw them: the outputs diff and read get, what
 * create and update return, what a create's answer named. A lost create's recovery never takes one of them: a
 * batch create made by another request (the batch that replaced a twin left pending, made after that twin's
 * lost create) has the same alias and balance and is newer, and only this process knows whose it is. The engine
 * deletes last, after every declared resource's diff, create and update in the same plugin process, so the
 * delete of a pending twin sees them all. Kept per client, so forgotten with the clients at startFresh(), as a
 * new plugin process starts with nothing.
 */
const held = oncePer((_api: SubAccountsApi) => new Set<string>());

/** A batch holds (or a create made) these tokens: no lost create's recovery takes them. */
export function hold(api: SubAccountsApi, tokens: Iterable<string>): void {
  const set = held(api);
  for (const t of tokens) set.add(t);
}

/** What a lost create's recovery must leave: the batch's own tokens and every token a batch holds or made. */
export function notToTake(api: SubAccountsApi, own: Iterable<string>): Set<string> {
  return new Set([...held(api), ...own]);
}
