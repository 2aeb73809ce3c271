import { formatMicros, toMicros } from "../api/money.js";

export { addDays, utcDate } from "../api/format.js";

/** An amount as the API writes it: a decimal string with six places, never in exponent form. */
export function decimal6(amount: number): string {
  return formatMicros(toMicros(amount));
}

/** An ISO 8601 UTC timestamp with milliseconds and `Z`, as API keys carry it. */
export function isoUtc(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/** An ISO 8601 timestamp with an explicit `+00:00` offset and whole seconds, as sub-accounts carry it. */
export function isoWithOffset(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, "+00:00");
}
