import { z } from "zod";
import { camelPath, snakeToCamel } from "../../api/casing.js";
import { looksLikeKey, redact } from "../../api/redact.js";

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

/**
 * The values along a path into what the user wrote. A wire name in the path (`spend_limit`, from a schema that
 * validates the wire form) finds the field as users write it (`spendLimit`).
 */
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown[] {
  const seen: unknown[] = [root];
  let cur: unknown = root;
  for (const part of path) {
    if (cur === null || typeof cur !== "object") break;
    const record = cur as Record<PropertyKey, unknown>;
    const camel = typeof part === "string" ? snakeToCamel(part) : part;
    cur = Object.hasOwn(record, camel) ? record[camel] : record[part];
    seen.push(cur);
  }
  return seen;
}

/** An optional input for which null, as absence, means "not given" (typed without the null). */
export function optionalOrNull<T extends z.ZodType>(schema: T) {
  return schema
    .nullable()
    .transform((value) => value ?? undefined)
    .optional();
}

/** Fields of a resource's inputs whose values a failure never shows: keys, or names a key may be pasted into. */
export const NEVER_SHOWN = z.registry<{ neverShown: true }>();

/** Marks a field of a resource's inputs schema as one whose value check failures never show. */
export function neverShown<T extends z.ZodType>(schema: T): T {
  NEVER_SHOWN.add(schema, { neverShown: true });
  return schema;
}

const LOOKS_LIKE_KEY = "looks like a key: plain inputs are stored and shown in plain text, so a key must never be one";

/**
 * A refinement that fails each string shaped like a key inside the plain `fields` of the inputs: plain inputs
 * are stored in the state and shown in previews in plain text, so a key pasted as an alias or a model name must
 * not pass. Run also when other fields failed (`{ when: () => true }`), so that it is never hidden by them.
 */
export function noKeysIn(fields: readonly string[]): (inputs: Record<string, unknown>, ctx: z.RefinementCtx) => void {
  const scan = (value: unknown, path: (string | number)[], ctx: z.RefinementCtx): void => {
    if (typeof value === "string") {
      if (looksLikeKey(value)) ctx.addIssue({ code: "custom", path, message: LOOKS_LIKE_KEY });
    } else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) scan(v, [...path, Array.isArray(value) ? Number(k) : k], ctx);
    }
  };
  return (inputs, ctx) => {
    if (inputs === null || typeof inputs !== "object") return;
    for (const field of fields) scan(inputs[field], [field], ctx);
  };
}

/**
 * Messages are written for the wire; here users write camelCase. Only field names are translated: a quoted
 * part of a message is one of the user's values, and is left exactly as written.
 */
export function camelFieldNames(message: string): string {
  return message.replace(
    /("(?:[^"\\]|\\.)*")|\b[a-z]+(?:_[a-z0-9]+)+\b/g,
    (m, quoted?: string) => quoted ?? snakeToCamel(m),
  );
}

/**
 * check for a resource whose inputs `schema` describes: one parse of the values the engine gave. A failure names
 * the property path users write (`securityConfig.geo.countries[1]`) and quotes the value, unless the field is
 * NEVER_SHOWN; failures about values not known yet (preview) are dropped. The inputs are the values given with
 * what the schema made of them (defaults, canonical forms); with values not known yet, each field that is known
 * gets its own. They are typed once `failures` is empty: the engine uses the inputs of a failed check for nothing.
 */
export function checkInputs<S extends z.ZodObject>(
  schema: S,
  news: Record<string, unknown>,
): { inputs: z.output<S>; failures: CheckFailure[] } {
  const parsed = schema.safeParse(news);
  if (parsed.success) return { inputs: definedOnly({ ...news, ...parsed.data }) as z.output<S>, failures: [] };
  const failures = parsed.error.issues.flatMap((issue) => failureOf(schema, news, issue));
  const inputs: Record<string, unknown> = { ...news };
  if (failures.length === 0) {
    for (const [name, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      const one = field.safeParse(news[name]);
      if (one.success) inputs[name] = one.data;
    }
  }
  return { inputs: definedOnly(inputs) as z.output<S>, failures };
}

function failureOf(schema: z.ZodObject, news: Record<string, unknown>, issue: z.core.$ZodIssue): CheckFailure[] {
  const along = valueAt(news, issue.path);
  if (along.some((v) => v === UNKNOWN)) return [];
  const value = along.length === issue.path.length + 1 ? along[along.length - 1] : undefined;
  const field = (schema.shape as Record<PropertyKey, z.ZodType | undefined>)[issue.path[0] ?? ""];
  const hidden = field !== undefined && NEVER_SHOWN.has(field);
  const shown = !hidden && (typeof value === "string" || typeof value === "number") ? `${quoted(value)} ` : "";
  // zod 4 quotes unknown keys as it quotes values; they are field names, so they are named as users write them.
  const message =
    issue.code === "unrecognized_keys"
      ? `Unrecognized key${issue.keys.length > 1 ? "s" : ""}: ${issue.keys.map((k) => JSON.stringify(snakeToCamel(k))).join(", ")}`
      : camelFieldNames(issue.message);
  return [{ property: redact(camelPath(issue.path)) || "(inputs)", reason: redact(`${shown}${message}`) }];
}

/** The record without its undefined fields (a null given for an optional field means "not given"). */
function definedOnly(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined));
}

/**
 * A value as a failure quotes it: a 1,000,000-character alias is shown by its start and length. Keys are masked
 * before the cut, which could otherwise leave the start of a key too short to be recognised as one.
 */
function quoted(value: string | number): string {
  const text = JSON.stringify(typeof value === "string" ? redact(value) : value);
  return text.length > QUOTED_MAX ? `${text.slice(0, QUOTED_MAX)}..." (${String(value).length} characters)` : text;
}

const QUOTED_MAX = 60;
