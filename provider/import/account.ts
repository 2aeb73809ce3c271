import type { LlmAccountsClient } from "../client/client.js";
import { keyUnknown } from "../client/apiKeys.js";
import { SUB_ACCOUNT_MAX_COUNT } from "../api/assumptions.js";
import { maskKey, redact } from "../api/redact.js";
import { type ApiKeyView, type ModelPricing, type SecurityConfig, type SubAccount, compareIds, type AnswerId } from "../api/schemas/index.js";
import { apiKey, subAccountBatch } from "../runtime/index.js";
import type { CheckFailure } from "../runtime/engine/index.js";
import { same } from "../api/canonical.js";
import { sameMarked } from "../api/keptForms.js";
import { batchGroupOf } from "../commands/batchGroups.js";
import { mayCarryCreateMark, unconfirmedAmong } from "../runtime/subAccountBatch/index.js";
import { printable, refusedCredential } from "../commands/kit.js";
import type { StackState, StateBatch, StateKey, StateOptions } from "./stackState.js";

/** An API key as the generated program declares it; `key` is the secret that goes to the stack config. */
export interface ImportedKey {
  name: string;
  key: string;
  alias: string;
  enabled: boolean;
  securityConfig: SecurityConfig;
  /** Set for a key the stack's state holds: its resource name is the state's, and what it declared is kept. */
  kept?: boolean;
  /** A key the state holds that the platform no longer has: declared as the state holds it, and not stored. */
  gone?: boolean;
  rotation?: unknown;
  connection?: unknown;
  options?: StateOptions;
  /** A key to adopt: the platform's answer to its get, from which adoption through the state writes it (stackImport.ts). */
  live?: ApiKeyView;
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
  /** Sub-accounts the batch holds (a batch the state holds may hold more than it adopted: those it created). */
  count: number;
  /** The sub-accounts it adopts, by id, and their tokens. */
  ids: AnswerId[];
  tokens: string[];
  /** A batch to adopt: its sub-accounts as listed, from which adoption through the state writes it (stackImport.ts). */
  members?: SubAccount[];
  /** Set for a batch the stack's state holds: its resource name is the state's. */
  kept?: boolean;
  connection?: unknown;
  options?: StateOptions;
}

/** What an account holds, as the generated program declares it, and what it could not declare (masked). */
export interface ImportedAccount {
  keys: ImportedKey[];
  batches: ImportedBatch[];
  /** One line per object left out: what it is (masked) and why the package's own check refuses it. */
  leftOut: string[];
  /** With a stack's state: objects the program no longer declares because --drop-unlisted asked (the next up deletes them). */
  dropped: string[];
  /** Objects the state holds whose live alias, status, security config or pricing differ from it, by resource name. */
  drifted: string[];
  /** What the user should know of an object the state holds that is not declared as it is live (masked). */
  notes: string[];
  /** Held batches with sub-accounts a lost create made under their mark: the next up adopts and renames them (writes). */
  pending: string[];
  /**
   * Held batches declared with an alias and pricing some of their sub-accounts no longer have (renamed or repriced
   * alone in the console): the next `up --refresh` gives them back the batch's (one edit per batch).
   */
  reverted: string[];
}

/** How a re-import treats what the stack's state holds. */
export interface ReimportOptions {
  /** Leave out the API keys the state or config holds that --keys does not list, and batches with nothing live. */
  dropUnlisted?: boolean;
  /**
   * Whether a held object's `connection` reaches the account this import reads. Without it, only objects without a
   * `connection` are of that account. Objects of another account are kept as the state holds them: not read here,
   * never dropped (what this account lacks says nothing of another's).
   */
  sameAccount?: (connection: unknown) => boolean;
  /**
   * What the backend's other stacks hold (their keys, previous and adopted keys, config adoption keys, sub-account
   * tokens), by stack name as the CLI lists it, and `project` for a stack of another project: never adopted here,
   * where one object would get two owners and a destroy of either stack would delete what the other holds.
   */
  elsewhere?: StackHolding[];
}

/** What one other stack holds; `project` names its project when it is not this one. */
export interface StackHolding {
  stack: string;
  project?: string;
  keys: ReadonlySet<string>;
  tokens: ReadonlySet<string>;
  markedAliases?: ReadonlySet<string>;
}

/** An other stack as the import's output names it: `stack dev of this project`, `stack org/b/dev of project b`. */
export const holderName = (o: Pick<StackHolding, "stack" | "project">): string => `stack ${o.stack} of ${o.project === undefined ? "this project" : `project ${o.project}`}`;

/** The other stack that holds `value` (a key or a token), if any, named by holderName. */
function heldElsewhere(options: ReimportOptions, value: string, kind: "keys" | "tokens"): string | undefined {
  const holder = options.elsewhere?.find((o) => o[kind].has(value));
  return holder && holderName(holder);
}

/**
 * The other stack whose batch's lost create left `s` under its marked alias, if any: that batch's next run adopts it.
 * The alias as the platform keeps it (sameMarked: lower-cased too), as the batch's own recovery looks for it.
 */
function markedElsewhere(options: ReimportOptions, s: { alias: string }): string | undefined {
  const holder = options.elsewhere?.find((o) => o.markedAliases !== undefined && [...o.markedAliases].some((marked) => sameMarked(marked, s.alias)));
  return holder && holderName(holder);
}

/** An error of the user's making (credentials, files, keys): shown as is, without the usage text. */
export class ImportError extends Error {}

/** Progress of a long read, for stderr. */
export type Progress = (done: number, total: number) => void;

/** API key reads in flight at once: the client's limiter paces them to the platform's rate (600 a minute). */
const KEY_READS_AT_ONCE = 32;

/** A readable resource name from an alias: lower case, runs of other characters as one dash. */
export function slug(alias: string, fallback: string): string {
  const s = alias.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 48);
  return s === "" ? fallback : s;
}

/**
 * Names in order, each unique and none of `taken` (the names a stack's state holds): a repeat gets the first free
 * `-2`, `-3`, ... so that reruns name alike.
 */
function uniqueNames(bases: string[], taken: Iterable<string> = []): string[] {
  const used = new Set(taken);
  return bases.map((base) => {
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}-${n}`;
    used.add(name);
    return name;
  });
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
function idList(ids: AnswerId[]): string {
  const shown = ids.slice(0, 10).join(", ");
  return ids.length > 10 ? `ids ${shown} and ${ids.length - 10} more` : `id${ids.length > 1 ? "s" : ""} ${shown}`;
}

/**
 * Sub-accounts grouped by alias and pricing, ordered by their oldest member, split into batches of at most the
 * package's largest `count`. A sub-account the package's check refuses as it is (an alias that is a key, empty,
 * with outer spaces or too long) is left out and named by id: declared otherwise, the first `up` would write.
 */
async function batchesOf(subAccounts: SubAccount[], leftOut: string[], taken: Iterable<string>): Promise<ImportedBatch[]> {
  const batches: ImportedBatch[] = [];
  /** The batch still filling, per alias and pricing. */
  const open = new Map<string, ImportedBatch>();
  const refused = new Map<string, AnswerId[]>();
  for (const s of [...subAccounts].sort((a, b) => compareIds(a.id, b.id))) {
    const modelPricing = s.modelPricing.map((m) => ({ model: m.model, pricingFactor: m.pricingFactor }));
    // A live balance may be below 0 (spent past zero); it is no input of the declaration, which adopts the
    // sub-account as it is: a batch's `balance` only applies to the sub-accounts it creates later.
    const declared = { alias: s.alias, balance: Math.max(0, Number(s.balance)), count: 1, modelPricing, adoptTokens: [s.token] };
    const why = refusals((await subAccountBatch.check({}, declared)).failures);
    if (why) {
      refused.set(why, [...(refused.get(why) ?? []), s.id]);
      continue;
    }
    const group = batchGroupOf(s);
    let batch = open.get(group);
    if (!batch || batch.ids.length === SUB_ACCOUNT_MAX_COUNT) {
      batch = { name: "", alias: s.alias, modelPricing, balance: 0, count: 0, ids: [], tokens: [], members: [] };
      batches.push(batch);
      open.set(group, batch);
    }
    batch.ids.push(s.id);
    batch.tokens.push(s.token);
    batch.members!.push(s);
    batch.count = batch.ids.length;
    batch.balance = Math.max(batch.balance, declared.balance);
  }
  for (const [why, ids] of refused) leftOut.push(`sub-account ${idList(ids)}: ${why}`);
  uniqueNames(batches.map((b) => slug(b.alias, "sub-accounts")), taken).forEach((name, i) => (batches[i].name = name));
  return batches;
}

/** A key to read with one get: one the state holds (by its current key), or one to adopt (--keys, or the stack's config). */
interface KeyToRead {
  key: string;
  held?: StateKey;
  /** Its position in --keys (1-based), for the message of a key that does not exist. */
  listedAt?: number;
  /** The resource name the stack's config gave it (adoptKeys, adoptKey-<name>) before an `up` adopted it. */
  configName?: string;
}

/** One get per key, `KEY_READS_AT_ONCE` at a time; a key the platform does not have answers undefined. */
async function readKeys(client: LlmAccountsClient, reads: KeyToRead[], progress: Progress): Promise<(ApiKeyView | undefined)[]> {
  let answered = 0;
  return pool(
    reads,
    KEY_READS_AT_ONCE,
    async (read) => {
      try {
        return await client.apiKeys.get(read.key);
      } catch (err) {
        // Gone: a 404, or a 400 naming the key (client/apiKeys.ts keyUnknown).
        if (keyUnknown(err)) {
          if (read.listedAt !== undefined) throw new ImportError(`API key ${read.listedAt} of the list (${maskKey(read.key)}) does not exist on the platform`);
          return undefined;
        }
        return refusedCredential(err, "adminKey", ImportError);
      }
    },
    () => progress(++answered, reads.length),
  );
}

/** An ApiKey the state holds on another account (its `connection`): declared as the state holds it, not read. */
function elsewhereKey(held: StateKey, notes: string[]): ImportedKey {
  notes.push(`ApiKey ${held.name} (${maskKey(held.key)}): held on another account (its connection): kept as the state holds it, not read here and never dropped`);
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
async function keptKey(held: StateKey, live: ApiKeyView | undefined, drifted: string[], notes: string[]): Promise<ImportedKey> {
  const extra = { ...(held.rotation !== undefined ? { rotation: held.rotation } : {}), ...(held.connection !== undefined ? { connection: held.connection } : {}) };
  const stateView = { alias: held.alias, enabled: held.enabled, securityConfig: held.securityConfig };
  const base = { name: held.name, key: held.key, kept: true, ...extra, options: held.options };
  if (!live) {
    notes.push(`ApiKey ${held.name} (${maskKey(held.key)}): no longer on the platform; declared as the state holds it (after a refresh, the next up creates a new key in its place: delete its declaration to let it go)`);
    return { ...base, ...stateView, gone: true };
  }
  const { inputs, failures } = await apiKey.check({}, { alias: live.alias, enabled: live.enabled, securityConfig: live.securityConfig, adoptKey: held.key, ...extra });
  if (failures.length > 0) {
    notes.push(`ApiKey ${held.name} (${maskKey(held.key)}): declared as the state holds it, since the package's check refuses it as it is (${refusals(failures)}): the next up writes it back`);
    return { ...base, ...stateView };
  }
  const declared = { alias: inputs.alias, enabled: inputs.enabled, securityConfig: inputs.securityConfig };
  if (!same(declared, stateView)) drifted.push(held.name);
  return { ...base, ...declared };
}

/**
 * A SubAccountBatch the state holds, declared under its resource name with the count, balance and adopted set it
 * has (a lower count could delete, another balance replace a batch that created its sub-accounts): alias and
 * pricing as the platform has them when every sub-account it holds agrees and the check accepts them (the state
 * is then behind: `drifted`), else as the state holds them. Its sub-accounts whose alias or pricing differ from
 * what it is declared with are named (masked, the alias escaped as audit prints it) in `notes`, and the batch in
 * `reverted`: the next `up --refresh` gives them back the batch's.
 */
async function keptBatch(
  held: StateBatch,
  liveByToken: Map<string, SubAccount>,
  drifted: string[],
  notes: string[],
  lost = 0,
  reverted: string[] = [],
): Promise<ImportedBatch> {
  const members = held.subAccounts.flatMap((s) => liveByToken.get(s.token) ?? []);
  const adopted = held.adoptTokens.flatMap((t) => liveByToken.get(t) ?? []).sort((a, b) => compareIds(a.id, b.id));
  const statePricing = held.modelPricing;
  const pricingOf = (s: SubAccount) => s.modelPricing.map((m) => ({ model: m.model, pricingFactor: m.pricingFactor }));
  const first = members[0];
  const agree = first !== undefined && members.every((s) => s.alias === first.alias && same(pricingOf(s), pricingOf(first)));
  const declare = async (alias: string, modelPricing: unknown) =>
    subAccountBatch.check({}, {
      alias,
      balance: held.balance,
      count: held.count + lost,
      modelPricing,
      ...(adopted.length > 0 ? { adoptTokens: adopted.map((s) => s.token) } : {}),
      ...(held.connection !== undefined ? { connection: held.connection } : {}),
    });
  let { inputs, failures } = agree ? await declare(first.alias, pricingOf(first)) : await declare(held.alias, statePricing);
  const refused = agree && failures.length > 0;
  if (refused) {
    notes.push(`SubAccountBatch ${held.name}: declared with the alias and pricing the state holds, since the package's check refuses them as they are (${refusals(failures)}): the next up writes them back`);
    ({ inputs, failures } = await declare(held.alias, statePricing));
  }
  if (failures.length > 0) throw new ImportError(`SubAccountBatch ${held.name} of the stack's state cannot be declared as it is (${refusals(failures)}); nothing was written`);
  if (inputs.alias !== held.alias || !same(inputs.modelPricing, statePricing)) drifted.push(held.name);
  const apart = members.filter((s) => s.alias !== inputs.alias || !same(pricingOf(s), inputs.modelPricing));
  if (apart.length > 0) reverted.push(held.name);
  if (apart.length > 0 && !refused) {
    const shown = apart.slice(0, 10).map((s) => {
      const how = [
        ...(s.alias !== inputs.alias ? [`named ${printable(JSON.stringify(s.alias))}`] : []),
        ...(!same(pricingOf(s), inputs.modelPricing) ? ["priced otherwise"] : []),
      ];
      return `${maskKey(s.token)} (id ${s.id}) ${how.join(" and ")}`;
    });
    notes.push(
      `SubAccountBatch ${held.name}: ${apart.length} of its sub-accounts changed alone in the console, ${shown.join(", ")}${apart.length > 10 ? ` and ${apart.length - 10} more` : ""}: ` +
        `declared as the batch (alias ${printable(JSON.stringify(inputs.alias))}); the next up --refresh gives ${apart.length > 1 ? "them" : "it"} back the batch's alias and pricing (one edit), deleting nothing`,
    );
  }
  return {
    name: held.name,
    alias: inputs.alias,
    modelPricing: inputs.modelPricing,
    balance: held.balance,
    count: held.count + lost,
    ids: adopted.map((s) => s.id),
    tokens: adopted.map((s) => s.token),
    kept: true,
    ...(held.connection !== undefined ? { connection: held.connection } : {}),
    options: held.options,
  };
}

/**
 * Reads the account: one list of every sub-account, one get per API key, `KEY_READS_AT_ONCE` at a time within the
 * client's limiter. Each object is checked as the generated program will declare it, by the package's own check:
 * what it refuses is left out and named, masked. The same account always gives the same program.
 *
 * With the state of the stack the program is for (a re-import), every object the state holds keeps its resource
 * name, matched by key and by sub-account token, never by alias: its keys whether --keys lists them or not
 * (unless `dropUnlisted`), its batches with the sub-accounts they hold. Only objects the state does not hold are
 * named from their alias, with names the state does not use. Keys the stack's config holds for adoption and no
 * resource adopted yet are read as if listed, under the name the config gives them.
 */
export async function readAccount(
  client: LlmAccountsClient,
  apiKeys: string[],
  progress: Progress = () => {},
  state?: StackState,
  options: ReimportOptions = {},
): Promise<ImportedAccount> {
  const subAccounts = await client.subAccounts.list().catch((err: unknown) => refusedCredential(err, "accountKey", ImportError));
  const account: ImportedAccount = { keys: [], batches: [], leftOut: [], dropped: [], drifted: [], notes: [], pending: [], reverted: [] };
  const plan = planKeyReads(apiKeys, state, options, account);
  const live = await readKeys(client, plan.reads, progress);
  await declareKeys(plan, live, state?.keys ?? [], account);
  await declareHeldBatches(state, subAccounts, options, account);
  await declareUnheldBatches(state, subAccounts, options, account);
  return account;
}

/** Held objects in name order: a state lists them in the order their last operations finished, which varies. */
const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Whether a held object is of the account this import reads (no `connection`, or one that reaches it). */
const ofThisAccount = (options: ReimportOptions) => (o: { connection?: unknown }) => o.connection === undefined || (options.sameAccount?.(o.connection) ?? false);

/** The keys to read: those the state holds, kept (or dropped by --drop-unlisted), then the listed and config keys to adopt. */
interface KeyReadPlan {
  reads: KeyToRead[];
  /** Held keys of another account (their connection): declared as the state holds them, not read. */
  elsewhere: StateKey[];
}

/**
 * Which keys to read: the state's, matched by any key they manage (a rotation changes it), then the keys --keys lists
 * and the stack config holds that no resource manages, except those leaving the stack or held by another stack.
 */
function planKeyReads(apiKeys: string[], state: StackState | undefined, options: ReimportOptions, account: ImportedAccount): KeyReadPlan {
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
      if (leavingKeys.has(key)) account.leftOut.push(`API key ${maskKey(key)}: a replaced key the stack deletes at its next up: not adopted`);
      else if (other !== undefined) account.leftOut.push(`API key ${maskKey(key)}: held by ${other}: not adopted (one object, one owner)`);
      else fresh.push({ key, listedAt: i + 1 });
    }
    seen.add(key);
  });
  for (const c of state?.configKeys ?? []) {
    if (holder.has(c.key) || seen.has(c.key)) continue;
    seen.add(c.key);
    if (leavingKeys.has(c.key)) account.leftOut.push(`API key ${maskKey(c.key)} of the stack's config (${c.name}): a replaced key the stack deletes at its next up: not adopted`);
    else if (options.dropUnlisted) account.leftOut.push(`API key ${maskKey(c.key)} of the stack's config (${c.name}): not in --keys, not adopted (--drop-unlisted)`);
    else fresh.push({ key: c.key, configName: c.name });
  }
  const here = ofThisAccount(options);
  const keptKeys = [...heldKeys].sort(byName).filter((k) => {
    if (!options.dropUnlisted || listed.has(k) || !here(k)) return true;
    account.dropped.push(`ApiKey ${k.name} (${maskKey(k.key)}): not in --keys; the next up DELETES it from the platform`);
    return false;
  });
  return { reads: [...keptKeys.filter(here).map((held) => ({ key: held.key, held })), ...fresh], elsewhere: keptKeys.filter((k) => !here(k)) };
}

/** The keys as the program declares them: held ones under their names (in name order), then the adopted ones, named from their alias. */
async function declareKeys(plan: KeyReadPlan, live: (ApiKeyView | undefined)[], heldKeys: StateKey[], account: ImportedAccount): Promise<void> {
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
      account.leftOut.push(`API key ${maskKey(read.key)} of the stack's config (${read.configName}): no longer on the platform`);
      continue;
    }
    const { inputs, failures } = await apiKey.check({}, { alias: view.alias, enabled: view.enabled, securityConfig: view.securityConfig, adoptKey: read.key });
    if (failures.length > 0) {
      account.leftOut.push(`API key ${maskKey(read.key)}: ${refusals(failures)}`);
      continue;
    }
    added.push({ name: "", key: read.key, alias: inputs.alias, enabled: inputs.enabled, securityConfig: inputs.securityConfig, live: view });
    bases.push(read.configName !== undefined ? slug(read.configName, "api-key") : slug(inputs.alias, "api-key"));
  }
  uniqueNames(bases, heldKeys.map((k) => k.name)).forEach((name, i) => (added[i].name = name));
  keys.sort(byName);
  account.keys.push(...keys, ...added);
}

/**
 * Each batch the state holds, with the sub-accounts it holds (by token) and those a lost create of it left under
 * its mark (subAccountBatch/recovery.ts: its next run adopts them); dropped by --drop-unlisted when nothing of it is live.
 */
async function declareHeldBatches(state: StackState | undefined, subAccounts: SubAccount[], options: ReimportOptions, account: ImportedAccount): Promise<void> {
  const liveByToken = new Map(subAccounts.map((s) => [s.token, s]));
  const claimed = claimedTokens(state);
  const here = ofThisAccount(options);
  for (const held of [...(state?.batches ?? [])].sort(byName)) {
    if (!here(held)) {
      account.notes.push(`SubAccountBatch ${held.name}: held on another account (its connection): kept as the state holds it, not read here and never dropped`);
      account.batches.push(await keptBatch(held, new Map(), account.drifted, account.notes));
      continue;
    }
    const lost = unconfirmedAmong(held, subAccounts, claimed);
    for (const s of lost) claimed.add(s.token);
    if (options.dropUnlisted && lost.length === 0 && !held.subAccounts.some((s) => liveByToken.has(s.token))) {
      account.dropped.push(`SubAccountBatch ${held.name}: none of the ${held.subAccounts.length} sub-account(s) it holds is on the platform (nothing live is deleted)`);
      continue;
    }
    if (lost.length > 0) {
      account.pending.push(held.name);
      account.notes.push(
        `SubAccountBatch ${held.name}: ${lost.length} sub-account(s) made by its create whose answer was lost carry its mark (alias ${JSON.stringify(lost[0].alias)}): ` +
          `declared with count ${held.count + lost.length}; the next up adopts them and gives them the batch's alias (one edit), deleting nothing`,
      );
    }
    account.batches.push(await keptBatch(held, liveByToken, account.drifted, account.notes, lost.length, account.reverted));
  }
}

/**
 * The tokens the state's batches hold and, with `lostOf` (the account's list and the reimport's options), those the
 * lost creates of its batches of this account left under their marks: never grouped anew.
 */
function claimedTokens(state: StackState | undefined, lostOf?: { subAccounts: SubAccount[]; options: ReimportOptions }): Set<string> {
  const held = [...(state?.batches ?? [])].sort(byName);
  const claimed = new Set<string>(held.flatMap((b) => b.subAccounts.map((s) => s.token)));
  if (!lostOf) return claimed;
  for (const b of held.filter(ofThisAccount(lostOf.options))) for (const s of unconfirmedAmong(b, lostOf.subAccounts, claimed)) claimed.add(s.token);
  return claimed;
}

/**
 * The sub-accounts no batch of the state holds, grouped anew, except those a replaced batch leaves (the stack's next
 * up deletes them), another stack holds or marked (its batch adopts them), or a killed create left under a mark.
 */
async function declareUnheldBatches(state: StackState | undefined, subAccounts: SubAccount[], options: ReimportOptions, account: ImportedAccount): Promise<void> {
  const claimed = claimedTokens(state, { subAccounts, options });
  const leaving = new Set(state?.leaving?.tokens ?? []);
  const outgoing: SubAccount[] = [];
  const theirs = new Map<string, string[]>();
  const unheld: SubAccount[] = [];
  const marked: SubAccount[] = [];
  for (const s of subAccounts) {
    if (claimed.has(s.token)) continue;
    if (leaving.has(s.token)) {
      outgoing.push(s);
      continue;
    }
    const other = heldElsewhere(options, s.token, "tokens") ?? markedElsewhere(options, s);
    if (other !== undefined) theirs.set(other, [...(theirs.get(other) ?? []), maskKey(s.token)]);
    else if (mayCarryCreateMark(s.alias)) marked.push(s);
    else unheld.push(s);
  }
  if (marked.length > 0) {
    account.leftOut.push(
      `${marked.length} sub-account(s) under the mark of a create whose up was killed before it recorded them (${marked.slice(0, 5).map((s) => `${maskKey(s.token)} ${printable(s.alias)}`).join(", ")}${marked.length > 5 ? ", ..." : ""}): ` +
        "not adopted, since the batch that made them (of this or another stack or project) adopts them at its next up (one object, one owner); " +
        "if no stack will, give them another alias in the console and import again",
    );
  }
  if (outgoing.length > 0) {
    account.leftOut.push(`${outgoing.length} sub-account(s) of a replaced batch the stack deletes at its next up (${outgoing.map((s) => maskKey(s.token)).join(", ")}): not adopted`);
  }
  for (const [other, tokens] of theirs) {
    account.leftOut.push(`${tokens.length} sub-account(s) held by ${other} (${tokens.slice(0, 5).join(", ")}${tokens.length > 5 ? ", ..." : ""}): not adopted (one object, one owner)`);
  }
  account.batches.push(...(await batchesOf(unheld, account.leftOut, (state?.batches ?? []).map((b) => b.name))));
}
