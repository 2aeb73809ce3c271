import { createHash } from "node:crypto";
import { ADMIN_KEY_PREFIX, KEY_PREFIX } from "./assumptions.js";

/** Anything that looks like a key: `sk-` (admin keys included) followed by at least 6 key characters. */
const KEY_PATTERN = /sk-[A-Za-z0-9_-]{6,}/g;

/** `sk-...1a2b`: the only form in which a key may appear in a message, a log line or an output hint. */
export function maskKey(key: string): string {
  const prefix = key.startsWith(ADMIN_KEY_PREFIX) ? ADMIN_KEY_PREFIX : KEY_PREFIX;
  return `${prefix}...${key.slice(-4)}`;
}

/** Replaces every key-looking run in a text with its masked form. */
export function redact(text: string): string {
  return text.replace(KEY_PATTERN, (k) => maskKey(k));
}

/**
 * A stable, non-secret identifier of a key: a truncated SHA-256. It cannot be turned back into the key
 * (keys are long random strings), and it is what resource ids and limiter buckets are made of.
 */
export function fingerprint(key: string): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 24);
}
