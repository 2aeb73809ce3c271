import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Emulator } from "../../provider/emulator/index.js";
import { RULES } from "../../provider/policy/index.js";
import { cliAtLeast } from "../support/cliVersion.js";
import { REPO } from "../support/programDir.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  disposeStack,
  expectSettled,
  expectSwept,
  setUpFile,
  stackFor,
  type PulumiStack,
  type SecretLedger,
} from "./support.js";

/**
 * The policy pack path of docs/guides/policy.md on the real CLI: examples/policy-pack installed as a user installs it (npm, with
 * the package from its tarball), run by `pulumi preview/up --policy-pack` through the language host's RunPlugin.
 */

const run = promisify(execFile);
// Made out of band, adopted by the program.
let legacy: string;
let tokens: string[];
const file = setUpFile({
  seed: (emu) => {
    legacy = emu.state.createKey("legacy").key;
    tokens = emu.state
      .createSubAccounts({
        alias: "team",
        balance: 10,
        modelPricing: [{ model: "model-a", pricing_factor: 1.5 }],
        count: 2,
      })
      .map((s) => s.token);
  },
});
let emu: Emulator;
let ledger: SecretLedger;
let stack: PulumiStack;
let pack: string;
let scratch: string;

/** Every rule mandatory with tight options, or every rule advisory with the same options. */
function packConfig(level: "mandatory" | "advisory"): string {
  const file = join(scratch, `policy-config.${level}.json`);
  const config = {
    "api-key-ip-allowlist": { enforcementLevel: level, allowedRanges: ["10.0.0.0/8"] },
    "api-key-spend-limit": { enforcementLevel: level, maxMonthly: 500 },
    "api-key-models": { enforcementLevel: level, approvedModels: ["model-a", "model-b"] },
    "api-key-geo": { enforcementLevel: level, approvedCountries: ["CN", "SG"] },
    "api-key-rotation": { enforcementLevel: level, maxAgeDays: 90, minOverlapHours: 24 },
    "sub-account-pricing-floor": { enforcementLevel: level, minFactor: 1 },
    "sub-account-models": { enforcementLevel: level, approvedModels: ["model-a"] },
    "sub-account-balance": { enforcementLevel: level, maxBalance: 1000 },
    "account-budget": { enforcementLevel: level, maxTotalBalance: 1000 },
    "api-key-unique-aliases": level,
  };
  writeFileSync(file, JSON.stringify(config));
  return file;
}

const withPack = (level: "mandatory" | "advisory") => [
  "--policy-pack",
  pack,
  "--policy-pack-config",
  packConfig(level),
];
/** The ready pack inside the installed package: no folder of the user's own, no TypeScript. */
const ready = () => join(pack, "node_modules/pulumi-llm-accounts/policy-pack");
const withReady = (level: "mandatory" | "advisory") => [
  "--policy-pack",
  ready(),
  "--policy-pack-config",
  packConfig(level),
];

/** A finding's heading as Pulumi prints it: `[mandatory] [severity: high]  api-key-spend-limit  (type: name)`. */
const heading = (level: "mandatory" | "advisory", rule: string, resource = "") =>
  new RegExp(
    `\\[${level}\\]\\s+(?:\\[severity: \\w+\\]\\s+)?${rule}${resource ? `\\s+\\(${resource.replace(/[()]/g, "\\$&")}\\)` : ""}`,
  );

/**
 * The findings of a run: every line Pulumi prints that is one of our messages (object, property path, what is
 * wrong, and `(rule)` at the end), sorted. The message names the resource and the rule, so equal lists are equal
 * sets of (resource, rule), whatever the output's layout around them.
 */
function findings(output: string): string[] {
  const rules = new Set(RULES.map((r) => r.name));
  const lines = output.split("\n").map((l) => l.trim().replace(/·$/, ""));
  return [...new Set(lines.filter((l) => rules.has(/\(([a-z-]+)\)$/.exec(l)?.[1] ?? "") && !/^\[/.test(l)))].sort();
}

beforeAll(async () => {
  ({ emu, ledger } = file);
  scratch = mkdtempSync(join(tmpdir(), "llm-policy-e2e-"));
  // The pack as a user installs it: a copy of the example, `npm install` with this package from its tarball
  // (built already; npm's cache answers the rest).
  pack = join(scratch, "policy-pack");
  cpSync(join(REPO, "examples/policy-pack"), pack, { recursive: true });
  const { stdout } = await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", scratch], {
    cwd: REPO,
  });
  const [tarball] = JSON.parse(stdout.slice(stdout.indexOf("["))) as [{ filename: string }];
  const manifest = JSON.parse(readFileSync(join(pack, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  manifest.dependencies["pulumi-llm-accounts"] = `file:${join(scratch, tarball.filename)}`;
  writeFileSync(join(pack, "package.json"), JSON.stringify(manifest, null, 2));
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], {
    cwd: pack,
    maxBuffer: 64 * 1024 * 1024,
  });

  stack = await stackFor(join(REPO, "tests/e2e/programs/policy"), emu);
  await stack.setConfig("legacyKey", legacy, { secret: true });
  await stack.setConfig("teamTokens", JSON.stringify(tokens), { secret: true });
  // Breaks two mandatory rules: a key's monthly limit above maxMonthly, and 3 x 400 above maxTotalBalance.
  await stack.setConfig("monthly", 1000);
  await stack.setConfig("balance", 400);
}, CLI_BUILD_TIMEOUT_MS);

afterAll(async () => {
  try {
    ledger?.expectAbsent(file.printed, "the output of every pulumi command");
    // The stack owns the adopted key and sub-accounts too: destroyed, nothing may be left for the sweep to find.
    if (stack) await file.pulumi(stack.destroy());
    if (emu) await expectSwept(emu, ledger);
  } finally {
    disposeStack(stack);
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    await emu?.close();
  }
}, 300_000);

describe("the example policy pack on the real CLI", () => {
  test("a preview that breaks mandatory rules fails, naming each rule, resource and property path", async () => {
    const r = await file.pulumi(stack.preview(withPack("mandatory"), { allowFailure: true }));
    expect(r.code).not.toBe(0);
    expect(r.stdout).toMatch(
      heading("mandatory", "api-key-spend-limit", "pulumi-nodejs:dynamic/llm-accounts:ApiKey: ci"),
    );
    // The rule's metadata reaches Pulumi's output.
    expect(r.stdout).toMatch(/\[mandatory\]\s+\[severity: high\]\s+api-key-spend-limit/);
    expect(r.stdout).toContain(
      'ApiKey "ci": securityConfig.spendLimit.monthly 1000 is above maxMonthly 500 (api-key-spend-limit)',
    );
    expect(r.stdout).toMatch(heading("mandatory", "account-budget"));
    expect(r.stdout).toContain(
      "the stack: count x balance of 3 sub-accounts in 1 batch comes to 1200, above maxTotalBalance 1000 (account-budget)",
    );
    // The adopted key complies: nothing about it, and its secret input is nowhere.
    expect(r.stdout).not.toMatch(/ApiKey "legacy"/);
  }, 300_000);

  test("the ready pack inside the package (node_modules/pulumi-llm-accounts/policy-pack) finds what the example pack finds", async () => {
    const example = await file.pulumi(stack.preview(withPack("mandatory"), { allowFailure: true }));
    const r = await file.pulumi(stack.preview(withReady("mandatory"), { allowFailure: true }));
    expect(r.code).not.toBe(0);
    expect(r.stdout).toContain(
      'ApiKey "ci": securityConfig.spendLimit.monthly 1000 is above maxMonthly 500 (api-key-spend-limit)',
    );
    expect(findings(r.stdout)).toEqual(findings(example.stdout));
    expect(findings(r.stdout).length).toBeGreaterThanOrEqual(2);
    // The compiled pack of the package: its name and the package's version; nothing for ts-node to check.
    const version = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;
    expect(r.stdout).toMatch(
      new RegExp(`Policy Packs run:[\\s\\S]*llm-accounts-policies\\|local\\|\\S+\\s+${version.replace(/\./g, "\\.")}`),
    );
  }, 300_000);

  test("a bad option is refused by the engine through the rule's configSchema, naming the rule and the option", async () => {
    const bad = join(scratch, "policy-config.bad.json");
    writeFileSync(bad, JSON.stringify({ "api-key-spend-limit": { enforcementLevel: "mandatory", maxMonthly: -1 } }));
    const r = await file.pulumi(
      stack.preview(["--policy-pack", pack, "--policy-pack-config", bad], { allowFailure: true }),
    );
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/api-key-spend-limit: maxMonthly: .*0/);
  }, 300_000);

  test("`pulumi up` (with its preview, as CI runs it) is blocked before anything reaches the platform", async () => {
    emu.clearRequests();
    const r = await file.pulumi(stack.run(["up", "--yes", ...withPack("mandatory")], { allowFailure: true }));
    expect(r.code).not.toBe(0);
    expect(r.stdout).toMatch(/api-key-spend-limit/);
    expect(emu.requests()).toEqual([]);
  }, 300_000);

  test("advisory rules warn and `up` proceeds; the pack handles adopted keys and tokens", async () => {
    const r = await file.pulumi(stack.run(["up", "--yes", ...withPack("advisory")]));
    expect(r.stdout).toMatch(heading("advisory", "api-key-spend-limit"));
    expect(r.stdout).toMatch(heading("advisory", "account-budget"));
    expect(
      emu.state
        .listKeys()
        .map((k) => k.alias)
        .sort(),
    ).toEqual(["ci", "legacy"]);
    expect(emu.state.listSubAccounts()).toHaveLength(3);
    ledger.record();
    // Settled without the pack: the pack checks the program, the settled check proves the provider.
    await expectSettled(stack);
  }, 300_000);

  test("`pulumi policy analyze` runs the ready pack on the stored state, without the program: the preview's findings", async () => {
    emu.clearRequests();
    // The state of the advisory `up`: monthly 1000, balance 400, both above the mandatory caps.
    const analyzed = await file.pulumi(
      stack.run(["policy", "analyze", ...withReady("mandatory")], { allowFailure: true }),
    );
    expect(analyzed.code).not.toBe(0);
    // Stored state only: not one request to the platform, and no credential in its environment needed.
    expect(emu.requests()).toEqual([]);
    if (findings(analyzed.stdout).length === 0)
      throw new Error(`no finding in the output of policy analyze:\n${analyzed.stdout}\n${analyzed.stderr}`);
    const preview = await file.pulumi(stack.preview(withReady("mandatory"), { allowFailure: true }));
    expect(findings(analyzed.stdout)).toEqual(findings(preview.stdout));
    expect(findings(analyzed.stdout).join("\n")).toMatch(
      /api-key-spend-limit[\s\S]*account-budget|account-budget[\s\S]*api-key-spend-limit/,
    );
  }, 300_000);

  test("`pulumi policy analyze --file` (CLI 3.249+) audits an exported state with neither backend nor passphrase: the same findings", async () => {
    const exported = join(scratch, "exported-state.json");
    await file.pulumi(stack.run(["stack", "export", "--file", exported]));
    // Outside the project, with no backend, no passphrase and no platform credential: only the CLI and the pack.
    const bare = {
      PATH: `${stack.cli.binDir}:${process.env.PATH ?? ""}`,
      HOME: process.env.HOME ?? scratch,
      PULUMI_HOME: mkdtempSync(join(scratch, "pulumi-home-")),
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    };
    emu.clearRequests();
    const analyzed = await run(
      stack.cli.pulumi,
      ["policy", "analyze", "--file", exported, "--non-interactive", ...withReady("mandatory")],
      { cwd: scratch, env: bare },
    ).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (e: { code?: number; stdout?: string; stderr?: string }) => ({
        code: e.code ?? 1,
        out: `${e.stdout ?? ""}${e.stderr ?? ""}`,
      }),
    );
    file.printed += analyzed.out;
    if (!cliAtLeast(stack.cli.version, "3.249.0")) {
      // The floor has no such flag.
      expect(analyzed.code).not.toBe(0);
      expect(analyzed.out).toMatch(/unknown flag: --file/);
      return;
    }
    expect(analyzed.code).not.toBe(0);
    expect(emu.requests()).toEqual([]);
    // The state's secrets (keys, tokens) cannot be decrypted without the passphrase: the CLI reads them as
    // "[secret]", and no rule reads a key or token, so the findings are those of the stack's own analyze.
    expect(analyzed.out).toMatch(/could not decrypt secrets/);
    const onStack = await file.pulumi(
      stack.run(["policy", "analyze", ...withReady("mandatory")], { allowFailure: true }),
    );
    expect(findings(analyzed.out)).toEqual(findings(onStack.stdout));
    expect(findings(analyzed.out).join("\n")).toMatch(/api-key-spend-limit/);
  }, 300_000);

  test("a compliant program passes the mandatory pack with no violation", async () => {
    await stack.setConfig("monthly", 100);
    await stack.setConfig("balance", 10);
    const r = await file.pulumi(stack.preview(withPack("mandatory")));
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/\[(mandatory|advisory)\]/);
    // The pack did run (and found nothing).
    expect(r.stdout).toMatch(/Policy Packs run:[\s\S]*llm-accounts-policies\|local\|\S+\s+0\.1\.0/);
  }, 300_000);
});
