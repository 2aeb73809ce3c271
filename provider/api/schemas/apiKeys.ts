import { z } from "zod";
import { canonical } from "../canonical.js";
import {
  API_KEY_DELETE_MAX,
  COUNTRIES_MAX,
  IP_ALLOW_MAX,
  IP_ENTRY_MAX_LENGTH,
  MODEL_LIST_MAX,
  MODEL_MODES,
} from "../assumptions.js";
import type { Camel } from "../casing.js";
import {
  AnswerBooleanSchema,
  AnswerIntegerSchema,
  AnswerNumberSchema,
  AnswerStringListSchema,
  AnswerTimestampSchema,
} from "./answers.js";
import { AliasStringSchema, FiniteNumberSchema, isIpOrCidr, KeySchema, ModelNameSchema } from "./common.js";
import { isObject } from "../canonical.js";

/** Restrictions of an API key (spec 2.1). Every part optional; an omitted part restricts nothing. */
export const SecurityConfigSchema = z
  .object({
    ip: z
      .object({
        allow: z
          .array(
            z
              .string()
              .max(IP_ENTRY_MAX_LENGTH, `must be at most ${IP_ENTRY_MAX_LENGTH} characters`)
              .refine(isIpOrCidr, { error: "must be an IPv4 or IPv6 address or a CIDR range" }),
          )
          .max(IP_ALLOW_MAX, `must list at most ${IP_ALLOW_MAX} addresses`),
      })
      .strict()
      .optional(),
    spend_limit: z
      .object({
        monthly: FiniteNumberSchema.nonnegative("must be 0 or more"),
      })
      .strict()
      .optional(),
    geo: z
      .object({
        countries: z
          .array(z.string().regex(/^[A-Z]{2}$/, "must be a two-letter upper-case country code"))
          .max(COUNTRIES_MAX, `must list at most ${COUNTRIES_MAX} countries`),
      })
      .strict()
      .optional(),
    models: z
      .object({
        mode: z.enum(MODEL_MODES, { error: `must be one of: ${MODEL_MODES.join(", ")}` }),
        items: z
          .array(ModelNameSchema)
          .max(MODEL_LIST_MAX, `must list at most ${MODEL_LIST_MAX} models`)
          .superRefine((items, ctx) => {
            const seen = new Set<string>();
            items.forEach((item, i) => {
              if (seen.has(item))
                ctx.addIssue({ code: "custom", path: [i], message: `model "${item}" is listed twice` });
              seen.add(item);
            });
          }),
      })
      .strict()
      .optional(),
  })
  .strict();
export type SecurityConfigWire = z.infer<typeof SecurityConfigSchema>;
export type SecurityConfig = Camel<SecurityConfigWire>;

const AliasSchema = AliasStringSchema;

/** The `security_config` parts the package knows (spec 2.1); a platform may hold others (see platformPartsOf). */
export const KNOWN_SECURITY_PARTS: readonly string[] = Object.keys(SecurityConfigSchema.shape);
/** The fields of each part the package knows (spec 2.1); a platform may hold others inside them (see platformOwnedOf). */
export const KNOWN_SECURITY_FIELDS: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  Object.entries(SecurityConfigSchema.shape).map(([part, schema]) => [part, Object.keys(schema.unwrap().shape)]),
);

/**
 * The parts of an answer's `security_config` the package does not know (a restriction the platform has and the spec
 * does not show, set in the web console), as JSON text of their wire form; undefined when there are none. Edits
 * replace the whole `security_config` (spec 4.3), so these are sent back with every edit of the key and with the
 * create of its rotated successor: what the package cannot declare, it does not remove.
 */
export function platformPartsOf(config: unknown): string | undefined {
  if (config === null || typeof config !== "object" || Array.isArray(config)) return undefined;
  const parts = Object.entries(config).filter(
    ([name, value]) => !KNOWN_SECURITY_PARTS.includes(name) && value !== null && value !== undefined,
  );
  // Canonical (keys sorted at every depth): a platform may answer its fields in another order each time.
  return parts.length === 0 ? undefined : canonical(Object.fromEntries(parts));
}

/**
 * What of an answer's `security_config` is the platform's, not the user's (docs/decisions.md): the parts the package
 * does not know, whole, and the fields inside a known part it does not know (`spend_limit.daily` beside `monthly`),
 * as JSON text of their wire form (canonical: keys sorted at every depth); undefined when there is none. The package
 * cannot declare them and an edit replaces the whole config (spec 4.3), so every edit of the key and the create of
 * its rotated successor send them back (client/apiKeys.ts bodyOf): a part it does not know whole, a field inside a
 * known part beside the declared fields of that part; a known part left out is no restriction of that kind, so its
 * fields go with it. The state keeps it as `platformParts`.
 */
export function platformOwnedOf(config: unknown): string | undefined {
  if (!isObject(config)) return undefined;
  const owned: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(config)) {
    if (value === null || value === undefined) continue;
    const fields = KNOWN_SECURITY_FIELDS[name];
    if (fields === undefined) owned[name] = value;
    else if (isObject(value)) {
      const extra = Object.entries(value).filter(
        ([field, v]) => !fields.includes(field) && v !== null && v !== undefined,
      );
      if (extra.length > 0) owned[name] = Object.fromEntries(extra);
    }
  }
  return Object.keys(owned).length === 0 ? undefined : canonical(owned);
}

const { ip, spend_limit, geo, models } = SecurityConfigSchema.shape;
/**
 * Requests: the known parts and fields as declared (checked strictly by check, SecurityConfigSchema), and what is the
 * platform's (platformOwnedOf) sent back as it came, beside them. Also what the emulator stores: a platform holds
 * what it was sent.
 */
export const SecurityConfigRequestSchema = z
  .object({
    ip: ip.unwrap().catchall(z.unknown()).optional(),
    spend_limit: spend_limit.unwrap().catchall(z.unknown()).optional(),
    geo: geo.unwrap().catchall(z.unknown()).optional(),
    models: models.unwrap().catchall(z.unknown()).optional(),
  })
  .catchall(z.unknown());

export const ApiKeyCreateRequestSchema = z.object({
  alias: AliasSchema,
  security_config: SecurityConfigRequestSchema.optional(),
});
/** A create or edit as the runtime asks for it: `platformParts` (platformOwnedOf) are merged into `security_config`. */
export type ApiKeyCreateRequest = Camel<{ alias: string; security_config?: SecurityConfigWire }> & {
  platformParts?: string;
};

/**
 * `security_config` as the platform answers it: read for the parts and fields the package knows, every other field
 * at any depth dropped (never an error), each part null or absent for "no restriction". The values are read as they
 * come (a mode or country the request schema would refuse is what the platform holds, and shows as drift).
 */
export const SecurityConfigAnswerSchema = z
  .object({
    ip: z.object({ allow: AnswerStringListSchema }).nullish(),
    spend_limit: z.object({ monthly: AnswerNumberSchema }).nullish(),
    geo: z.object({ countries: AnswerStringListSchema }).nullish(),
    // A mode the request schema does not know is what the platform holds: kept as its text (typed as the known
    // modes, which the runtime compares it with), so that it shows as drift against the declared one.
    models: z
      .object({ mode: z.string().transform((m) => m as (typeof MODEL_MODES)[number]), items: AnswerStringListSchema })
      .nullish(),
  })
  // A part answered as null restricts nothing, as an absent one: read as absent.
  .transform((config) => {
    const parts: SecurityConfigWire = {};
    if (config.ip) parts.ip = config.ip;
    if (config.spend_limit) parts.spend_limit = config.spend_limit;
    if (config.geo) parts.geo = config.geo;
    if (config.models) parts.models = config.models;
    return parts;
  });

/** An answer with `platform_parts` added: what of its `security_config` is the platform's (platformOwnedOf). */
function withPlatformParts(answer: unknown): unknown {
  if (answer === null || typeof answer !== "object" || Array.isArray(answer)) return answer;
  return { ...answer, platform_parts: platformOwnedOf((answer as { security_config?: unknown }).security_config) };
}

/** The configuration of a key as get and edit answer (spec 4.2, 4.3); the key itself is never in it. */
export const ApiKeyViewSchema = z.preprocess(
  withPlatformParts,
  z.object({
    alias: z.string(),
    enabled: AnswerBooleanSchema,
    security_config: SecurityConfigAnswerSchema.nullish(),
    platform_parts: z.string().optional(),
    created_at: AnswerTimestampSchema,
  }),
);
export type ApiKeyView = Camel<z.output<typeof ApiKeyViewSchema>>;

/**
 * The creation answer: the only response that carries the key (spec 4.1). Only the key is needed: a create whose
 * answer lacks another field (or holds it in a form no schema reads) still made the key, and losing the key would
 * orphan it on the platform. The client fills what is missing from the request (ApiKeysApi.create).
 */
export const ApiKeyCreatedAnswerSchema = z.preprocess(
  withPlatformParts,
  z.object({
    key: KeySchema,
    alias: z.string().optional().catch(undefined),
    enabled: AnswerBooleanSchema.optional().catch(undefined),
    security_config: SecurityConfigAnswerSchema.nullish().catch(undefined),
    platform_parts: z.string().optional(),
    created_at: AnswerTimestampSchema.optional().catch(undefined),
  }),
);

/** A created key, as the client gives it: the view with the key. */
export type ApiKeyCreated = ApiKeyView & { key: string };

export const ApiKeyGetRequestSchema = z.object({ key: KeySchema });

export const ApiKeyEditRequestSchema = z.object({
  key: KeySchema,
  alias: AliasSchema,
  security_config: SecurityConfigRequestSchema.optional(),
});
export type ApiKeyEditRequest = ApiKeyCreateRequest & { key: string };

export const ApiKeyStatusRequestSchema = z.object({ key: KeySchema, enabled: z.boolean() });
/** The status answer: `{enabled}`, the confirmed state (spec 4.4); a platform that confirms otherwise (`{success: true}`) leaves it out. */
export const ApiKeyStatusResponseSchema = z.object({ enabled: AnswerBooleanSchema.optional() });

export const ApiKeyDeleteRequestSchema = z.object({
  keys: z
    .array(KeySchema)
    .min(1, "must name at least one key")
    .max(API_KEY_DELETE_MAX, `must name at most ${API_KEY_DELETE_MAX} keys`),
});
/** The delete answer: `{deleted}` (spec 4.5); nothing else is needed of it (a refusal is recognised before this). */
export const ApiKeyDeleteResponseSchema = z.object({ deleted: AnswerIntegerSchema.optional() });
