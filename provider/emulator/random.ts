import { randomBytes } from "node:crypto";
import { ADMIN_KEY_PREFIX, KEY_PREFIX } from "../api/assumptions.js";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
// Bytes at or above the largest multiple of 62 are dropped, so that every character is equally likely.
const UNBIASED_BELOW = 256 - (256 % ALPHABET.length);

/** `length` characters of [A-Za-z0-9] from the operating system's secure random source. */
export function randomToken(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < UNBIASED_BELOW) out += ALPHABET[byte % ALPHABET.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A new API key, sub-account token or account key: `sk-` and 48 random characters. */
export function newKey(): string {
  return KEY_PREFIX + randomToken(48);
}

/** A new admin key: `sk-admin-` and 32 random characters. */
export function newAdminKey(): string {
  return ADMIN_KEY_PREFIX + randomToken(32);
}

/** A 32-bit hash of a string (FNV-1a with a final avalanche): seeds the generated data. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A seeded pseudo-random generator (mulberry32): the same seed gives the same numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
