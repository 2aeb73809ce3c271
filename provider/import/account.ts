import type { LlmAccountsClient } from "../client/client.js";
import type { ApiKeyView, ModelPricing, SecurityConfig, SubAccount, AnswerId } from "../api/schemas/index.js";
import { refusedCredential } from "../commands/kit.js";
import type { Progress } from "../commands/progress.js";
import { declareHeldBatches, declareUnheldBatches } from "./batches.js";
import { ImportError } from "./importError.js";
import { declareKeys, planKeyReads, readListedKeys } from "./keys.js";
import type { StackState, StateOptions } from "./stackState.js";

// What an account holds as the generated program declares it, and the read that finds it: its API keys (keys.ts),
// its sub-accounts as batches (batches.ts). ImportError, the import's failure, is given here too for its readers.
export { ImportError };

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

/**
 * Reads the account: one list of every sub-account, one get per API key, a bounded number at once
 * (commands/keyReads.ts) within the client's limiter. Each object is checked as the generated program will declare it, by the package's own check:
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
  const subAccounts = await client.subAccounts
    .list()
    .catch((err: unknown) => refusedCredential(err, "accountKey", ImportError));
  const account: ImportedAccount = {
    keys: [],
    batches: [],
    leftOut: [],
    dropped: [],
    drifted: [],
    notes: [],
    pending: [],
    reverted: [],
  };
  const plan = planKeyReads(apiKeys, state, options, account);
  const live = await readListedKeys(client, plan.reads, progress);
  await declareKeys(plan, live, state?.keys ?? [], account);
  await declareHeldBatches(state, subAccounts, options, account);
  await declareUnheldBatches(state, subAccounts, options, account);
  return account;
}
