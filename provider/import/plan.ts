import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { LlmAccountsClient } from "../client/client.js";
import { resolveClientOptions, type ConnectionArgs, type TransportOptions } from "../client/config.js";
import { SETTINGS, type StackConfig } from "../client/settings.js";
import { maskKey, redact } from "../api/redact.js";
import { readKeyList } from "../commands/kit.js";
import type { Progress } from "../commands/progress.js";
import { readAccount, type ImportedAccount } from "./account.js";
import { inspectFolder, planPackage, type Folder, type PackagePlan } from "./folder.js";
import { ImportError } from "./importError.js";
import { slug } from "./names.js";
import { DATA_FILE, KEYS_CONFIG_MAX_BYTES, keysConfigEnvBytes, keysConfigValue } from "./program.js";
import { installSource, runningPackageRoot, type InstallSource } from "./source.js";
import { readStackState, StackStateError, type StackState, type StateOptions } from "./stackState.js";
import { otherStacks, unselectedStacks } from "./stacks.js";

// What the import decides before it writes anything: the account to read (the stack's), the stack's state, the
// folder, the objects, and how the keys reach the stack (its config or its state).

/** Left-out objects named on stdout; every one is in index.ts's header. */
export const LEFT_OUT_SHOWN = 20;

/** Names, at most LEFT_OUT_SHOWN of them. */
export function names(list: string[]): string {
  return list.length > LEFT_OUT_SHOWN
    ? `${list.slice(0, LEFT_OUT_SHOWN).join(", ")} and ${list.length - LEFT_OUT_SHOWN} more`
    : list.join(", ");
}

/** The settings that say which account is meant: a stack config that sets one of them names its own account. */
const ACCOUNT_SETTINGS = ["baseUrl", "adminKey", "accountKey"] as const;

/**
 * Where the environment names another account than a stack's config (which wins over it, as in the provider): each
 * setting that differs, masked (`llm-accounts:baseUrl is ..., LLM_ACCOUNTS_BASE_URL is ...`); undefined when they
 * agree or the config names no account. The one rule the import and the doctor (`--stack`) refuse a mismatch by.
 */
export function accountMismatch(settings: StackConfig, env: NodeJS.ProcessEnv): string | undefined {
  if (!ACCOUNT_SETTINGS.some((name) => settings[name])) return undefined;
  const forStack = resolveClientOptions(undefined, settings, env);
  const differs = ACCOUNT_SETTINGS.filter((name) => {
    const given = env[SETTINGS[name].env];
    return settings[name] && given && given !== forStack[name];
  });
  if (differs.length === 0) return undefined;
  const shown = (name: (typeof ACCOUNT_SETTINGS)[number], value: string) =>
    name === "baseUrl" ? redact(value) : maskKey(value);
  return differs
    .map(
      (name) =>
        `${SETTINGS[name].config} is ${shown(name, settings[name]!)}, ${SETTINGS[name].env} is ${shown(name, env[SETTINGS[name].env]!)}`,
    )
    .join("; ");
}

/**
 * The account the import reads: the one the stack's `up` acts on (its config wins over the environment, as in the
 * provider). Where the environment names another account than the stack's config, the import refuses: reading the
 * shell's account would write a program whose next `up` on the stack's account deletes what it holds there.
 */
function accountToRead(settings: StackConfig, env: NodeJS.ProcessEnv, stack: string | undefined): TransportOptions {
  const mismatch = accountMismatch(settings, env);
  if (mismatch === undefined) return resolveClientOptions(undefined, settings, env);
  throw new ImportError(
    `stack ${stack ?? "(selected)"}'s config names another account than the environment (${mismatch}). ` +
      "Its up acts on the account of its config, so the import reads that one: unset those variables (or set them to the stack's account), or import into another stack; nothing was written",
  );
}

/** What `llm-accounts import` was asked, checked before anything is read. */
export interface ImportArgs {
  dir: string;
  keys?: string;
  stack?: string;
  project?: string;
  force: boolean;
  dropUnlisted: boolean;
  intoState: boolean;
  /** One JSON object on stdout (the report) instead of lines. */
  json: boolean;
  /** No progress on stderr. */
  quiet: boolean;
}

/** How the adopted keys reach the stack: the stack config (adoptKeys), or the stack's state (stackImport.ts). */
export type Carrier = "config" | "state";

/** Everything the import read and decided, before it writes anything. */
export interface ImportPlan {
  args: ImportArgs;
  packagePlan: PackagePlan;
  folder: Folder;
  state?: StackState;
  origin: string;
  account: ImportedAccount;
  /** The project name a new Pulumi.yaml and package.json take. */
  project: string;
  /** The project of the stack: the existing Pulumi.yaml's, else `project`. */
  stackProject: string;
  carrier: Carrier;
  keysValue: string;
  envBytes: number;
}

/** What planning reads besides the arguments: stdin (--keys -), the environment, where the package came from. */
export interface PlanIo {
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
  /** Where the running package was installed from (tests give one); found from the package's own folder otherwise. */
  source?: InstallSource;
  /** Each key read, counted. */
  progress: Progress;
  /** A line for stderr: what the user should know that is no result (another stack that could not be read). */
  warn: (line: string) => void;
}

/** Refuses a stack whose state the program cannot be written for: unnamed among several, or holding what import cannot declare. */
async function checkTarget(args: ImportArgs, state: StackState | undefined, env: NodeJS.ProcessEnv): Promise<void> {
  if (state === undefined && args.stack === undefined && existsSync(join(args.dir, "Pulumi.yaml"))) {
    const stacks = await unselectedStacks(args.dir, env);
    if (stacks.length > 0) {
      throw new ImportError(
        `no stack is selected in ${args.dir}, and its project has ${stacks.length} stack(s) in the backend: ${names(stacks)}. ` +
          "Written as for a new stack, the program would make the next up of one of them delete what it holds: " +
          "name the stack with --stack NAME (its state is read and every object it holds kept; a name not listed makes a new stack); nothing was written",
      );
    }
  }
  if (state && state.foreign.length > 0 && !args.dropUnlisted) {
    const shown = state.foreign.slice(0, 5).join(", ");
    throw new ImportError(
      `stack ${args.stack ?? "(selected)"} also manages what import cannot declare (${shown}${state.foreign.length > 5 ? ` and ${state.foreign.length - 5} more` : ""}): ` +
        "a program written over it would make the next up delete them. Import into another folder and stack, or pass --drop-unlisted to drop them; nothing was written",
    );
  }
}

/**
 * How the keys reach the stack: its state when asked (--into-state) or when they do not fit in its config (past
 * 120 KiB), which needs a named stack; else its config. A stack that holds objects keeps them in its state either
 * way: a re-import adds what is new through the route that adopted it (its state when the folder's program reads
 * the data file, whether or not the data file was written yet), or through the state when asked or when the new
 * keys do not fit in the config.
 */
function chooseCarrier(
  args: ImportArgs,
  state: StackState | undefined,
  account: ImportedAccount,
  envBytes: number,
  folder: Folder,
): Carrier {
  const holds = manages(state);
  const fits = account.keys.length === 0 || envBytes <= KEYS_CONFIG_MAX_BYTES;
  // A folder whose program reads the data file keeps its route, the data file there or not (killed before it).
  const throughState = args.intoState || !fits || (holds && (folder.dataFile || folder.stateProgram));
  if (!throughState) return "config";
  if (args.stack !== undefined) {
    if (holds) refuseUndeclarable(account, state!.stack);
    return "state";
  }
  if (holds && fits) {
    throw new ImportError(
      `${join(args.dir, DATA_FILE)}: the stack's objects were adopted into its state, and a re-import adds what is new there: name the stack with --stack NAME; nothing was written`,
    );
  }
  const fit = Math.floor((account.keys.length * KEYS_CONFIG_MAX_BYTES) / envBytes);
  throw new ImportError(
    `${account.keys.length} API keys take ${Math.ceil(envBytes / 1024)} KiB of stack config, more than the ${KEYS_CONFIG_MAX_BYTES / 1024} KiB a program can be given ` +
      "(Pulumi's Node.js language host hands the whole config to the program in one environment variable, which Linux caps at 128 KiB): " +
      `name the stack with --stack NAME, and the import writes them into its state (docs/large-accounts.md), or import them in parts of at most about ${fit} keys (--keys), each into its own folder and stack; nothing was written`,
  );
}

/**
 * Refuses a re-import through the state when the stack holds what the program over the data file cannot declare
 * (it declares alias, status, security config, count, balance and pricing): its next up would change it.
 */
function refuseUndeclarable(account: ImportedAccount, stack: string): void {
  const why = (o: { rotation?: unknown; connection?: unknown; options?: StateOptions }): string[] => [
    ...(o.rotation !== undefined ? ["rotation"] : []),
    ...(o.connection !== undefined ? ["connection"] : []),
    ...Object.keys(o.options ?? {}).map((k) => (k === "parentedUrn" ? "a parent" : k)),
  ];
  const held = [
    ...account.keys.map((o) => ({ o, kind: "ApiKey" })),
    ...account.batches.map((o) => ({ o, kind: "SubAccountBatch" })),
  ].filter(({ o }) => o.kept);
  const undeclarable = held
    .filter(({ o }) => why(o).length > 0)
    .map(({ o, kind }) => `${kind} ${o.name} (${why(o).join(", ")})`);
  if (undeclarable.length === 0) return;
  throw new ImportError(
    `stack ${stack} holds objects the program over ${DATA_FILE} cannot declare as they are: ${names(undeclarable)}. ` +
      `Re-import through the stack config instead (without --into-state, and with ${DATA_FILE} and index.ts moved out of the folder), which declares each one; nothing was written`,
  );
}

/** Reads the folder, the stack's state and the account, and decides what to write: nothing is written yet. */
export async function planImport(args: ImportArgs, io: PlanIo): Promise<ImportPlan> {
  const packagePlan = planPackage(io.source ?? installSource(runningPackageRoot()), args.dir);
  const folder = inspectFolder(args.dir, args.force, packagePlan.copyFrom ? basename(packagePlan.copyFrom) : undefined);
  const apiKeys = await readKeyList(args.keys, io.stdin, ImportError);
  // What the stack already manages, before anything is read from the platform or written (stackState.ts).
  const state = await readStackState(args.dir, args.stack, io.env).catch((err: unknown) => {
    throw err instanceof StackStateError ? new ImportError(err.message) : err;
  });
  await checkTarget(args, state, io.env);
  const settings = state?.settings ?? {};
  const here = accountToRead(settings, io.env, state?.stack);
  const client = new LlmAccountsClient(here);
  // A held object's connection reaches this account when it resolves here to the same URL and keys.
  const sameAccount = (connection: unknown): boolean => {
    try {
      const there = resolveClientOptions(connection as ConnectionArgs, settings, io.env);
      return there.baseUrl === here.baseUrl && there.adminKey === here.adminKey && there.accountKey === here.accountKey;
    } catch {
      return false;
    }
  };
  const elsewhere = existsSync(join(args.dir, "Pulumi.yaml"))
    ? await otherStacks(args.dir, folder.existingProject, args.stack, io)
    : [];
  const account = await readAccount(client, apiKeys, io.progress, state, {
    dropUnlisted: args.dropUnlisted,
    sameAccount,
    elsewhere,
  });
  for (const f of state?.foreign ?? []) account.dropped.push(`${f}: not this package's; the next up DELETES it`);
  const project = args.project ?? slug(basename(args.dir), "llm-accounts");
  const stackProject = folder.existingProject ?? project;
  const keysValue = keysConfigValue(account);
  const envBytes = keysConfigEnvBytes(keysValue, stackProject);
  const carrier = chooseCarrier(args, state, account, envBytes, folder);
  return {
    args,
    packagePlan,
    folder,
    state,
    origin: client.origin,
    account,
    project,
    stackProject,
    carrier,
    keysValue,
    envBytes,
  };
}

/** Whether the stack's state holds anything. */
export const manages = (state: StackState | undefined): boolean =>
  state !== undefined && state.keys.length + state.batches.length + state.foreign.length > 0;
