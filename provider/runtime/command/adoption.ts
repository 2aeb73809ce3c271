import { z } from "zod";
import { LlmAccountsError } from "../../client/errors.js";
import { maskKey } from "../../api/redact.js";
import { KeySchema, type SubAccount } from "../../api/schemas/index.js";
import { containsUnknown, neverShown, optionalOrNull, UNKNOWN } from "../engine/index.js";
import type { SharedSubAccountList } from "./sharedList.js";

/**
 * `adoptTokens` of inputs (the tokens declared) or of outputs (the adopted set the state keeps, see nextAdoption);
 * none for states written before `adoptTokens` existed.
 */
export function adoptedTokens(props: Record<string, unknown>): string[] {
  return Array.isArray(props.adoptTokens) ? (props.adoptTokens as string[]) : [];
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
            if (earlier !== undefined)
              ctx.addIssue({ code: "custom", path: [i], message: `is the same key as adoptTokens[${earlier}]` });
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
 * Finds every token among the account's sub-accounts, from the command's shared list (command/sharedList.ts: one list
 * for every batch of the command that adopts, and for its reads, so that the first `up` after an import lists
 * the account once however many batches adopt). A token missing from it is asked for again before it is called
 * missing (SharedSubAccountList.find). A token still missing (deleted, or of another account) fails the operation
 * before anything is written, named by its position and masked.
 */
export async function findAdopted(
  list: SharedSubAccountList,
  adoptTokens: readonly string[],
  wanted: readonly string[],
): Promise<SubAccount[]> {
  if (wanted.length === 0) return [];
  const byToken = await list.find(wanted);
  const missing = wanted.filter((t) => !byToken.has(t));
  if (missing.length > 0) {
    const named = missing.map((t) => `adoptTokens[${adoptTokens.indexOf(t)}] (${maskKey(t)})`).join(", ");
    throw new LlmAccountsError(
      `${named}: no such sub-account in this account (deleted, or a key of another account); nothing was changed`,
    );
  }
  return wanted.map((t) => byToken.get(t)!);
}

/**
 * What an update does with a batch's adopted set (the `adoptTokens` its state keeps: every token it adopted and
 * has not released, gone ones included). A non-empty `adoptTokens` input is the set: tokens not in it before are
 * `added` (they must exist), tokens left out are `released`. An input removed, or `[]`, leaves the set as it is:
 * the adoption config matters when objects are taken over, not afterwards.
 */
export function nextAdoption(
  adopted: readonly string[],
  declared: readonly string[],
): { set: string[]; added: string[]; released: string[] } {
  if (declared.length === 0) return { set: [...adopted], added: [], released: [] };
  const before = new Set(adopted);
  const after = new Set(declared);
  return {
    set: [...declared],
    added: declared.filter((t) => !before.has(t)),
    released: adopted.filter((t) => !after.has(t)),
  };
}

/**
 * The failure of a `count` below the adopted sub-accounts a batch holds, which a lower count never deletes
 * (only possible once `adoptTokens` is removed: check holds a declared list to `count` itself).
 */
export function adoptedCountFailure(count: unknown, held: number): string | undefined {
  if (typeof count !== "number" || count >= held) return undefined;
  return (
    `count: ${count} is below the ${held} sub-accounts this batch adopted and holds, and a lower count never deletes an adopted one: ` +
    "raise count, or release some by listing in adoptTokens the tokens to keep"
  );
}

/**
 * The failure of a `count` too low for sub-accounts that join a batch through `adoptTokens` (`joining`, not held
 * yet) beside the `held` ones it keeps: the update would reach `count` by deleting the newest it created. Adopting
 * never deletes; a smaller batch is its own change, made by lowering `count` in another `up`.
 */
export function joiningCountFailure(count: unknown, held: number, joining: number): string | undefined {
  const needed = held + joining;
  if (joining === 0 || typeof count !== "number" || count >= needed) return undefined;
  return (
    `count: ${count} is too low to adopt ${joining} more sub-account(s) listed in adoptTokens: with the ${held} this batch holds ` +
    `that makes ${needed}, and reaching ${count} would delete ${needed - count} it holds. Set count to ${needed}: adopting never ` +
    "deletes (to have fewer, lower count in another up)"
  );
}

/**
 * The failure of an `adoptKey` given after adoption that names another key than those of the resource: its key,
 * its previous key (both change with rotations) or the key it adopted (what the program still holds after one).
 * adoptKey takes a key over when the resource is created; it never moves a resource to another key.
 */
export function adoptKeyFailure(
  adoptKey: unknown,
  held: { key: string; previousKey?: string; adoptKey?: string },
): string | undefined {
  if (typeof adoptKey !== "string" || adoptKey === UNKNOWN) return undefined;
  if (adoptKey === held.key || adoptKey === held.previousKey || adoptKey === held.adoptKey) return undefined;
  return (
    `adoptKey: ${maskKey(adoptKey)} is neither this resource's key, its previous key, nor the key it adopted; ` +
    "adoptKey takes over a key only when the resource is created: to manage another key, declare another resource"
  );
}

/**
 * The tokens a batch's new inputs release from its adopted set (nextAdoption), for Custody.keep: all it adopted while
 * the new list is not known yet (preview), since any of them may be released.
 */
export function releasedBy(olds: Record<string, unknown>, news: Record<string, unknown>): string[] {
  if (containsUnknown(news.adoptTokens)) return adoptedTokens(olds);
  return nextAdoption(adoptedTokens(olds), adoptedTokens(news)).released;
}

/** The one-owner error of a key (Custody): an ApiKey create's `adoptKey` that another ApiKey of this command keeps. */
export function keyTaken(key: string, byCreate: boolean): string {
  const who = byCreate
    ? "adopted by another ApiKey created in this deployment"
    : "held by another ApiKey of this deployment";
  return (
    `adoptKey: the key ${maskKey(key)} is ${who}: one key has one owner, so only one resource may adopt it; ` +
    "nothing was changed. Remove adoptKey from one of them"
  );
}

/** The one-owner error of a sub-account (Custody): a token of `adoptTokens` that another batch of this command keeps. */
export function tokenTaken(token: string, _byCreate: boolean, adoptTokens: readonly string[]): string {
  return (
    `adoptTokens[${adoptTokens.indexOf(token)}] (${maskKey(token)}) is held by another SubAccountBatch of this deployment: one sub-account has one owner, ` +
    "so only one resource may hold it; nothing was changed. Remove it from this batch's adoptTokens (or release it from the other by listing the tokens that one keeps)"
  );
}
