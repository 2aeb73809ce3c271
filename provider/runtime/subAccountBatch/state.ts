// What a SubAccountBatch takes (its input schema), what its state holds in each version it was written in (one
// schema each, parsed once where the engine hands a state over: runtime/index.ts), and the functions that build its
// outputs.
import { z } from "zod";
import { fingerprint } from "../../api/redact.js";
import { fromWire, toWire } from "../../api/casing.js";
import {
  compareIds,
  convertModelPricing,
  KeySchema,
  ModelPricingListSchema,
  ModelPricingSchema,
  SubAccountCreateRequestSchema,
  SubAccountSchema,
  type ModelPricing,
  type SubAccount,
} from "../../api/schemas/index.js";
import { AdoptTokensSchema, ConnectionInputSchema } from "../command/index.js";
import { type Props, StateVersions, noKeysIn } from "../engine/index.js";

/** Wire pricing as the platform stores it, in the outputs' spelling: the one conversion rule of spec 2.5 (convertModelPricing, shared with the emulator). */
function storedPricing(wire: Parameters<typeof convertModelPricing>[0]): ModelPricing[] {
  return convertModelPricing(wire).map((m) => ({ model: m.model, pricingFactor: m.pricing_factor }));
}

/** Declared pricing as users write it, validated by the request's schema and converted as the platform stores it. */
const ModelPricingInputSchema = z
  // Omitted or null: no model permitted by the batch itself (an empty list).
  .preprocess((value) => toWire(value ?? []), ModelPricingListSchema)
  .transform(storedPricing);

const request = SubAccountCreateRequestSchema.shape;

/** What a SubAccountBatch takes, as check validates it: one schema, pricing converted to `pricingFactor` only. */
export const SubAccountBatchInputsSchema = z
  .object({
    alias: request.alias,
    balance: request.balance,
    count: request.count,
    modelPricing: ModelPricingInputSchema,
    /** Existing sub-accounts the batch manages instead of creating them (secret). */
    adoptTokens: AdoptTokensSchema,
    connection: ConnectionInputSchema,
    /**
     * Given by the SubAccountBatch class, not by users: the 12 hex digits of the resource's identity that its
     * creates' marked alias carries (subAccountBatch/recovery.ts identityMark), so that the next run finds what a killed `up`
     * made. Absent (an older program, a direct caller): a random mark per create, as before.
     */
    mark: z
      .string()
      .regex(/^[0-9a-f]{12}$/, "must be 12 lower-case hex digits (set by the SubAccountBatch class)")
      .optional(),
  })
  .superRefine(noKeysIn(["alias", "modelPricing"]), { when: () => true })
  .refine((b) => !(typeof b.count === "number" && Array.isArray(b.adoptTokens) && b.count < b.adoptTokens.length), {
    path: ["count"],
    when: () => true,
    error: (issue) =>
      `must be at least the number of adoptTokens (${(issue.input as { adoptTokens: unknown[] }).adoptTokens.length}): every adopted sub-account counts`,
  });

/** Inputs of a SubAccountBatch after check. */
export type SubAccountBatchInputs = z.output<typeof SubAccountBatchInputsSchema>;

/** Pricing as the state keeps it (`pricingFactor` only), checked by the schema the platform's answers are parsed with. */
const StoredPricingSchema = z.array(
  z.preprocess((value) => toWire(value), ModelPricingSchema).transform((wire) => fromWire(wire)),
);

/**
 * One sub-account as the outputs show it (in creation order): the platform's fields, checked by the schema its
 * answers are parsed with (SubAccountSchema).
 */
const StoredSubAccountSchema = z
  .preprocess(
    (value) => toWire(value),
    SubAccountSchema.pick({ id: true, token: true, alias: true, enabled: true, model_pricing: true, created_at: true }),
  )
  .transform((wire) => fromWire(wire));

/** One sub-account as the outputs show it (in creation order): the platform's fields, typed from its schema. */
export type SubAccountView = z.output<typeof StoredSubAccountSchema>;

/**
 * Version 1 of a batch's state (written since 2026-11-25): every input echoed (so diff compares like with like),
 * the sub-accounts held and their tokens. Fields a refresh takes from the platform (alias, pricing) are not held
 * to the rules of a declared input.
 */
const SubAccountBatchStateV1Schema = z.object({
  ...SubAccountBatchInputsSchema.shape,
  alias: z.string(),
  balance: z.number(),
  count: z.number().int().nonnegative(),
  modelPricing: StoredPricingSchema,
  subAccounts: z.array(StoredSubAccountSchema),
  tokens: z.array(KeySchema),
  /**
   * Set only by a create whose answer was lost and whose recovery could not tell what it made: since when
   * sub-accounts it made may exist unrecorded. The next read, update or delete adopts (or deletes) them and drops it.
   */
  unconfirmedSince: z.string().optional(),
  /**
   * With `unconfirmedSince`: the alias that create gave its sub-accounts, marked as its own (subAccountBatch/recovery.ts,
   * markedAlias): the next read, update or delete takes exactly the sub-accounts that carry it.
   */
  unconfirmedAlias: z.string().optional(),
  /**
   * Written by earlier versions (before `unconfirmedAlias`), with `unconfirmedSince`, when that create replaced a
   * batch: the ids of the sub-accounts with this alias that existed before it (a replaced twin's): never adopted.
   */
  unconfirmedExcept: z.array(z.number()).optional(),
  /** The shape version of this state. */
  stateVersion: z.number().optional(),
});

/**
 * Version 0: states written before versions were recorded (0.1.0 up to 2026-11-25), the fixtures of
 * tests/e2e/fixtures/upgrade. They may hold pricing in the deprecated or wire spelling (converted as the platform
 * stores it; absent is none) and lack `subAccounts` and `tokens`.
 */
const SubAccountBatchStateV0Schema = SubAccountBatchStateV1Schema.omit({ stateVersion: true }).extend({
  modelPricing: ModelPricingInputSchema,
  subAccounts: z.array(StoredSubAccountSchema).optional(),
  tokens: z.array(KeySchema).optional(),
});

/** Every version of a batch's state, and the steps between them (engine/stateVersions.ts). */
export const BATCH_STATE = StateVersions.first("SubAccountBatch", SubAccountBatchStateV0Schema).then(
  SubAccountBatchStateV1Schema,
  (v0) => {
    const subAccounts = v0.subAccounts ?? [];
    // A state without tokens still names its sub-accounts: their tokens, never none.
    return { ...v0, subAccounts, tokens: v0.tokens ?? subAccounts.map((s) => s.token) };
  },
);

/** The version of the state this package writes. */
export const BATCH_STATE_VERSION = BATCH_STATE.current;

/** What the state holds, in today's shape. */
export type SubAccountBatchOutputs = z.output<typeof SubAccountBatchStateV1Schema>;

/** Pricing as any version wrote it in the state, as the platform stores it (storedPricing; check converts inputs the same way). */
export function normalizeModelPricing(value: unknown): ModelPricing[] {
  return Array.isArray(value) ? ModelPricingInputSchema.parse(value) : [];
}

/** A sub-account of the platform's answer as the outputs show it. */
export function view(s: SubAccount): SubAccountView {
  return {
    id: s.id,
    token: s.token,
    alias: s.alias,
    enabled: s.enabled,
    modelPricing: s.modelPricing.map((m) => ({ model: m.model, pricingFactor: m.pricingFactor })),
    createdAt: s.createdAt,
  };
}

/** A batch's resource id: a fingerprint of its first token (of its alias while it holds none), never a token. */
export const batchIdOf = (firstToken: string | undefined, alias: string): string =>
  `sab-${fingerprint(firstToken ?? alias)}`;

/** Sub-accounts in creation order. */
export const byId = (a: SubAccountView, b: SubAccountView): number => compareIds(a.id, b.id);

/**
 * The outputs of a batch. `adoptTokens` is the adopted set (see nextAdoption), kept whatever the input says later:
 * an adopted sub-account is owned like a created one, so one deleted elsewhere is recreated to reach `count`.
 */
export function outputsOf(
  inputs: SubAccountBatchInputs,
  subAccounts: SubAccountView[],
  adopted: readonly string[],
): SubAccountBatchOutputs {
  const sorted = [...subAccounts].sort(byId);
  const out: SubAccountBatchOutputs = {
    alias: inputs.alias,
    balance: inputs.balance,
    count: sorted.length,
    modelPricing: inputs.modelPricing,
    subAccounts: sorted,
    tokens: sorted.map((s) => s.token),
    stateVersion: BATCH_STATE_VERSION,
  };
  if (adopted.length > 0) out.adoptTokens = [...adopted];
  if (inputs.connection !== undefined) out.connection = inputs.connection;
  if (inputs.mark !== undefined) out.mark = inputs.mark;
  return out;
}

/** The fields a lost create's recovery reads (subAccountBatch/recovery.ts, listUnconfirmed). */
const LostCreateSchema = SubAccountBatchStateV1Schema.pick({
  alias: true,
  balance: true,
  unconfirmedSince: true,
  unconfirmedAlias: true,
  unconfirmedExcept: true,
});

/**
 * What a delete can identify in a batch state that does not parse: the sub-account keys its `tokens` and
 * `subAccounts[].token` name, and how many things it names that give none (an entry that is no key, a list that
 * is no list, or neither list at all); its connection, and its lost create (null when it has one that does not read).
 */
export function deletableOf(state: Props): {
  tokens: string[];
  unidentified: number;
  connection: ReturnType<typeof ConnectionInputSchema.safeParse>;
  lostCreate: z.output<typeof LostCreateSchema> | null | undefined;
} {
  const tokens = new Set<string>();
  let unidentified = state.tokens === undefined && state.subAccounts === undefined ? 1 : 0;
  const each = (list: unknown, tokenOf: (entry: unknown) => string | undefined): void => {
    if (list === undefined) return;
    if (!Array.isArray(list)) unidentified += 1;
    else
      for (const entry of list) {
        const token = tokenOf(entry);
        if (token === undefined) unidentified += 1;
        else tokens.add(token);
      }
  };
  each(state.tokens, (t) => KeySchema.safeParse(t).data);
  each(state.subAccounts, (s) => z.object({ token: KeySchema }).safeParse(s).data?.token);
  const lost = LostCreateSchema.safeParse(state);
  return {
    tokens: [...tokens],
    unidentified,
    connection: ConnectionInputSchema.safeParse(state.connection),
    lostCreate: state.unconfirmedSince === undefined ? undefined : lost.success ? lost.data : null,
  };
}
