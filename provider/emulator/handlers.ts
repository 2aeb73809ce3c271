import type { z } from "zod";
import { USAGE_HISTORY_DAYS, USAGE_NEXT_PAGE_FIELD, USAGE_PAGE_SIZE } from "../api/assumptions.js";
import type { OPERATIONS, OperationId } from "../api/operations.js";
import { fingerprint, maskKey } from "../api/redact.js";
import { convertModelPricing, KNOWN_SECURITY_FIELDS, KNOWN_SECURITY_PARTS } from "../api/schemas/index.js";
import { MODEL_CATALOGUE, usageRows, type UsageRowsQuery } from "./catalogue.js";
import { ErrorAnswer, invalidField, notFound } from "./errors.js";
import { addDays, utcDate } from "./format.js";
import type { ApiKeyRecord, EmulatorState } from "./state.js";

type RequestOf<K extends OperationId> = z.infer<(typeof OPERATIONS)[K]["request"]>;
type ResponseOf<K extends OperationId> = z.infer<(typeof OPERATIONS)[K]["response"]>;

/** One function per operation: takes the validated request, returns the response body or throws an ErrorAnswer. */
export type Handlers = { [K in OperationId]: (request: RequestOf<K>) => ResponseOf<K> };

const SUB_ACCOUNT_PAGE_SIZE = 10;

/**
 * The restriction this platform has beyond the four parts the spec shows: set in its web console, answered by get
 * and edit, and taken back by create and edit. The package does not know it and must not remove it (docs/decisions.md).
 */
export const PLATFORM_ONLY_RESTRICTIONS: readonly string[] = ["hours"];
/**
 * The fields this platform has inside a part, beyond those the spec shows (`spend_limit.daily`, set in the console
 * beside `monthly`), and those of its own `hours`: taken back by create and edit like the rest.
 */
const PLATFORM_FIELDS: Readonly<Record<string, readonly string[]>> = {
  spend_limit: ["daily"],
  hours: ["from", "to", "zone", "days"],
};
/** A field the console stamps on a restriction it sets and the API refuses as input (`hours.updated_at`). */
const READ_ONLY_FIELD = "updated_at";

/**
 * A security config as a create or edit sent it, refused (400, naming every one) when it holds parts or fields this
 * platform does not have, or a read-only field (`security_config.hours.updated_at: read-only`).
 */
function restrictionsOf(
  config: ApiKeyRecord["security_config"] | undefined,
): ApiKeyRecord["security_config"] | undefined {
  const unknown: string[] = [];
  for (const [name, part] of Object.entries(config ?? {})) {
    if (!KNOWN_SECURITY_PARTS.includes(name) && !PLATFORM_ONLY_RESTRICTIONS.includes(name)) unknown.push(name);
    else if (part !== null && typeof part === "object" && !Array.isArray(part)) {
      const fields = [...(KNOWN_SECURITY_FIELDS[name] ?? []), ...(PLATFORM_FIELDS[name] ?? [])];
      for (const field of Object.keys(part)) {
        if (field === READ_ONLY_FIELD) throw invalidField(["security_config", name, field], "read-only");
        if (!fields.includes(field)) unknown.push(`${name}.${field}`);
      }
    }
  }
  if (unknown.length > 0)
    throw invalidField(["security_config"], `not restrictions this platform has: ${unknown.join(", ")}`);
  return config;
}

/** get and edit answer without the key (spec 2.1). */
function view({ key: _key, ...rest }: ApiKeyRecord): Omit<ApiKeyRecord, "key"> {
  return rest;
}

/**
 * The first entry of a batch that fails: unknown, or listed a second time (the second delete of the same key
 * would find nothing). Batches are all-or-nothing, so the caller rejects the whole batch on it.
 */
function firstBad(
  items: readonly string[],
  exists: (item: string) => boolean,
): { item: string; problem: string } | undefined {
  const seen = new Set<string>();
  for (const item of items) {
    if (!exists(item)) return { item, problem: "does not exist" };
    if (seen.has(item)) return { item, problem: "is listed twice" };
    seen.add(item);
  }
  return undefined;
}

function pageToken(offset: number): string {
  return Buffer.from(`offset:${offset}`).toString("base64url");
}

function pageOffset(token: string | number | undefined): number {
  if (token === undefined) return 0;
  const match = typeof token === "string" ? /^offset:(\d+)$/.exec(Buffer.from(token, "base64url").toString()) : null;
  if (!match) throw invalidField([USAGE_NEXT_PAGE_FIELD], "is not a page token returned by this endpoint");
  return Number(match[1]);
}

type WirePricing = ReturnType<typeof convertModelPricing>[number];

/** `merged-pricing`: the held entries with the factors sent, then the models sent that were not held. */
function mergedPricing(held: readonly WirePricing[], sent: readonly WirePricing[]): WirePricing[] {
  const set = new Map(sent.map((m) => [m.model, m.pricing_factor]));
  const kept = held.map((m) => ({ model: m.model, pricing_factor: set.get(m.model) ?? m.pricing_factor }));
  return [...kept, ...sent.filter((m) => !held.some((h) => h.model === m.model))];
}

/** How the sub-account list answers: a cap on its size, and a test's hook run after each answer is made. */
export interface ListBehaviour {
  subAccountListCap?: number;
  /** How the alias filter matches (readings.ts `alias-filter-prefix`); exactly when not given. */
  aliasMatches?: (filter: string, alias: string) => boolean;
  /** Whether `total` counts every sub-account, whatever the filters (readings.ts `total-unfiltered`). */
  totalIgnoresFilters?: boolean;
  /** Whether a sub-account edit merges its pricing into each sub-account's (readings.ts `merged-pricing`). */
  mergesPricing?: boolean;
  /** Runs after each sub-account list answer is made, before it is sent: a test changes the account here. */
  afterSubAccountList?: (page: number) => void;
  /** The order of each list answer, before it is paged (readings.ts `unstable-ties`); the order of creation when not given. */
  order?: <T extends { created_at: string }>(items: T[]) => T[];
  /** Late visibility (option `lateVisibilityMs`): told of each key or sub-account created, it says whether reads show it yet. */
  lag?: { created(id: string): void; shows(id: string): boolean };
}

/** A key of the state, or the 404 of one it does not hold. */
function existingKey(state: EmulatorState, key: string): ApiKeyRecord {
  const record = state.getKey(key);
  if (!record) throw notFound("key_not_found", `key ${maskKey(key)} does not exist`);
  return record;
}

type ApiKeyOperations = "createApiKey" | "getApiKey" | "editApiKey" | "setApiKeyStatus" | "deleteApiKeys";
type SubAccountOperations = "listSubAccounts" | "createSubAccounts" | "editSubAccounts" | "deleteSubAccounts";

/** The API key group (spec 2). */
function apiKeyHandlers(state: EmulatorState, limits: ListBehaviour): Pick<Handlers, ApiKeyOperations> {
  return {
    createApiKey: (r) => {
      const record = state.createKey(r.alias, restrictionsOf(r.security_config));
      limits.lag?.created(record.key);
      return record;
    },

    getApiKey: (r) => {
      if (limits.lag && !limits.lag.shows(r.key))
        throw notFound("key_not_found", `key ${maskKey(r.key)} does not exist`);
      return view(existingKey(state, r.key));
    },

    editApiKey: (r) => {
      existingKey(state, r.key);
      return view(state.editKey(r.key, r.alias, restrictionsOf(r.security_config))!);
    },

    setApiKeyStatus: (r) => {
      existingKey(state, r.key);
      state.setKeyEnabled(r.key, r.enabled);
      return { enabled: r.enabled };
    },

    deleteApiKeys: (r) => {
      const bad = firstBad(r.keys, (k) => state.hasKey(k));
      if (bad) throw notFound("key_not_found", `key ${maskKey(bad.item)} ${bad.problem}; nothing was deleted`);
      const locked = state.lockedAmong(r.keys);
      if (locked)
        throw new ErrorAnswer(
          400,
          "key_in_use",
          `${locked.named ? `key ${maskKey(locked.key)} is` : "a key of the request is"} in use; nothing was deleted`,
        );
      return { deleted: state.deleteKeys(r.keys) };
    },
  };
}

/** The usage summary (spec 3), paged over rows generated from the keys; `clock` gives "today". */
function usageSummaryHandler(state: EmulatorState, clock: () => number): Handlers["usageSummary"] {
  // Paging asks for the same rows again and again; a year over many keys takes a moment to generate.
  let lastUsage: { query: string; rows: ReturnType<typeof usageRows> } | undefined;
  const cachedUsageRows = (query: UsageRowsQuery) => {
    const id = JSON.stringify(query);
    if (lastUsage?.query !== id) lastUsage = { query: id, rows: usageRows(query) };
    return lastUsage.rows;
  };
  return (r) => {
    const today = utcDate(clock());
    const oldest = addDays(today, -(USAGE_HISTORY_DAYS - 1));
    const range = `the last ${USAGE_HISTORY_DAYS} days, ${oldest} to ${today} (UTC)`;
    if (r.start < oldest || r.start > today) throw invalidField(["start"], `${r.start} is outside ${range}`);
    if (r.end > today) throw invalidField(["end"], `${r.end} is outside ${range}`);
    const keys = r.key === undefined ? state.listKeys() : [existingKey(state, r.key)];
    const rows = cachedUsageRows({
      seeds: keys.map((k) => fingerprint(k.key)),
      start: r.start,
      end: r.end,
      today,
      withModel: r.with_model === true,
      withUsage: r.with_usage === true,
    });
    const offset = pageOffset(r[USAGE_NEXT_PAGE_FIELD]);
    const next = offset + USAGE_PAGE_SIZE;
    const hasMore = next < rows.length;
    return { items: rows.slice(offset, next), has_more: hasMore, next_page: hasMore ? pageToken(next) : null };
  };
}

/** The sub-account group (spec 4). */
function subAccountHandlers(state: EmulatorState, limits: ListBehaviour): Pick<Handlers, SubAccountOperations> {
  return {
    listSubAccounts: (q) => {
      const page = q.page ?? 1;
      const pageSize = q.page_size ?? SUB_ACCOUNT_PAGE_SIZE;
      const matching = (limits.order ?? ((l) => l))(state.listSubAccounts())
        .filter(
          (s) =>
            (q.alias === undefined || (limits.aliasMatches ?? Object.is)(q.alias, s.alias)) &&
            (q.sk === undefined || s.token === q.sk),
        )
        .filter((s) => limits.lag?.shows(s.token) ?? true);
      const size = Math.min(pageSize === -1 ? Infinity : pageSize, limits.subAccountListCap ?? Infinity);
      const items = size === Infinity ? matching : matching.slice((page - 1) * size, page * size);
      const total = limits.totalIgnoresFilters ? state.listSubAccounts().length : matching.length;
      const answer = { items, total, page, pageSize: size === Infinity ? pageSize : size };
      limits.afterSubAccountList?.(page);
      return answer;
    },

    createSubAccounts: (r) => {
      const items = state.createSubAccounts({
        alias: r.alias,
        balance: r.balance,
        // Omitted pricing means no model permission (spec 4.10), not "all models".
        modelPricing: convertModelPricing(r.model_pricing ?? []),
        count: r.count,
      });
      for (const s of items) limits.lag?.created(s.token);
      return { items, success: true };
    },

    editSubAccounts: (r) => {
      const missing = r.sks.find((sk) => !state.hasSubAccount(sk));
      if (missing)
        throw notFound("sub_account_not_found", `sub-account ${maskKey(missing)} does not exist; nothing was changed`);
      const sent = convertModelPricing(r.model_pricing);
      if (!limits.mergesPricing) state.editSubAccounts(r.sks, r.alias, sent);
      else
        for (const sk of new Set(r.sks))
          state.editSubAccounts([sk], r.alias, mergedPricing(state.getSubAccount(sk)!.model_pricing, sent));
      return { success: true };
    },

    deleteSubAccounts: (r) => {
      const bad = firstBad(r.sks, (sk) => state.hasSubAccount(sk));
      if (bad)
        throw notFound("sub_account_not_found", `sub-account ${maskKey(bad.item)} ${bad.problem}; nothing was deleted`);
      state.deleteSubAccounts(r.sks);
      return { success: true };
    },
  };
}

/** The operations' behaviour over a state; `clock` gives "today" for the usage summary. */
export function createHandlers(
  state: EmulatorState,
  clock: () => number = Date.now,
  limits: ListBehaviour = {},
): Handlers {
  return {
    ...apiKeyHandlers(state, limits),
    balance: () => ({ balance: state.balance() }),
    usageSummary: usageSummaryHandler(state, clock),
    models: () => ({ models: structuredClone([...MODEL_CATALOGUE]) }),
    ...subAccountHandlers(state, limits),
  };
}
