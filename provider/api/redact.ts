import { createHash } from "node:crypto";
import { ADMIN_KEY_PREFIX, KEY_CHARACTERS, KEY_PREFIX } from "./assumptions.js";

/** Key characters but the full stop, which counts only inside a key (not as the end of the sentence after one). */
const INNER = KEY_CHARACTERS.replace(".", "");

/**
 * Anything that looks like a key: `sk-` at the start of a word (so not the "sk-" of "task-runner"), admin keys
 * included, followed by key characters (KEY_CHARACTERS: `.`, `/`, `+` and `=` too, so a key holding them is
 * masked whole).
 */
const KEY_PATTERN = new RegExp(`(?<![A-Za-z0-9_-])sk-(?:[${INNER}]|\\.(?=[${INNER}]))+`, "g");

/** Key characters after the prefix below which a match is the prefix itself (`"sk-admin-"`), a word, not a key. */
const MIN_SECRET_CHARS = 6;

/** True when a text holds a run shaped like a key (not a bare prefix such as `sk-admin-`). */
export function looksLikeKey(text: string): boolean {
  return [...text.matchAll(KEY_PATTERN)].some(([k]) => secretPart(k).length >= MIN_SECRET_CHARS);
}

function secretPart(key: string): string {
  return key.slice((key.startsWith(ADMIN_KEY_PREFIX) ? ADMIN_KEY_PREFIX : KEY_PREFIX).length);
}

/** `sk-...1a2b`: the only form in which a key may appear in a message, a log line or an output hint. */
export function maskKey(key: string): string {
  const prefix = key.startsWith(ADMIN_KEY_PREFIX) ? ADMIN_KEY_PREFIX : KEY_PREFIX;
  return `${prefix}...${key.slice(-4)}`;
}

/** Replaces every key-looking run in a text with its masked form. */
export function redact(text: string): string {
  return text.replace(KEY_PATTERN, (k) => (secretPart(k).length >= MIN_SECRET_CHARS ? maskKey(k) : k));
}

/**
 * A stable, non-secret identifier of a key: a truncated SHA-256. It cannot be turned back into the key
 * (keys are long random strings), and it is what resource ids and limiter buckets are made of.
 */
export function fingerprint(key: string): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 24);
}
