import type { SubAccountsApi } from "../client/subAccounts.js";
import { oncePer } from "./oncePer.js";

/**
 * Batch replacements that `diff` decided in this process, counted by alias. The engine calls diff, then the
 * replacing create, in the same plugin process; the replaced twin (and any twin an earlier failed deployment
 * left pending) is deleted only at the end of the deployment, and may carry the same alias and balance. So a
 * create that replaces lists its alias once before it creates: if its answer is lost, the recovery tells what
 * it made from what existed before. A plain create makes no such call. Kept per client, so forgotten with the
 * clients at startFresh(), as a new plugin process starts with nothing.
 */
const announced = oncePer((_api: SubAccountsApi) => new Map<string, number>());

/** diff decided that a batch with this alias is replaced: the create that follows looks first. */
export function announceReplacement(api: SubAccountsApi, alias: string): void {
  const pending = announced(api);
  pending.set(alias, (pending.get(alias) ?? 0) + 1);
}

/** True (once per announcement) when a create of this alias replaces a batch that diff saw in this process. */
export function takeReplacement(api: SubAccountsApi, alias: string): boolean {
  const pending = announced(api);
  const n = pending.get(alias) ?? 0;
  if (n === 0) return false;
  if (n === 1) pending.delete(alias);
  else pending.set(alias, n - 1);
  return true;
}
