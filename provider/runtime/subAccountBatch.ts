import { z } from "zod";
import { toWire } from "../api/casing.js";
import { CLOCK_SKEW_MS } from "../api/assumptions.js";
import { LlmAccountsError, NotFoundError, ResponseValidationError } from "../client/errors.js";
import { fingerprint } from "../api/redact.js";
import {
  convertModelPricing,
  ModelPricingListSchema,
  SubAccountCreateRequestSchema,
  type ModelPricing,
  type SubAccount,
} from "../api/schemas/index.js";
import type { SubAccountsApi } from "../client/subAccounts.js";
import { adoptedTokens, AdoptTokensSchema, findAdopted, sameTokenSet } from "./adoption.js";
import { clientFor, connectionDiff, ConnectionInputSchema } from "./connection.js";
import type { Props, ReadOutcome } from "./contract.js";
import { sharedListFor } from "./sharedList.js";
import { checkInputs, containsUnknown, noKeysIn, same, type CheckFailure } from "./values.js";

/** Declared pricing as users write it, validated by the request's schema and converted as the platform stores it. */
const ModelPricingInputSchema = z
  // Omitted or null: no model permitted by the batch itself (an empty list).
  .preprocess((value) => toWire(value ?? []), ModelPricingListSchema)
  .transform((items) => convertModelPricing(items).map((m): ModelPricing => ({ model: m.model, pricingFactor: m.pricing_factor })));

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

/** One sub-account as the outputs show it (in creation order): the platform's fields, typed from its schema. */
export type SubAccountView = Pick<SubAccount, "id" | "token" | "alias" | "enabled" | "modelPricing" | "createdAt">;

export type SubAccountBatchOutputs = SubAccountBatchInputs & {
  subAccounts: SubAccountView[];
  tokens: string[];
  /**
   * Set only by a create whose answer and recovery list were both lost: since when sub-accounts with this
   * alias, balance and pricing may exist unrecorded. The next read or update adopts them and drops it.
   */
  unconfirmedSince?: string;
};

/**
 * Declared pricing as the platform stores it: the one conversion rule of spec 2.5 (`convertModelPricing`,
 * shared with the emulator), applied to input that check() has validated.
 */
export function normalizeModelPricing(value: unknown): ModelPricing[] {
  if (!Array.isArray(value)) return [];
  const wire = toWire(value) as Parameters<typeof convertModelPricing>[0];
  return convertModelPricing(wire).map((m) => ({ model: m.model, pricingFactor: m.pricing_factor }));
}

function view(s: SubAccount): SubAccountView {
  return {
    id: s.id,
    token: s.token,
    alias: s.alias,
    enabled: s.enabled,
    modelPricing: s.modelPricing.map((m) => ({ model: m.model, pricingFactor: m.pricingFactor })),
    createdAt: s.createdAt,
  };
}

function outputsOf(inputs: SubAccountBatchInputs, subAccounts: SubAccountView[]): SubAccountBatchOutputs {
  const sorted = [...subAccounts].sort((a, b) => a.id - b.id);
  const out: SubAccountBatchOutputs = {
    alias: inputs.alias,
    balance: inputs.balance,
    count: sorted.length,
    modelPricing: normalizeModelPricing(inputs.modelPricing),
    subAccounts: sorted,
    tokens: sorted.map((s) => s.token),
  };
  if (inputs.adoptTokens !== undefined) out.adoptTokens = inputs.adoptTokens;
  if (inputs.connection !== undefined) out.connection = inputs.connection;
  return out;
}

/** check: every field validated by one schema, failures named by property path; deprecated pricing converted. */
export async function check(_olds: Props, news: Props): Promise<{ inputs: SubAccountBatchInputs; failures: CheckFailure[] }> {
  return checkInputs(SubAccountBatchInputsSchema, news);
}

/**
 * diff: balance (which the API cannot change after creation) or another platform: replacement. A batch that
 * adopts is never replaced for its balance or its `adoptTokens`: the replacement's create would adopt the
 * same sub-accounts that the old batch's delete then removes. Its balance applies to sub-accounts it creates.
 */
export async function diff(_id: string, olds: SubAccountBatchOutputs, news: SubAccountBatchInputs): Promise<{ changes: boolean; replaces: string[]; deleteBeforeReplace: boolean }> {
  const replaces: string[] = [];
  const adoptUnknown = containsUnknown(news.adoptTokens);
  const adopting = adoptUnknown || adoptedTokens(olds).length > 0 || adoptedTokens(news).length > 0;
  if (olds.balance !== news.balance && !adopting) replaces.push("balance");
  const connection = connectionDiff(olds, news);
  if (connection.replace) replaces.push("connection");
  const changed =
    replaces.length > 0 ||
    olds.alias !== news.alias ||
    olds.balance !== news.balance ||
    olds.count !== news.count ||
    adoptUnknown ||
    !sameTokenSet(adoptedTokens(olds), adoptedTokens(news)) ||
    !same(normalizeModelPricing(olds.modelPricing), normalizeModelPricing(news.modelPricing)) ||
    connection.changed;
  return { changes: changed, replaces, deleteBeforeReplace: false };
}

/**
 * True when a listed sub-account (found by alias) can be what a create request made: its balance, which
 * nothing can change afterwards and which tells a replaced twin apart. Pricing can be edited in the console.
 */
function madeBy(request: { balance: number }, s: SubAccount): boolean {
  return Number(s.balance) === request.balance;
}

/** How far the platform's clock may be behind ours when we look for what a lost create made. */
/** What to do about sub-accounts a lost create may have made: the runtime looks again at the next run. */
function lostSubAccountsAdvice(alias: string): string {
  return `List sub-accounts with alias ${JSON.stringify(alias)} (getSubAccounts({ alias })) to see them; the next run looks for them again and adopts what this create made`;
}

/** A create whose answer was lost and whose recovery list failed too: sub-accounts may exist unrecorded. */
class UnconfirmedCreateError extends LlmAccountsError {
  constructor(
    message: string,
    operation: string | undefined,
    /** When the create was sent (our clock). */
    readonly since: number,
  ) {
    super(message, { operation, mayHaveSucceeded: true });
  }
}

/**
 * The error the engine records as created-but-failed (an id and properties): the state keeps what is known
 * plus `unconfirmedSince`, so that the next read or update finds what the lost create made instead of
 * leaving it orphaned.
 */
function keepUnconfirmed(err: unknown, id: string, inputs: SubAccountBatchInputs, current: SubAccountView[]): unknown {
  if (!(err instanceof UnconfirmedCreateError)) return err;
  const properties: SubAccountBatchOutputs = { ...outputsOf(inputs, current), unconfirmedSince: new Date(err.since).toISOString() };
  // Not enumerable: JSON.stringify(error) must not show the tokens.
  Object.defineProperty(err, "id", { value: id, enumerable: false });
  Object.defineProperty(err, "properties", { value: properties, enumerable: false });
  Object.defineProperty(err, "reasons", { value: [err.message], enumerable: false });
  return err;
}

/** The listed sub-accounts that the lost create recorded in `unconfirmedSince` may have made. */
function unconfirmedAmong(old: SubAccountBatchOutputs, listed: SubAccount[], known: ReadonlySet<string>): SubAccountView[] {
  if (!old.unconfirmedSince) return [];
  const since = Date.parse(old.unconfirmedSince) - CLOCK_SKEW_MS;
  return listed.filter((s) => s.alias === old.alias && !known.has(s.token) && Date.parse(s.createdAt) >= since && madeBy(old, s)).map(view);
}

/**
 * One batch create. If the answer is lost (the create may have happened), the sub-accounts are found by
 * alias and adopted instead of being created twice: the sub-account group can list, unlike API keys.
 */
async function createBatch(api: SubAccountsApi, inputs: SubAccountBatchInputs, count: number, known: ReadonlySet<string>): Promise<SubAccountView[]> {
  const request = { alias: inputs.alias, balance: inputs.balance, modelPricing: normalizeModelPricing(inputs.modelPricing), count };
  const startedAt = Date.now();
  try {
    return (await api.create(request)).map(view);
  } catch (err) {
    if (!(err instanceof LlmAccountsError) || !err.mayHaveSucceeded) throw err;
    let listed: SubAccount[];
    try {
      listed = await api.list({ alias: inputs.alias });
    } catch (listErr) {
      // Without the list nobody knows whether the create happened: keep the create's warning, not just the list's error.
      throw new UnconfirmedCreateError(
        `${err.message}; looking for sub-accounts with alias "${inputs.alias}" failed too: ${(listErr as Error).message}`,
        err.operation,
        startedAt,
      ).withAdvice(lostSubAccountsAdvice(inputs.alias));
    }
    // Same alias is not enough: a replaced twin (another balance) may carry it too.
    const found = listed
      .filter((s) => !known.has(s.token) && Date.parse(s.createdAt) >= startedAt - CLOCK_SKEW_MS && madeBy(request, s))
      .sort((a, b) => a.id - b.id);
    if (found.length === count) return found.map(view);
    if (found.length === 0) {
      // Nothing was created: the request did not take effect, so sending it again cannot make a duplicate.
      try {
        return (await api.create(request)).map(view);
      } catch (again) {
        // Its answer may be lost too: then the next run looks again.
        if (again instanceof LlmAccountsError && again.mayHaveSucceeded) {
          throw new UnconfirmedCreateError(again.message, again.operation, startedAt).withAdvice(lostSubAccountsAdvice(inputs.alias));
        }
        throw again;
      }
    }
    throw new UnconfirmedCreateError(
      `the sub-account create may have partly happened: ${found.length} of ${count} new sub-accounts with alias "${inputs.alias}" were found; ` +
        `re-run: the next run adopts them and creates the rest`,
      err.operation,
      startedAt,
    );
  }
}

/** Brings adopted sub-accounts to the declared alias and pricing with one edit of those that differ. */
async function align(api: SubAccountsApi, inputs: SubAccountBatchInputs, subAccounts: SubAccountView[]): Promise<SubAccountView[]> {
  const pricing = normalizeModelPricing(inputs.modelPricing);
  const stale = subAccounts.filter((s) => s.alias !== inputs.alias || !same(s.modelPricing, pricing));
  if (stale.length === 0) return subAccounts;
  await api.edit({ sks: stale.map((s) => s.token), alias: inputs.alias, modelPricing: pricing });
  return subAccounts.map((s) => ({ ...s, alias: inputs.alias, modelPricing: pricing }));
}

/**
 * create: one batch create. With `adoptTokens`: one list verifies every token before anything is written,
 * one edit aligns those whose alias or pricing differ, one create makes the rest of `count`.
 */
export async function create(inputs: SubAccountBatchInputs): Promise<{ id: string; outs: SubAccountBatchOutputs }> {
  const api = clientFor(inputs.connection).subAccounts;
  const adopt = adoptedTokens(inputs);
  const adopted = await align(api, inputs, (await findAdopted(api, adopt, adopt)).map(view));
  let created: SubAccountView[] = [];
  if (inputs.count > adopted.length) {
    try {
      created = await createBatch(api, inputs, inputs.count - adopted.length, new Set(adopt));
    } catch (err) {
      const first = [...adopted].sort((a, b) => a.id - b.id)[0]?.token;
      throw keepUnconfirmed(err, `sab-${fingerprint(first ?? inputs.alias)}`, inputs, adopted);
    }
  }
  const outs = outputsOf(inputs, [...adopted, ...created]);
  return { id: `sab-${fingerprint(outs.tokens[0] ?? inputs.alias)}`, outs };
}

/**
 * update: alias or pricing changed: one edit of every sub-account kept; count up: one create of the
 * difference; count down: one delete of the newest surplus, never of an adopted sub-account. Tokens added to
 * `adoptTokens` are verified with one list and adopted; tokens removed from it are released: they leave the
 * batch and stay on the platform untouched (another batch may adopt them in the same deployment).
 */
export async function update(id: string, old: SubAccountBatchOutputs, inputs: SubAccountBatchInputs): Promise<{ outs: SubAccountBatchOutputs }> {
  const api = clientFor(inputs.connection).subAccounts;
  const adopt = adoptedTokens(inputs);
  const keep = new Set(adopt);
  const released = new Set(adoptedTokens(old).filter((t) => !keep.has(t)));
  let current = (old.subAccounts ?? []).filter((s) => !released.has(s.token));
  const held = new Set(current.map((s) => s.token));
  const added = await findAdopted(api, adopt, adopt.filter((t) => !held.has(t)));
  current = [...current, ...added.map(view)].sort((a, b) => a.id - b.id);
  const pricing = normalizeModelPricing(inputs.modelPricing);
  if (old.unconfirmedSince) {
    const listed = await api.list({ alias: old.alias });
    current = [...current, ...unconfirmedAmong(old, listed, new Set(current.map((s) => s.token)))].sort((a, b) => a.id - b.id);
  }

  if (inputs.count < current.length) {
    const deletable = current.filter((s) => !keep.has(s.token));
    const surplus = new Set(deletable.slice(deletable.length - (current.length - inputs.count)).map((s) => s.token));
    await deleteTokens(api, [...surplus]);
    current = current.filter((s) => !surplus.has(s.token));
  }
  const stale = current.filter((s) => s.alias !== inputs.alias || !same(s.modelPricing, pricing));
  if (stale.length > 0) {
    await api.edit({ sks: current.map((s) => s.token), alias: inputs.alias, modelPricing: pricing });
    current = current.map((s) => ({ ...s, alias: inputs.alias, modelPricing: pricing }));
  }
  if (inputs.count > current.length) {
    try {
      const made = await createBatch(api, inputs, inputs.count - current.length, new Set([...current.map((s) => s.token), ...released]));
      current = [...current, ...made];
    } catch (err) {
      throw keepUnconfirmed(err, id, inputs, current);
    }
  }
  return { outs: outputsOf(inputs, current) };
}

/**
 * read (refresh): one list call, shared with the other reads of the command (sharedList.ts). Sub-accounts deleted elsewhere drop out; alias and pricing drift show. The
 * inputs returned are the platform's values, so that a preview after a refresh shows drift as `old => new`.
 */
export async function read(id: string, old: SubAccountBatchOutputs): Promise<ReadOutcome<SubAccountBatchInputs, SubAccountBatchOutputs>> {
  const api = clientFor(old.connection).subAccounts;
  // One list of the whole account, shared with the other reads of the command: it finds our sub-accounts even
  // when their alias was changed elsewhere, and what a create whose answer was lost made.
  const ours = new Set(old.tokens ?? []);
  const { all, byToken } = await sharedListFor(api).snapshot();
  const live = [...(old.tokens ?? []).flatMap((t) => byToken.get(t) ?? []).map(view), ...unconfirmedAmong(old, all, ours)];
  if (live.length === 0) return { id: "", props: {} };
  const drifted = live.find((s) => s.alias !== old.alias || !same(s.modelPricing, normalizeModelPricing(old.modelPricing)));
  const inputs: SubAccountBatchInputs = {
    ...old,
    alias: drifted?.alias ?? old.alias,
    modelPricing: drifted?.modelPricing ?? normalizeModelPricing(old.modelPricing),
  };
  const outs = outputsOf(inputs, live);
  const liveInputs: SubAccountBatchInputs = { alias: outs.alias, balance: outs.balance, count: outs.count, modelPricing: outs.modelPricing };
  if (old.adoptTokens !== undefined) liveInputs.adoptTokens = old.adoptTokens;
  if (old.connection !== undefined) liveInputs.connection = old.connection;
  return { id, props: outs, inputs: liveInputs };
}

/**
 * Deletes tokens in one call. The platform rejects the whole batch when a token is gone already: then one
 * list finds those that remain, and one more call deletes them.
 */
async function deleteTokens(api: SubAccountsApi, tokens: string[]): Promise<void> {
  if (tokens.length === 0) return;
  try {
    await api.delete(tokens);
  } catch (err) {
    // A 2xx whose body could not be read: the platform did delete them.
    if (err instanceof ResponseValidationError) return;
    if (!(err instanceof NotFoundError)) throw err;
    const wanted = new Set(tokens);
    const remaining = (await api.list()).filter((s) => wanted.has(s.token)).map((s) => s.token);
    if (remaining.length > 0) await api.delete(remaining);
  }
}

/** delete: one batch delete of every sub-account of the batch (after one list when a create's answer was lost). */
export async function remove(_id: string, old: SubAccountBatchOutputs): Promise<void> {
  const api = clientFor(old.connection).subAccounts;
  const tokens = old.tokens ?? [];
  // What a lost create may have made goes too: nobody else knows of it.
  const unconfirmed = old.unconfirmedSince ? unconfirmedAmong(old, await api.list({ alias: old.alias }), new Set(tokens)) : [];
  await deleteTokens(api, [...tokens, ...unconfirmed.map((s) => s.token)]);
}
