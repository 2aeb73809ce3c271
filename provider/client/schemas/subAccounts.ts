import { z } from "zod";
import { MODEL_LIST_MAX, QUERY_VALUE_MAX_LENGTH, SUB_ACCOUNT_MAX_COUNT, SUB_ACCOUNT_MAX_SKS } from "../assumptions.js";
import type { Camel } from "../casing.js";
import { AliasStringSchema, DecimalStringSchema, KeySchema, ModelNameSchema, TimestampSchema } from "./common.js";

/** A permitted model and its price multiplier, as stored and returned. */
export const ModelPricingSchema = z.object({
  model: z.string().min(1, "must be a non-empty model name"),
  pricing_factor: z.number().finite().positive("must be greater than 0"),
});
export type ModelPricing = Camel<z.infer<typeof ModelPricingSchema>>;

/**
 * A model pricing entry in a request: `pricing_factor`, or the deprecated fields (spec 2.5).
 * `auto_following: true` is converted to factor 1; other deprecated entries are refused (see assumptions).
 */
export const ModelPricingInputSchema = z
  .object({
    model: ModelNameSchema,
    pricing_factor: z.number().finite().positive("must be greater than 0").optional(),
    prompt_price: z.number().finite().nonnegative().optional(),
    completion_price: z.number().finite().nonnegative().optional(),
    auto_following: z.boolean().optional(),
  })
  .superRefine((entry, ctx) => {
    if (entry.pricing_factor === undefined && entry.auto_following !== true) {
      ctx.addIssue({
        code: "custom",
        path: ["pricing_factor"],
        message:
          entry.prompt_price !== undefined || entry.completion_price !== undefined || entry.auto_following === false
            ? "prompt_price/completion_price are deprecated and not converted: set pricing_factor"
            : "is required",
      });
    }
  });
export type ModelPricingInput = Camel<z.infer<typeof ModelPricingInputSchema>>;

const ModelPricingListSchema = z
  .array(ModelPricingInputSchema)
  .max(MODEL_LIST_MAX, `must list at most ${MODEL_LIST_MAX} models`)
  .superRefine((items, ctx) => {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (seen.has(item.model)) ctx.addIssue({ code: "custom", path: [i, "model"], message: `model "${item.model}" is listed twice` });
    seen.add(item.model);
  });
});

/** Converts request pricing to what is stored: the one conversion rule of spec 2.5. */
export function convertModelPricing(items: readonly z.infer<typeof ModelPricingInputSchema>[]): z.infer<typeof ModelPricingSchema>[] {
  return items.map((item) => ({ model: item.model, pricing_factor: item.pricing_factor ?? 1 }));
}

export const SubAccountSchema = z.object({
  id: z.number().int(),
  user_id: z.number().int(),
  token: KeySchema,
  token_type: z.string(),
  alias: z.string(),
  enabled: z.boolean(),
  model_pricing: z.array(ModelPricingSchema),
  balance: DecimalStringSchema,
  monthly_cost: DecimalStringSchema,
  created_at: TimestampSchema,
  updated_at: TimestampSchema,
});
export type SubAccount = Camel<z.infer<typeof SubAccountSchema>>;

/** Query of the list (spec 4.9). Values arrive as strings in a query, hence the coercion. */
export const SubAccountListQuerySchema = z.object({
  alias: z.string().max(QUERY_VALUE_MAX_LENGTH, `must be at most ${QUERY_VALUE_MAX_LENGTH} characters`).optional(),
  sk: z.string().max(QUERY_VALUE_MAX_LENGTH, `must be at most ${QUERY_VALUE_MAX_LENGTH} characters`).optional(),
  page: z.coerce.number().int().min(1, "must be 1 or more").optional(),
  page_size: z.coerce
    .number()
    .int()
    .refine((n) => n === -1 || n >= 1, { message: "must be -1 (all) or 1 or more" })
    .optional(),
});
export type SubAccountListQuery = Camel<z.infer<typeof SubAccountListQuerySchema>>;

export const SubAccountListResponseSchema = z.object({
  items: z.array(SubAccountSchema),
  total: z.number().int().nonnegative(),
  page: z.number().int(),
  pageSize: z.number().int(),
});

const AliasSchema = AliasStringSchema;

export const SubAccountCreateRequestSchema = z.object({
  alias: AliasSchema,
  balance: z.number().finite("must be a finite number").nonnegative("must be 0 or more"),
  model_pricing: ModelPricingListSchema.optional(),
  count: z
    .number()
    .int("must be a whole number")
    .min(1, "must be 1 or more")
    .max(SUB_ACCOUNT_MAX_COUNT, `must be at most ${SUB_ACCOUNT_MAX_COUNT}`),
});
export type SubAccountCreateRequest = Camel<z.infer<typeof SubAccountCreateRequestSchema>>;

export const SubAccountCreateResponseSchema = z.object({
  items: z.array(SubAccountSchema),
  success: z.boolean(),
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
