import { CLOCK_SKEW_MS } from "../api/assumptions.js";
import type { SubAccount, SubAccountCreateRequest } from "../api/schemas/index.js";
import { LlmAccountsError } from "../client/errors.js";
import { toMicros } from "../api/money.js";
import type { SubAccountsApi } from "../client/subAccounts.js";

/**
 * True when a listed sub-account (found by alias) can be what a create request made: its balance, which
 * nothing can change afterwards and which tells a replaced twin apart. Pricing can be edited in the console.
 */
function madeBy(request: { balance: number }, s: SubAccount): boolean {
  // In millionths, as the platform keeps it: `1.1 + 2.2` is stored as "3.300000", which Number() reads as 3.3.
  return toMicros(s.balance) === toMicros(request.balance);
}

/** What to do about sub-accounts a lost create may have made: the runtime looks again at the next run. */
function lostSubAccountsAdvice(alias: string): string {
  return `List sub-accounts with alias ${JSON.stringify(alias)} (getSubAccounts({ alias })) to see them; the next run looks for them again and adopts what this create made`;
}

/** A create whose answer was lost and whose recovery list failed too: sub-accounts may exist unrecorded. */
export class UnconfirmedCreateError extends LlmAccountsError {
  constructor(
    message: string,
    operation: string | undefined,
    /** When the create was sent (our clock). */
    readonly since: number,
  ) {
    super(message, { operation, mayHaveSucceeded: true });
  }
}

/**
 * The listed sub-accounts that a lost create, recorded in the state as `unconfirmedSince`, may have made:
 * the batch's alias and balance, not known yet, created since then (allowing for the platform's clock), and
 * not among the ids that existed before it (`unconfirmedExcept`).
 */
export function unconfirmedAmong(
  old: { alias: string; balance: number; unconfirmedSince?: string; unconfirmedExcept?: number[] },
  listed: readonly SubAccount[],
  known: ReadonlySet<string>,
): SubAccount[] {
  if (!old.unconfirmedSince) return [];
  const since = Date.parse(old.unconfirmedSince) - CLOCK_SKEW_MS;
  // What existed before a replacing create (a twin's) was not made by it (replacements.ts).
  const existed = new Set(old.unconfirmedExcept ?? []);
  return listed.filter((s) => s.alias === old.alias && !known.has(s.token) && !existed.has(s.id) && Date.parse(s.createdAt) >= since && madeBy(old, s));
}

/**
 * One batch create. If the answer is lost (the create may have happened), the sub-accounts are found by
 * alias and adopted instead of being created twice: the sub-account group can list, unlike API keys. When
 * that cannot be known either, an UnconfirmedCreateError says since when they may exist.
 */
export async function createBatch(api: SubAccountsApi, request: SubAccountCreateRequest, known: ReadonlySet<string>): Promise<SubAccount[]> {
  const startedAt = Date.now();
  try {
    return await api.create(request);
  } catch (err) {
    if (!(err instanceof LlmAccountsError) || !err.mayHaveSucceeded) throw err;
    let listed: SubAccount[];
    try {
      listed = await api.list({ alias: request.alias });
    } catch (listErr) {
      // Without the list nobody knows whether the create happened: keep the create's warning, not just the list's error.
      throw new UnconfirmedCreateError(
        `${err.message}; looking for sub-accounts with alias "${request.alias}" failed too: ${(listErr as Error).message}`,
        err.operation,
        startedAt,
      ).withAdvice(lostSubAccountsAdvice(request.alias));
    }
    // Same alias is not enough: a replaced twin (another balance) may carry it too.
    const found = listed
      .filter((s) => !known.has(s.token) && Date.parse(s.createdAt) >= startedAt - CLOCK_SKEW_MS && madeBy(request, s))
      .sort((a, b) => a.id - b.id);
    if (found.length === request.count) return found;
    if (found.length === 0) {
      // Nothing was created: the request did not take effect, so sending it again cannot make a duplicate.
      try {
        return await api.create(request);
      } catch (again) {
        // Its answer may be lost too: then the next run looks again.
        if (again instanceof LlmAccountsError && again.mayHaveSucceeded) {
          throw new UnconfirmedCreateError(again.message, again.operation, startedAt).withAdvice(lostSubAccountsAdvice(request.alias));
        }
        throw again;
      }
    }
    throw new UnconfirmedCreateError(
      `the sub-account create may have partly happened: ${found.length} of ${request.count} new sub-accounts with alias "${request.alias}" were found; ` +
        `re-run: the next run adopts them and creates the rest`,
      err.operation,
      startedAt,
    );
  }
}
