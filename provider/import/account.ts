import type { LlmAccountsClient } from "../client/client.js";
import { AuthenticationError, LlmAccountsError, NotFoundError } from "../client/errors.js";
import { SUB_ACCOUNT_MAX_COUNT } from "../api/assumptions.js";
import { maskKey, redact } from "../api/redact.js";
import { KeySchema, type ModelPricing, type SecurityConfig, type SubAccount } from "../api/schemas/index.js";
import { apiKey, subAccountBatch } from "../runtime/index.js";
import type { CheckFailure } from "../runtime/values.js";
import { canonical } from "../runtime/values.js";

/** An API key as the generated program declares it; `key` is the secret that goes to the stack config. */
export interface ImportedKey {
  name: string;
  key: string;
  alias: string;
  enabled: boolean;
  securityConfig: SecurityConfig;
}

/**
 * At most 100 sub-accounts sharing alias and pricing: one SubAccountBatch. It adopts them by `ids`, which are not
 * secret; `tokens` never leave the process (the program finds them again with one list).
 */
export interface ImportedBatch {
  name: string;
  alias: string;
  modelPricing: ModelPricing[];
  /** The highest live balance: what sub-accounts the batch creates later start with. */
  balance: number;
  ids: number[];
  tokens: string[];
}

/** What an account holds, as the generated program declares it, and what it could not declare (masked). */
export interface ImportedAccount {
  keys: ImportedKey[];
  batches: ImportedBatch[];
  /** One line per object left out: what it is (masked) and why the package's own check refuses it. */
  leftOut: string[];
}

/** An error of the user's making (credentials, files, keys): shown as is, without the usage text. */
export class ImportError extends Error {}

/** Progress of a long read, for stderr. */
export type Progress = (done: number, total: number) => void;

/** API key reads in flight at once: the client's limiter paces them to the platform's rate (600 a minute). */
const KEY_READS_AT_ONCE = 32;

/**
 * The API keys of a key file's text: one per line; blank lines and `#` comments skipped, repeats kept once.
 * A line that is not an API key fails naming its line number, masked (it may be a secret of another kind).
 */
export function parseKeyList(text: string, source: string): string[] {
  const keys = new Set<string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    if (!KeySchema.safeParse(line).success || line.startsWith("sk-admin-")) {
      // Echo nothing of a line that is not a key: it may be a secret of another kind.
      const admin = line.startsWith("sk-admin-") ? `: this is an admin key (${maskKey(line)})` : "";
      throw new ImportError(`${source}, line ${i + 1}: not an API key (sk-...)${admin}`);
    }
    keys.add(line);
  });
  return [...keys];
}

/** A readable resource name from an alias: lower case, runs of other characters as one dash. */
export function slug(alias: string, fallback: string): string {
  const s = alias.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 48);
  return s === "" ? fallback : s;
}

/** Names in order, each unique: a repeat gets the first free `-2`, `-3`, ... so that reruns name alike. */
function uniqueNames(bases: string[]): string[] {
  const taken = new Set<string>();
  return bases.map((base) => {
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
    taken.add(name);
    return name;
  });
}

function credentialError(err: unknown, which: string): never {
  if (err instanceof AuthenticationError) {
    throw new ImportError(`the platform refused the ${which} (401): check it, and the base URL (${err.message})`);
  }
  throw err;
}

/** Why the package's own check refuses a declaration, masked: empty when the program may declare it. */
function refusals(failures: CheckFailure[]): string {
  return failures.map((f) => redact(`${f.property}: ${f.reason}`)).join("; ");
}

/** Runs `read` over items with at most `width` at once, reporting each answer; answers in item order. */
async function pool<T, R>(items: T[], width: number, read: (item: T, i: number) => Promise<R>, onAnswer: () => void): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await read(items[i], i);
      onAnswer();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}

/** `ids 3, 4, 5` for a message, at most ten of them. */
function idList(ids: number[]): string {
  const shown = ids.slice(0, 10).join(", ");
  return ids.length > 10 ? `ids ${shown} and ${ids.length - 10} more` : `id${ids.length > 1 ? "s" : ""} ${shown}`;
}

/**
 * Sub-accounts grouped by alias and pricing, ordered by their oldest member, split into batches of at most the
 * package's largest `count`. A sub-account the package's check refuses as it is (an alias that is a key, empty,
 * with outer spaces or too long) is left out and named by id: declared otherwise, the first `up` would write.
 */
async function batchesOf(subAccounts: SubAccount[], leftOut: string[]): Promise<ImportedBatch[]> {
  const batches: ImportedBatch[] = [];
  /** The batch still filling, per alias and pricing. */
  const open = new Map<string, ImportedBatch>();
  const refused = new Map<string, number[]>();
  for (const s of [...subAccounts].sort((a, b) => a.id - b.id)) {
    const modelPricing = s.modelPricing.map((m) => ({ model: m.model, pricingFactor: m.pricingFactor }));
    const declared = { alias: s.alias, balance: Number(s.balance), count: 1, modelPricing, adoptTokens: [s.token] };
    const why = refusals((await subAccountBatch.check({}, declared)).failures);
    if (why) {
      refused.set(why, [...(refused.get(why) ?? []), s.id]);
      continue;
    }
    const group = batchGroupOf(s);
    let batch = open.get(group);
    if (!batch || batch.ids.length === SUB_ACCOUNT_MAX_COUNT) {
      batch = { name: "", alias: s.alias, modelPricing, balance: 0, ids: [], tokens: [] };
      batches.push(batch);
      open.set(group, batch);
    }
    batch.ids.push(s.id);
    batch.tokens.push(s.token);
    batch.balance = Math.max(batch.balance, declared.balance);
  }
  for (const [why, ids] of refused) leftOut.push(`sub-account ${idList(ids)}: ${why}`);
  uniqueNames(batches.map((b) => slug(b.alias, "sub-accounts"))).forEach((name, i) => (batches[i].name = name));
  return batches;
}

/** Which batch a sub-account belongs to: sub-accounts of one alias and one pricing are declared together. */
export function batchGroupOf(s: Pick<SubAccount, "alias" | "modelPricing">): string {
  return canonical([s.alias, s.modelPricing.map((m) => ({ model: m.model, pricingFactor: m.pricingFactor }))]);
}

/**
 * Sub-accounts grouped as `import` groups them (batchGroupOf), for `llm-accounts audit`: each group in id order,
 * groups ordered by their oldest member, so that the same account always groups the same way.
 */
export function groupSubAccounts<S extends Pick<SubAccount, "id" | "alias" | "modelPricing">>(subAccounts: readonly S[]): S[][] {
  const groups = new Map<string, S[]>();
  for (const s of [...subAccounts].sort((a, b) => a.id - b.id)) {
    const id = batchGroupOf(s);
    const group = groups.get(id);
    if (group) group.push(s);
    else groups.set(id, [s]);
  }
  return [...groups.values()];
}

/**
 * Reads the account: one list of every sub-account, one get per API key, `KEY_READS_AT_ONCE` at a time within the
 * client's limiter. Each object is checked as the generated program will declare it, by the package's own check:
 * what it refuses is left out and named, masked. The same account always gives the same program.
 */
export async function readAccount(client: LlmAccountsClient, apiKeys: string[], progress: Progress = () => {}): Promise<ImportedAccount> {
  const subAccounts = await client.subAccounts.list().catch((err: unknown) => credentialError(err, "main account key (LLM_ACCOUNTS_ACCOUNT_KEY)"));
  const leftOut: string[] = [];
  const batches = await batchesOf(subAccounts, leftOut);

  let answered = 0;
  const live = await pool(
    apiKeys,
    KEY_READS_AT_ONCE,
    async (key, i) => {
      try {
        return await client.apiKeys.get(key);
      } catch (err) {
        if (err instanceof NotFoundError) throw new ImportError(`API key ${i + 1} of the list (${maskKey(key)}) does not exist on the platform`);
        if (err instanceof LlmAccountsError) credentialError(err, "admin key (LLM_ACCOUNTS_ADMIN_KEY)");
        throw err;
      }
    },
    () => progress(++answered, apiKeys.length),
  );
  const keys: ImportedKey[] = [];
  for (const [i, key] of apiKeys.entries()) {
    const declared = { alias: live[i].alias, enabled: live[i].enabled, securityConfig: live[i].securityConfig, adoptKey: key };
    const { inputs, failures } = await apiKey.check({}, declared);
    if (failures.length > 0) {
      leftOut.push(`API key ${maskKey(key)}: ${refusals(failures)}`);
      continue;
    }
    keys.push({ name: "", key, alias: inputs.alias, enabled: inputs.enabled, securityConfig: inputs.securityConfig });
  }
  uniqueNames(keys.map((k) => slug(k.alias, "api-key"))).forEach((name, i) => (keys[i].name = name));
  return { keys, batches, leftOut };
}
