import type { LlmAccountsClient } from "../client/client.js";
import { AuthenticationError, LlmAccountsError, NotFoundError } from "../client/errors.js";
import { maskKey } from "../api/redact.js";
import { KeySchema, type ModelPricing, type SecurityConfig } from "../api/schemas/index.js";
import { normalizeSecurityConfig } from "../runtime/apiKey.js";
import { canonical } from "../runtime/values.js";

/** An API key as the generated program declares it; `key` is the secret that goes to the stack config. */
export interface ImportedKey {
  name: string;
  key: string;
  alias: string;
  enabled: boolean;
  securityConfig: SecurityConfig;
}

/** Sub-accounts sharing alias and pricing: one SubAccountBatch; `tokens` go to the stack config. */
export interface ImportedBatch {
  name: string;
  alias: string;
  modelPricing: ModelPricing[];
  /** The highest live balance: what sub-accounts the batch creates later start with. */
  balance: number;
  tokens: string[];
}

/** What an account holds, as the generated program declares it. */
export interface ImportedAccount {
  keys: ImportedKey[];
  batches: ImportedBatch[];
}

/** An error of the user's making (credentials, files, keys): shown as is, without the usage text. */
export class ImportError extends Error {}

/**
 * The API keys of a key file's text: one per line; blank lines and `#` comments skipped, repeats kept once.
 * A line that is not an API key fails naming its line number, masked (it may be a secret of another kind).
 */
export function parseKeyList(text: string, source: string): string[] {
  const keys: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    if (!KeySchema.safeParse(line).success || line.startsWith("sk-admin-")) {
      // Echo nothing of a line that is not a key: it may be a secret of another kind.
      const admin = line.startsWith("sk-admin-") ? `: this is an admin key (${maskKey(line)})` : "";
      throw new ImportError(`${source}, line ${i + 1}: not an API key (sk-...)${admin}`);
    }
    if (!keys.includes(line)) keys.push(line);
  });
  return keys;
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

/**
 * Reads the account: one list of every sub-account, one get per API key. Sub-accounts are grouped by alias and
 * pricing, ordered by their oldest member, so that the same account always gives the same program.
 */
export async function readAccount(client: LlmAccountsClient, apiKeys: string[]): Promise<ImportedAccount> {
  const subAccounts = await client.subAccounts.list().catch((err: unknown) => credentialError(err, "main account key (LLM_ACCOUNTS_ACCOUNT_KEY)"));
  const groups = new Map<string, ImportedBatch>();
  for (const s of [...subAccounts].sort((a, b) => a.id - b.id)) {
    const modelPricing = s.modelPricing.map((m) => ({ model: m.model, pricingFactor: m.pricingFactor }));
    const id = canonical([s.alias, modelPricing]);
    let group = groups.get(id);
    if (!group) {
      group = { name: "", alias: s.alias, modelPricing, balance: 0, tokens: [] };
      groups.set(id, group);
    }
    group.tokens.push(s.token);
    group.balance = Math.max(group.balance, Number(s.balance));
  }
  const batches = [...groups.values()];
  uniqueNames(batches.map((b) => slug(b.alias, "sub-accounts"))).forEach((name, i) => (batches[i].name = name));

  const keys: ImportedKey[] = [];
  for (const [i, key] of apiKeys.entries()) {
    try {
      const live = await client.apiKeys.get(key);
      keys.push({ name: "", key, alias: live.alias, enabled: live.enabled, securityConfig: normalizeSecurityConfig(live.securityConfig) });
    } catch (err) {
      if (err instanceof NotFoundError) throw new ImportError(`API key ${i + 1} of the list (${maskKey(key)}) does not exist on the platform`);
      if (err instanceof LlmAccountsError) credentialError(err, "admin key (LLM_ACCOUNTS_ADMIN_KEY)");
      throw err;
    }
  }
  uniqueNames(keys.map((k) => slug(k.alias, "api-key"))).forEach((name, i) => (keys[i].name = name));
  return { keys, batches };
}
