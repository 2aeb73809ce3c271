import { DAY_MS } from "./assumptions.js";

/** The UTC calendar date (YYYY-MM-DD) of an instant. */
export function utcDate(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/** The date `days` days after (or, negative, before) a YYYY-MM-DD date. */
export function addDays(date: string, days: number): string {
  return utcDate(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS);
}
