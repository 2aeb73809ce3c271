import { LlmAccountsError } from "../client/errors.js";
import { maskKey } from "../api/redact.js";
import { KeySchema, type SubAccount } from "../api/schemas/index.js";
import type { SubAccountsApi } from "../client/subAccounts.js";
import { UNKNOWN, type CheckFailure } from "./values.js";

/** The tokens a batch adopts, from inputs or outputs; none for states written before `adoptTokens` existed. */
export function adoptedTokens(props: Record<string, unknown>): string[] {
  return Array.isArray(props.adoptTokens) ? (props.adoptTokens as string[]) : [];
}

/** True when two `adoptTokens` values name the same tokens, in whatever order. */
export function sameTokenSet(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((t) => set.has(t));
}

/**
 * Check failures of `adoptTokens` and of `count` against it. A value is never echoed: each entry is meant to
 * be a secret, so failures name the position only.
 */
export function adoptTokensFailures(adoptTokens: unknown, count: unknown): CheckFailure[] {
  if (adoptTokens === undefined || adoptTokens === null || adoptTokens === UNKNOWN) return [];
  if (!Array.isArray(adoptTokens)) return [{ property: "adoptTokens", reason: "must be a list of sub-account keys (sk-...)" }];
  const failures: CheckFailure[] = [];
  const first = new Map<string, number>();
  adoptTokens.forEach((token: unknown, i) => {
    if (token === UNKNOWN) return;
    if (typeof token !== "string" || !KeySchema.safeParse(token).success || token.startsWith("sk-admin-")) {
      failures.push({ property: `adoptTokens[${i}]`, reason: "must be a sub-account key that begins with sk- (not an admin key)" });
      return;
    }
    const earlier = first.get(token);
    if (earlier !== undefined) failures.push({ property: `adoptTokens[${i}]`, reason: `is the same key as adoptTokens[${earlier}]` });
    else first.set(token, i);
  });
  if (typeof count === "number" && count < adoptTokens.length) {
    failures.push({ property: "count", reason: `must be at least the number of adoptTokens (${adoptTokens.length}): every adopted sub-account counts` });
  }
  return failures;
}

/**
 * Finds every token among the account's sub-accounts with one list call. A token that is missing (deleted, or
 * of another account) fails the operation before anything is written, named by its position and masked.
 */
export async function findAdopted(api: SubAccountsApi, adoptTokens: readonly string[], wanted: readonly string[]): Promise<SubAccount[]> {
  if (wanted.length === 0) return [];
  const byToken = new Map((await api.list()).map((s) => [s.token, s]));
  const missing = wanted.filter((t) => !byToken.has(t));
  if (missing.length > 0) {
    const named = missing.map((t) => `adoptTokens[${adoptTokens.indexOf(t)}] (${maskKey(t)})`).join(", ");
    throw new LlmAccountsError(
      `${named}: no such sub-account in this account (deleted, or a key of another account); nothing was changed`,
    );
  }
  return wanted.map((t) => byToken.get(t)!);
}
