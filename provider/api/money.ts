/**
 * Money as the API holds it: decimal amounts with six places ("12.345678"), here as whole millionths in a bigint,
 * so that sums and comparisons are exact (0.1 + 0.2 is 0.3; floating point says 0.30000000000000004).
 */

/** Millionths in one unit of currency: the API's six decimal places. */
export const MICROS_PER_UNIT = 1_000_000n;

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i;

/**
 * An amount (the API's decimal string, or a number of a program, a config or a policy option) as whole
 * millionths, exactly: a number is read through its shortest decimal form (`0.1` is 0.1, not the double's binary
 * expansion), and places past the sixth are rounded half away from zero, as the platform keeps six.
 * Throws a RangeError on anything that is not a finite decimal amount.
 */
export function toMicros(amount: string | number): bigint {
  if (typeof amount === "number" && !Number.isFinite(amount))
    throw new RangeError(`${amount} is not an amount of money`);
  const text = String(amount).trim();
  const m = DECIMAL.exec(text);
  if (!m || (m[2] === "" && (m[3] ?? "") === ""))
    throw new RangeError(`${JSON.stringify(text)} is not a decimal amount`);
  const [, sign, whole, frac = "", exp = "0"] = m;
  // All the digits, and where the decimal point stands among them once the exponent is applied.
  const digits = `${whole}${frac}`;
  const point = whole.length + Number(exp);
  // Millionths: the digits up to six places past the point; the next digit decides the rounding.
  const cut = point + 6;
  const kept = cut <= 0 ? "0" : cut >= digits.length ? digits.padEnd(cut, "0") : digits.slice(0, cut);
  const next = cut < 0 ? 0 : Number(digits[cut] ?? "0");
  const micros = BigInt(kept || "0") + (next >= 5 ? 1n : 0n);
  return sign === "-" && micros !== 0n ? -micros : micros;
}

/** Whole millionths as the API writes an amount: a decimal string with six places (`1200.000000`). */
export function formatMicros(micros: bigint): string {
  const abs = micros < 0n ? -micros : micros;
  return `${micros < 0n ? "-" : ""}${abs / MICROS_PER_UNIT}.${String(abs % MICROS_PER_UNIT).padStart(6, "0")}`;
}

/** Whole millionths as the shortest decimal that says them exactly (`1200`, `3.3`), for messages. */
export function showMicros(micros: bigint): string {
  return formatMicros(micros).replace(/\.?0+$/, "");
}
