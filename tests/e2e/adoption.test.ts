import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Emulator } from "../../provider/emulator/index.js";
import { typeCheckProgram, type RunResult } from "../../scripts/lib/stack.mjs";
import { emulator } from "../support/emulator.js";
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

// The platform's own limits, with a one-second "minute" on both sides so that the suite runs fast.
const WINDOW_ENV = { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" };

const pricing = (model: string, factor: number) => [{ model, pricing_factor: factor }];

let apiKeys: string[];
const CONSOLE_HOURS = { from: "08:00", to: "18:00" };
const file = setUpFile({
  emulator: { rateWindowMs: 1000 },
  seed: (emu) => {
    apiKeys = [
      emu.state.createKey("ci-runner").key,
      emu.state.createKey("retired").key,
      emu.state.createKey("locked-down", {
        ip: { allow: ["203.0.113.7", "10.0.0.0/8"] },
        spend_limit: { monthly: 100 },
        geo: { countries: ["CN", "SG"] },
        models: { mode: "model", items: ["model-a"] },
      }).key,
    ];
    emu.state.disableKey(apiKeys[1]);
    // A restriction the spec does not show, set in the web console: no program can declare it, no edit may remove it.
    emu.state.editKey(apiKeys[2], "locked-down", {
      ...emu.state.getKey(apiKeys[2])!.security_config,
      hours: CONSOLE_HOURS,
    });
    emu.state.createSubAccounts({ alias: "team-a", balance: 50, modelPricing: pricing("model-a", 1.2), count: 3 });
    emu.state.createSubAccounts({ alias: "team-b", balance: 20, modelPricing: pricing("model-b", 2), count: 2 });
    emu.state.createSubAccounts({
      alias: "ops",
      balance: 5,
      modelPricing: [...pricing("model-a", 1), ...pricing("model-b", 1.5)],
      count: 2,
    });
  },
  folder: "llm-imported-",
});
let emu: Emulator;
let ledger: SecretLedger;
let stack: PulumiStack;
let dir: string;

const liveTokens = () =>
  emu.state
    .listSubAccounts()
    .map((s) => s.token)
    .sort();
const writesIn = (calls: Record<string, number>) => Object.keys(writeCalls(calls));

/** `llm-accounts import` into the program folder; what it prints is kept for the secret check. */
function llmImport(args: string[], stdin: string, env: Record<string, string>): Promise<RunResult> {
  return file.pulumi(runImport(dir, args, stdin, env));
}

/** Runs `pulumi up` and returns the calls it made; then proves the stack settled (expectSettled). */
async function upCalls(): Promise<Record<string, number>> {
  emu.clearRequests();
  await file.pulumi(stack.up());
  const calls = emu.calls();
  await expectSettled(stack);
  return calls;
}

function editProgram(from: string | RegExp, to: string): void {
  const text = readFileSync(join(dir, "index.ts"), "utf8");
  expect(text).toMatch(from);
  writeFileSync(join(dir, "index.ts"), text.replace(from, to));
}

beforeAll(() => {
  ({ emu, ledger, dir } = file);
});

afterAll(() =>
  endFile({
    emu,
    ledger,
    stacks: [stack],
    left: {
      late: "the last test's retainOnDelete keeps this adopted sub-account on the platform at destroy, by design",
    },
  }),
);

describe("an existing account brought under management with llm-accounts import and the real Pulumi CLI", () => {
  test("import writes the program, and with --stack stores every API key in the stack's encrypted config (sub-accounts by id)", async () => {
    const credentials = {
      PATH: process.env.PATH ?? "",
      LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
      LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
      LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
    };
    const first = await llmImport(["--keys", "-"], apiKeys.join("\n"), credentials);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("No --stack was given, so the 3 API key(s) were NOT stored");
    // The program as generated for this account type-checks; the stack then runs it transpile-only, checked
    // again after each edit that changes more than a value (tests/import checks the generated program's types too).
    await typeCheckProgram(dir);
    stack = await PulumiStack.create({
      dir,
      account: { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey },
      env: { ...WINDOW_ENV, ...LOOK_ENV },
      typeCheck: false,
    });
    emu.clearRequests();
    const second = await llmImport(["--keys", "-", "--stack", stack.stack, "--force"], apiKeys.join("\n"), stack.env);
    expect(second.stderr).toBe("");
    expect(second.code).toBe(0);
    expect(emu.calls()).toEqual({ "sub-account/list": 1, "api-key/get": 3 });
    expect(second.stdout).toMatch(
      /Stored the 3 API key\(s\) in the encrypted config of stack dev: one secret value, adoptKeys/,
    );
    const program = readFileSync(join(dir, "index.ts"), "utf8");
    expect(program.match(/new llm\.ApiKey\(/g)).toHaveLength(3);
    expect(program.match(/new llm\.SubAccountBatch\(/g)).toHaveLength(3);
  }, 300_000);

  test("pulumi up makes zero write calls, only reads, and every object keeps its key or token", async () => {
    const tokensBefore = liveTokens();
    const keysBefore = emu.state.listKeys();
    // One list for the three batch creates (the command's shared list, in which each verifies its tokens: issue 36),
    // and the program's own list that finds them by id. Settled by the next test, which counts the settled check's calls.
    emu.clearRequests();
    await file.pulumi(stack.up());
    expect(emu.calls()).toEqual({ "api-key/get": 3, "sub-account/list": 2 });
    expect(liveTokens()).toEqual(tokensBefore);
    expect(emu.state.listKeys()).toEqual(keysBefore);
  }, 300_000);

  test("no perpetual diff in the generated program: preview and refresh expect no changes (expectSettled), no write", async () => {
    emu.clearRequests();
    await expectSettled(stack);
    expect(writesIn(emu.calls())).toEqual([]);
  }, 300_000);

  test("one alias changed in the generated program: exactly one edit", async () => {
    editProgram('alias: "team-b",', 'alias: "team-b-renamed",');
    expect(await upCalls()).toEqual({ "sub-account/edit": 1, "sub-account/list": 1 });
    expect(emu.state.listSubAccounts().filter((s) => s.alias === "team-b-renamed")).toHaveLength(2);
  }, 300_000);

  test("an adopted key renamed in the program: exactly one edit, and the restriction set in the console the package does not know stays", async () => {
    editProgram('alias: "locked-down",', 'alias: "locked-down-renamed",');
    // One get before the edit: an edit replaces the whole config, so what the console set is read first (issue 43).
    expect(await upCalls()).toEqual({ "api-key/get": 1, "api-key/edit": 1, "sub-account/list": 1 });
    expect(emu.state.getKey(apiKeys[2])).toMatchObject({
      alias: "locked-down-renamed",
      security_config: { hours: CONSOLE_HOURS, geo: { countries: ["CN", "SG"] } },
    });
  }, 300_000);

  test("one batch's count raised: exactly one create (and its edit), the adopted ones untouched", async () => {
    const before = liveTokens();
    editProgram(
      'count: 2,\n  modelPricing: [{"model":"model-a","pricingFactor":1}',
      'count: 3,\n  modelPricing: [{"model":"model-a","pricingFactor":1}',
    );
    // The create and the edit that sets the declared alias on what it made (CREATE_MARKER); the program's list, as in
    // the rename above, and the scale-up's (the shared list, read for what a killed up left under its mark: 8233b4d).
    expect(await upCalls()).toEqual({ "sub-account/create": 1, "sub-account/edit": 1, "sub-account/list": 2 });
    expect(liveTokens()).toEqual(expect.arrayContaining(before));
    expect(emu.state.listSubAccounts().filter((s) => s.alias === "ops")).toHaveLength(3);
  }, 300_000);

  test("no adopted key or token in plain text in the state, the backend folder, the program folder or any output", async () => {
    const folder = await expectNoSecretsAround(ledger, stack, dir, file.printed);
    expect(folder).toContain("config.requireSecretObject");
  }, 300_000);

  test("pulumi destroy removes every adopted and created object", async () => {
    emu.clearRequests();
    await file.pulumi(stack.destroy());
    expect(emu.state.listKeys()).toEqual([]);
    expect(emu.state.listSubAccounts()).toEqual([]);
    // The batches' deletes look for what a killed up left under their marks in one list they share (2d4804c), and the
    // four deletes, which the engine runs at once, share one call of each kind (runtime/command/deleteSchedule.ts).
    expect(emu.calls()).toEqual({ "api-key/delete": 1, "sub-account/delete": 1, "sub-account/list": 1 });
  }, 300_000);

  test("a sub-account gone between import and up: a warning names it and the batch creates one in its place (its create and edit), nothing else written", async () => {
    const [kept, vanishing] = emu.state.createSubAccounts({
      alias: "late",
      balance: 1,
      modelPricing: pricing("model-a", 1),
      count: 2,
    });
    expect((await llmImport(["--stack", stack.stack, "--force"], "", stack.env)).code).toBe(0);
    emu.state.deleteSubAccounts([vanishing.token]);
    emu.clearRequests();
    const up = await file.pulumi(stack.up());
    await expectSettled(stack);
    expect(up.stdout + up.stderr).toContain(
      `late: sub-account ${vanishing.id} no longer listed; the batch creates one in place of each to reach count`,
    );
    // The create, then the edit that gives the new sub-account the declared alias in place of its marked one
    // (provider/api/assumptions.ts, CREATE_MARKER).
    expect(writesIn(emu.calls()).sort()).toEqual(["sub-account/create", "sub-account/edit"]);
    expect(emu.calls()["sub-account/create"]).toBe(1);
    expect(
      emu.state
        .listSubAccounts()
        .filter((s) => s.alias === "late")
        .map((s) => s.token),
    ).toEqual([kept.token, expect.any(String)]);
    // Repaired: the warning says what to edit, and once that is done it ends, with nothing written.
    expect(up.stdout + up.stderr).toContain(
      `delete ${vanishing.id} from tokensOf("late", ...) in index.ts to end this warning`,
    );
    editProgram(new RegExp(`tokensOf\\("late", \\[(\\d+), ?${vanishing.id}\\]\\)`), 'tokensOf("late", [$1])');
    emu.clearRequests();
    const after = await file.pulumi(stack.up());
    expect(after.stdout + after.stderr).not.toContain("no longer listed");
    expect(writesIn(emu.calls())).toEqual([]);
    await expectSettled(stack);
  }, 240_000);

  test("a program written by the previous import (adoptTokens-<name> in the stack config) still runs; a token of another account fails before any write", async () => {
    const late = emu.state
      .listSubAccounts()
      .filter((s) => s.alias === "late")
      .map((s) => s.token);
    await stack.setConfig("adoptTokens-late", JSON.stringify(late), { secret: true });
    editProgram(
      /adoptTokens: tokensOf\("late", \[[\d, ]+\]\),/,
      'adoptTokens: config.requireSecretObject<string[]>("adoptTokens-late"),',
    );
    await typeCheckProgram(dir);
    expect(writesIn(await upCalls())).toEqual([]);

    const other = await emulator();
    const foreign = other.state.createSubAccounts({
      alias: "late",
      balance: 1,
      modelPricing: pricing("model-a", 1),
      count: 1,
    })[0].token;
    await other.close();
    await stack.setConfig("adoptTokens-late", JSON.stringify([...late, foreign]), { secret: true });
    editProgram(
      'count: 2,\n  modelPricing: [{"model":"model-a","pricingFactor":1}],\n  adoptTokens: config',
      'count: 3,\n  modelPricing: [{"model":"model-a","pricingFactor":1}],\n  adoptTokens: config',
    );
    emu.clearRequests();
    const stranger = await file.pulumi(stack.up([], { allowFailure: true }));
    expect(stranger.code).not.toBe(0);
    expect(stranger.stdout + stranger.stderr).toContain(
      `adoptTokens[2] (sk-...${foreign.slice(-4)}): no such sub-account in this account`,
    );
    expect(writesIn(emu.calls())).toEqual([]);
    ledger.expectAbsent(stranger.stdout + stranger.stderr, "the failed up");
    expect(stranger.stdout + stranger.stderr).not.toContain(foreign);
    await stack.setConfig("adoptTokens-late", JSON.stringify(late), { secret: true });
    editProgram(
      'count: 3,\n  modelPricing: [{"model":"model-a","pricingFactor":1}],\n  adoptTokens: config',
      'count: 2,\n  modelPricing: [{"model":"model-a","pricingFactor":1}],\n  adoptTokens: config',
    );
  }, 240_000);

  test("retainOnDelete: destroy leaves an adopted sub-account on the platform", async () => {
    const [kept] = emu.state
      .listSubAccounts()
      .filter((s) => s.alias === "late")
      .map((s) => s.token);
    await stack.setConfig("adoptTokens-late", JSON.stringify([kept]), { secret: true });
    editProgram(
      'count: 2,\n  modelPricing: [{"model":"model-a","pricingFactor":1}],\n  adoptTokens: config',
      'count: 1,\n  modelPricing: [{"model":"model-a","pricingFactor":1}],\n  adoptTokens: config',
    );
    editProgram(
      'config.requireSecretObject<string[]>("adoptTokens-late"),\n});',
      'config.requireSecretObject<string[]>("adoptTokens-late"),\n}, { retainOnDelete: true });',
    );
    await typeCheckProgram(dir);
    await upCalls();
    emu.clearRequests();
    await file.pulumi(stack.destroy());
    expect(emu.calls()).toEqual({});
    expect(emu.state.listSubAccounts().map((s) => s.token)).toContain(kept);
  }, 240_000);
});
