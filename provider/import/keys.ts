import { maskKey } from "../api/redact.js";
import type { ApiKeyView } from "../api/schemas/index.js";
import { same } from "../api/canonical.js";
import type { LlmAccountsClient } from "../client/client.js";
import { readKeys } from "../commands/keyReads.js";
import { refusedCredential } from "../commands/kit.js";
import type { Progress } from "../commands/progress.js";
import { apiKey } from "../runtime/index.js";
import type { ImportedAccount, ImportedKey, ReimportOptions } from "./account.js";
import { ImportError } from "./importError.js";
import { byName, heldElsewhere, ofThisAccount, refusals, slug, uniqueNames } from "./names.js";
import type { StackState, StateKey } from "./stackState.js";

// The API keys of an import: which to read (held by the stack's state, listed, in its config), one get each through
// the commands' one reader of many keys, and how the program declares each.

/** A key to read with one get: one the state holds (by its current key), or one to adopt (--keys, or the stack's config). */
interface KeyToRead {
  key: string;
  held?: StateKey;
  /** Its position in --keys (1-based), for the message of a key that does not exist. */
  listedAt?: number;
  /** The resource name the stack's config gave it (adoptKeys, adoptKey-<name>) before an `up` adopted it. */
  configName?: string;
}

/** One get per key (commands/keyReads.ts: a bounded number at once); a key the platform does not have answers undefined. */
export function readListedKeys(
  client: LlmAccountsClient,
  reads: KeyToRead[],
  progress: Progress,
): Promise<(ApiKeyView | undefined)[]> {
  return readKeys(
    client,
    reads.map((r) => r.key),
    {
      // Gone, by the runtime's rule (ApiKeysApi.find): a key of the list is an error, one the state holds is dropped.
      gone: (key, i) => {
        const listedAt = reads[i].listedAt;
        if (listedAt !== undefined)
          throw new ImportError(`API key ${listedAt} of the list (${maskKey(key)}) does not exist on the platform`);
        return undefined;
      },
      failed: (err) => refusedCredential(err, "adminKey", ImportError),
    },
    progress,
  );
}

/** An ApiKey the state holds on another account (its `connection`): declared as the state holds it, not read. */
function elsewhereKey(held: StateKey, notes: string[]): ImportedKey {
  notes.push(
    `ApiKey ${held.name} (${maskKey(held.key)}): held on another account (its connection): kept as the state holds it, not read here and never dropped`,
  );
  return {
    name: held.name,
    key: held.key,
    kept: true,
    alias: held.alias,
    enabled: held.enabled,
    securityConfig: held.securityConfig,
    ...(held.rotation !== undefined ? { rotation: held.rotation } : {}),
    connection: held.connection,
    options: held.options,
  };
}

/**
 * An ApiKey the state holds, declared under its resource name: as the platform has it now when the package's
 * check accepts that (the state is then behind: `drifted`), else as the state holds it; what it declared
 * beyond what import reads (rotation, connection, options) kept. Its adoptKey is the key it manages now.
 */
async function keptKey(
  held: StateKey,
  live: ApiKeyView | undefined,
  drifted: string[],
  notes: string[],
): Promise<ImportedKey> {
  const extra = {
    ...(held.rotation !== undefined ? { rotation: held.rotation } : {}),
    ...(held.connection !== undefined ? { connection: held.connection } : {}),
  };
  const stateView = { alias: held.alias, enabled: held.enabled, securityConfig: held.securityConfig };
  const base = { name: held.name, key: held.key, kept: true, ...extra, options: held.options };
  if (!live) {
    notes.push(
      `ApiKey ${held.name} (${maskKey(held.key)}): no longer on the platform; declared as the state holds it (after a refresh, the next up creates a new key in its place: delete its declaration to let it go)`,
    );
    return { ...base, ...stateView, gone: true };
  }
  const { inputs, failures } = await apiKey.check(
    {},
    { alias: live.alias, enabled: live.enabled, securityConfig: live.securityConfig, adoptKey: held.key, ...extra },
  );
  if (failures.length > 0) {
    notes.push(
      `ApiKey ${held.name} (${maskKey(held.key)}): declared as the state holds it, since the package's check refuses it as it is (${refusals(failures)}): the next up writes it back`,
    );
    return { ...base, ...stateView };
  }
  const declared = { alias: inputs.alias, enabled: inputs.enabled, securityConfig: inputs.securityConfig };
  if (!same(declared, stateView)) drifted.push(held.name);
  return { ...base, ...declared };
}

/** The keys to read: those the state holds, kept (or dropped by --drop-unlisted), then the listed and config keys to adopt. */
export interface KeyReadPlan {
  reads: KeyToRead[];
  /** Held keys of another account (their connection): declared as the state holds them, not read. */
  elsewhere: StateKey[];
}

/**
 * Which keys to read: the state's, matched by any key they manage (a rotation changes it), then the keys --keys lists
 * and the stack config holds that no resource manages, except those leaving the stack or held by another stack.
 */
export function planKeyReads(
  apiKeys: string[],
  state: StackState | undefined,
  options: ReimportOptions,
  account: ImportedAccount,
): KeyReadPlan {
  const heldKeys = state?.keys ?? [];
  const holder = new Map<string, StateKey>();
  for (const k of heldKeys) for (const v of [k.key, k.previousKey, k.adoptKey]) if (v) holder.set(v, k);
  const listed = new Set<StateKey>();
  const fresh: KeyToRead[] = [];
  const seen = new Set<string>();
  const leavingKeys = new Set(state?.leaving?.keys ?? []);
  apiKeys.forEach((key, i) => {
    const held = holder.get(key);
    if (held) listed.add(held);
    else if (!seen.has(key)) {
      const other = heldElsewhere(options, key, "keys");
      if (leavingKeys.has(key))
        account.leftOut.push(`API key ${maskKey(key)}: a replaced key the stack deletes at its next up: not adopted`);
      else if (other !== undefined)
        account.leftOut.push(`API key ${maskKey(key)}: held by ${other}: not adopted (one object, one owner)`);
      else fresh.push({ key, listedAt: i + 1 });
    }
    seen.add(key);
  });
  for (const c of state?.configKeys ?? []) {
    if (holder.has(c.key) || seen.has(c.key)) continue;
    seen.add(c.key);
    if (leavingKeys.has(c.key))
      account.leftOut.push(
        `API key ${maskKey(c.key)} of the stack's config (${c.name}): a replaced key the stack deletes at its next up: not adopted`,
      );
    else if (options.dropUnlisted)
      account.leftOut.push(
        `API key ${maskKey(c.key)} of the stack's config (${c.name}): not in --keys, not adopted (--drop-unlisted)`,
      );
    else fresh.push({ key: c.key, configName: c.name });
  }
  const here = ofThisAccount(options);
  const keptKeys = [...heldKeys].sort(byName).filter((k) => {
    if (!options.dropUnlisted || listed.has(k) || !here(k)) return true;
    account.dropped.push(
      `ApiKey ${k.name} (${maskKey(k.key)}): not in --keys; the next up DELETES it from the platform`,
    );
    return false;
  });
  return {
    reads: [...keptKeys.filter(here).map((held) => ({ key: held.key, held })), ...fresh],
    elsewhere: keptKeys.filter((k) => !here(k)),
  };
}

/** The keys as the program declares them: held ones under their names (in name order), then the adopted ones, named from their alias. */
export async function declareKeys(
  plan: KeyReadPlan,
  live: (ApiKeyView | undefined)[],
  heldKeys: StateKey[],
  account: ImportedAccount,
): Promise<void> {
  const keys: ImportedKey[] = plan.elsewhere.map((held) => elsewhereKey(held, account.notes));
  const added: ImportedKey[] = [];
  const bases: string[] = [];
  for (const [i, read] of plan.reads.entries()) {
    if (read.held) {
      keys.push(await keptKey(read.held, live[i], account.drifted, account.notes));
      continue;
    }
    const view = live[i];
    if (!view) {
      account.leftOut.push(
        `API key ${maskKey(read.key)} of the stack's config (${read.configName}): no longer on the platform`,
      );
      continue;
    }
    const { inputs, failures } = await apiKey.check(
      {},
      { alias: view.alias, enabled: view.enabled, securityConfig: view.securityConfig, adoptKey: read.key },
    );
    if (failures.length > 0) {
      account.leftOut.push(`API key ${maskKey(read.key)}: ${refusals(failures)}`);
      continue;
    }
    added.push({
      name: "",
      key: read.key,
      alias: inputs.alias,
      enabled: inputs.enabled,
      securityConfig: inputs.securityConfig,
      live: view,
    });
    bases.push(read.configName !== undefined ? slug(read.configName, "api-key") : slug(inputs.alias, "api-key"));
  }
  uniqueNames(
    bases,
    heldKeys.map((k) => k.name),
  ).forEach((name, i) => (added[i].name = name));
  keys.sort(byName);
  account.keys.push(...keys, ...added);
}
