// Runs the real Pulumi CLI on a program, fully offline (file backend, passphrase secrets, no update check,
// no plugin downloads), against an account given by base URL and keys. Shared by the end-to-end tests, the
// demo and the benchmark. Plain Node.js: every command runs asynchronously, since the emulator it talks to
// often runs in the same process.

import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ensurePulumiCli, pulumiEnv } from "../pulumi-cli.mjs";

/** The repository root. */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * Copies a program folder to a temporary one whose node_modules resolves like an installed copy of this
 * package: links to the repository's dependencies, and `pulumi-llm-accounts` linked to the repository.
 */
export function prepareProgram(source, prefix = "llm-program-") {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(source, dir, {
    recursive: true,
    filter: (p) => !p.includes("node_modules") && !/Pulumi\.[^/]+\.yaml$/.test(p),
  });
  linkNodeModules(dir);
  return dir;
}

/** Gives `dir` a node_modules of links to the repository's dependencies and to the package itself. */
export function linkNodeModules(dir) {
  const modules = join(dir, "node_modules");
  mkdirSync(modules, { recursive: true });
  for (const entry of readdirSync(join(REPO, "node_modules"))) {
    if (entry === ".package-lock.json" || entry === ".bin") continue;
    symlinkSync(join(REPO, "node_modules", entry), join(modules, entry));
  }
  symlinkSync(REPO, join(modules, "pulumi-llm-accounts"));
}

const TSC = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const TS_MAJOR = createRequire(import.meta.url)("typescript/package.json").version.split(".")[0];
/**
 * What TypeScript 6 must be told to accept the `moduleResolution: node` of `pulumi new`'s tsconfig (the
 * template pins TypeScript 5). ts-node's type-checking mode lets it pass, its transpile-only mode and tsc do not.
 */
const TS_DEPRECATIONS = Number(TS_MAJOR) >= 6 ? { ignoreDeprecations: `${TS_MAJOR}.0` } : {};

/**
 * Type-checks a program folder prepared by prepareProgram (its own tsconfig.json, as ts-node reads it at each
 * run of the program): resolves when it has no error, else rejects with tsc's diagnostics. A stack created with
 * `typeCheck: false` then runs the program without checking it again at every command.
 */
export function typeCheckProgram(dir) {
  const flags = Object.entries(TS_DEPRECATIONS).flatMap(([k, v]) => [`--${k}`, v]);
  return new Promise((resolvePromise, reject) => {
    execFile(process.execPath, [TSC, "-p", dir, "--noEmit", ...flags], { cwd: dir }, (err, stdout, stderr) => {
      if (err) reject(new Error(`the program in ${dir} does not type-check:\n${stdout}${stderr}`));
      else resolvePromise();
    });
  });
}

/** Environment variable naming a file that gets one JSON line per `pulumi` command run (opt-in timing). */
export const TIMING_ENV = "LLM_ACCOUNTS_PULUMI_TIMING";

/**
 * Appends one JSON line for a finished command to $LLM_ACCOUNTS_PULUMI_TIMING, if set: the command, its exit
 * code and milliseconds, and under jest the test file and test that ran it (from the `expect` global), so that
 * a run's minutes can be summed per file, per test and per command without adding to anyone's output.
 */
function recordTiming(cli, args, result, cpuBefore) {
  const file = process.env[TIMING_ENV];
  if (!file) return;
  const cpu = childCpuMs();
  const state = globalThis.expect?.getState?.() ?? {};
  const line = {
    at: new Date().toISOString(),
    testPath: state.testPath ? state.testPath.slice(REPO.length + 1) : undefined,
    test: state.currentTestName,
    command: ["stack", "config"].includes(args[0]) ? args.slice(0, 2).join(" ") : args[0],
    toolchain: `Node.js ${process.version}, Pulumi CLI ${cli.version}`,
    args,
    code: result.code,
    ms: result.ms,
    // CPU time of the command and every process it started (reaped children of this process, so exact when
    // one command runs at a time): unlike wall time, the same on a loaded machine as on an idle one.
    cpuMs: cpu === undefined || cpuBefore === undefined ? undefined : cpu - cpuBefore,
  };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}

/** User and system CPU milliseconds of this process's reaped children (Linux), when timing is on. */
function childCpuMs() {
  if (!process.env[TIMING_ENV]) return undefined;
  try {
    // Fields after the command name: cutime and cstime are the 14th and 15th, in clock ticks (100 a second).
    const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return undefined;
  }
}

/** One stack of one program, with its own backend folder and PULUMI_HOME. */
export class PulumiStack {
  /**
   * With `typeCheck: false`, the program is transpiled without a type check at each command (ts-node's
   * transpile-only mode, which costs a fraction of a check): for callers that type-checked it once with
   * typeCheckProgram. By default it runs as it does for a user, checked at every command.
   * @param {{ dir: string, stack?: string, account?: { baseUrl: string, adminKey?: string, accountKey?: string },
   *           env?: Record<string, string>, typeCheck?: boolean, log?: (line: string) => void }} options
   */
  static async create(options) {
    const cli = await ensurePulumiCli({ log: options.log ?? (() => {}) });
    const s = new PulumiStack(options, cli);
    await s.run(["stack", "init", s.stack]);
    return s;
  }

  constructor(options, cli) {
    this.dir = options.dir;
    this.stack = options.stack ?? "dev";
    this.cli = cli;
    this.home = mkdtempSync(join(tmpdir(), "pulumi-home-"));
    this.backend = mkdtempSync(join(tmpdir(), "pulumi-backend-"));
    const account = options.account ?? {};
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith("LLM_ACCOUNTS_") && !k.startsWith("PULUMI_")),
    );
    this.env = {
      ...clean,
      ...pulumiEnv(this.backend, cli),
      PULUMI_HOME: this.home,
      ...(account.baseUrl ? { LLM_ACCOUNTS_BASE_URL: account.baseUrl } : {}),
      ...(account.adminKey ? { LLM_ACCOUNTS_ADMIN_KEY: account.adminKey } : {}),
      ...(account.accountKey ? { LLM_ACCOUNTS_ACCOUNT_KEY: account.accountKey } : {}),
      ...(options.typeCheck === false
        ? { PULUMI_NODEJS_TRANSPILE_ONLY: "true", TS_NODE_COMPILER_OPTIONS: JSON.stringify(TS_DEPRECATIONS) }
        : {}),
      ...options.env,
    };
  }

  /**
   * Runs `pulumi <args>` in the program folder. Resolves with {code, stdout, stderr, ms}; rejects on a non-zero
   * exit unless `allowFailure`.
   */
  run(args, { allowFailure = false, env = {}, positional = [] } = {}) {
    const started = Date.now();
    const cpuBefore = childCpuMs();
    const stackFlag = args[0] === "stack" && args[1] === "init" ? [] : ["--stack", this.stack];
    // Values after "--" so that one such as "-1" is not taken for a flag.
    const full = [...args, "--non-interactive", ...stackFlag, ...(positional.length ? ["--", ...positional] : [])];
    return new Promise((resolvePromise, reject) => {
      execFile(
        this.cli.pulumi,
        full,
        { cwd: this.dir, env: { ...this.env, ...env }, maxBuffer: 256 * 1024 * 1024 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
          const result = { code, stdout, stderr, ms: Date.now() - started };
          recordTiming(this.cli, args, result, cpuBefore);
          if (code !== 0 && !allowFailure) {
            const e = new Error(`pulumi ${args.join(" ")} exited ${code}\n${stdout}\n${stderr}`);
            e.result = result;
            reject(e);
          } else resolvePromise(result);
        },
      );
    });
  }

  up(extra = [], opts) {
    return this.run(["up", "--yes", "--skip-preview", ...extra], opts);
  }
  preview(extra = [], opts) {
    return this.run(["preview", "--diff", ...extra], opts);
  }
  refresh(extra = [], opts) {
    return this.run(["refresh", "--yes", ...extra], opts);
  }
  destroy(extra = [], opts) {
    return this.run(["destroy", "--yes", "--skip-preview", ...extra], opts);
  }
  async setConfig(key, value, { secret = false } = {}) {
    await this.run(["config", "set", ...(secret ? ["--secret"] : [])], { positional: [key, String(value)] });
  }
  async removeConfig(key) {
    await this.run(["config", "rm", key]);
  }
  /** Stack outputs as JSON (secrets as "[secret]" unless showSecrets). */
  async outputs({ showSecrets = false } = {}) {
    const r = await this.run(["stack", "output", "--json", ...(showSecrets ? ["--show-secrets"] : [])]);
    return JSON.parse(r.stdout);
  }
  /** `pulumi stack export` as text. */
  async exportState() {
    return (await this.run(["stack", "export"])).stdout;
  }
  /** Every file of the backend folder, concatenated (what a state leak would be found in). */
  backendText() {
    const parts = [];
    const walk = (d) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else parts.push(readFileSync(p, "latin1"));
      }
    };
    walk(this.backend);
    return parts.join("\n");
  }
  /** Removes the stack's temporary folders (not the program folder). */
  dispose() {
    rmSync(this.home, { recursive: true, force: true });
    rmSync(this.backend, { recursive: true, force: true });
  }
}
