import { z } from "zod";
import { API_KEY_DELETE_MAX, COUNTRIES_MAX, IP_ALLOW_MAX, IP_ENTRY_MAX_LENGTH, MODEL_LIST_MAX, MODEL_MODES } from "../assumptions.js";
import type { Camel } from "../casing.js";
import { AliasStringSchema, FiniteNumberSchema, isIpOrCidr, KeySchema, ModelNameSchema, TimestampSchema } from "./common.js";

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
              if (seen.has(item)) ctx.addIssue({ code: "custom", path: [i], message: `model "${item}" is listed twice` });
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

export const ApiKeyCreateRequestSchema = z.object({
  alias: AliasSchema,
  security_config: SecurityConfigSchema.optional(),
});
export type ApiKeyCreateRequest = Camel<z.infer<typeof ApiKeyCreateRequestSchema>>;

/** The configuration of a key as get and edit answer (spec 4.2, 4.3); the key itself is never in it. */
export const ApiKeyViewSchema = z.object({
  alias: z.string(),
  enabled: z.boolean(),
  security_config: SecurityConfigSchema.nullish(),
  created_at: TimestampSchema,
});
export type ApiKeyView = Camel<z.infer<typeof ApiKeyViewSchema>>;

/** The creation answer: the only response that carries the key (spec 4.1). */
export const ApiKeyCreatedSchema = ApiKeyViewSchema.extend({ key: KeySchema });
export type ApiKeyCreated = Camel<z.infer<typeof ApiKeyCreatedSchema>>;

export const ApiKeyGetRequestSchema = z.object({ key: KeySchema });

export const ApiKeyEditRequestSchema = z.object({
  key: KeySchema,
  alias: AliasSchema,
  security_config: SecurityConfigSchema.optional(),
});
export type ApiKeyEditRequest = Camel<z.infer<typeof ApiKeyEditRequestSchema>>;

export const ApiKeyStatusRequestSchema = z.object({ key: KeySchema, enabled: z.boolean() });
export const ApiKeyStatusResponseSchema = z.object({ enabled: z.boolean() });

export const ApiKeyDeleteRequestSchema = z.object({
  keys: z
    .array(KeySchema)
    .min(1, "must name at least one key")
    .max(API_KEY_DELETE_MAX, `must name at most ${API_KEY_DELETE_MAX} keys`),
});
export const ApiKeyDeleteResponseSchema = z.object({ deleted: z.number().int().nonnegative() });
