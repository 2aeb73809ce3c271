import { createHash } from "node:crypto";
import { ADMIN_KEY_PREFIX, KEY_CHARACTERS, KEY_PREFIX, UNPREFIXED_KEY_MIN_LENGTH } from "./assumptions.js";

/** Key characters but the full stop, which counts only inside a key (not as the end of the sentence after one). */
const INNER = KEY_CHARACTERS.replace(".", "");

/**
 * Anything that looks like a key: `sk-` at the start of a word (so not the "sk-" of "task-runner"), admin keys
 * included, followed by key characters (KEY_CHARACTERS: `.`, `/`, `+` and `=` too, so a key holding them is
 * masked whole).
 */
const KEY_PATTERN = new RegExp(`(?<![A-Za-z0-9_-])sk-(?:[${INNER}]|\\.(?=[${INNER}]))+`, "g");

/**
 * A key issued without the prefix (UNPREFIXED_KEY_MIN_LENGTH letters and digits or more, e.g. one-api's 48): a run of
 * letters and digits that long, wherever it stands (after `=`, `/` or `_` too). A run of one kind of character only
 * (`xxxx...`, `0000...`) is a word or a number, not a random key: a random key of 32 characters mixes two of lower
 * case, upper case and digits all but always, and holds them whole.
 */
const UNPREFIXED_PATTERN = new RegExp(`(?<![A-Za-z0-9])[A-Za-z0-9]{${UNPREFIXED_KEY_MIN_LENGTH},}(?![A-Za-z0-9])`, "g");

/** How many kinds of characters (lower case, upper case, digits) a run of letters and digits mixes. */
function kinds(run: string): number {
  return [/[a-z]/, /[A-Z]/, /[0-9]/].filter((kind) => kind.test(run)).length;
}

/** A run that redaction masks: two kinds or more (a key's, not a word's or a number's). */
const mixed = (run: string): boolean => kinds(run) >= 2;

/** Key characters after the prefix below which a match is the prefix itself (`"sk-admin-"`), a word, not a key. */
const MIN_SECRET_CHARS = 6;

/** Whether `key` is a key issued without KEY_PREFIX (UNPREFIXED_KEY_MIN_LENGTH letters and digits or more). */
export function isUnprefixedKey(key: string): boolean {
  return key.length >= UNPREFIXED_KEY_MIN_LENGTH && /^[A-Za-z0-9]+$/.test(key);
}

/**
 * True when a text holds a run shaped like a key (not a bare prefix such as `sk-admin-`), with or without the prefix.
 * Without it, a run of all three kinds (a pasted one-api key all but always is), so that a long CamelCase alias
 * (`TeamAlphaProductionBackendServices`, two kinds) is masked in a message but never refused as an input.
 */
export function looksLikeKey(text: string): boolean {
  const prefixed = [...text.matchAll(KEY_PATTERN)].some(([k]) => secretPart(k).length >= MIN_SECRET_CHARS);
  return prefixed || [...text.matchAll(UNPREFIXED_PATTERN)].some(([k]) => kinds(k) === 3);
}

function secretPart(key: string): string {
  return key.slice((key.startsWith(ADMIN_KEY_PREFIX) ? ADMIN_KEY_PREFIX : KEY_PREFIX).length);
}

/**
 * `sk-...1a2b`: the only form in which a key may appear in a message, a log line or an output hint. A key issued
 * without the prefix shows as `...1a2b`: never a prefix it does not have.
 */
export function maskKey(key: string): string {
  const prefix = key.startsWith(ADMIN_KEY_PREFIX) ? ADMIN_KEY_PREFIX : key.startsWith(KEY_PREFIX) ? KEY_PREFIX : "";
  return `${prefix}...${key.slice(-4)}`;
}

/** Replaces every key-looking run in a text with its masked form: `sk-` keys, and keys issued without the prefix. */
export function redact(text: string): string {
  return text
    .replace(KEY_PATTERN, (k) => (secretPart(k).length >= MIN_SECRET_CHARS ? maskKey(k) : k))
    .replace(UNPREFIXED_PATTERN, (k) => (mixed(k) ? maskKey(k) : k));
}

/**
 * Whether a value is a key or token shown masked, in any form a platform uses: `sk-...abcd` (this package's), `****`,
 * `sk-abcd****wxyz`, `sk-…abcd`. Never a key a call can name: a list that shows one cannot say which object it is.
 */
export function isMasked(value: string): boolean {
  return /\.\.\.|[*\u2022\u2026]/.test(value);
}

/**
 * A stable, non-secret identifier of a key: a truncated SHA-256. It cannot be turned back into the key
 * (keys are long random strings), and it is what resource ids and limiter buckets are made of.
 */
export function fingerprint(key: string): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 24);
}
