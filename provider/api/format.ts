import { DAY_MS } from "./assumptions.js";

/** The UTC calendar date (YYYY-MM-DD) of an instant. */
export function utcDate(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/** The date `days` days after (or, negative, before) a YYYY-MM-DD date. */
export function addDays(date: string, days: number): string {
  return utcDate(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS);
}

/** A whole number of millionths (of a currency unit) as a six-place decimal string, the API's money format. */
export function microsToDecimal(micros: number | bigint): string {
  const whole = typeof micros === "bigint" ? micros : BigInt(Math.round(micros));
  const sign = whole < 0n ? "-" : "";
  const abs = whole < 0n ? -whole : whole;
  return `${sign}${abs / 1_000_000n}.${String(abs % 1_000_000n).padStart(6, "0")}`;
}

/** A decimal string of the API as whole millionths, exactly (places past the sixth are dropped). */
export function decimalToMicros(decimal: string): bigint {
  const negative = decimal.startsWith("-");
  const [whole, frac = ""] = decimal.replace("-", "").split(".");
  const value = BigInt(whole || "0") * 1_000_000n + BigInt((frac + "000000").slice(0, 6));
  return negative ? -value : value;
}
