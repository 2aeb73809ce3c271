import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { LlmAccountsClient } from "../../provider/client/client.js";
import { resolveClientOptions } from "../../provider/client/config.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { typeCheckProgram, type RunResult } from "../../scripts/lib/stack.mjs";
import {
  endFile,
  expectNoSecretsAround,
  expectSettled,
  llmImport as runImport,
  PulumiStack,
  setUpFile,
  type SecretLedger,
  LOOK_ENV,
} from "./support.js";
import { writeCalls } from "../support/emulatorCalls.js";

// Issue 28: `llm-accounts import` run again on a stack that already manages the account never writes a program
// whose up deletes or replaces what the state holds. One stack, a few objects, as few pulumi commands as the
// story needs: import, up, console renames, import again (no --keys, then a partial --keys, then with the
// adoption config gone), each followed by a preview that deletes and replaces nothing and an up that writes nothing.

const WINDOW_ENV = { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" };

const pricing = (model: string, factor: number) => [{ model, pricing_factor: factor }];
let ciRunner: string;
let deployBot: string;
const file = setUpFile({
  emulator: { rateWindowMs: 1000 },
  seed: (emu) => {
    ciRunner = emu.state.createKey("ci-runner").key;
    deployBot = emu.state.createKey("deploy-bot", { ip: { allow: ["10.0.0.0/8"] } }).key;
    emu.state.createSubAccounts({ alias: "team-a", balance: 50, modelPricing: pricing("model-a", 1.2), count: 2 });
    emu.state.createSubAccounts({ alias: "ops", balance: 5, modelPricing: pricing("model-b", 2), count: 1 });
  },
  folder: "llm-reimport-",
});
let emu: Emulator;
let ledger: SecretLedger;
let dir: string;
let stack: PulumiStack;

const writesIn = writeCalls;
const liveTokens = () =>
  emu.state
    .listSubAccounts()
    .map((s) => s.token)
    .sort();
const liveKeys = () =>
  emu.state
    .listKeys()
    .map((k) => k.key)
    .sort();

async function llmImport(args: string[], stdin = ""): Promise<RunResult> {
  const r = await file.pulumi(runImport(dir, ["--stack", stack.stack, "--force", ...args], stdin, stack.env));
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return r;
}

/** The operations `pulumi preview --json` plans, by resource name (same-steps left out). */
async function plannedOps(extra: string[] = []): Promise<Record<string, string>> {
  const r = await file.pulumi(stack.run(["preview", "--json", ...extra]));
  const steps = (JSON.parse(r.stdout) as { steps?: { op: string; urn: string }[] }).steps ?? [];
  return Object.fromEntries(
    steps
      .filter((s) => s.op !== "same" && !s.urn.includes("pulumi:pulumi:Stack"))
      .map((s) => [s.urn.split("::").pop()!, s.op]),
  );
}

/** `up` (with `extra`), its calls to the platform, then the settled checks. */
async function upCalls(extra: string[] = []): Promise<Record<string, number>> {
  emu.clearRequests();
  await file.pulumi(stack.up(extra));
  const calls = emu.calls();
  await expectSettled(stack);
  return calls;
}

/** The console, over the platform's HTTP API: what a user does in the web UI between two imports. */
function consoleClient(): LlmAccountsClient {
  return new LlmAccountsClient(
    resolveClientOptions(
      undefined,
      {},
      {
        LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
        LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
        LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
      },
    ),
  );
}

beforeAll(() => {
  ({ emu, ledger, dir } = file);
});

afterAll(() => endFile({ emu, ledger, stacks: [stack], destroy: [] }), 5 * 60_000);

describe("llm-accounts import run again on a stack that manages the account (issue 28)", () => {
  test("first import and up: everything adopted, nothing written", async () => {
    const credentials = {
      PATH: process.env.PATH ?? "",
      LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
      LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
      LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
    };
    const first = await file.pulumi(runImport(dir, ["--keys", "-"], `${ciRunner}\n${deployBot}\n`, credentials));
    expect(first.code).toBe(0);
    await typeCheckProgram(dir);
    stack = await PulumiStack.create({
      dir,
      account: { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey },
      env: { ...WINDOW_ENV, ...LOOK_ENV },
      typeCheck: false,
    });
    // An empty stack: nothing to keep, the keys stored.
    const stored = await llmImport(["--keys", "-"], `${ciRunner}\n${deployBot}\n`);
    expect(stored.stdout).not.toContain("Kept");
    const before = [liveKeys(), liveTokens()];
    expect(writesIn(await upCalls())).toEqual({});
    expect([liveKeys(), liveTokens()]).toEqual(before);
  }, 300_000);

  test("console renames (a key's alias, a team's alias), then import --force without --keys: same resource names, no delete, no replace, up --refresh writes nothing", async () => {
    const console = consoleClient();
    await console.apiKeys.edit({ key: ciRunner, alias: "ci-runner-renamed", securityConfig: {} });
    const team = emu.state.listSubAccounts().filter((s) => s.alias === "team-a");
    await console.subAccounts.edit({
      sks: team.map((s) => s.token),
      alias: "team-a-renamed",
      modelPricing: [{ model: "model-a", pricingFactor: 1.2 }],
    });
    const [late] = emu.state.createSubAccounts({
      alias: "late",
      balance: 1,
      modelPricing: pricing("model-a", 1),
      count: 1,
    });
    const before = [liveKeys(), liveTokens()];

    const again = await llmImport([]);
    expect(again.stdout).toContain(
      'Kept 4 object(s) stack dev manages, under their resource names: "ci-runner", "deploy-bot", "ops", "team-a".',
    );
    expect(again.stdout).toContain('Added 1 object(s) it does not manage yet: "late".');
    expect(again.stdout).toContain(
      'Changed in the console since the state last read them (declared as they are now): "ci-runner", "team-a".',
    );
    expect(again.stdout).toContain("pulumi up --refresh --stack dev");
    // Held keys need no adoptKey (the state holds them; one would go stale at their next rotation): none stored.
    expect(again.stdout).toContain("Stored the 0 API key(s)");
    const program = readFileSync(join(dir, "index.ts"), "utf8");
    expect(program).not.toMatch(/^ {2}adoptKey:/m);
    expect(program).toContain('new llm.ApiKey("ci-runner", {\n  alias: "ci-runner-renamed",');
    expect(program).toContain('new llm.SubAccountBatch("team-a", {\n  alias: "team-a-renamed",');
    expect(program).toContain(`adoptTokens: tokensOf("late", [${late.id}]),`);

    // Without a refresh the plan updates the renamed objects in place (the state is behind the console) and
    // adopts the new one; it deletes and replaces nothing.
    expect(await plannedOps()).toEqual({ "ci-runner": "update", "team-a": "update", late: "create" });
    const calls = await upCalls(["--refresh"]);
    expect(writesIn(calls)).toEqual({});
    expect([liveKeys(), liveTokens()]).toEqual(before);
    expect(emu.state.getKey(ciRunner)?.alias).toBe("ci-runner-renamed");
    expect(emu.state.listSubAccounts().filter((s) => s.alias === "team-a-renamed")).toHaveLength(2);
  }, 300_000);

  test("a partial --keys (one held key and one new): the held key it does not list stays declared; up adopts the new one (the one key stored), writing nothing", async () => {
    const fresh = emu.state.createKey("fresh").key;
    const before = [liveKeys(), liveTokens()];
    const partial = await llmImport(["--keys", "-"], `${deployBot}\n${fresh}\n`);
    expect(partial.stdout).toContain(
      'Kept 5 object(s) stack dev manages, under their resource names: "ci-runner", "deploy-bot", "late", "ops", "team-a".',
    );
    expect(partial.stdout).toContain('Added 1 object(s) it does not manage yet: "fresh".');
    expect(partial.stdout).toContain("Stored the 1 API key(s)");
    expect(await plannedOps()).toEqual({ fresh: "create" });
    expect(writesIn(await upCalls())).toEqual({});
    expect([liveKeys(), liveTokens()]).toEqual(before);
  }, 300_000);

  test("the adoption config removed on day two: the keys live only in the state, and a re-import keeps them managed (declared without adoptKey, never printed)", async () => {
    await stack.removeConfig("adoptKeys");
    const again = await llmImport([]);
    expect(again.stdout).toContain("Stored the 0 API key(s)");
    expect(again.stdout).toContain("Added 0 object(s)");
    // The same program as before the config went: nothing to do at all.
    await file.pulumi(stack.preview(["--expect-no-changes"]));
  }, 300_000);

  test("--drop-unlisted is the one way to leave a held key out: stdout says the next up deletes it, and the plan deletes only it", async () => {
    const dropping = await llmImport(["--keys", "-", "--drop-unlisted"], `${deployBot}\n`);
    expect(dropping.stdout).toMatch(
      /Dropped 2 object\(s\) the stack manages, as --drop-unlisted asks:\n {2}ApiKey ci-runner \(sk-\.\.\.\w{4}\): not in --keys; the next up DELETES it from the platform\n {2}ApiKey fresh/,
    );
    expect(await plannedOps()).toEqual({ "ci-runner": "delete", fresh: "delete" });
    // Back to keeping everything: the plan is empty again.
    await llmImport([]);
    await file.pulumi(stack.preview(["--expect-no-changes"]));
  }, 300_000);

  test("no key or token in plain text in the state, the backend folder, the program folder or any output", async () => {
    await expectNoSecretsAround(ledger, stack, dir, file.printed);
  }, 300_000);
});
