import { z } from "zod";
import { USAGE_MODEL_FIELD, USAGE_NEXT_PAGE_FIELD } from "../assumptions.js";
import type { Camel } from "../casing.js";
import { DateSchema, DecimalStringSchema, KeySchema } from "./common.js";

export const BalanceResponseSchema = z.object({ balance: DecimalStringSchema });
export type Balance = Camel<z.infer<typeof BalanceResponseSchema>>;

/** The continuation token of a usage page: its type is not shown, so a string or a number is taken. */
export const NextPageSchema = z.union([z.string().min(1), z.number()]);

export const UsageSummaryRequestSchema = z
  .object({
    start: DateSchema,
    end: DateSchema,
    key: KeySchema.optional(),
    with_model: z.boolean().optional(),
    with_usage: z.boolean().optional(),
    [USAGE_NEXT_PAGE_FIELD]: NextPageSchema.optional(),
  })
  .refine((r) => r.end >= r.start, { path: ["end"], error: "must be on or after start" });
export type UsageSummaryRequest = Camel<z.infer<typeof UsageSummaryRequestSchema>>;

/** Token usage of one row. Its fields are not shown in the spec: these are the ones the emulator sends. */
export const UsageBlockSchema = z
  .object({
    input_tokens: z.number().int().nonnegative().optional(),
    output_tokens: z.number().int().nonnegative().optional(),
    cache_read_tokens: z.number().int().nonnegative().optional(),
    total_tokens: z.number().int().nonnegative().optional(),
  })
  .loose();

export const UsageRowSchema = z.object({
  date: DateSchema,
  cost: DecimalStringSchema,
  [USAGE_MODEL_FIELD]: z.string().optional(),
  usage: UsageBlockSchema.optional(),
});
export type UsageRow = Camel<z.infer<typeof UsageRowSchema>>;

export const UsageSummaryResponseSchema = z.object({
  items: z.array(UsageRowSchema),
  has_more: z.boolean(),
  next_page: NextPageSchema.nullable(),
});

export const ModelSchema = z.object({
  model: z.string().min(1),
  category: z.string(),
  vendor: z.string(),
  context_window: z.number().int().nonnegative(),
  max_output_tokens: z.number().int().nonnegative(),
  pricing: z
    .object({
      text_input_price: DecimalStringSchema,
      text_output_price: DecimalStringSchema,
      cache_read_rate: z.number(),
    })
    .loose(),
});
export type Model = Camel<z.infer<typeof ModelSchema>>;

export const ModelsResponseSchema = z.object({ models: z.array(ModelSchema) });
