import { afterAll, beforeAll, beforeEach, describe, expect, test } from "@jest/globals";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { Emulator } from "../../provider/emulator/index.js";
import { runSweep, SWEEP_EXIT, type SweepReport } from "../../provider/commands/sweep.js";
import { UsageError } from "../../provider/usageError.js";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import { SecretLedger } from "../support/secrets.js";

/** `llm-accounts sweep` against the emulator: what a test run left, by alias prefix, found and deleted. */

let emu: Emulator;
let ledger: SecretLedger;
let work: string;

const pricing = [{ model: "model-a", pricing_factor: 1 }];

async function sweep(args: string[], stdin = ""): Promise<{ out: string; code?: number; err?: Error }> {
  const input = new PassThrough();
  input.end(stdin);
  const stdout = new PassThrough();
  let out = "";
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  const env = {
    LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
    LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
    LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
  };
  return runSweep(args, { stdin: input, stdout, stderr: new PassThrough(), env, stderrIsTty: false }).then(
    (code) => {
      ledger.expectAbsent(out, "the sweep's output");
      return { out, code };
    },
    (err: Error) => {
      ledger.expectCleanError(err);
      return { out, err };
    },
  );
}

let testKeys: string[];
let keptKey: string;
let goneKey: string;

beforeAll(async () => {
  emu = await emulator({ rateLimits: false });
  work = mkdtempSync(join(tmpdir(), "llm-sweep-test-"));
});

beforeEach(() => {
  for (const k of emu.state.listKeys()) emu.state.deleteKey(k.key);
  emu.state.deleteSubAccounts(emu.state.listSubAccounts().map((s) => s.token));
  testKeys = [
    emu.state.createKey("e2e-run1-a").key,
    emu.state.createKey("e2e-run1-b", { spend_limit: { monthly: 5 } }).key,
  ];
  keptKey = emu.state.createKey("production").key;
  goneKey = emu.state.createKey("e2e-run0").key;
  emu.state.deleteKey(goneKey);
  emu.state.createSubAccounts({ alias: "e2e-run1-team", balance: 1, modelPricing: pricing, count: 3 });
  emu.state.createSubAccounts({ alias: "prod-team", balance: 1, modelPricing: pricing, count: 2 });
  ledger = new SecretLedger(emu);
  ledger.record(goneKey);
  emu.clearRequests();
});

afterAll(async () => {
  await emu.close();
  rmSync(work, { recursive: true, force: true });
});

describe("llm-accounts sweep", () => {
  test("a dry run by default: finds by prefix, prints masked, deletes nothing, exits 3; one list, one get per listed key", async () => {
    const keyFile = join(work, "keys.txt");
    writeFileSync(keyFile, [...testKeys, keptKey, goneKey].join("\n"));
    const r = await sweep(["--prefix", "e2e-", "--keys", keyFile]);
    expect(r.code).toBe(SWEEP_EXIT.found);
    expect(emu.calls()).toEqual({ "sub-account/list": 1, "api-key/get": 4 });
    expect(r.out).toContain(
      'Found 3 sub-account(s) and 2 API key(s) of 4 listed (1 already gone) with alias prefix "e2e-". Dry run: nothing deleted',
    );
    expect(r.out).toContain(`sk-...${testKeys[0].slice(-4)}  alias "e2e-run1-a"`);
    expect(r.out).not.toContain("production");
    expect(emu.state.listKeys()).toHaveLength(3);
    expect(emu.state.listSubAccounts()).toHaveLength(5);
  });

  test("--yes deletes exactly what it found, in one delete per type; a second run finds nothing and exits 0", async () => {
    const r = await sweep(["--prefix", "e2e-", "--keys", "-", "--yes"], [...testKeys, keptKey].join("\n"));
    expect(r.code).toBe(SWEEP_EXIT.clean);
    expect(emu.calls()).toEqual({
      "sub-account/list": 1,
      "api-key/get": 3,
      "sub-account/delete": 1,
      "api-key/delete": 1,
    });
    expect(r.out).toContain("Deleted 3 sub-account(s) and 2 API key(s) of 3 listed");
    expect(emu.state.listKeys().map((k) => k.alias)).toEqual(["production"]);
    expect(emu.state.listSubAccounts().map((s) => s.alias)).toEqual(["prod-team", "prod-team"]);
    emu.clearRequests();
    const again = await sweep(["--prefix", "e2e-", "--keys", "-", "--yes"], [...testKeys, keptKey].join("\n"));
    expect(again.code).toBe(SWEEP_EXIT.clean);
    expect(again.out).toContain(
      'Nothing to sweep with alias prefix "e2e-": 0 sub-accounts, 0 API keys of 3 listed (2 already gone).',
    );
    expect(Object.keys(emu.calls()).filter((op) => op.endsWith("/delete"))).toEqual([]);
  });

  test("--yes after lost answers on a platform that refuses gone objects with 400: each delete sent again meets 'gone' and is done; the keys of --keys are deleted too, exit 0", async () => {
    const gone400 = await emulator({ rateLimits: false, readings: ["gone-400"] });
    const [saved, savedLedger] = [emu, ledger];
    try {
      emu = gone400;
      ledger = new SecretLedger(emu);
      const keys = [emu.state.createKey("e2e-lost-a").key, emu.state.createKey("e2e-lost-b").key];
      emu.state.createSubAccounts({ alias: "e2e-lost-team", balance: 1, modelPricing: pricing, count: 3 });
      emu.setFaults([{ kind: "drop-after", ops: ["sub-account/delete", "api-key/delete"], count: 2 }]);
      const r = await sweep(["--prefix", "e2e-lost", "--keys", "-", "--yes"], keys.join("\n"));
      expect(r.err).toBeUndefined();
      expect(r.code).toBe(SWEEP_EXIT.clean);
      expect(r.out).toContain("Deleted 3 sub-account(s) and 2 API key(s) of 2 listed");
      expect(emu.state.listKeys()).toEqual([]);
      expect(emu.state.listSubAccounts()).toEqual([]);
    } finally {
      [emu, ledger] = [saved, savedLedger];
      await gone400.close();
    }
  });

  test("without a key list only sub-accounts are swept (the API cannot list keys); --json reports masked objects", async () => {
    const r = await sweep(["--prefix", "e2e-", "--json"]);
    expect(r.code).toBe(SWEEP_EXIT.found);
    expect(emu.calls()).toEqual({ "sub-account/list": 1 });
    const report = JSON.parse(r.out) as SweepReport;
    expect(report.found.map((o) => [o.kind, o.alias])).toEqual(Array(3).fill(["sub-account", "e2e-run1-team"]));
    for (const o of report.found) expect(o.hint).toMatch(/^sk-\.\.\.[A-Za-z0-9._~+/=-]{4}$/);
  });

  test("console aliases with C1 controls, bidi overrides and line separators are printed escaped, as audit prints them", async () => {
    emu.state.createSubAccounts({
      alias: "tst-\u0085nel\u202eltr\u2028ls\u2029ps\u0007",
      balance: 1,
      modelPricing: pricing,
      count: 1,
    });
    const { out } = await sweep(["--prefix", "tst-"]);
    expect(out).toContain('alias "tst-\\u0085nel\\u202eltr\\u2028ls\\u2029ps\\u0007"');
    expect(out).not.toMatch(/[\u0080-\u009f\u202a-\u202e\u2028\u2029]/);
  });

  test("--any-alias on a throwaway account finds everything; prefixes may repeat", async () => {
    const any = JSON.parse(
      (await sweep(["--any-alias", "--keys", "-", "--json"], [...testKeys, keptKey].join("\n"))).out,
    ) as SweepReport;
    expect(any.found).toHaveLength(3 + 2 + 3);
    const two = JSON.parse(
      (
        await sweep(
          ["--prefix", "prod", "--prefix", "e2e-run1-a", "--keys", "-", "--json"],
          [...testKeys, keptKey].join("\n"),
        )
      ).out,
    ) as SweepReport;
    expect(two.found.map((o) => o.alias).sort()).toEqual(["e2e-run1-a", "prod-team", "prod-team", "production"]);
  });

  test("misuse is refused before any call: no prefix, an empty prefix, both scopes, a key list line that is not a key", async () => {
    for (const [args, message] of [
      [[], /--prefix P is required/],
      [["--prefix", " "], /an empty prefix matches every alias/],
      [["--prefix", "e2e-", "--any-alias"], /exclude each other/],
    ] as const) {
      const r = await sweep([...args]);
      expect(r.err).toBeInstanceOf(UsageError);
      expect(r.err!.message).toMatch(message);
    }
    const bad = await sweep(["--prefix", "e2e-", "--keys", "-"], `${testKeys[0]}\n${emu.adminKey}\n`);
    expect(bad.err!.message).toMatch(
      /stdin, line 2: not an API key \(sk-\.\.\.\): this is an admin key \(sk-admin-\.\.\.\w{4}\)/,
    );
    expect(emu.requests()).toEqual([]);
  });

  test("the built CLI runs it (npm run sweep): exit code 3 on a dry run that finds, its output masked", async () => {
    const r = await new Promise<{ code: number; out: string }>((done) => {
      const env = {
        PATH: process.env.PATH ?? "",
        LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
        LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
        LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
      };
      execFile(
        process.execPath,
        [join(REPO, "dist/provider/cli.js"), "sweep", "--prefix", "e2e-"],
        { env },
        (err, stdout, stderr) => done({ code: err ? Number(err.code) : 0, out: stdout + stderr }),
      );
    });
    expect(r.code).toBe(3);
    expect(r.out).toContain("Found 3 sub-account(s) and 0 API key(s) of 0 listed");
    ledger.expectAbsent(r.out, "the CLI's output");
  });
});
