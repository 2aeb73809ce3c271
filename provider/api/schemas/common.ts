import { isIP } from "node:net";
import { z } from "zod";
import { isObject } from "../canonical.js";
import {
  ADMIN_KEY_PREFIX,
  ALIAS_MAX_LENGTH,
  IP_ALLOW_ACCEPTS_CIDR,
  KEY_CHARACTERS,
  KEY_CHARACTERS_EXPECTED,
  KEY_MAX_LENGTH,
  KEY_PREFIX,
  MODEL_NAME_MAX_LENGTH,
  UNPREFIXED_KEY_MIN_LENGTH,
} from "../assumptions.js";
import { isUnprefixedKey } from "../redact.js";

const KEY_TEXT = new RegExp(`^[${KEY_CHARACTERS}]*$`);

/**
 * Text made of key characters only (KEY_CHARACTERS), at most KEY_MAX_LENGTH of them. A key file's newline or a
 * pasted non-Latin-1 character is never part of a key (an HTTP client refuses to send it), and a key of other
 * characters would not be masked whole in a message.
 */
export const KeyTextSchema = z
  .string()
  .max(KEY_MAX_LENGTH, `must be at most ${KEY_MAX_LENGTH} characters`)
  .refine((k) => KEY_TEXT.test(k), { error: KEY_CHARACTERS_EXPECTED });

/** Whether a text has the form of an API key or sub-account token: `sk-` and more, or a key issued without the prefix (isUnprefixedKey). */
export function isKeyForm(k: string): boolean {
  return (k.startsWith(KEY_PREFIX) && k.length > KEY_PREFIX.length) || isUnprefixedKey(k);
}

/**
 * An API key or sub-account token as the wire carries it: `sk-` and more, or, as one-api and its forks issue them,
 * UNPREFIXED_KEY_MIN_LENGTH letters and digits or more without the prefix. Never an admin key.
 */
export const KeySchema = KeyTextSchema.refine(isKeyForm, {
  error: `must be a key that begins with "${KEY_PREFIX}" (or, without it, at least ${UNPREFIXED_KEY_MIN_LENGTH} letters and digits)`,
}).refine((k) => !k.startsWith(ADMIN_KEY_PREFIX), { error: "must not be an admin key" });

/** The admin key of the management group (spec 5): `sk-admin-` and more. */
export const AdminKeySchema = KeyTextSchema.refine(
  (k) => k.startsWith(ADMIN_KEY_PREFIX) && k.length > ADMIN_KEY_PREFIX.length,
  {
    error: `must be an admin key that begins with "${ADMIN_KEY_PREFIX}"`,
  },
);

/** The main account key of the sub-account group (spec 5): a key (`sk-`...), never an admin key. */
export const AccountKeySchema = KeySchema;

/**
 * An alias: non-empty, without leading or trailing spaces. Refused rather than trimmed: a trimmed alias
 * would come back different from the one declared and show as a change on every run.
 */
export const AliasStringSchema = z
  .string()
  .min(1, "must be a non-empty alias")
  .max(ALIAS_MAX_LENGTH, `must be at most ${ALIAS_MAX_LENGTH} characters`)
  .refine((a) => a.trim() === a, { error: "must not begin or end with spaces" })
  .refine((a) => a.trim().length > 0, { error: "must be a non-empty alias" });

/** A model name in a request: non-empty, at most MODEL_NAME_MAX_LENGTH characters. */
export const ModelNameSchema = z
  .string()
  .min(1, "must be a non-empty model name")
  .max(MODEL_NAME_MAX_LENGTH, `must be at most ${MODEL_NAME_MAX_LENGTH} characters`);

/** A finite number: zod 4 refuses Infinity as a wrong type, and this says what is wrong with it instead. */
export const FiniteNumberSchema = z.number({
  error: (issue) =>
    issue.code === "invalid_type" && typeof issue.input === "number" && !Number.isNaN(issue.input)
      ? "must be a finite number"
      : undefined,
});

/** A request with no documented fields (balance, models): an empty object. */
export const EmptyRequestSchema = z.object({}).loose();

/** A decimal amount carried as a string (`"12.500000"`). */
export const DecimalStringSchema = z.string().regex(/^-?\d+(\.\d+)?$/, "must be a decimal amount in a string");

/** An ISO 8601 timestamp; UTC (`Z`) or with an offset. */
export const TimestampSchema = z.iso.datetime({ offset: true });

/** A calendar date, YYYY-MM-DD, that exists. */
export const DateSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date in YYYY-MM-DD form")
  .refine(
    (d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d),
    {
      error: "is not a calendar date",
    },
  );

/** True for an IPv4 or IPv6 address, or (when accepted) a CIDR range of either. */
export function isIpOrCidr(value: string): boolean {
  if (isIP(value) !== 0) return true;
  if (!IP_ALLOW_ACCEPTS_CIDR) return false;
  const slash = value.indexOf("/");
  if (slash < 0) return false;
  const family = isIP(value.slice(0, slash));
  const bits = value.slice(slash + 1);
  if (family === 0 || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** Error body of a non-2xx response (spec 7), for both groups. */
export const ErrorBodySchema = z.object({
  error: z.object({ code: z.string(), message: z.string() }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/**
 * `{success: boolean}`, the answer of the sub-account batch edit and delete. `success: false` is a refusal, recognised
 * before any schema reads the answer (client/refusals.ts); a platform that confirms with `{}` leaves it out.
 */
export const SuccessResponseSchema = z.object({ success: z.literal(true).optional() });

/**
 * An object of named settings (`{ everyDays?, overlapHours? }`): `notAnObject` when it is none, and each field it
 * does not know fails at its own path with `unknownField`, beside the failures of the fields it knows.
 */
export function settingsObject<Shape extends z.core.$ZodLooseShape>(
  shape: Shape,
  messages: { notAnObject: string; unknownField: string },
) {
  // Loose, so that the refinement sees the unknown fields (a plain object would have stripped them already).
  return (
    z
      .looseObject(shape, { error: messages.notAnObject })
      .superRefine(
        (value, ctx) => {
          for (const name of Object.keys(value)) {
            if (!Object.hasOwn(shape, name))
              ctx.addIssue({ code: "custom", path: [name], message: messages.unknownField });
          }
        },
        // Also when a known field failed: every failure is named at once.
        { when: (payload) => isObject(payload.value) },
      )
      // A value that passed has no field besides the known ones: typed as the closed object.
      .transform((value) => value as z.output<z.ZodObject<Shape>>)
  );
}
