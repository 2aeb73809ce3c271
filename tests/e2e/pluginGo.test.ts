import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { execFile, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { ensureGoTool } from "../../scripts/go-tools.mjs";
import { cacheRoot, pulumiEnv } from "../../scripts/pulumi-cli.mjs";
import { packageSchema } from "../../provider/plugin/schema.js";
import { REPO } from "../support/programDir.js";
import { CLI_BUILD_TIMEOUT_MS, endFile, providerPluginDir, setUpFile, writesOf } from "./support.js";

// Issue 56: a Go program manages a key and a batch through the provider plugin, with the Go SDK generated from the
// plugin's schema by Pulumi's Go generator (what `pulumi package gen-sdk --language go` runs inside Pulumi's Go
// language host, which the Go module proxy does not serve: tools/pulumi-gen-sdk), built with the machine's Go against
// the Go SDK at the CLI's version and run inline through the Automation API (no Go language host): up, the gate
// (`preview --refresh --expect-no-changes`), a change, destroy, against the emulator, no key in any output. The
// binary is cached by the digest of its sources, the schema and the CLI's version: built once (a minute or two
// with warm Go caches), then each run costs only the Pulumi commands.

/** A test of a few `pulumi` commands on a machine that may be loaded. */
const STEP_TIMEOUT_MS = 5 * 60_000;
const PROGRAM = join(REPO, "tests/e2e/programs/go");
const run = setUpFile();
let work: string;
let pluginDir: string;
let binary: string;
const GO_ENV = { GONOSUMDB: "github.com/pulumi/pulumi", GOFLAGS: "-mod=mod", CGO_ENABLED: "0" };

function go(args: string[], cwd: string, env: Record<string, string> = {}): void {
  const r = spawnSync("go", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, ...GO_ENV, ...env },
    timeout: 20 * 60_000,
  });
  if (r.status !== 0)
    throw new Error(`go ${args.join(" ")} failed (${r.error?.message ?? r.status}):\n${(r.stderr ?? "").slice(-4000)}`);
}

/** Pulumi's SDK generators (scripts/go-tools.mjs). */
const generator = () => join(ensureGoTool("pulumi-gen-sdk").binDir, "pulumi-gen-sdk");

/** The Go program built with the generated SDK, from the cache when its sources, the schema and the CLI are the same. */
function buildProgram(cli: { pulumi: string; version: string }, env: Record<string, string>): string {
  const schema = JSON.stringify(packageSchema());
  const digest = createHash("sha256")
    .update(readFileSync(join(PROGRAM, "main.go")))
    .update(readFileSync(join(PROGRAM, "go.mod")))
    .update(schema)
    .update(readFileSync(join(REPO, "tools/pulumi-gen-sdk/main.go")))
    .update(cli.version)
    .digest("hex")
    .slice(0, 16);
  const cached = join(cacheRoot(), `llm-go-program-${digest}`, "llm-go");
  if (existsSync(cached)) return cached;
  const dir = mkdtempSync(join(tmpdir(), "llm-go-build-"));
  try {
    cpSync(PROGRAM, dir, { recursive: true });
    writeFileSync(join(dir, "schema.json"), schema);
    const gen = spawnSync(generator(), ["go", join(dir, "schema.json"), join(dir, "gen")], {
      cwd: dir,
      env,
      encoding: "utf8",
    });
    if (gen.status !== 0) throw new Error(`pulumi-gen-sdk go failed:\n${gen.stdout}\n${gen.stderr}`);
    mkdirSync(join(dir, "sdk", "go"), { recursive: true });
    cpSync(join(dir, "gen", "llmaccounts"), join(dir, "sdk", "go", "llmaccounts"), { recursive: true });
    go(["mod", "edit", `-require=github.com/pulumi/pulumi/sdk/v3@${cli.version}`], dir);
    go(["mod", "tidy"], dir);
    const out = mkdtempSync(join(cacheRoot(), ".llm-go-"));
    go(["build", "-trimpath", "-o", join(out, "llm-go"), "."], dir);
    mkdirSync(join(cached, ".."), { recursive: true });
    rmSync(join(cached, ".."), { recursive: true, force: true });
    renameSync(out, join(cached, ".."));
    return cached;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Step {
  changes?: Record<string, number>;
  keyHint?: string;
  tokens: number;
  keySecret: boolean;
}

/** One step of the Go program (up, gate, destroy): its JSON line; its output kept for the secrets check. */
function step(name: string, declared: { alias: string; count: number }): Promise<Step> {
  const env = {
    ...process.env,
    ...pulumiEnv(join(work, "backend"), run.cli),
    PATH: [run.cli.binDir, pluginDir, process.env.PATH].join(delimiter),
    PULUMI_HOME: join(work, "home"),
    LLM_GO_WORKDIR: join(work, "program"),
    LLM_GO_ALIAS: declared.alias,
    LLM_GO_COUNT: String(declared.count),
    LLM_ACCOUNTS_BASE_URL: run.emu.baseUrl,
    LLM_ACCOUNTS_ADMIN_KEY: run.emu.adminKey,
    LLM_ACCOUNTS_ACCOUNT_KEY: run.emu.accountKey,
  };
  return new Promise((resolve, reject) => {
    execFile(binary, [name], { env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      run.printed += stdout + stderr;
      run.ledger.record();
      if (err) reject(new Error(`llm-go ${name} failed:\n${stdout}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split("\n").pop()!) as Step);
    });
  });
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "llm-go-"));
  for (const d of ["backend", "home", "program"]) mkdirSync(join(work, d));
  pluginDir = providerPluginDir();
  binary = buildProgram(run.cli, {
    ...process.env,
    ...pulumiEnv(join(work, "backend"), run.cli),
    PULUMI_HOME: join(work, "home"),
  } as Record<string, string>);
}, CLI_BUILD_TIMEOUT_MS);

afterAll(() => endFile({ emu: run.emu, ledger: run.ledger, folders: [work, pluginDir] }), 5 * 60_000);

describe("a Go program on the provider plugin (generated SDK, Automation API)", () => {
  test(
    "up, the gate, a change, the gate, destroy; the key secret and never printed",
    async () => {
      const first = await step("up", { alias: "go-key", count: 2 });
      expect(first).toMatchObject({ changes: { create: 3 }, tokens: 2, keySecret: true });
      const key = run.emu.state.listKeys().find((k) => k.alias === "go-key");
      expect(first.keyHint).toBe(`sk-...${key!.key.slice(-4)}`);
      expect((await step("gate", { alias: "go-key", count: 2 })).changes).not.toHaveProperty("update");

      run.emu.clearRequests();
      const changed = await step("up", { alias: "go-key-2", count: 3 });
      expect(changed).toMatchObject({ changes: { update: 2 }, tokens: 3 });
      expect(writesOf(run.emu)).toEqual({ "api-key/edit": 1, "sub-account/create": 1, "sub-account/edit": 1 });
      expect(run.emu.state.getKey(key!.key)?.alias).toBe("go-key-2");
      await step("gate", { alias: "go-key-2", count: 3 });

      await step("destroy", { alias: "go-key-2", count: 3 });
      expect(run.emu.state.listKeys()).toEqual([]);
      expect(run.emu.state.listSubAccounts()).toEqual([]);
      run.ledger.expectAbsent(run.printed, "the Go program's output");
    },
    STEP_TIMEOUT_MS,
  );
});

describe("the Python SDK generated from the same schema", () => {
  test("compiles with the machine's python3, and keeps the key secret", () => {
    const dir = mkdtempSync(join(tmpdir(), "llm-py-sdk-"));
    try {
      writeFileSync(join(dir, "schema.json"), JSON.stringify(packageSchema()));
      const gen = spawnSync(generator(), ["python", join(dir, "schema.json"), join(dir, "sdk")], { encoding: "utf8" });
      expect(gen.stderr).toBe("");
      const compiled = spawnSync("python3", ["-m", "compileall", "-q", join(dir, "sdk")], { encoding: "utf8" });
      expect([compiled.error?.message, compiled.status, compiled.stdout + compiled.stderr]).toEqual([undefined, 0, ""]);
      const apiKey = readFileSync(join(dir, "sdk/pulumi_llm_accounts/api_key.py"), "utf8");
      expect(apiKey).toMatch(/additional_secret_outputs=\["adoptKey", "key", "previousKey"\]/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
