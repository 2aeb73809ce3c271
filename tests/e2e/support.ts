import { beforeAll } from "@jest/globals";
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensurePulumiCli, type PulumiCli } from "../../scripts/pulumi-cli.mjs";
import {
  linkNodeModules,
  PulumiStack,
  prepareProgram,
  typeCheckProgram,
  type RunResult,
  type StackOptions,
} from "../../scripts/lib/stack.mjs";
import type { Emulator, EmulatorOptions } from "../../provider/emulator/index.js";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import { SecretLedger } from "../support/secrets.js";

export { PulumiStack, prepareProgram, SecretLedger };

/** Time for the first build of the Pulumi CLI on a machine that has none (minutes on 2 cores). */
export const CLI_BUILD_TIMEOUT_MS = 30 * 60_000;

/**
 * The real Pulumi CLI, found or built. The suite never skips: without a CLI it fails and says why (under
 * CI=true, and elsewhere too), since nothing short of the real CLI proves the package works.
 */
export async function requirePulumiCli(): Promise<PulumiCli> {
  try {
    return await ensurePulumiCli({ log: (m) => process.stderr.write(`[pulumi-cli] ${m}\n`) });
  } catch (err) {
    throw new Error(
      `The end-to-end suite needs the Pulumi CLI and none could be found or built${process.env.CI ? " (CI=true)" : ""}: ${(err as Error).message}`,
    );
  }
}

/**
 * What an e2e file that drives the CLI holds from its set-up (setUpFile), and the one runner of its commands:
 * `pulumi()` keeps what a command printed (checked for secrets at the file's end) and brings the ledger up to
 * date with the secrets the emulator holds since.
 */
export class FileRun {
  cli!: PulumiCli;
  emu!: Emulator;
  ledger!: SecretLedger;
  /** The file's program folder (node_modules linked), when setUpFile was given a `folder` prefix. */
  dir = "";
  /** Everything any command of the file printed. */
  printed = "";

  /** One command (pulumi, or llm-accounts import): its output kept and the ledger updated. */
  async pulumi<R extends RunResult>(step: Promise<R>): Promise<R> {
    const r = await step;
    this.printed += r.stdout + r.stderr;
    this.ledger.record();
    return r;
  }
}

/**
 * The set-up every e2e file that drives the CLI shares, as its first beforeAll: the Pulumi CLI, an emulator with
 * `emulator`'s options, `seed` (what the console holds before the story starts), the ledger of its secrets, and
 * with `folder`, a program folder of that prefix with node_modules linked. The file's own beforeAll, declared
 * after it, runs after it.
 */
export function setUpFile(
  options: { emulator?: EmulatorOptions; seed?: (emu: Emulator) => void; folder?: string } = {},
): FileRun {
  const run = new FileRun();
  beforeAll(async () => {
    run.cli = await requirePulumiCli();
    run.emu = await emulator(options.emulator);
    options.seed?.(run.emu);
    run.ledger = new SecretLedger(run.emu);
    if (options.folder !== undefined) {
      run.dir = mkdtempSync(join(tmpdir(), options.folder));
      linkNodeModules(run.dir);
    }
  }, CLI_BUILD_TIMEOUT_MS);
  return run;
}

/** The type check of each program folder, by source folder: run once per test file, not at every command. */
const checked = new Map<string, Promise<void>>();

/**
 * Type-checks a program folder (a prepared copy, whose node_modules resolve like a user's) once per test file,
 * as ts-node would at every `pulumi up` and `preview`; stacks then run it transpile-only. Call it again after
 * changing a program's types; edits of values need no new check.
 */
export function typeCheckedOnce(source: string, dir: string): Promise<void> {
  let check = checked.get(source);
  if (!check) {
    check = typeCheckProgram(dir);
    checked.set(source, check);
  }
  return check;
}

/**
 * How long the e2e stacks look for a write that may show late (`llm-accounts:lateWritesMs`): 5 s, not the default
 * 35 s. The emulator of these files shows every write at once but for readings.test.ts's `lateVisibilityMs` of 3 s,
 * which 5 s after a `created_at` of whole seconds covers, so a console delete made right after a create would cost each refresh up to 35 s of real time
 * and test nothing more; the default's length is tested on a fake clock (tests/runtime/lostAndLate.test.ts).
 */
export const LOOK_ENV = { LLM_ACCOUNTS_LATE_WRITES_MS: "5000" };

/**
 * A stack on a fresh copy of a program folder, talking to the emulator through the standard env vars. The
 * program is type-checked once (typeCheckedOnce) and then run transpile-only: checking it again at every
 * command cost most of each command's time and found nothing the first check did not.
 */
export async function stackFor(
  source: string,
  emu: Emulator,
  options: Partial<StackOptions> = {},
): Promise<PulumiStack> {
  const dir = prepareProgram(source);
  await typeCheckedOnce(source, dir);
  return PulumiStack.create({
    dir,
    account: { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey },
    typeCheck: false,
    ...options,
    env: { ...LOOK_ENV, ...options.env },
  });
}

/** The signature key of a secret value in a Pulumi state (`{"4dabf...": "1b47...", "plaintext": "..."}`). */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/**
 * A value of `pulumi stack export --show-secrets` with every secret replaced by its value (the export shows each
 * as an object holding the value's JSON text under `plaintext`).
 */
export function revealed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(revealed);
  if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (SECRET_SIG in o && typeof o.plaintext === "string") return revealed(JSON.parse(o.plaintext));
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, revealed(v)]));
  }
  return value;
}

/** Removes a stack's folders and its program copy. */
export function disposeStack(stack: PulumiStack | undefined): void {
  if (!stack) return;
  stack.dispose();
  rmSync(stack.dir, { recursive: true, force: true });
}

/** The account of an issue-41 file: `keys` API keys and `batches` batches of `perBatch` sub-accounts. */
export interface LargeAccountSize {
  keys: number;
  batches: number;
  perBatch: number;
  /** Characters added to each key's alias (`service-0007-xxx...`): longer aliases, more bytes of adoptKeys a key. */
  aliasFill?: number;
}

/**
 * Seeds the emulator with a large account (tests/e2e/largeAccount*.test.ts): API keys named `service-<i>`, batches of
 * sub-accounts named `customer-<b>`, each of one pricing. Returns the keys, in order (what `--keys` is given).
 */
export function seedLargeAccount(emu: Emulator, size: LargeAccountSize): string[] {
  const fill = "x".repeat(size.aliasFill ?? 0);
  const keys = Array.from(
    { length: size.keys },
    (_, i) => emu.state.createKey(`service-${String(i).padStart(4, "0")}${fill ? `-${fill}` : ""}`).key,
  );
  for (let b = 0; b < size.batches; b++) {
    emu.state.createSubAccounts({
      alias: `customer-${String(b).padStart(3, "0")}`,
      balance: 10,
      modelPricing: [{ model: "model-a", pricing_factor: 1.5 }],
      count: size.perBatch,
    });
  }
  return keys;
}

/** Runs `llm-accounts import --out <dir>` from the built package as a user would, `stdin` (API keys) on its stdin. */
export function llmImport(dir: string, args: string[], stdin: string, env: Record<string, string>): Promise<RunResult> {
  const started = Date.now();
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(REPO, "dist/provider/cli.js"), "import", "--out", dir, ...args], {
      env,
      cwd: tmpdir(),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => done({ code: code ?? 1, stdout, stderr, ms: Date.now() - started }));
    child.stdin.end(stdin);
  });
}

/**
 * Asserts that no secret the ledger knows is in plain text where an adopted stack keeps things: its exported
 * state, its backend folder, the program folder (node_modules aside) and everything `printed`. Returns the
 * program folder's text for further checks.
 */
export async function expectNoSecretsAround(
  ledger: SecretLedger,
  stack: PulumiStack,
  dir: string,
  printed: string,
): Promise<string> {
  const folder = readdirSync(dir)
    .filter((f) => f !== "node_modules")
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n");
  ledger.expectAbsent(await stack.exportState(), "pulumi stack export");
  ledger.expectAbsent(stack.backendText(), "the backend folder");
  ledger.expectAbsent(folder, "the program folder");
  ledger.expectAbsent(printed, "the output of import and pulumi");
  return folder;
}

/**
 * Why a test skips one of the settled checks: required, so that every opt-out says itself in the code
 * (`{ skip: { refresh: "the program reads the clock, so a refresh moves rotationDue" } }`).
 */
export interface SettledOptions {
  skip?: { preview?: string; refresh?: string };
  /** Arguments added to both commands (for example `["--parallel", "1"]`). */
  extra?: string[];
}

/**
 * The proof every e2e stack gets after each `up` (issue 30): a second plan is empty (`preview
 * --expect-no-changes`: a perpetual diff or a planned replacement fails the test by itself) and a refresh changes
 * nothing (`refresh --expect-no-changes`: the outputs read back from the platform are the outputs the apply
 * wrote). Opting out of either takes a written reason. Rejects with both commands' output when one finds a change.
 */
export async function expectSettled(stack: PulumiStack, options: SettledOptions = {}): Promise<void> {
  const extra = options.extra ?? [];
  for (const [step, args] of [
    ["preview", ["preview", "--diff", "--expect-no-changes", ...extra]],
    // --skip-preview: `refresh --yes` alone runs a preview of the refresh first, which reads every object twice;
    // --expect-no-changes checks the refresh itself (it would commit what it found, then fail).
    ["refresh", ["refresh", "--yes", "--skip-preview", "--diff", "--expect-no-changes", ...extra]],
  ] as const) {
    const reason = options.skip?.[step];
    if (reason !== undefined) {
      if (reason.trim().length < 10)
        throw new Error(`expectSettled: skipping the ${step} check needs a written reason, not "${reason}"`);
      continue;
    }
    const r = await stack.run([...args], { allowFailure: true });
    if (r.code !== 0) {
      throw new Error(
        `not settled: \`pulumi ${args.join(" ")}\` exited ${r.code} (a perpetual diff, a replacement or drift after apply)\n${r.stdout}\n${r.stderr}`,
      );
    }
  }
}

/** `pulumi up` followed by expectSettled: the step every e2e test takes to apply a program. Returns the up's result. */
export async function upSettled(
  stack: PulumiStack,
  upArgs: string[] = [],
  options: SettledOptions = {},
): Promise<RunResult> {
  const result = await stack.up(upArgs);
  await expectSettled(stack, options);
  return result;
}

/**
 * Objects a test leaves on its emulator on purpose, by alias, each with the reason (at least 10 characters):
 * `{ late: "retainOnDelete keeps the adopted sub-account on the platform by design" }`.
 */
export type LeftByDesign = Record<string, string>;

/** What `llm-accounts sweep --json` reports (provider/commands/sweep.ts). */
interface SweepReport {
  found: { kind: "api-key" | "sub-account"; alias: string; hint: string; id?: number }[];
  keysGone: number;
}

/** What an e2e file hands to endFile at its end. */
export interface FileEnd {
  emu: Emulator | undefined;
  ledger: SecretLedger | undefined;
  /** The file's stacks: each disposed, its program folder removed. */
  stacks?: (PulumiStack | undefined)[];
  /** When set, `pulumi destroy` of each stack with these arguments before the sweep. */
  destroy?: string[];
  /** Objects the file leaves on its emulator on purpose, each with its reason (expectSwept). */
  left?: LeftByDesign;
  /** Scratch folders to remove. */
  folders?: (string | undefined)[];
  /** Settings the sweep runs with (the file's short rate window, so that a sweep of thousands of keys is paced as its commands were). */
  sweepEnv?: Record<string, string>;
}

/**
 * The end of every e2e file (its afterAll): the destroy it asks for, the sweep (expectSwept), then, whatever
 * failed, its stacks disposed, its folders removed and its emulator closed. No destroy or sweep when the file's
 * beforeAll did not get as far as its emulator, ledger and stacks: that failure is the file's report.
 */
export async function endFile(end: FileEnd): Promise<void> {
  const stacks = end.stacks ?? [];
  try {
    if (end.emu && end.ledger && stacks.every((s) => s !== undefined)) {
      if (end.destroy) for (const s of stacks) await s!.destroy(end.destroy);
      await expectSwept(end.emu, end.ledger, end.left, end.sweepEnv);
    }
  } finally {
    for (const s of stacks) disposeStack(s);
    for (const f of end.folders ?? []) if (f) rmSync(f, { recursive: true, force: true });
    await end.emu?.close();
  }
}

/**
 * The end of every e2e file (issue 30): runs the built CLI's `llm-accounts sweep --any-alias` as a dry run
 * against the file's emulator (each file has its own, so anything on it is the file's), with every API key the
 * ledger saw as its key list (the API cannot list keys), and fails, naming the objects masked, if it found
 * anything but the objects `left` names by alias with a reason. Objects made in the console by the test and
 * never adopted count too: name them in `left` or delete them.
 */
export async function expectSwept(
  emu: Emulator,
  ledger: SecretLedger,
  left: LeftByDesign = {},
  sweepEnv: Record<string, string> = {},
): Promise<void> {
  for (const [alias, reason] of Object.entries(left)) {
    if (reason.trim().length < 10)
      throw new Error(`expectSwept: leaving "${alias}" needs a written reason, not "${reason}"`);
  }
  const dir = mkdtempSync(join(tmpdir(), "llm-sweep-"));
  const keyFile = join(dir, "keys.txt");
  writeFileSync(keyFile, `${ledger.apiKeys().join("\n")}\n`, { mode: 0o600 });
  const env = {
    PATH: process.env.PATH ?? "",
    LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
    LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
    LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
    ...sweepEnv,
  };
  let r: RunResult;
  try {
    r = await new Promise<RunResult>((done) => {
      const started = Date.now();
      const child = spawn(
        process.execPath,
        [join(REPO, "dist/provider/cli.js"), "sweep", "--any-alias", "--keys", keyFile, "--json"],
        { env, cwd: tmpdir() },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("close", (code) => done({ code: code ?? 1, stdout, stderr, ms: Date.now() - started }));
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  ledger.expectAbsent(r.stdout + r.stderr, "the sweep's output");
  if (r.code !== 0 && r.code !== 3) throw new Error(`llm-accounts sweep exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  const report = JSON.parse(r.stdout) as SweepReport;
  const leaked = report.found.filter((o) => !(o.alias in left));
  if (leaked.length > 0) {
    throw new Error(
      `the sweep found ${leaked.length} object(s) the tests left behind:\n${leaked.map((o) => `  ${o.kind} ${o.hint} alias ${JSON.stringify(o.alias)}`).join("\n")}`,
    );
  }
}

/**
 * A folder holding `pulumi-resource-llm-accounts` (the package's bin: dist/provider/plugin/main.js, made executable
 * as npm makes a bin at install), for the PATH of a stack whose program uses the provider plugin (docs/provider.md).
 */
export function providerPluginDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "llm-plugin-bin-"));
  const main = join(REPO, "dist/provider/plugin/main.js");
  chmodSync(main, 0o755);
  symlinkSync(main, join(dir, "pulumi-resource-llm-accounts"));
  return dir;
}

/** The emulator's request log, by operation, of the calls that write (create, edit, status, delete). */
export function writesOf(emu: Emulator): Record<string, number> {
  return Object.fromEntries(Object.entries(emu.calls()).filter(([op]) => /create|edit|status|delete/.test(op)));
}
