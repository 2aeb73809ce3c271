import { DAY_MS, USAGE_HISTORY_DAYS, USAGE_MODELS_PER_DAY_MAX, USAGE_NEXT_PAGE_FIELD } from "../api/assumptions.js";
import { fromWire, toWire } from "../api/casing.js";
import { LlmAccountsError } from "./errors.js";
import { SETTINGS } from "./settings.js";
import { addDays, utcDate } from "../api/format.js";
import { ApiGroup } from "./apiGroup.js";
import { OPERATIONS } from "../api/operations.js";
import * as s from "../api/schemas/index.js";

/** Arguments of the usage summary, without the paging field (the client follows pages itself). */
export interface UsageQuery {
  /** First day (`YYYY-MM-DD`, UTC), within the last year. */
  start: string;
  /** Last day (`YYYY-MM-DD`, UTC), not before `start` nor after today. */
  end: string;
  /** Only this key's usage (a secret: the Output form stays secret). */
  key?: string;
  /** One row per day and model instead of per day. */
  withModel?: boolean;
  /** Include token counts in each row. */
  withUsage?: boolean;
}

function utcDay(offsetDays: number, now: Date): string {
  return addDays(utcDate(now.getTime()), -offsetDays);
}

/** Checks a usage query before any call: dates real, end >= start, within the last year (spec 4.7). */
export function validateUsageQuery(query: UsageQuery, now = new Date()): void {
  const fail = (field: string, message: string) => {
    throw new LlmAccountsError(`invalid usage query: ${field}: ${message}`, { operation: "POST usage/summary" });
  };
  for (const field of ["start", "end"] as const) {
    const parsed = s.DateSchema.safeParse(query[field]);
    if (!parsed.success) fail(field, `${JSON.stringify(query[field])} ${parsed.error.issues[0].message}`);
  }
  if (query.end < query.start) fail("end", `${query.end} is before start ${query.start}`);
  const oldest = utcDay(USAGE_HISTORY_DAYS - 1, now);
  const today = utcDay(0, now);
  if (query.start < oldest) fail("start", `${query.start} is older than the last year (the oldest day is ${oldest})`);
  if (query.end > today) fail("end", `${query.end} is in the future (today is ${today} UTC)`);
}

/** Most rows a usage summary can hold: one per day of the range, and per model with `withModel`. */
export function usageRowCap(query: UsageQuery): number {
  const days = Math.round((Date.parse(`${query.end}T00:00:00Z`) - Date.parse(`${query.start}T00:00:00Z`)) / DAY_MS) + 1;
  return days * (query.withModel ? USAGE_MODELS_PER_DAY_MAX : 1);
}

/**
 * The error of a usage paging that does not move on: the platform did not read the request field the next page was
 * asked for in. Names the open point and the setting that fixes it.
 */
function ignoredPageField(field: string): LlmAccountsError {
  return new LlmAccountsError(
    `the usage summary answered the same page again when asked for the next one in the request field "${field}": ${pageFieldAdvice(field)} (POST usage/summary)`,
    { operation: "POST usage/summary" },
  );
}

/** What to do when the platform does not read the further-page token where it was sent: the setting that names the field. */
function pageFieldAdvice(field: string): string {
  const s = SETTINGS.usagePageField;
  return (
    `the platform reads its further-page token from another request field than "${field}" (the spec does not name it). Set ${s.env} ` +
    `or the stack config ${s.config} to the field the platform reads (\`llm-accounts doctor\` tries the usual ones)`
  );
}

/** The management group's account operations: balance, usage, models (spec 4.6 to 4.8). */
export class AccountApi extends ApiGroup {
  /** The account balance, as the decimal string the API gives. */
  async balance(): Promise<string> {
    const res = await this.http.send({ op: OPERATIONS.balance, body: {} });
    return res.balance;
  }

  /**
   * Every usage row of the range: validates first, then follows the pages to the end. A further page is asked for
   * by sending `next_page` back in the request field `usagePageField` names (`page` unless set: the spec does not
   * name it); more follow while `has_more` is true, or, where the platform leaves `has_more` out, while `next_page`
   * is given; where it says more follow without a `next_page`, pages are asked for by number (2, 3, ...).
   */
  async usage(query: UsageQuery): Promise<s.UsageRow[]> {
    validateUsageQuery(query);
    const cap = usageRowCap(query);
    const field = this.http.platform?.usagePageField ?? USAGE_NEXT_PAGE_FIELD;
    const rows: s.UsageRow[] = [];
    let page: string | number | undefined;
    const seen = new Set<string>();
    let firstRow: string | undefined;
    for (let n = 1; ; n++) {
      const body = { ...toWire(query), ...(page === undefined ? {} : { [field]: page }) };
      const res = await this.http.send({ op: OPERATIONS.usageSummary, body });
      const token = res.next_page === "" ? null : (res.next_page ?? null);
      const more = res.has_more ?? token !== null;
      // Paged by number (no token): the first page again (its first row again) means the field was not read. With
      // tokens, the same token again says it (below).
      const head = res.items.length > 0 ? JSON.stringify(res.items[0]) : undefined;
      if (n === 2 && head !== undefined && head === firstRow && more) {
        // With tokens that change at every answer (opaque cursors), the same first row again says it as well.
        if (token === null) throw ignoredPageField(field);
        throw endless(
          `page 2 begins with page 1's first row though it was asked for in the request field "${field}"`,
          pageFieldAdvice(field),
        );
      }
      if (n === 1) firstRow = head;
      rows.push(...res.items.map((r) => fromWire(r)));
      if (!more) {
        if (rows.length > cap) throw endless(`${rows.length} rows`);
        return rows;
      }
      // Each page but the last brings a row, and the range holds at most `cap`: so at most cap + 1 pages.
      if (res.items.length === 0) throw endless(`a page without rows that says more follow, after ${rows.length} rows`);
      if (rows.length > cap) throw endless(`${rows.length} rows and more announced`);
      const next = token ?? n + 1;
      // A server that hands back a page token it gave before would page forever.
      if (seen.has(String(next))) throw ignoredPageField(field);
      seen.add(String(next));
      page = next;
    }

    function endless(what: string, advice?: string): LlmAccountsError {
      return new LlmAccountsError(
        `the usage summary does not end: ${what}, but ${query.start}..${query.end} holds at most ${cap} (one row per day${query.withModel ? ` and model, at most ${USAGE_MODELS_PER_DAY_MAX} models` : ""})${advice ? `; ${advice}` : ""}; stopped (POST usage/summary)`,
        { operation: "POST usage/summary" },
      );
    }
  }

  /** The model list with prices for this account. */
  async models(): Promise<s.Model[]> {
    const res = await this.http.send({ op: OPERATIONS.models });
    return res.models.map((m) => fromWire(m));
  }
}
