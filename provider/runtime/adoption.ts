import { z } from "zod";
import { LlmAccountsError } from "../client/errors.js";
import { maskKey } from "../api/redact.js";
import { KeySchema, type SubAccount } from "../api/schemas/index.js";
import type { SubAccountsApi } from "../client/subAccounts.js";
import { neverShown, optionalOrNull, UNKNOWN } from "./values.js";

/** The tokens a batch adopts, from inputs or outputs; none for states written before `adoptTokens` existed. */
export function adoptedTokens(props: Record<string, unknown>): string[] {
  return Array.isArray(props.adoptTokens) ? (props.adoptTokens as string[]) : [];
}

/** True when two `adoptTokens` values name the same tokens, in whatever order. */
export function sameTokenSet(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((t) => set.has(t));
}

const SUB_ACCOUNT_KEY = "must be a sub-account key that begins with sk- (not an admin key)";
const API_KEY = "must be an API key that begins with sk- (not an admin key)";
const isKey = (value: string): boolean => KeySchema.safeParse(value).success;

/**
 * `adoptTokens`: existing sub-accounts a batch manages instead of creating them, each once. Its values are never
 * shown in a failure: each entry is meant to be a secret, so failures name the position only.
 */
export const AdoptTokensSchema = neverShown(
  optionalOrNull(
    z
      .array(z.string({ error: SUB_ACCOUNT_KEY }).refine(isKey, { error: SUB_ACCOUNT_KEY }), {
        error: "must be a list of sub-account keys (sk-...)",
      })
      .superRefine(
        (tokens, ctx) => {
          if (!Array.isArray(tokens)) return;
          const first = new Map<unknown, number>();
          tokens.forEach((token: unknown, i) => {
            if (typeof token !== "string" || token === UNKNOWN) return;
            const earlier = first.get(token);
            if (earlier !== undefined) ctx.addIssue({ code: "custom", path: [i], message: `is the same key as adoptTokens[${earlier}]` });
            else first.set(token, i);
          });
        },
        { when: () => true },
      ),
  ),
);

/** `adoptKey`: an existing key the resource manages instead of creating one; never shown in a failure. */
export const AdoptKeySchema = neverShown(
  optionalOrNull(z.string({ error: API_KEY }).refine(isKey, { error: API_KEY })),
);

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
