import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Emulator } from "../../provider/emulator/index.js";
import { linkNodeModules, typeCheckProgram } from "../../scripts/lib/stack.mjs";
import { emulator } from "../support/emulator.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  endFile,
  llmImport as runImportCli,
  PulumiStack,
  requirePulumiCli,
  SecretLedger,
  LOOK_ENV,
} from "./support.js";

// Issue 36, "another stack's objects": `llm-accounts import` into one stack of a project never adopts what another
// stack of the same project holds (both would hold it, and a destroy of one would delete the other's). Through the
// real CLI: stack dev holds a key and a batch; an import into a new stack prod of the same project adopts only what
// nobody holds, says why it left the rest out, and prod's up writes nothing and its destroy leaves dev's objects.
// Issue 43: nor what a stack of ANOTHER project on the same backend holds, one of the same short name (dev) too.

const WINDOW_ENV = { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" };
const pricing = [{ model: "model-a", pricing_factor: 1.2 }];

let emu: Emulator | undefined;
let ledger: SecretLedger | undefined;
let dir: string;
let dev: PulumiStack | undefined;
let prod: PulumiStack | undefined;
let teamB: PulumiStack | undefined;

beforeAll(async () => {
  await requirePulumiCli();
  emu = await emulator({ rateWindowMs: 1000 });
  ledger = new SecretLedger(emu);
  dir = mkdtempSync(join(tmpdir(), "llm-import-other-stack-"));
  linkNodeModules(dir);
}, CLI_BUILD_TIMEOUT_MS);

afterAll(async () => endFile({ emu, ledger, stacks: [teamB, prod, dev], folders: [dir] }), 5 * 60_000);

/** `llm-accounts import --out dir` from the built package, as a user runs it, the API keys on its stdin. */
const llmImport = (args: string[], env: Record<string, string>, stdin: string) => runImportCli(dir, args, stdin, env);

const writes = (e: Emulator) =>
  Object.fromEntries(
    Object.entries(e.calls()).filter(([op]) => !op.endsWith("/list") && !op.endsWith("/get") && op !== "models"),
  );

describe("import into a stack of a project whose other stack holds objects", () => {
  test(
    "prod adopts only what no stack holds, names what dev holds as left out; prod's up writes nothing, its destroy leaves dev's objects",
    async () => {
      const e = emu!;
      const key = e.state.createKey("ci").key;
      const team = e.state
        .createSubAccounts({ alias: "team", balance: 10, modelPricing: pricing, count: 2 })
        .map((s) => s.token);
      const credentials = {
        PATH: process.env.PATH ?? "",
        LLM_ACCOUNTS_BASE_URL: e.baseUrl,
        LLM_ACCOUNTS_ADMIN_KEY: e.adminKey,
        LLM_ACCOUNTS_ACCOUNT_KEY: e.accountKey,
      };
      expect((await llmImport(["--keys", "-"], credentials, `${key}\n`)).code).toBe(0);
      await typeCheckProgram(dir);
      dev = await PulumiStack.create({
        dir,
        stack: "dev",
        account: { baseUrl: e.baseUrl, adminKey: e.adminKey, accountKey: e.accountKey },
        env: { ...WINDOW_ENV, ...LOOK_ENV },
        typeCheck: false,
      });
      expect((await llmImport(["--stack", "dev", "--force", "--keys", "-"], dev.env, `${key}\n`)).code).toBe(0);
      await dev.up();
      ledger!.record(key, ...team);

      // The same project, the same backend: a second stack, prod.
      prod = new PulumiStack(
        {
          dir,
          stack: "prod",
          account: { baseUrl: e.baseUrl, adminKey: e.adminKey, accountKey: e.accountKey },
          env: { ...WINDOW_ENV, PULUMI_BACKEND_URL: dev.env.PULUMI_BACKEND_URL, PULUMI_HOME: dev.home },
          typeCheck: false,
        },
        dev.cli,
      );
      await prod.run(["stack", "init", "prod"]);
      const extra = e.state.createSubAccounts({ alias: "extra", balance: 1, modelPricing: pricing, count: 1 })[0].token;
      ledger!.record(extra);

      const imported = await llmImport(["--stack", "prod", "--force", "--keys", "-"], prod.env, `${key}\n`);
      expect(imported.code).toBe(0);
      expect(imported.stdout).toContain("held by stack dev of this project: not adopted (one object, one owner)");
      expect(imported.stdout).toContain("2 sub-account(s) held by stack dev of this project");
      const program = readFileSync(join(dir, "index.ts"), "utf8");
      expect(program).not.toContain("new llm.ApiKey(");
      expect(program).toMatch(/new llm\.SubAccountBatch\("extra"/);
      expect(program).not.toMatch(/new llm\.SubAccountBatch\("team"/);
      ledger!.expectAbsent(imported.stdout + imported.stderr, "the import's output");

      e.clearRequests();
      await prod.up();
      expect(writes(e)).toEqual({});
      await prod.destroy();
      expect(
        e.state
          .listSubAccounts()
          .map((s) => s.token)
          .sort(),
      ).toEqual([...team].sort());
      expect(e.state.hasKey(key)).toBe(true);

      // Another project (team B) on the same backend, with a stack of the same short name: dev.
      const other = mkdtempSync(join(tmpdir(), "llm-import-other-project-"));
      writeFileSync(join(other, "Pulumi.yaml"), "name: team-b\nruntime: nodejs\n");
      teamB = new PulumiStack(
        {
          dir: other,
          stack: "dev",
          account: { baseUrl: e.baseUrl, adminKey: e.adminKey, accountKey: e.accountKey },
          env: { ...WINDOW_ENV, PULUMI_BACKEND_URL: dev.env.PULUMI_BACKEND_URL, PULUMI_HOME: dev.home },
          typeCheck: false,
        },
        dev.cli,
      );
      await teamB.run(["stack", "init", "dev"]);
      const fromB = await runImportCli(other, ["--stack", "dev", "--force", "--keys", "-"], `${key}\n`, teamB.env);
      expect(fromB.code).toBe(0);
      expect(fromB.stdout).toMatch(
        /API key sk-\.\.\.\S{4}: held by stack organization\/[^/]+\/dev of project [^:]+: not adopted \(one object, one owner\)/,
      );
      expect(fromB.stdout).toMatch(/2 sub-account\(s\) held by stack organization\/[^/]+\/dev of project [^ ]+ \(/);
      expect(readFileSync(join(other, "index.ts"), "utf8")).not.toMatch(/new llm\.SubAccountBatch\("team"/);
      ledger!.expectAbsent(fromB.stdout + fromB.stderr, "team B's import's output");

      await dev.destroy();
      expect(e.state.listSubAccounts()).toEqual([]);
      expect(e.state.listKeys()).toEqual([]);
    },
    10 * 60_000,
  );
});
