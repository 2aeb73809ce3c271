import { z } from "zod";
import { USAGE_MODEL_FIELD, USAGE_NEXT_PAGE_FIELD } from "../assumptions.js";
import type { Camel } from "../casing.js";
import { AnswerDecimalSchema, AnswerIntegerSchema, AnswerNumberSchema } from "./answers.js";
import { DateSchema, KeySchema } from "./common.js";

export const BalanceResponseSchema = z.object({ balance: AnswerDecimalSchema });
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
    input_tokens: AnswerIntegerSchema.optional(),
    output_tokens: AnswerIntegerSchema.optional(),
    cache_read_tokens: AnswerIntegerSchema.optional(),
    total_tokens: AnswerIntegerSchema.optional(),
  })
  .loose();

export const UsageRowSchema = z.object({
  date: DateSchema,
  cost: AnswerDecimalSchema,
  [USAGE_MODEL_FIELD]: z.string().optional(),
  usage: UsageBlockSchema.optional(),
});
export type UsageRow = Camel<z.infer<typeof UsageRowSchema>>;

/**
 * A usage page (spec 4.7): `items`, `has_more` and `next_page`. Either of the two paging fields may be left out by a
 * platform: more follow when `has_more` is true, or (without it) when `next_page` is given.
 */
export const UsageSummaryResponseSchema = z.object({
  items: z
    .array(UsageRowSchema)
    .nullish()
    .transform((l) => l ?? []),
  has_more: z.boolean().optional(),
  next_page: z.union([NextPageSchema, z.literal("")]).nullish(),
});

export const ModelSchema = z.object({
  model: z.string().min(1),
  // Shown, filtered on, never decided on: a platform that leaves one out answers "".
  category: z
    .string()
    .nullish()
    .transform((v) => v ?? ""),
  vendor: z
    .string()
    .nullish()
    .transform((v) => v ?? ""),
  context_window: AnswerIntegerSchema,
  max_output_tokens: AnswerIntegerSchema,
  pricing: z
    .object({
      text_input_price: AnswerDecimalSchema,
      text_output_price: AnswerDecimalSchema,
      cache_read_rate: AnswerNumberSchema,
    })
    .loose(),
});
export type Model = Camel<z.infer<typeof ModelSchema>>;

export const ModelsResponseSchema = z.object({ models: z.array(ModelSchema) });
