import { closeSync, constants, copyFileSync, existsSync, lstatSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path";
import { parseArgs } from "node:util";
import { LlmAccountsClient } from "../client/client.js";
import { resolveClientOptions, type ConnectionArgs, type TransportOptions } from "../client/config.js";
import { SETTINGS, type StackConfig } from "../client/settings.js";
import { maskKey, redact } from "../api/redact.js";
import { PACKAGE } from "../version.js";
import { readKeyList } from "../commands/kit.js";
import { isObject } from "../api/canonical.js";
import { holderName, ImportError, readAccount, slug, type ImportedAccount, type StackHolding } from "./account.js";
import {
  DATA_FILE,
  KEYS_CONFIG_KEY,
  KEYS_CONFIG_MAX_BYTES,
  keysConfigEnvBytes,
  keysConfigValue,
  mergePackageJson,
  renderAccountData,
  renderProgram,
  renderProjectFile,
  renderStateProgram,
  STATE_PROGRAM_LINE,
  TSCONFIG,
} from "./program.js";
import { installSource, runningPackageRoot, type InstallSource } from "./source.js";
import { capture, readStackState, runPulumi, StackStateError, type StackState, type StateOptions } from "./stackState.js";
import { addIntoState, importIntoState, shortStack } from "./stackImport.js";

/** Help text of `llm-accounts import`. */
export const IMPORT_USAGE = `Options of "import" (credentials from LLM_ACCOUNTS_BASE_URL, LLM_ACCOUNTS_ADMIN_KEY, LLM_ACCOUNTS_ACCOUNT_KEY):
  --out DIR             Program folder to write (index.ts; Pulumi.yaml, tsconfig.json if missing; package.json entries)
  --keys FILE           API keys to adopt, one per line (- reads them from stdin); the API cannot list keys
  --stack NAME          Store the API keys in this stack's encrypted config (one secret value, on stdin of
                        pulumi config set --secret); without it, or without a pulumi CLI, the command says what to run
  --project NAME        Project name for a new Pulumi.yaml (default: from the folder name)
  --force               Overwrite an existing index.ts. Every object the stack's state already holds keeps its
                        resource name and stays declared, matched by key and sub-account (not alias), keys --keys
                        does not list included: the next up deletes and replaces nothing
  --into-state          Adopt the objects into the stack's state (pulumi stack import, on stdin; the CLI encrypts the
                        secrets) instead of its config; chosen by itself when the keys do not fit in a stack config
                        (past about 1,200 keys), and by a re-import of a folder with account.json: needs --stack;
                        a stack that holds objects keeps them, and only what is new is added
  --drop-unlisted       With --force: leave out the API keys the stack holds that --keys does not list (the next
                        up DELETES them from the platform) and batches none of whose sub-accounts is left
`;

/** Where the command reads and writes; the process's own streams unless a test gives others. */
export interface ImportIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** Where the running package was installed from (tests give one); found from the package's own folder otherwise. */
  source?: InstallSource;
  /** How often a long read reports on stderr; PROGRESS_EVERY_MS unless a test asks for every key. */
  progressEveryMs?: number;
}

/** Pulumi's rule for project names: letters, digits, `-`, `_` and `.`, at most 100. */
const PROJECT_NAME = /^[A-Za-z0-9_.-]{1,100}$/;
/** A stack name, optionally `org/project/stack`: what Pulumi accepts, and never an option (`-x`). */
const STACK_NAME = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*(\/[A-Za-z0-9_.-]+){0,2}$/;
/** How often a long read reports on stderr. */
const PROGRESS_EVERY_MS = 2000;
/** Left-out objects named on stdout; every one is in index.ts's header. */
const LEFT_OUT_SHOWN = 20;

/** What the folder holds already, read and checked before anything is read from the platform or written. */
interface Folder {
  dir: string;
  packageJson?: Record<string, unknown>;
  /** The project name of an existing Pulumi.yaml. */
  existingProject?: string;
  /** Whether the folder holds the data file of a program adopted through the stack's state (DATA_FILE). */
  dataFile: boolean;
  /** Whether its index.ts is a program written for a stack adopted through its state (STATE_PROGRAM_LINE). */
  stateProgram: boolean;
}

/**
 * Checks the folder before anything is written: no file the command writes may be a symbolic link (it would
 * write through it, anywhere), an existing package.json must be a JSON object with object dependency fields,
 * and an existing index.ts needs --force. A refusal leaves the folder as it was.
 */
function inspectFolder(dir: string, force: boolean, vendored: string | undefined): Folder {
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new ImportError(`--out ${dir}: not a folder`);
  for (const name of ["index.ts", "package.json", "Pulumi.yaml", "tsconfig.json", ...(vendored ? ["vendor", join("vendor", vendored)] : [])]) {
    const path = join(dir, name);
    if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) {
      throw new ImportError(`${path} is a symbolic link: refusing to write through it (replace it by a file, or choose another --out)`);
    }
  }
  const index = join(dir, "index.ts");
  if (existsSync(index) && !force) throw new ImportError(`${index} exists: refusing to overwrite it (use --force)`);
  const stateProgram = existsSync(index) && readFileSync(index, "utf8").includes(STATE_PROGRAM_LINE);
  const folder: Folder = { dir, dataFile: existsSync(join(dir, DATA_FILE)), stateProgram };
  const pkgPath = join(dir, "package.json");
  if (existsSync(pkgPath)) {
    let pkg: unknown;
    try {
      pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
    } catch (err) {
      throw new ImportError(`${pkgPath} is not valid JSON (${redact((err as Error).message)}): fix or remove it; nothing was written`);
    }
    if (!isObject(pkg)) throw new ImportError(`${pkgPath} must hold a JSON object ({...}), not ${Array.isArray(pkg) ? "an array" : String(pkg === null ? "null" : typeof pkg)}; nothing was written`);
    for (const field of ["dependencies", "devDependencies"]) {
      if (pkg[field] !== undefined && !isObject(pkg[field])) throw new ImportError(`${pkgPath}: "${field}" must be an object of package names to versions; nothing was written`);
    }
    folder.packageJson = pkg;
  }
  const projectFile = join(dir, "Pulumi.yaml");
  if (existsSync(projectFile)) folder.existingProject = /^name:\s*["']?([^"'\s#]+)/m.exec(readFileSync(projectFile, "utf8"))?.[1];
  return folder;
}

/** Writes a file, refusing to follow a symbolic link put there since the folder was inspected. */
function writeFile(path: string, data: string): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  try {
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

/** The package.json spec of this package, and what to do for it: the tarball copied in, or nothing. */
interface PackagePlan {
  spec?: string;
  /** A tarball to copy into the program folder's vendor/ (so the folder installs on any machine). */
  copyFrom?: string;
  /** What `npx --package` takes to run this import again. */
  npxSpec: string;
  /** A line for the user when the spec could not be told, or takes a folder. */
  note?: string;
}

function posix(path: string): string {
  return path.split(sep).join("/");
}

/** The dependency spec that installs what the user is running, never a path into npx's cache. */
function planPackage(source: InstallSource | undefined, dir: string): PackagePlan {
  if (source?.kind === "spec") return { spec: source.spec, npxSpec: `${PACKAGE.name}@${source.spec}` };
  if (source?.kind === "folder") {
    const rel = posix(relative(dir, source.path)) || ".";
    return {
      spec: `file:${rel}`,
      npxSpec: source.path,
      note: `package.json takes ${PACKAGE.name} from the folder ${source.path} (npm links it): on another machine, put it at the same place beside the program, or install a tarball of it (npm pack)`,
    };
  }
  if (source?.kind === "tarball" && existsSync(source.path)) {
    const inside = relative(dir, source.path);
    if (!inside.startsWith("..") && !isAbsolute(inside)) return { spec: `file:${posix(inside)}`, npxSpec: source.path };
    const name = basename(source.path);
    return { spec: `file:vendor/${name}`, copyFrom: source.path, npxSpec: join(dir, "vendor", name) };
  }
  return {
    npxSpec: `<the ${PACKAGE.name} tarball>`,
    note: `where ${PACKAGE.name} was installed from cannot be told, so package.json does not name it: add it with npm install <the tarball or folder you installed it from>`,
  };
}

/**
 * Stores every API key in the stack's encrypted config as one secret JSON object, on stdin (never in an
 * argument list, where the process table and shell history would show it): two CLI runs whatever the
 * account's size. Returns false when no Pulumi CLI is at hand.
 */
async function storeKeys(value: string, stack: string, dir: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const selected = await runPulumi(["stack", "select", "--create", stack], dir, env);
  if (selected === null) return false;
  if (selected.code !== 0) throw new ImportError(`pulumi stack select --create ${stack} failed: ${redact(selected.stderr.trim())}`);
  const r = await runPulumi(["config", "set", "--secret", "--stack", stack, KEYS_CONFIG_KEY], dir, env, value);
  if (r === null || r.code !== 0) throw new ImportError(`pulumi config set --secret ${KEYS_CONFIG_KEY} failed: ${redact(r?.stderr.trim() ?? "no pulumi CLI")}`);
  return true;
}

function instructions(account: ImportedAccount, dir: string, stack: string | undefined, rerun: string, why: string): string {
  return [
    `${why}, so the ${account.keys.length} API key(s) were NOT stored. Either run the import again where the Pulumi CLI is on PATH:`,
    `  ${rerun}`,
    `or, in ${dir}: pulumi stack select --create ${stack ?? "<stack>"}, then give \`pulumi config set --secret ${KEYS_CONFIG_KEY}\``,
    `on stdin (never as an argument) a JSON object of resource name to key: {"<name>": "sk-...", ...}; index.ts shows`,
    "each key's name beside its masked hint.",
    "",
  ].join("\n");
}

/** Reports a long read on stderr at most every `everyMs`, and its end if anything was reported. */
function progressOn(stderr: NodeJS.WritableStream, everyMs: number): (done: number, total: number) => void {
  let last = Date.now();
  let reported = false;
  return (done, total) => {
    const now = Date.now();
    if (done < total && now - last < everyMs) return;
    if (done === total && !reported) return;
    last = now;
    reported = true;
    stderr.write(`llm-accounts import: read ${done} of ${total} API key(s)\n`);
  };
}

/** Names, at most LEFT_OUT_SHOWN of them. */
function names(list: string[]): string {
  return list.length > LEFT_OUT_SHOWN ? `${list.slice(0, LEFT_OUT_SHOWN).join(", ")} and ${list.length - LEFT_OUT_SHOWN} more` : list.join(", ");
}

/** What a re-import kept of the stack's state, added, and dropped, on stdout (resource names; keys masked). */
function reportReimport(account: ImportedAccount, stack: string, out: (line: string) => void): void {
  const kept = [...account.keys, ...account.batches].filter((o) => o.kept).map((o) => JSON.stringify(o.name));
  const added = [...account.keys.filter((k) => !k.kept), ...account.batches.filter((b) => !b.kept)].map((o) => JSON.stringify(o.name));
  out(`Kept ${kept.length} object(s) stack ${stack} manages, under their resource names${kept.length > 0 ? `: ${names(kept)}` : ""}.`);
  out(`Added ${added.length} object(s) it does not manage yet${added.length > 0 ? `: ${names(added)}` : ""}.`);
  if (account.drifted.length > 0) out(`Changed in the console since the state last read them (declared as they are now): ${names(account.drifted.map((n) => JSON.stringify(n)))}.`);
  for (const n of account.notes.slice(0, LEFT_OUT_SHOWN)) out(`  ${n}`);
  if (account.dropped.length > 0) {
    out(`Dropped ${account.dropped.length} object(s) the stack manages, as --drop-unlisted asks:`);
    for (const d of account.dropped.slice(0, LEFT_OUT_SHOWN)) out(`  ${d}`);
    if (account.dropped.length > LEFT_OUT_SHOWN) out(`  and ${account.dropped.length - LEFT_OUT_SHOWN} more`);
  }
}

/**
 * The stacks the folder's project has in the backend (`pulumi stack ls`), asked only when no stack is named and
 * none is selected (a CI checkout, another machine, a fresh PULUMI_HOME): the import cannot tell which of them the
 * program is for, and a program written as for a new stack makes the next `up` of an existing one delete what it
 * holds. None without a CLI (readStackState already refused a folder with stack files then).
 */
async function unselectedStacks(dir: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const r = await capture(["stack", "ls", "--json"], dir, env);
  if (r === null) return [];
  let listed: unknown;
  try {
    listed = r.code === 0 ? JSON.parse(r.stdout) : undefined;
  } catch {
    listed = undefined;
  }
  if (!Array.isArray(listed)) {
    throw new ImportError(
      `no stack is selected in ${dir} and pulumi stack ls failed, so whether the project has stacks cannot be told (${redact(r.stderr.trim()) || "no list"}): ` +
        "name the stack with --stack NAME; nothing was written",
    );
  }
  return listed.flatMap((s: unknown) => (typeof (s as { name?: unknown })?.name === "string" ? [(s as { name: string }).name] : []));
}

/** A stack name as the CLI lists or takes it (`dev`, `org/dev`, `org/project/dev`), with `project` where it names none. */
function stackIdentity(name: string, project: string | undefined): { org?: string; project?: string; stack: string } {
  const parts = name.split("/");
  if (parts.length >= 3) return { org: parts[0], project: parts[1], stack: parts.slice(2).join("/") };
  return parts.length === 2 ? { org: parts[0], project, stack: parts[1] } : { project, stack: name };
}

/**
 * The backend's stacks, of every project (`pulumi stack ls --all`: this project's by short name, another's as
 * `org/project/stack`), or this project's alone where the CLI refuses `--all`; none when the list cannot be read.
 */
async function backendStacks(dir: string, env: NodeJS.ProcessEnv): Promise<{ name: string; current: boolean }[]> {
  let r = await capture(["stack", "ls", "--all", "--json"], dir, env);
  if (r !== null && r.code !== 0) r = await capture(["stack", "ls", "--json"], dir, env);
  let listed: unknown;
  try {
    listed = r !== null && r.code === 0 ? JSON.parse(r.stdout) : undefined;
  } catch {
    listed = undefined;
  }
  if (!Array.isArray(listed)) return [];
  return listed.flatMap((e: unknown) => {
    const o = e as { name?: unknown; current?: unknown } | null;
    return typeof o?.name === "string" ? [{ name: o.name, current: o.current === true }] : [];
  });
}

/**
 * What the backend's other stacks hold, those of other projects too (another team's project on the same account):
 * one `pulumi stack export` of each, kept in memory, so that the import never adopts an object another stack holds.
 * The target is left out by its whole name (another project's `dev` is read when the target is `dev`). A stack
 * that cannot be read is named on stderr: what it holds may then be adopted here, and the user is told which.
 */
async function otherStacks(dir: string, project: string | undefined, target: string | undefined, io: ImportIo): Promise<StackHolding[]> {
  const wanted = target !== undefined ? stackIdentity(target, project) : undefined;
  // An organisation only one of the two names spells out is the default one, so either matches.
  const isTarget = (e: { name: string; current: boolean }): boolean => {
    if (wanted === undefined) return e.current;
    const id = stackIdentity(e.name, project);
    return id.project === wanted.project && id.stack === wanted.stack && (id.org === undefined || wanted.org === undefined || id.org === wanted.org);
  };
  const out: StackHolding[] = [];
  for (const other of (await backendStacks(dir, io.env)).filter((e) => !isTarget(e))) {
    const theirs = stackIdentity(other.name, project).project;
    const holder = { stack: other.name, ...(theirs !== project && theirs !== undefined ? { project: theirs } : {}) };
    try {
      const state = await readStackState(dir, other.name, io.env, { withConfig: holder.project === undefined });
      if (!state) continue;
      const keys = new Set([...state.keys.flatMap((k) => [k.key, k.previousKey, k.adoptKey].filter((v): v is string => v !== undefined)), ...state.configKeys.map((c) => c.key)]);
      const tokens = new Set(state.batches.flatMap((b) => b.subAccounts.map((s) => s.token)));
      const markedAliases = new Set(state.batches.flatMap((b) => (b.unconfirmedAlias ? [b.unconfirmedAlias] : [])));
      out.push({ ...holder, keys, tokens, markedAliases });
    } catch (err) {
      io.stderr.write(`llm-accounts import: ${holderName(holder)} could not be read (${redact((err as Error).message)}): what it holds may be adopted here too; read it, or check the program before its up\n`);
    }
  }
  return out;
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
  const shown = (name: (typeof ACCOUNT_SETTINGS)[number], value: string) => (name === "baseUrl" ? redact(value) : maskKey(value));
  return differs.map((name) => `${SETTINGS[name].config} is ${shown(name, settings[name]!)}, ${SETTINGS[name].env} is ${shown(name, env[SETTINGS[name].env]!)}`).join("; ");
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
interface ImportArgs {
  dir: string;
  keys?: string;
  stack?: string;
  project?: string;
  force: boolean;
  dropUnlisted: boolean;
  intoState: boolean;
}

function parseImportArgs(args: string[]): ImportArgs {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      out: { type: "string" },
      keys: { type: "string" },
      stack: { type: "string" },
      project: { type: "string" },
      force: { type: "boolean" },
      "drop-unlisted": { type: "boolean" },
      "into-state": { type: "boolean" },
    },
  });
  if (!values.out) throw new ImportError("--out DIR is required: the folder the program is written to");
  if (values.project !== undefined && !PROJECT_NAME.test(values.project)) {
    throw new ImportError("--project: a project name has only letters, digits, '-', '_' and '.' (at most 100); nothing was written");
  }
  if (values.stack !== undefined && !STACK_NAME.test(values.stack)) {
    throw new ImportError("--stack: a stack name has only letters, digits, '-', '_' and '.' (optionally org/project/stack); nothing was written");
  }
  if (values["into-state"] && values.stack === undefined) throw new ImportError("--into-state needs --stack NAME: the stack whose state the objects are written into; nothing was written");
  const { keys, stack, project } = values;
  return { dir: resolve(values.out), keys, stack, project, force: values.force ?? false, dropUnlisted: values["drop-unlisted"] ?? false, intoState: values["into-state"] ?? false };
}

/** How the adopted keys reach the stack: the stack config (adoptKeys), or the stack's state (stackImport.ts). */
type Carrier = "config" | "state";

/** Everything the import read and decided, before it writes anything. */
interface ImportPlan {
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
function chooseCarrier(args: ImportArgs, state: StackState | undefined, account: ImportedAccount, envBytes: number, folder: Folder): Carrier {
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
    throw new ImportError(`${join(args.dir, DATA_FILE)}: the stack's objects were adopted into its state, and a re-import adds what is new there: name the stack with --stack NAME; nothing was written`);
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
  const held = [...account.keys.map((o) => ({ o, kind: "ApiKey" })), ...account.batches.map((o) => ({ o, kind: "SubAccountBatch" }))].filter(({ o }) => o.kept);
  const undeclarable = held.filter(({ o }) => why(o).length > 0).map(({ o, kind }) => `${kind} ${o.name} (${why(o).join(", ")})`);
  if (undeclarable.length === 0) return;
  throw new ImportError(
    `stack ${stack} holds objects the program over ${DATA_FILE} cannot declare as they are: ${names(undeclarable)}. ` +
      `Re-import through the stack config instead (without --into-state, and with ${DATA_FILE} and index.ts moved out of the folder), which declares each one; nothing was written`,
  );
}

/** Reads the folder, the stack's state and the account, and decides what to write: nothing is written yet. */
async function planImport(args: ImportArgs, io: ImportIo): Promise<ImportPlan> {
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
  const elsewhere = existsSync(join(args.dir, "Pulumi.yaml")) ? await otherStacks(args.dir, folder.existingProject, args.stack, io) : [];
  const progress = progressOn(io.stderr, io.progressEveryMs ?? PROGRESS_EVERY_MS);
  const account = await readAccount(client, apiKeys, progress, state, { dropUnlisted: args.dropUnlisted, sameAccount, elsewhere });
  for (const f of state?.foreign ?? []) account.dropped.push(`${f}: not this package's; the next up DELETES it`);
  const project = args.project ?? slug(basename(args.dir), "llm-accounts");
  const stackProject = folder.existingProject ?? project;
  const keysValue = keysConfigValue(account);
  const envBytes = keysConfigEnvBytes(keysValue, stackProject);
  const carrier = chooseCarrier(args, state, account, envBytes, folder);
  return { args, packagePlan, folder, state, origin: client.origin, account, project, stackProject, carrier, keysValue, envBytes };
}

/** Writes the program folder: Pulumi.yaml and tsconfig.json if missing, package.json, index.ts (and the data file after the state). */
function writeFolder(plan: ImportPlan): void {
  const { dir } = plan.args;
  const { folder, packagePlan } = plan;
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(dir, "Pulumi.yaml"))) writeFile(join(dir, "Pulumi.yaml"), renderProjectFile(plan.project));
  if (!existsSync(join(dir, "tsconfig.json"))) writeFile(join(dir, "tsconfig.json"), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
  if (packagePlan.copyFrom && !keepsOwnEntry(folder)) {
    mkdirSync(join(dir, "vendor"), { recursive: true });
    copyFileSync(packagePlan.copyFrom, join(dir, "vendor", basename(packagePlan.copyFrom)), constants.COPYFILE_FICLONE);
  }
  writeFile(join(dir, "package.json"), `${JSON.stringify(mergePackageJson(folder.packageJson, plan.project, packagePlan.spec), null, 2)}\n`);
  // A data file of an earlier import goes first: the program must not find one until the state holds what it lists.
  rmSync(join(dir, DATA_FILE), { force: true });
  const program = plan.carrier === "state" ? renderStateProgram(plan.account, plan.origin, new Date()) : renderProgram(plan.account, plan.origin, new Date());
  writeFile(join(dir, "index.ts"), program);
}

/** Whether the folder's package.json names this package already (its entry is then kept). */
function keepsOwnEntry(folder: Folder): boolean {
  return folder.packageJson !== undefined && isObject(folder.packageJson.dependencies) && PACKAGE.name in folder.packageJson.dependencies;
}

/** What was written, on stdout: the objects, a re-import's changes, what was left out, and the package entry. */
function reportWritten(plan: ImportPlan, out: (line: string) => void): void {
  const { account, state, folder, packagePlan } = plan;
  const subAccounts = account.batches.reduce((n, b) => n + b.count, 0);
  out(`Wrote ${join(plan.args.dir, "index.ts")}: ${account.keys.length} API key(s), ${subAccounts} sub-account(s) in ${account.batches.length} batch(es).`);
  if (manages(state)) reportReimport(account, state!.stack, out);
  if (account.leftOut.length > 0) {
    out(`Left out ${account.leftOut.length} object(s) the package's check refuses as they are (also listed in index.ts):`);
    for (const l of account.leftOut.slice(0, LEFT_OUT_SHOWN)) out(`  ${l}`);
    if (account.leftOut.length > LEFT_OUT_SHOWN) out(`  and ${account.leftOut.length - LEFT_OUT_SHOWN} more`);
  }
  const existing = keepsOwnEntry(folder) ? (folder.packageJson!.dependencies as Record<string, unknown>)[PACKAGE.name] : undefined;
  if (keepsOwnEntry(folder) && existing !== packagePlan.spec) out(`package.json keeps its own ${PACKAGE.name} entry (${String(existing)}); this import ran ${packagePlan.spec ?? "from an unknown source"}.`);
  else if (packagePlan.copyFrom) out(`Copied ${basename(packagePlan.copyFrom)} into ${join(plan.args.dir, "vendor")}: package.json installs it from there, on any machine.`);
  if (packagePlan.note && !keepsOwnEntry(folder)) out(packagePlan.note);
}

/** Whether the stack's state holds anything. */
const manages = (state: StackState | undefined): boolean => state !== undefined && state.keys.length + state.batches.length + state.foreign.length > 0;

/** The next step for the user, after the folder (and the keys) were written. */
function nextStep(plan: ImportPlan): string {
  const { account, args } = plan;
  const stackFlag = args.stack ? ` --stack ${args.stack}` : "";
  const dir = args.dir;
  if (account.drifted.length > 0) {
    return (
      `Next, in ${dir}: npm install, review index.ts, then pulumi preview --refresh${stackFlag} and pulumi up --refresh${stackFlag}: the refresh reads first what changed in the console, so the up writes none of it back` +
      (account.reverted.length > 0
        ? `, but for the sub-accounts named above, changed alone in the console: it gives them back their batch's alias and pricing (one edit per batch: ${names(account.reverted.map((n) => JSON.stringify(n)))}), deleting nothing.`
        : ".")
    );
  }
  if (account.pending.length > 0) {
    return `Next, in ${dir}: npm install, review index.ts, then pulumi preview${stackFlag} (no delete, no replace), and pulumi up${stackFlag}, which deletes nothing and writes one edit per batch whose lost create left sub-accounts under its mark (${names(account.pending.map((n) => JSON.stringify(n)))}): it gives them the batch's alias.`;
  }
  const review = plan.carrier === "state" ? `review index.ts and ${DATA_FILE}` : "review index.ts";
  const dropped = account.dropped.length;
  if (dropped > 0) {
    const others = plan.carrier === "state" ? "nothing else changes" : "no other delete, no replace";
    return `Next, in ${dir}: npm install, ${review}, then pulumi preview${stackFlag} (${dropped} to delete: the object(s) dropped above; ${others}), and pulumi up${stackFlag}, which DELETES them from the platform and makes no other write.`;
  }
  const preview = plan.carrier === "state" ? "no change" : manages(plan.state) ? "no delete, no replace" : "only creates";
  return `Next, in ${dir}: npm install, ${review}, then pulumi preview${stackFlag} (${preview}), and pulumi up${stackFlag}, which makes no write.`;
}

/**
 * Writes the adopted objects into the stack's state (stackImport.ts), then the data file the program reads: last,
 * so that a program whose import was stopped before the state held everything stops instead of creating anything.
 */
async function adoptIntoState(plan: ImportPlan, io: ImportIo, out: (line: string) => void): Promise<void> {
  const { dir, stack } = plan.args;
  const selected = await runPulumi(["stack", "select", "--create", stack!], dir, io.env);
  if (selected === null) throw new ImportError(`no pulumi CLI was found on PATH: the objects cannot be written into stack ${stack}'s state; ${join(dir, "index.ts")} was written, ${DATA_FILE} was not`);
  if (selected.code !== 0) throw new ImportError(`pulumi stack select --create ${stack} failed: ${redact(selected.stderr.trim())}`);
  const target = { project: plan.stackProject, stack: shortStack(stack!) };
  const held = manages(plan.state) ? plan.state : undefined;
  if (held) await addIntoState(plan.account, held, target, stack!, dir, io.env);
  else await importIntoState(plan.account, target, stack!, dir, io.env);
  writeFile(join(dir, DATA_FILE), renderAccountData(plan.account));
  const keys = plan.account.keys.filter((k) => !k.kept);
  const batches = plan.account.batches.filter((b) => !b.kept);
  const how = "(pulumi stack import, secrets encrypted by the stack's secrets provider)";
  if (!held || keys.length + batches.length > 0) out(`Adopted ${keys.length} API key(s) and ${batches.length} batch(es) into the state of stack ${stack} ${how}; wrote ${join(dir, DATA_FILE)}.`);
  else out(`Nothing new to adopt: the state of stack ${stack} holds every object the program declares, and was not written; wrote ${join(dir, DATA_FILE)}.`);
}

/** Stores the keys in the stack config, or says what to run when it cannot (no --stack, no Pulumi CLI). */
async function adoptThroughConfig(plan: ImportPlan, io: ImportIo, out: (line: string) => void): Promise<void> {
  const { args, account, packagePlan } = plan;
  if (account.keys.length === 0) return;
  if (args.stack && (await storeKeys(plan.keysValue, args.stack, args.dir, io.env))) {
    const stored = Object.keys(JSON.parse(plan.keysValue) as object).length;
    return out(`Stored the ${stored} API key(s) in the encrypted config of stack ${args.stack}: one secret value, ${KEYS_CONFIG_KEY} (${Math.ceil(plan.envBytes / 1024)} KiB of the ${KEYS_CONFIG_MAX_BYTES / 1024} KiB a stack's config may take).`);
  }
  const keysFlag = args.keys === undefined ? "" : args.keys === "-" ? " --keys - < <key file>" : ` --keys ${args.keys}`;
  const rerun = `npx --package ${packagePlan.npxSpec} llm-accounts import --out ${args.dir}${keysFlag} --stack ${args.stack ?? "<stack>"} --force`;
  io.stdout.write(instructions(account, args.dir, args.stack, rerun, args.stack ? "No pulumi CLI was found on PATH" : "No --stack was given"));
}

/** `llm-accounts import`: plans (reads the folder, the stack's state and the account), writes the program folder and the adoption, reports. */
export async function runImport(argv: string[], io: ImportIo): Promise<void> {
  const plan = await planImport(parseImportArgs(argv), io);
  const out = (line: string): void => void io.stdout.write(`${line}\n`);
  writeFolder(plan);
  reportWritten(plan, out);
  if (plan.carrier === "state") await adoptIntoState(plan, io, out);
  else await adoptThroughConfig(plan, io, out);
  out(nextStep(plan));
}
