import { z } from "zod";
import { MODEL_LIST_MAX, QUERY_VALUE_MAX_LENGTH, SUB_ACCOUNT_MAX_COUNT, SUB_ACCOUNT_MAX_SKS } from "../assumptions.js";
import type { Camel } from "../casing.js";
import {
  AnswerBooleanSchema,
  AnswerDecimalSchema,
  AnswerIdSchema,
  AnswerIntegerSchema,
  AnswerNumberSchema,
  AnswerTimestampSchema,
} from "./answers.js";
import { isMasked } from "../redact.js";
import { AliasStringSchema, FiniteNumberSchema, KeySchema, ModelNameSchema } from "./common.js";

/** A permitted model and its price multiplier, as stored and returned (a factor sent as decimal text is read too). */
export const ModelPricingSchema = z.object({
  model: z.string().min(1, "must be a non-empty model name"),
  pricing_factor: AnswerNumberSchema.refine((n) => n > 0, "must be greater than 0"),
});
export type ModelPricing = Camel<z.infer<typeof ModelPricingSchema>>;

/** The fields of a request's pricing entry that decide its factor (spec 2.5). */
export interface PricingFields {
  pricing_factor?: number;
  auto_following?: boolean;
  prompt_price?: number;
  completion_price?: number;
}

/**
 * Spec 2.5's rule for the deprecated pricing fields, in one place (the schema, the conversion and the resource's
 * warnings read it): the factor an entry stands for and a word about its deprecated fields, or why it has none.
 * `auto_following: true` is factor 1; prices alone are "not converted", so refused (see assumptions.ts).
 */
export function pricingRule(entry: PricingFields): { factor: number; deprecated?: string } | { refused: string } {
  const deprecated =
    entry.auto_following !== undefined || entry.prompt_price !== undefined || entry.completion_price !== undefined;
  if (entry.pricing_factor !== undefined) {
    return {
      factor: entry.pricing_factor,
      deprecated: deprecated ? "they are ignored because pricing_factor is set" : undefined,
    };
  }
  if (entry.auto_following === true)
    return { factor: 1, deprecated: "auto_following: true is converted to pricing_factor 1" };
  return {
    refused: deprecated
      ? "prompt_price/completion_price are deprecated and not converted: set pricing_factor"
      : "is required",
  };
}

/** A model pricing entry in a request: `pricing_factor`, or the deprecated fields that `pricingRule` converts. */
export const ModelPricingInputSchema = z
  .object({
    model: ModelNameSchema,
    pricing_factor: FiniteNumberSchema.positive("must be greater than 0").optional(),
    prompt_price: FiniteNumberSchema.nonnegative().optional(),
    completion_price: FiniteNumberSchema.nonnegative().optional(),
    auto_following: z.boolean().optional(),
  })
  .superRefine((entry, ctx) => {
    const rule = pricingRule(entry);
    if ("refused" in rule) ctx.addIssue({ code: "custom", path: ["pricing_factor"], message: rule.refused });
  });
export type ModelPricingInput = Camel<z.infer<typeof ModelPricingInputSchema>>;

/** A request's pricing list: at most MODEL_LIST_MAX entries, each model once. */
export const ModelPricingListSchema = z
  .array(ModelPricingInputSchema)
  .max(MODEL_LIST_MAX, `must list at most ${MODEL_LIST_MAX} models`)
  .superRefine((items, ctx) => {
    const seen = new Set<string>();
    items.forEach((item, i) => {
      if (seen.has(item.model))
        ctx.addIssue({ code: "custom", path: [i, "model"], message: `model "${item.model}" is listed twice` });
      seen.add(item.model);
    });
  });

/** Converts request pricing to what is stored: the one conversion rule of spec 2.5. */
export function convertModelPricing(
  items: readonly z.infer<typeof ModelPricingInputSchema>[],
): z.infer<typeof ModelPricingSchema>[] {
  return items.map((item) => {
    const rule = pricingRule(item);
    // Entries reach here validated; a refused one would have failed the schema.
    return { model: item.model, pricing_factor: "factor" in rule ? rule.factor : 1 };
  });
}

/**
 * A sub-account as the list and the create answer it (spec 2.5). The package needs its id, token, alias, pricing and
 * balance; `enabled` and `created_at` are shown in the outputs. `user_id`, `token_type`, `monthly_cost` and
 * `updated_at` are read when present and never required; a number may come as a string of digits. `id` and `user_id`
 * are opaque (AnswerIdSchema): a number, a snowflake beyond 2^53, any text.
 */
export const SubAccountSchema = z.object({
  id: AnswerIdSchema,
  user_id: AnswerIdSchema.optional().catch(undefined),
  token: KeySchema,
  token_type: z.string().optional().catch(undefined),
  alias: z.string(),
  enabled: AnswerBooleanSchema,
  model_pricing: z
    .array(ModelPricingSchema)
    .nullish()
    .transform((l) => l ?? []),
  balance: AnswerDecimalSchema,
  monthly_cost: AnswerDecimalSchema.optional().catch(undefined),
  created_at: AnswerTimestampSchema,
  updated_at: AnswerTimestampSchema.optional().catch(undefined),
});
export type SubAccount = Camel<z.infer<typeof SubAccountSchema>>;

/**
 * A sub-account as a list answers it: its token whole, or masked in any form a platform uses (`sk-...abcd`,
 * `sk-abcd****wxyz`, `****`, `sk-…abcd`: isMasked), read so that the client can say the list masks them and stop,
 * never take a mask for a token (SubAccountsApi.list).
 */
export const ListedSubAccountSchema = SubAccountSchema.extend({
  token: z.union([KeySchema, z.string().refine(isMasked, { error: "must be a sub-account token, whole or masked" })]),
});

/** Query of the list (spec 4.9). Values arrive as strings in a query, hence the coercion. */
export const SubAccountListQuerySchema = z.object({
  alias: z.string().max(QUERY_VALUE_MAX_LENGTH, `must be at most ${QUERY_VALUE_MAX_LENGTH} characters`).optional(),
  sk: z.string().max(QUERY_VALUE_MAX_LENGTH, `must be at most ${QUERY_VALUE_MAX_LENGTH} characters`).optional(),
  page: z.coerce.number().int().min(1, "must be 1 or more").optional(),
  page_size: z.coerce
    .number()
    .int()
    .refine((n) => n === -1 || n >= 1, { error: "must be -1 (all) or 1 or more" })
    .optional(),
  /** A further page's token, as a list that pages by cursor gave it in `next` (LIST_CURSOR_FIELD), sent back unchanged. */
  cursor: z.string().max(QUERY_VALUE_MAX_LENGTH, `must be at most ${QUERY_VALUE_MAX_LENGTH} characters`).optional(),
});
export type SubAccountListQuery = Camel<z.infer<typeof SubAccountListQuerySchema>>;

/**
 * The list answer (spec 4.9): `items`, and `total` when the platform gives it (paging without it reads on until a
 * short page, SubAccountsApi.list); on a platform that pages by cursor, `has_more` and the further page's token
 * `next` (a string or a number, given as text). `page` and `pageSize` (or `page_size`) are not needed and never required.
 */
export const SubAccountListResponseSchema = z.object({
  items: z
    .array(ListedSubAccountSchema)
    .nullish()
    .transform((l) => l ?? []),
  total: AnswerIntegerSchema.optional().catch(undefined),
  has_more: AnswerBooleanSchema.optional().catch(undefined),
  next: z.union([z.string(), z.number()]).nullish().catch(undefined),
});

const AliasSchema = AliasStringSchema;

export const SubAccountCreateRequestSchema = z.object({
  alias: AliasSchema,
  balance: FiniteNumberSchema.nonnegative("must be 0 or more"),
  model_pricing: ModelPricingListSchema.optional(),
  count: z
    .number()
    .int("must be a whole number")
    .min(1, "must be 1 or more")
    .max(SUB_ACCOUNT_MAX_COUNT, `must be at most ${SUB_ACCOUNT_MAX_COUNT}`),
});
export type SubAccountCreateRequest = Camel<z.infer<typeof SubAccountCreateRequestSchema>>;

/** The create answer (spec 4.10): the new sub-accounts. `success: false` is a refusal, recognised before this schema (client/refusals.ts). */
export const SubAccountCreateResponseSchema = z.object({
  items: z.array(SubAccountSchema),
  success: AnswerBooleanSchema.optional(),
});

const SksSchema = z
  .array(KeySchema)
  .min(1, "must name at least one sub-account key")
  .max(SUB_ACCOUNT_MAX_SKS, `must name at most ${SUB_ACCOUNT_MAX_SKS} keys`);

export const SubAccountEditRequestSchema = z.object({
  sks: SksSchema,
  alias: AliasSchema,
  model_pricing: ModelPricingListSchema,
});
export type SubAccountEditRequest = Camel<z.infer<typeof SubAccountEditRequestSchema>>;

export const SubAccountDeleteRequestSchema = z.object({ sks: SksSchema });
