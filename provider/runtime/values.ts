import type { z } from "zod";
import { camelPath, snakeToCamel } from "../api/casing.js";
import { looksLikeKey, redact } from "../api/redact.js";

/** The value the engine passes during preview for inputs that are not known yet. */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** A check failure as the engine shows it: the property path and a reason. */
export interface CheckFailure {
  property: string;
  reason: string;
}

/** True when the value, or any value inside it, is not known yet. */
export function containsUnknown(value: unknown): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (value !== null && typeof value === "object") return Object.values(value).some(containsUnknown);
  return false;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown[] {
  const seen: unknown[] = [root];
  let cur: unknown = root;
  for (const part of path) {
    if (cur === null || typeof cur !== "object") break;
    cur = (cur as Record<PropertyKey, unknown>)[part];
    seen.push(cur);
  }
  return seen;
}

/**
 * Failures for strings shaped like a key anywhere in a value of plain fields: plain inputs are stored in the
 * state and shown in previews in plain text, so a key pasted as an alias or a model name must not pass.
 */
export function keyShapedFailures(wire: unknown, path: (string | number)[] = []): CheckFailure[] {
  if (typeof wire === "string") {
    return looksLikeKey(wire)
      ? [{ property: redact(camelPath(path)) || "(inputs)", reason: `${redact(quoted(wire))} looks like a key: plain inputs are stored and shown in plain text, so a key must never be one` }]
      : [];
  }
  if (wire === null || typeof wire !== "object") return [];
  return Object.entries(wire).flatMap(([k, v]) => keyShapedFailures(v, [...path, Array.isArray(wire) ? Number(k) : k]));
}

/**
 * Messages are written for the wire; here users write camelCase. Only field names are translated: a quoted
 * part of a message is one of the user's values, and is left exactly as written.
 */
export function camelFieldNames(message: string): string {
  return message.replace(/("(?:[^"\\]|\\.)*")|\b[a-z]+(?:_[a-z0-9]+)+\b/g, (m, quoted?: string) => quoted ?? snakeToCamel(m));
}

/**
 * Validates a wire-shaped value of plain fields with a request schema and reports failures by the property path
 * users write (`securityConfig.geo.countries[1]`), key-shaped values included. Issues about values not known yet
 * (preview) are dropped.
 */
export function schemaFailures(schema: z.ZodType, wire: unknown, options: { quoteValues?: boolean } = {}): CheckFailure[] {
  const failures: CheckFailure[] = keyShapedFailures(wire);
  const parsed = schema.safeParse(wire);
  if (parsed.success) return failures;
  for (const issue of parsed.error.issues) {
    const along = valueAt(wire, issue.path);
    if (along.some((v) => v === UNKNOWN)) continue;
    const value = along.length === issue.path.length + 1 ? along[along.length - 1] : undefined;
    const shown =
      options.quoteValues !== false && (typeof value === "string" || typeof value === "number") ? `${quoted(value)} ` : "";
    // zod 4 quotes unknown keys as it quotes values; they are field names, so they are named as users write them.
    const message =
      issue.code === "unrecognized_keys"
        ? `Unrecognized key${issue.keys.length > 1 ? "s" : ""}: ${issue.keys.map((k) => JSON.stringify(snakeToCamel(k))).join(", ")}`
        : camelFieldNames(issue.message);
    failures.push({ property: redact(camelPath(issue.path)) || "(inputs)", reason: redact(`${shown}${message}`) });
  }
  return failures;
}

/** A value as a failure quotes it: a 1,000,000-character alias is shown by its start and length. */
function quoted(value: string | number): string {
  const text = JSON.stringify(value);
  return text.length > QUOTED_MAX ? `${text.slice(0, QUOTED_MAX)}..." (${String(value).length} characters)` : text;
}

const QUOTED_MAX = 60;

/** JSON with sorted keys: equal values give equal text, whatever the key order. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** Deep equality by canonical JSON (the values here are plain JSON). */
export function same(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}
