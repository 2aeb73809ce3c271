/**
 * Batch replacements that `diff` decided in this session, counted by alias. The engine calls diff, then the
 * replacing create, in the same plugin process; the replaced twin (and any twin an earlier failed deployment
 * left pending) is deleted only at the end of the deployment, and may carry the same alias and balance. So a
 * create that replaces lists its alias once before it creates: if its answer is lost, the recovery tells what
 * it made from what existed before. A plain create makes no such call. The counts are a companion of one client
 * of the session (`SessionClient.replacements`, runtime/session.ts), so forgotten at startFresh(), as a new
 * plugin process starts with nothing.
 */

/** diff decided that a batch with this alias is replaced: the create that follows looks first. */
export function announceReplacement(announced: Map<string, number>, alias: string): void {
  announced.set(alias, (announced.get(alias) ?? 0) + 1);
}

/** True (once per announcement) when a create of this alias replaces a batch that diff saw in this session. */
export function takeReplacement(announced: Map<string, number>, alias: string): boolean {
  const n = announced.get(alias) ?? 0;
  if (n === 0) return false;
  if (n === 1) announced.delete(alias);
  else announced.set(alias, n - 1);
  return true;
}
