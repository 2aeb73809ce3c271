import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KEY_READS_AT_ONCE } from "../../provider/commands/keyReads.js";
import { parseFaultSpec, type Emulator } from "../../provider/emulator/index.js";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import { SecretLedger } from "../support/secrets.js";

/**
 * `llm-accounts` as a new user meets it, run from the built file (npm run build): help, the version, each command's
 * usage with its exit codes, a wrong option, and a long audit's progress on stderr (issue 55).
 */

const CLI = join(REPO, "dist/provider/cli.js");
const COMMANDS = ["emulator", "import", "audit", "sweep", "doctor"];

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? "" }): Promise<Ran> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { env, timeout: 120_000 }, (err, stdout, stderr) =>
      done({ code: err ? Number((err as { code?: unknown }).code) : 0, stdout, stderr }),
    );
  });
}

let work: string;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first`);
  work = mkdtempSync(join(tmpdir(), "llm-cli-test-"));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("llm-accounts reads as one tool", () => {
  test("--version and -V print the package's version and Node.js's on stdout, exit 0", async () => {
    const { version } = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string };
    for (const flag of ["--version", "-V"]) {
      const r = await cli([flag]);
      expect(r).toEqual({
        code: 0,
        stdout: `pulumi-llm-accounts ${version} (Node.js ${process.version})\n`,
        stderr: "",
      });
    }
  });

  test("help, --help and no argument list every command of the table and the one exit-code scheme, on stdout", async () => {
    const outs = await Promise.all([cli([]), cli(["--help"]), cli(["help"])]);
    for (const r of outs) {
      expect(r.code).toBe(0);
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe(outs[0].stdout);
    }
    for (const name of COMMANDS) expect(outs[0].stdout).toMatch(new RegExp(`^  ${name} +\\S`, "m"));
    expect(outs[0].stdout).toContain("0 ok, 1 could not run, 2 misuse, 3 findings");
  });

  test("each command's --help and help <command> print the same usage: synopsis, options, exit codes", async () => {
    for (const name of COMMANDS) {
      const own = await cli([name, "--help"]);
      const asked = await cli(["help", name]);
      expect(own.code).toBe(0);
      expect(asked).toEqual(own);
      expect(own.stdout).toMatch(new RegExp(`^Usage: llm-accounts ${name} \\[options\\]\n`));
      expect(own.stdout).toContain(`Options of "${name}"`);
      expect(own.stdout).toMatch(
        /Exit codes \(docs\/commands\.md#exit-codes\):\n {2}0 {2}.*\n {2}1 {2}could not run: .*\n {2}2 {2}misuse: /,
      );
    }
    expect((await cli(["audit", "--help"])).stdout).toMatch(/\n {2}3 {2}a mandatory rule found something\n/);
    expect((await cli(["sweep", "--help"])).stdout).toMatch(/\n {2}3 {2}a dry run found objects/);
  });

  test("a wrong option, a missing value or an unknown command: the error and the usage on stderr, nothing on stdout, exit 2", async () => {
    for (const name of COMMANDS) {
      const r = await cli([name, "--bogus"]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^llm-accounts: Unknown option '--bogus'/);
      expect(r.stderr).toContain(`Usage: llm-accounts ${name} [options]`);
    }
    const missing = await cli(["import", "--keys", "k.txt"]);
    expect(missing).toMatchObject({ code: 2, stdout: "" });
    expect(missing.stderr).toMatch(/^llm-accounts: --out DIR is required/);
    expect(missing.stderr).toContain("Usage: llm-accounts import [options]");
    for (const args of [["audits"], ["help", "audits"]]) {
      const r = await cli(args);
      expect(r).toMatchObject({ code: 2, stdout: "" });
      expect(r.stderr).toContain('unknown command "audits"');
      expect(r.stderr).toContain("Usage: llm-accounts <command> [options]");
    }
  });
});

describe("progress on long work", () => {
  let emu: Emulator;
  let ledger: SecretLedger;
  let keyFile: string;
  let policy: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    // Each get answers after 400 ms: 300 keys, 32 at once, take about 4 s, past the first line of a log's progress.
    emu = await emulator({ rateLimits: false, faults: [parseFaultSpec("latency:ms=400,ops=api-key/get")] });
    const keys = Array.from({ length: 300 }, (_, i) => emu.state.createKey(`progress-${i}`).key);
    ledger = new SecretLedger(emu);
    keyFile = join(work, "keys.txt");
    writeFileSync(keyFile, keys.join("\n"));
    policy = join(work, "policy.json");
    writeFileSync(policy, "{}");
    env = {
      PATH: process.env.PATH ?? "",
      LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
      LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
      LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
    };
  });
  afterAll(async () => {
    await emu.close();
  });

  /**
   * The gets that arrived within 300 ms of the first: each answers after 400 ms, so a bounded reader has sent at most
   * KEY_READS_AT_ONCE by then, where a command firing every request at once had sent them all.
   */
  const getsAtOnce = (): number => {
    const gets = emu
      .requests()
      .filter((q) => q.op === "api-key/get")
      .map((q) => q.at);
    return gets.filter((at) => at < Math.min(...gets) + 300).length;
  };

  test("audit --keys of 300 keys: done of total and the time left on stderr (a line every few seconds in a log), stdout the report alone", async () => {
    emu.clearRequests();
    const started = Date.now();
    const r = await cli(["audit", "--policy-config", policy, "--keys", keyFile], env);
    expect(Date.now() - started).toBeGreaterThan(3000);
    expect(r.code).toBe(0);
    expect(emu.calls()).toEqual({ "sub-account/list": 1, "api-key/get": 300 });
    expect(getsAtOnce()).toBeLessThanOrEqual(KEY_READS_AT_ONCE);
    expect(r.stdout).toMatch(/^\d+ finding\(s\): .* over 300 API key\(s\)/m);
    expect(r.stdout).not.toContain("llm-accounts audit: read");
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(
      lines.slice(0, -1).every((l) => /^llm-accounts audit: read \d+ of 300 API key\(s\), about \d+s left$/.test(l)),
    ).toBe(true);
    expect(lines.at(-1)).toBe("llm-accounts audit: read 300 of 300 API key(s)");
    ledger.expectAbsent(r.stdout + r.stderr, "the audit's output");
  }, 60_000);

  test("--quiet and --json: no progress; --json's stdout is one JSON object; sweep's gets are bounded too", async () => {
    const quiet = await cli(["audit", "--policy-config", policy, "--keys", keyFile, "--quiet"], env);
    expect(quiet).toMatchObject({ code: 0, stderr: "" });
    emu.clearRequests();
    const json = await cli(["sweep", "--prefix", "progress-", "--keys", keyFile, "--json"], env);
    expect(getsAtOnce()).toBeLessThanOrEqual(KEY_READS_AT_ONCE);
    expect(json).toMatchObject({ code: 3, stderr: "" });
    expect((JSON.parse(json.stdout) as { found: unknown[] }).found).toHaveLength(300);
  }, 60_000);
});
