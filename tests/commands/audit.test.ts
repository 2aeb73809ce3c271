import { afterAll, beforeAll, beforeEach, describe, expect, test } from "@jest/globals";
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { PassThrough } from "node:stream";
import type { Emulator } from "../../provider/emulator/index.js";
import { runAudit } from "../../provider/commands/audit.js";
import type { AuditFinding } from "../../provider/policy/audit.js";
import { calls, emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import { SecretLedger } from "../support/secrets.js";

/** `llm-accounts audit` against the emulator, every object made out of band: no program manages any of them. */

let emu: Emulator;
let ledger: SecretLedger;
let work: string;
let keys: Record<string, string>;
const DAY = 86_400_000;

const pricing = (model: string, factor: number) => [{ model, pricing_factor: factor }];

function writeJson(name: string, value: unknown): string {
  const file = join(work, name);
  writeFileSync(file, JSON.stringify(value));
  return file;
}

/** Runs the command in-process with the emulator's credentials; stdout, the exit code or the error. */
async function audit(
  args: string[],
  options: { now?: number; stdin?: string } = {},
): Promise<{ out: string; code?: number; err?: Error }> {
  const stdin = new PassThrough();
  stdin.end(options.stdin ?? "");
  const stdout = new PassThrough();
  let out = "";
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  const env = {
    LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
    LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
    LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
  };
  const now = options.now;
  return runAudit(args, {
    stdin,
    stdout,
    stderr: new PassThrough(),
    env,
    stderrIsTty: false,
    now: now === undefined ? undefined : () => now,
  }).then(
    (code) => {
      ledger.expectAbsent(out, "the audit's output");
      return { out, code };
    },
    (err: Error) => {
      ledger.expectCleanError(err);
      return { out, err };
    },
  );
}

const CONFIG = {
  "api-key-ip-allowlist": { enforcementLevel: "mandatory", allowedRanges: ["10.0.0.0/8"] },
  "api-key-spend-limit": { enforcementLevel: "mandatory", maxMonthly: 500 },
  "api-key-models": "disabled",
  "api-key-geo": "disabled",
  "api-key-rotation": { enforcementLevel: "advisory", maxAgeDays: 90 },
  "sub-account-pricing-floor": "mandatory",
  "sub-account-models": { approvedModels: ["model-a", "model-b"] },
  "sub-account-balance": { enforcementLevel: "advisory", maxBalance: 100 },
  "account-budget": { enforcementLevel: "mandatory", maxTotalBalance: 1000 },
  "api-key-unique-aliases": "mandatory",
};

beforeAll(async () => {
  emu = await emulator();
  ledger = new SecretLedger(emu);
  work = mkdtempSync(join(tmpdir(), "llm-audit-"));
  const tight = { ip: { allow: ["10.1.2.3"] }, spend_limit: { monthly: 100 } };
  keys = {
    ci: emu.state.createKey("ci", tight).key,
    open: emu.state.createKey("open").key,
    twin: emu.state.createKey("ci", { ip: { allow: ["192.168.0.1"] }, spend_limit: { monthly: 900 } }).key,
  };
  writeFileSync(join(work, "keys.txt"), `# the keys to audit\n${keys.ci}\n\n${keys.open}\n${keys.twin}\n`);
  emu.state.createSubAccounts({ alias: "team-a", balance: 50, modelPricing: pricing("model-a", 1.2), count: 3 });
  emu.state.createSubAccounts({ alias: "team-a", balance: 20, modelPricing: pricing("model-a", 1.5), count: 1 });
  emu.state.createSubAccounts({
    alias: "resale",
    balance: 500,
    modelPricing: [...pricing("model-b", 0.8), ...pricing("model-x", 2)],
    count: 2,
  });
  ledger.record();
});
afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  await emu.close();
});
beforeEach(() => emu.clearRequests());

describe("llm-accounts audit", () => {
  test("the rules over the live account: one list, one get per key, a row per finding, exit 3 for mandatory findings", async () => {
    const { out, code, err } = await audit([
      "--policy-config",
      writeJson("config.json", CONFIG),
      "--keys",
      join(work, "keys.txt"),
    ]);
    expect(err).toBeUndefined();
    expect(code).toBe(3);
    expect(calls(emu)).toEqual({ "sub-account/list": 1, "api-key/get": 3 });
    const mask = (k: string) => `sk-...${k.slice(-4)}`;
    const rows = out.trimEnd().split("\n");
    expect(rows[0]).toMatch(/^OBJECT\s+RULE\s+LEVEL\s+MESSAGE$/);
    const cells = rows.slice(1, -1).map((r) => r.split(/ {2,}/));
    expect(cells).toEqual([
      [
        `API key ${mask(keys.open)}`,
        "api-key-ip-allowlist",
        "mandatory",
        "securityConfig.ip.allow is not set: the key can be used from any IP address",
      ],
      [
        `API key ${mask(keys.twin)}`,
        "api-key-ip-allowlist",
        "mandatory",
        'securityConfig.ip.allow[0] "192.168.0.1" is outside allowedRanges ("10.0.0.0/8")',
      ],
      [
        `API key ${mask(keys.open)}`,
        "api-key-spend-limit",
        "mandatory",
        "securityConfig.spendLimit.monthly is not set: the key's monthly spend is unlimited",
      ],
      [
        `API key ${mask(keys.twin)}`,
        "api-key-spend-limit",
        "mandatory",
        "securityConfig.spendLimit.monthly 900 is above maxMonthly 500",
      ],
      [
        expect.stringMatching(/^sub-accounts "resale" \(ids \d+, \d+\)$/),
        "sub-account-pricing-floor",
        "mandatory",
        'modelPricing[0].pricingFactor 0.8 for "model-b" is below minFactor 1',
      ],
      [
        expect.stringMatching(/^sub-accounts "resale"/),
        "sub-account-models",
        "advisory",
        'modelPricing[1].model "model-x" is not in approvedModels ("model-a", "model-b")',
      ],
      [
        expect.stringMatching(/^sub-account \d+ \(sk-\.\.\.\w{4}\)$/),
        "sub-account-balance",
        "advisory",
        "balance 500 is above maxBalance 100",
      ],
      [
        expect.stringMatching(/^sub-account \d+ \(sk-\.\.\.\w{4}\)$/),
        "sub-account-balance",
        "advisory",
        "balance 500 is above maxBalance 100",
      ],
      [
        "the account",
        "account-budget",
        "mandatory",
        "balance of 6 sub-accounts in 3 batches comes to 1170, above maxTotalBalance 1000",
      ],
      [
        `API key ${mask(keys.ci)}`,
        "api-key-unique-aliases",
        "mandatory",
        `alias "ci" is also the alias of API key ${mask(keys.twin)}`,
      ],
      [
        `API key ${mask(keys.twin)}`,
        "api-key-unique-aliases",
        "mandatory",
        `alias "ci" is also the alias of API key ${mask(keys.ci)}`,
      ],
    ]);
    // The two groups of alias team-a (two pricings) are two batches, as `import` declares them.
    expect(rows.at(-1)).toBe(
      "11 finding(s): 8 mandatory, 3 advisory, over 3 API key(s) and 6 sub-account(s) in 3 group(s); disabled: api-key-models, api-key-geo.",
    );
  });

  test("key age comes from the platform's created_at; --json for tools; exit 0 without mandatory findings", async () => {
    const config = writeJson("age.json", {
      all: "disabled",
      "api-key-rotation": { enforcementLevel: "advisory", maxAgeDays: 90 },
    });
    const young = await audit(["--policy-config", config, "--keys", "-", "--json"], { stdin: keys.ci });
    expect(young.code).toBe(0);
    expect(JSON.parse(young.out)).toMatchObject({ findings: [], summary: { apiKeys: 1, findings: 0, mandatory: 0 } });
    const old = await audit(["--policy-config", config, "--keys", "-", "--json"], {
      stdin: keys.ci,
      now: Date.now() + 100 * DAY,
    });
    expect(old.code).toBe(0);
    const { findings } = JSON.parse(old.out) as { findings: AuditFinding[] };
    expect(findings).toEqual([
      {
        object: `API key sk-...${keys.ci.slice(-4)}`,
        rule: "api-key-rotation",
        level: "advisory",
        severity: "medium",
        path: "createdAt",
        message: "the key is 100 days old, older than maxAgeDays 90",
        url: "https://github.com/pulumi-llm-accounts/pulumi-llm-accounts/blob/main/docs/guides/policy.md#api-key-rotation",
      },
    ]);
  });

  test("a config file it cannot use is refused before any request: unknown rule, bad option, bad level, not JSON", async () => {
    const cases: [unknown, string][] = [
      [{ "api-key-spend-limits": "mandatory" }, 'unknown rule "api-key-spend-limits" (rules: api-key-ip-allowlist, '],
      [{ "api-key-spend-limit": { maxMonthly: -1 } }, "api-key-spend-limit: maxMonthly: must be 0 or more"],
      [
        { "sub-account-balance": { maxBalance: "100" } },
        "sub-account-balance: maxBalance: Invalid input: expected number, received string",
      ],
      [
        { "api-key-geo": { approvedCountries: ["cn"] } },
        "api-key-geo: approvedCountries[0]: must be a two-letter upper-case country code",
      ],
      [
        { "api-key-geo": "strict" },
        'api-key-geo: "strict" is not an enforcement level (advisory, mandatory, disabled)',
      ],
      [
        { "api-key-geo": "remediate" },
        'api-key-geo: "remediate" cannot apply: no rule of pulumi-llm-accounts remediates',
      ],
      [[], "must be a JSON object of rule name -> level"],
    ];
    for (const [config, message] of cases) {
      const { err } = await audit(["--policy-config", writeJson("bad.json", config)]);
      expect(err?.message).toContain(message);
    }
    writeFileSync(join(work, "not.json"), "{ nope");
    expect((await audit(["--policy-config", join(work, "not.json")])).err?.message).toMatch(/not JSON/);
    expect((await audit([])).err?.message).toMatch(/--policy-config FILE is required/);
    expect(calls(emu)).toEqual({});
  });

  test("an option under `all` is refused, naming the rules that take it: `all` sets levels only", async () => {
    const { err } = await audit([
      "--policy-config",
      writeJson("all.json", { all: { enforcementLevel: "mandatory", maxMonthly: 500 } }),
    ]);
    expect(err?.message).toContain(
      'all: unknown option "maxMonthly": `all` sets the level of every rule only; give the option to the rule that takes it (api-key-spend-limit)',
    );
    const typo = await audit([
      "--policy-config",
      writeJson("all2.json", { all: { enforcementLevel: "advisory", maxMonthy: 1 } }),
    ]);
    expect(typo.err?.message).toContain(
      'all: unknown option "maxMonthy": `all` sets the level of every rule only (no rule takes it)',
    );
    expect(calls(emu)).toEqual({});
    const fine = await audit([
      "--policy-config",
      writeJson("all3.json", { all: { enforcementLevel: "disabled" } }),
      "--json",
    ]);
    expect(fine.code).toBe(0);
    expect((JSON.parse(fine.out) as { summary: { disabled: string[] } }).summary.disabled).toHaveLength(10);
  });

  test("console aliases are escaped in the table as every other value is: a newline forges no row, an escape sequence hides nothing", async () => {
    const forged = 'x"\nAPI key sk-...FAKE  api-key-geo  advisory  forged row';
    const alias = `evil\n${forged}\u001b[2K\u001b]8;;http://x\u0007\u009b31m`;
    const made = emu.state.createSubAccounts({ alias, balance: 1, modelPricing: pricing("model-a", 0.5), count: 1 });
    try {
      const { out, code } = await audit([
        "--policy-config",
        writeJson("esc.json", { all: "disabled", "sub-account-pricing-floor": "advisory" }),
      ]);
      expect(code).toBe(0);
      // No control character at all but the line ends; one header, one row, one summary.
      expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
      const rows = out.trimEnd().split("\n");
      // The header, the group "resale" (priced at 0.8), this group, the summary: nothing forged.
      expect(rows).toHaveLength(4);
      expect(rows[2]).toContain(
        `sub-accounts ${JSON.stringify(alias).replace(/\u009b/g, "\\u009b")} (id ${made[0].id})`,
      );
      expect(rows[2]).toMatch(
        /sub-account-pricing-floor\s+advisory\s+modelPricing\[0\]\.pricingFactor 0\.5 for "model-a" is below minFactor 1$/,
      );
    } finally {
      for (const s of made) emu.state.deleteSubAccount(s.token);
    }
  });
});

describe("the command line", () => {
  const cli = join(REPO, "dist/provider/cli.js");
  const runCli = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      const env = {
        PATH: process.env.PATH,
        LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
        LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
        LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
      };
      execFile(process.execPath, [cli, "audit", ...args], { env }, (err, stdout, stderr) =>
        done({ code: err ? Number(err.code) : 0, stdout, stderr }),
      );
    });

  test("exit codes: 3 with mandatory findings, 0 without, 1 for a config it refuses, 2 for a misused command", async () => {
    const mandatory = await runCli([
      "--policy-config",
      writeJson("m.json", { "sub-account-pricing-floor": "mandatory" }),
    ]);
    expect(mandatory).toMatchObject({ code: 3 });
    expect(mandatory.stdout).toMatch(/sub-account-pricing-floor\s+mandatory/);
    expect(
      await runCli(["--policy-config", writeJson("a.json", { "sub-account-pricing-floor": "advisory" })]),
    ).toMatchObject({ code: 0 });
    const refused = await runCli(["--policy-config", writeJson("u.json", { nope: "mandatory" })]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^llm-accounts: .*unknown rule "nope"/);
    expect((await runCli(["--policy-config"])).code).toBe(2);
  });

  test("without --policy-config the command is misused: exit 2, the audit's usage on stderr, no request", async () => {
    emu.clearRequests();
    const r = await runCli([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^llm-accounts: --policy-config FILE is required/);
    expect(r.stderr).toContain('Options of "audit"');
    expect(r.stderr).not.toContain('Options of "import"');
    expect(calls(emu)).toEqual({});
  });

  test("a stdout closed by its reader (| head) is a quiet end with the audit's own exit code, no stack trace", async () => {
    const config = writeJson("pipe.json", {
      "sub-account-pricing-floor": "mandatory",
      "sub-account-balance": { enforcementLevel: "advisory", maxBalance: 0 },
    });
    const env = {
      PATH: process.env.PATH,
      LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
      LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
      LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
    };
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((done) => {
      const child = spawn(process.execPath, [cli, "audit", "--policy-config", config], {
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      // The reader goes away before the first line: every write of the audit meets a closed pipe (EPIPE).
      child.stdout.destroy();
      let err = "";
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      child.on("close", (c) => done({ code: c, stderr: err }));
    });
    expect(stderr).toBe("");
    expect(code).toBe(3);
  });

  test("per-command help: each command's --help prints its own options only", async () => {
    const help = (args: string[]) =>
      new Promise<{ code: number; stdout: string }>((done) =>
        execFile(process.execPath, [cli, ...args], (err, stdout) => done({ code: err ? Number(err.code) : 0, stdout })),
      );
    const audit = await help(["audit", "--help"]);
    expect(audit.code).toBe(0);
    expect(audit.stdout).toMatch(/^Usage: llm-accounts audit \[options\]/);
    expect(audit.stdout).toContain("--policy-config FILE");
    expect(audit.stdout).not.toMatch(/Options of "(import|emulator)"|--state-file|--out DIR/);
    const imp = await help(["import", "-h"]);
    expect(imp.stdout).toMatch(/^Usage: llm-accounts import \[options\]/);
    expect(imp.stdout).not.toMatch(/--policy-config|--state-file/);
    const emulator = await help(["emulator", "--help"]);
    expect(emulator.stdout).toMatch(/^Usage: llm-accounts emulator \[options\]/);
    expect(emulator.stdout).not.toMatch(/--policy-config|--out DIR/);
    // Without a command: the commands, and how to get each one's options.
    const top = await help(["--help"]);
    expect(top.stdout).toMatch(/^Usage: llm-accounts <command> \[options\]/);
    expect(top.stdout).toMatch(/emulator[\s\S]*import[\s\S]*audit/);
    expect(top.stdout).toContain("llm-accounts <command> --help");
  });

  test("neither the audit nor the policy entry point loads @pulumi/policy (nor the policy entry @pulumi/pulumi or got)", () => {
    /** Every bare module a built file imports, following its relative imports. */
    const bare = (entry: string): Set<string> => {
      const seen = new Set<string>();
      const out = new Set<string>();
      const visit = (file: string) => {
        if (seen.has(file)) return;
        seen.add(file);
        const text = readFileSync(file, "utf8");
        // A static import or export, or a dynamic import (the transport loads got at its first request).
        for (const [, staticSpec, dynamicSpec] of text.matchAll(
          /(?:^|\n)\s*(?:import|export)[^;'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g,
        )) {
          const spec = staticSpec ?? dynamicSpec;
          if (spec.startsWith(".")) visit(resolve(dirname(file), spec));
          else out.add(spec);
        }
      };
      visit(entry);
      return out;
    };
    const audit = [...bare(join(REPO, "dist/provider/cli.js"))];
    expect(audit).toEqual(expect.arrayContaining(["got", "zod", "node:util"]));
    expect(audit.filter((s) => s.startsWith("@pulumi/policy"))).toEqual([]);
    const pack = [...bare(join(REPO, "dist/provider/policy/index.js"))];
    expect(pack.length).toBeGreaterThan(0);
    expect(pack.filter((s) => s.startsWith("@pulumi/") || s === "got")).toEqual([]);
  });
});
