import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Emulator } from "../../provider/emulator/index.js";
import type { RunResult } from "../../scripts/lib/stack.mjs";
import {
  endFile,
  expectNoSecretsAround,
  expectSettled,
  llmImport as runImport,
  PulumiStack,
  setUpFile,
  type SecretLedger,
} from "./support.js";
import { writeCalls } from "../support/emulatorCalls.js";

// The day after an adoption (issue 21), as a user lives it with the real CLI: drift made in the web console is
// named by the gate and repaired by one `up --refresh`; a rotated adopted key and a program that no longer
// carries the adoption config change nothing. As few pulumi commands as the story needs.

const WINDOW_ENV = { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" };
/** The exit code of `--expect-no-changes` when there are changes (Pulumi's ExitNoChanges), as docs/guides/ci.md says. */
const GATE_FAILED = 7;

/** The console-made objects: two keys and one team of three sub-accounts. */
let ciRunner: string;
let deployBot: string;
let team: string[];
const file = setUpFile({
  emulator: { rateWindowMs: 1000 },
  seed: (emu) => {
    ciRunner = emu.state.createKey("ci-runner").key;
    deployBot = emu.state.createKey("deploy-bot", { spend_limit: { monthly: 20 } }).key;
    team = emu.state
      .createSubAccounts({
        alias: "team-a",
        balance: 50,
        modelPricing: [{ model: "model-a", pricing_factor: 1.2 }],
        count: 3,
      })
      .map((s) => s.token);
  },
  folder: "llm-day-two-",
});
let emu: Emulator;
let ledger: SecretLedger;
let stack: PulumiStack;
let dir: string;

const writesIn = writeCalls;
const teamTokens = () =>
  emu.state
    .listSubAccounts()
    .filter((s) => s.alias === "team-a")
    .map((s) => s.token);

/** `llm-accounts import` into the program folder; what it prints is kept for the secret check. */
function llmImport(args: string[], stdin: string, env: Record<string, string>): Promise<RunResult> {
  return file.pulumi(runImport(dir, args, stdin, env));
}

/** One pulumi command; its output is kept for the secret check and the emulator's calls returned with it. */
async function pulumi(args: string[], allowFailure = false): Promise<RunResult & { calls: Record<string, number> }> {
  emu.clearRequests();
  const r = await file.pulumi(stack.run(args, { allowFailure }));
  return { ...r, calls: emu.calls() };
}

/** The gate as docs/guides/ci.md writes it. */
const gate = () => pulumi(["preview", "--refresh", "--expect-no-changes", "--diff"], true);
/** One `pulumi up` (its calls returned), then the settled check (expectSettled), whose reads are not counted. */
async function up(...extra: string[]): Promise<RunResult & { calls: Record<string, number> }> {
  const r = await pulumi(["up", "--yes", "--skip-preview", ...extra]);
  await expectSettled(stack);
  return r;
}

/** Rewrites the generated program: `edit` gets the text of one declaration (`new llm.X("name", {...});`). */
function editDeclaration(name: string, edit: (declaration: string) => string): void {
  const file = join(dir, "index.ts");
  const text = readFileSync(file, "utf8");
  const at = text.indexOf(`("${name}", {`);
  expect(at).toBeGreaterThan(0);
  const start = text.lastIndexOf("new llm.", at);
  const end = text.indexOf("\n});", at) + "\n});".length;
  const changed = edit(text.slice(start, end));
  expect(changed).not.toBe(text.slice(start, end));
  writeFileSync(file, text.slice(0, start) + changed + text.slice(end));
}

/**
 * Deletes the lines the header names beside the adoption inputs: the reads of the console keys (consoleKeys,
 * consoleKey) and of the account's sub-accounts (subAccounts, tokensOf), each a block ending at a blank line.
 */
function dropAdoptionReaders(): void {
  const file = join(dir, "index.ts");
  let text = readFileSync(file, "utf8");
  for (const first of ["const consoleKeys = ", "const subAccounts = "]) {
    const at = text.indexOf(first);
    expect(at).toBeGreaterThan(0);
    const start = text.lastIndexOf("\n\n", at) + 2;
    const end = text.indexOf("\n\n", at) + 2;
    text = text.slice(0, start) + text.slice(end);
  }
  expect(text.slice(text.indexOf("import * as pulumi"))).not.toMatch(/consoleKey|tokensOf|getSubAccountsOutput/);
  writeFileSync(file, text);
}

/**
 * The calls the program itself makes each time it runs (a data source in the program, not a resource): the
 * generated program finds the tokens of the sub-accounts it adopts by id with one list of the account.
 */
function programReads(): Record<string, number> {
  const lists = (readFileSync(join(dir, "index.ts"), "utf8").match(/getSubAccountsOutput\(/g) ?? []).length;
  return lists > 0 ? { "sub-account/list": lists } : {};
}

/**
 * The resources of this package a `preview --diff` shows with an operation other than same, as "<op> <name>":
 * each is a line `~ <type>: (<op>)` followed by its `[urn=...::<name>]`.
 */
function changedResources(stdout: string): string[] {
  const lines = stdout.split("\n");
  const changed: string[] = [];
  lines.forEach((line, i) => {
    const row = /^\s*[~+-]+\s+pulumi-nodejs:dynamic\/llm-accounts:\w+: \(([\w-]+)\)$/.exec(line);
    const urn = /\[urn=.*::([^:\]]+)\]/.exec(lines.slice(i + 1, i + 3).join("\n"));
    if (row && urn) changed.push(`${row[1]} ${urn[1]}`);
  });
  return changed;
}

beforeAll(() => {
  ({ emu, ledger, dir } = file);
  // No `stack init`: as the adoption guide's steps go (docs/guides/adoption.md), the import creates the stack in the empty folder.
  stack = new PulumiStack(
    { dir, account: { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey }, env: WINDOW_ENV },
    file.cli,
  );
});

afterAll(() => endFile({ emu, ledger, stacks: [stack] }));

describe("adoption, day two: drift in the console repaired, a rotated adopted key, the adoption config removed", () => {
  test("import, then the first up makes zero writes", async () => {
    const imported = await llmImport(
      ["--keys", "-", "--stack", stack.stack],
      [ciRunner, deployBot].join("\n"),
      stack.env,
    );
    expect(imported.code).toBe(0);
    // The key that rotates later declares triggers from the start: adding them rotates nothing.
    editDeclaration("deploy-bot", (d) => d.replace("\n});", '\n  rotation: { triggers: ["v1"] },\n});'));
    const first = await up();
    expect(writesIn(first.calls)).toEqual({});
    // One get per key and one list for the batch, besides what the program reads itself.
    const reads = programReads()["sub-account/list"] ?? 0;
    expect(first.calls).toEqual({ "api-key/get": 2, "sub-account/list": 1 + reads });
  }, 240_000);

  test("a sub-account deleted and a key disabled in the console: the gate fails with code 7 naming both", async () => {
    emu.state.deleteSubAccounts([team[1]]);
    emu.state.disableKey(ciRunner);
    const drift = await gate();
    expect(drift.code).toBe(GATE_FAILED);
    expect(writesIn(drift.calls)).toEqual({});
    // Each named twice: what the refresh found, and the update that would put it back.
    expect(changedResources(drift.stdout).sort()).toEqual([
      "refresh ci-runner",
      "refresh team-a",
      "update ci-runner",
      "update team-a",
    ]);
  }, 240_000);

  test("one up --refresh repairs both: one status call, one create and its edit; the adopted sub-accounts that remain are kept", async () => {
    const repair = await up("--refresh");
    // The create's edit gives the new sub-account the declared alias in place of its marked one (CREATE_MARKER).
    expect(writesIn(repair.calls)).toEqual({ "api-key/status": 1, "sub-account/create": 1, "sub-account/edit": 1 });
    expect(emu.state.getKey(ciRunner)?.enabled).toBe(true);
    const now = teamTokens();
    expect(now).toHaveLength(3);
    expect(now).toEqual(expect.arrayContaining([team[0], team[2]]));
  }, 240_000);

  test("the gate then passes and shows no change", async () => {
    const clean = await gate();
    expect(clean.code).toBe(0);
    expect(changedResources(clean.stdout)).toEqual([]);
    expect(writesIn(clean.calls)).toEqual({});
  }, 240_000);

  test("an adopted key rotates; then the program without adoptKey and adoptTokens: the gate shows nothing, up calls nothing", async () => {
    editDeclaration("deploy-bot", (d) => d.replace('triggers: ["v1"]', 'triggers: ["v2"]'));
    const rotated = await up();
    expect(writesIn(rotated.calls)).toEqual({ "api-key/create": 1, "api-key/delete": 1 });
    expect(emu.state.hasKey(deployBot)).toBe(false);
    const current = emu.state.listKeys().filter((k) => k.alias === "deploy-bot");
    expect(current).toHaveLength(1);

    // The config still holds the original key, which the rotation deleted: the user drops the adoption config as
    // the generated program's header says, first the adoptKey and adoptTokens lines, then what read them.
    for (const name of ["ci-runner", "deploy-bot", "team-a"]) {
      editDeclaration(name, (d) => d.replace(/\n\s*adopt(Key|Tokens): [^\n]*/, ""));
    }
    expect(readFileSync(join(dir, "index.ts"), "utf8")).toContain("and run `pulumi config rm adoptKeys`");
    dropAdoptionReaders();
    await stack.run(["config", "rm", "adoptKeys"]);
    const clean = await gate();
    expect(clean.code).toBe(0);
    expect(changedResources(clean.stdout)).toEqual([]);
    const after = await up();
    // No call at all: no resource has anything to do, and the program no longer reads the account.
    expect(programReads()).toEqual({});
    expect(after.calls).toEqual({});
    expect(emu.state.listKeys().filter((k) => k.alias === "deploy-bot")).toEqual(current);
    expect(emu.state.getKey(ciRunner)?.enabled).toBe(true);
    expect(teamTokens().sort()).toEqual(
      emu.state
        .listSubAccounts()
        .map((s) => s.token)
        .sort(),
    );
    expect(teamTokens()).toHaveLength(3);
  }, 240_000);

  test("no key or token in plain text in the state, the backend, the program folder or any output", async () => {
    await expectNoSecretsAround(ledger, stack, dir, file.printed);
  }, 120_000);

  test("destroy deletes what the stack adopted and made, in one delete per type", async () => {
    const destroyed = await pulumi(["destroy", "--yes", "--skip-preview"]);
    // The batch's delete lists once, for what a killed up left under its mark (8233b4d, 2d4804c), then deletes.
    expect(destroyed.calls).toEqual({ "api-key/delete": 1, "sub-account/delete": 1, "sub-account/list": 1 });
    expect(emu.state.listKeys()).toEqual([]);
    expect(emu.state.listSubAccounts()).toEqual([]);
  }, 120_000);
});
