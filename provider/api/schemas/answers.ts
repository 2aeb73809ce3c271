/**
 * How the platform's answers are read: tolerantly. A real platform may send what the spec shows in another form
 * (a decimal as a JSON number, a timestamp without its offset, an id as a string of digits) or with fields the spec
 * does not list, at any depth (`../shared/notes/first-contact.md`). The schemas of this file take each of those
 * forms and give the one form the package works with, so that no answer fails for a form it can read exactly;
 * a value that cannot be read (a decimal that is no number, a timestamp that is no time) still fails, naming its
 * field. Requests are written strictly elsewhere (common.ts and the group files).
 */
import { z } from "zod";

const DECIMAL_TEXT = /^-?\d+(\.\d+)?$/;

/**
 * A decimal amount: the spec's string (`"12.500000"`), or a JSON number (`12.5`), given as the six-place string the
 * spec's answers use. A number past 2^53 or with an exponent beyond six places is read through its decimal form.
 */
export const AnswerDecimalSchema = z.union([
  z.string().regex(DECIMAL_TEXT, "must be a decimal amount in a string"),
  z
    .number()
    .refine(Number.isFinite, "must be a finite amount")
    .transform((n) => n.toFixed(6)),
]);

/** A whole number: a JSON integer, or a string of digits (some platforms send ids and sizes as strings). */
export const AnswerIntegerSchema = z.union([
  z.number().int("must be a whole number"),
  z
    .string()
    .regex(/^-?\d{1,15}$/, "must be a whole number")
    .transform(Number),
]);

/**
 * An id (spec 2.5 shows integers): opaque, of any length, a number or a string. A whole number JavaScript holds
 * exactly (a JSON integer, or a string of at most 15 digits) is kept as a number, as every earlier state stores it;
 * anything else is kept as its text (a snowflake beyond 2^53, which parseAnswerJson keeps as the digits sent, a UUID).
 * Never parsed into a float: an id is compared and stored, never computed with (compareIds orders them).
 */
export const AnswerIdSchema = z.union([
  z.number().refine(Number.isSafeInteger, "must be a whole number (an id beyond 2^53 must reach the schema as text)"),
  z
    .string()
    .min(1, "must be a non-empty id")
    .transform((id) => (/^-?\d{1,15}$/.test(id) ? Number(id) : id)),
]);

/** An id as AnswerIdSchema gives it. */
export type AnswerId = z.output<typeof AnswerIdSchema>;

/** Orders ids: numbers (and strings of digits) by value, whatever their length, then other text. */
export function compareIds(a: AnswerId, b: AnswerId): number {
  const digits = (id: AnswerId) =>
    typeof id === "number" ? String(id) : /^\d+$/.test(id) ? id.replace(/^0+(?=\d)/, "") : undefined;
  const [x, y] = [digits(a), digits(b)];
  if (x !== undefined && y !== undefined) return x.length - y.length || (x < y ? -1 : x > y ? 1 : 0);
  if (x !== undefined) return -1;
  if (y !== undefined) return 1;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

/**
 * JSON.parse, except that an integer literal beyond 2^53 is kept as the string of its digits: JSON.parse would round
 * it to a float (two snowflake ids a few apart come out equal). Only integers outside strings are touched; every
 * other value is as JSON.parse gives it.
 */
const NUMBER = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y;

export function parseAnswerJson(text: string): unknown {
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      // A string, escapes included, copied as it is.
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    NUMBER.lastIndex = i;
    const number = c === "-" || (c >= "0" && c <= "9") ? NUMBER.exec(text) : null;
    if (number) {
      const literal = number[0];
      const whole = number[1] === undefined && number[2] === undefined;
      out += whole && !Number.isSafeInteger(Number(literal)) ? `"${literal}"` : literal;
      i += literal.length;
      continue;
    }
    out += c;
    i++;
  }
  return JSON.parse(out);
}

/** A number: JSON number or its decimal text. */
export const AnswerNumberSchema = z.union([
  z.number().refine(Number.isFinite, "must be a finite number"),
  z
    .string()
    .regex(/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/, "must be a number")
    .transform(Number),
]);

/** A flag: true/false, or the 1/0 and "true"/"false" forms some platforms send. */
export const AnswerBooleanSchema = z.union([
  z.boolean(),
  z.literal(1).transform(() => true),
  z.literal(0).transform(() => false),
  z.enum(["true", "false"]).transform((b) => b === "true"),
]);

const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;
const NAIVE = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(:\d{2}(\.\d+)?)?)$/i;

/** The ISO 8601 text of a timestamp in any of the forms AnswerTimestampSchema reads, or undefined. */
export function timestampText(value: string | number): string | undefined {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value < 0) return undefined;
    // Seconds since 1970 until the year 5138; milliseconds past that.
    const ms = value < 1e11 ? value * 1000 : value;
    const date = new Date(ms);
    return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
  }
  if (ISO_WITH_OFFSET.test(value) && !Number.isNaN(Date.parse(value))) return value;
  const naive = NAIVE.exec(value);
  if (naive) {
    // No offset given: the spec's timestamps are UTC (2.1), so UTC.
    const date = new Date(`${naive[1]}T${naive[2]}Z`);
    return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
  }
  return undefined;
}

/**
 * A timestamp: ISO 8601 with `Z` or an offset (kept as it is), without an offset or with a space for the `T`
 * (read as UTC, the spec's zone), or seconds or milliseconds since 1970; given as ISO 8601 text.
 */
export const AnswerTimestampSchema = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const text = timestampText(value);
  if (text === undefined) {
    ctx.addIssue({ code: "custom", message: "must be a timestamp (ISO 8601, or seconds since 1970)" });
    return z.NEVER;
  }
  return text;
});

/** A list of strings, where a platform may send null for none. */
export const AnswerStringListSchema = z
  .array(z.string())
  .nullish()
  .transform((l) => l ?? []);
