const DAY_MS = 86_400_000;

/** An amount as the API writes it: a decimal string with six places, never in exponent form. */
export function decimal6(amount: number): string {
  return amount.toLocaleString("en-US", { useGrouping: false, minimumFractionDigits: 6, maximumFractionDigits: 6 });
}

/** A whole number of millionths (of a currency unit) as a six-place decimal string. */
export function microsToDecimal(micros: number): string {
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(Math.round(micros));
  return `${sign}${Math.floor(abs / 1_000_000)}.${String(abs % 1_000_000).padStart(6, "0")}`;
}

/** The UTC calendar date (YYYY-MM-DD) of an instant. */
export function utcDate(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/** The date `days` days after (or, negative, before) a YYYY-MM-DD date. */
export function addDays(date: string, days: number): string {
  return utcDate(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS);
}

/** An ISO 8601 UTC timestamp with milliseconds and `Z`, as API keys carry it. */
export function isoUtc(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/** An ISO 8601 timestamp with an explicit `+00:00` offset and whole seconds, as sub-accounts carry it. */
export function isoWithOffset(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, "+00:00");
}
