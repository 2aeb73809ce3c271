import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Emulator } from "../../provider/emulator/index.js";
import { linkNodeModules, PulumiStack, typeCheckProgram, type RunResult } from "../../scripts/lib/stack.mjs";
import { emulator } from "../support/emulator.js";
import { writeCalls } from "../support/emulatorCalls.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  endFile,
  llmImport as runImportCli,
  requirePulumiCli,
  SecretLedger,
  LOOK_ENV,
} from "./support.js";

// Issue 36 on the real CLI: `llm-accounts import` never treats an existing stack as new (no stack selected, a
// fresh PULUMI_HOME: it refuses and names the stacks), respects a lost create's mark (no second batch adopts what
// it made; a batch whose first create was lost is not dropped while live sub-accounts carry its mark), and
// `--drop-unlisted` never drops a batch of another account. Every message that promises "no delete" or "no write"
// is followed by the `up` it speaks of, counting the platform's objects; so is the message about a held batch's
// sub-account renamed alone in the console, which that `up --refresh` renames back.

const WINDOW_ENV = { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" };
const pricing = (model: string, factor: number) => [{ model, pricing_factor: factor }];

let emu: Emulator;
let far: Emulator;
let ledger: SecretLedger;
let dir: string;
let freshHome: string | undefined;
let stack: PulumiStack | undefined;
let ciKey: string;
let printed = "";

beforeAll(async () => {
  await requirePulumiCli();
  emu = await emulator({ rateWindowMs: 1000 });
  far = await emulator({ rateWindowMs: 1000 });
  ciKey = emu.state.createKey("ci").key;
  emu.state.createSubAccounts({ alias: "team", balance: 10, modelPricing: pricing("model-a", 1.2), count: 2 });
  ledger = new SecretLedger(emu);
  dir = mkdtempSync(join(tmpdir(), "llm-reimport-safety-"));
  linkNodeModules(dir);
}, CLI_BUILD_TIMEOUT_MS);

afterAll(async () => {
  try {
    await endFile({ emu, ledger, stacks: stack ? [stack] : [], folders: [freshHome], left: {} });
  } finally {
    await far?.close();
  }
}, 5 * 60_000);

/** The other account, as a held batch's `connection` names it: environment variable names, set for every command. */
const farEnv = (): Record<string, string> => ({
  FAR_BASE_URL: far.baseUrl,
  FAR_ADMIN_KEY: far.adminKey,
  FAR_ACCOUNT_KEY: far.accountKey,
});

/** `llm-accounts import --out dir` from the built package, as a user runs it; what it printed kept for the secret check. */
async function llmImport(args: string[], env: Record<string, string>, stdin = `${ciKey}\n`): Promise<RunResult> {
  const r = await runImportCli(dir, args, stdin, env);
  printed += r.stdout + r.stderr;
  return r;
}

/** A re-import into stack prod that must succeed: its stdout. */
async function reimport(args: string[]): Promise<string> {
  const r = await llmImport(["--stack", "prod", "--force", "--keys", "-", ...args], { ...stack!.env, ...farEnv() });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return r.stdout;
}

const live = () => ({
  keys: emu.state
    .listKeys()
    .map((k) => k.key)
    .sort(),
  subAccounts: emu.state
    .listSubAccounts()
    .map((s) => s.token)
    .sort(),
});
const aliases = () =>
  emu.state
    .listSubAccounts()
    .map((s) => s.alias)
    .sort();

/** The operations `pulumi preview --json` plans, by resource name (same-steps left out). */
async function plannedOps(): Promise<Record<string, string>> {
  const r = await stack!.run(["preview", "--json"], { env: farEnv() });
  const steps = (JSON.parse(r.stdout) as { steps?: { op: string; urn: string }[] }).steps ?? [];
  return Object.fromEntries(
    steps
      .filter((s) => s.op !== "same" && !s.urn.includes("pulumi:pulumi:Stack"))
      .map((s) => [s.urn.split("::").pop()!, s.op]),
  );
}

/** `up`, with what it wrote on the account. */
async function upWrites(): Promise<Record<string, number>> {
  emu.clearRequests();
  const r = await stack!.up([], { env: farEnv() });
  printed += r.stdout + r.stderr;
  return writeCalls(emu.calls());
}

/**
 * An `up` whose one sub-account create is answered with the answer lost, and the list that looks for what it made
 * failing too (after the program's own list, which resolves its adoptTokens, and the plugin's list of what a killed
 * run left under the batches' marks, which the creates of the command share): the state keeps the create's mark
 * (`unconfirmedAlias`). Fails.
 */
async function upLosingCreate(): Promise<void> {
  let lists = 0;
  emu.afterSubAccountList(() => {
    if (++lists < 2) return;
    emu.afterSubAccountList(undefined);
    emu.setFaults([
      { kind: "drop-after", ops: ["sub-account/create"], count: 1 },
      { kind: "500", ops: ["sub-account/list"], count: 100 },
    ]);
  });
  try {
    const r = await stack!.up([], { allowFailure: true, env: farEnv() });
    printed += r.stdout + r.stderr;
    expect(r.code).not.toBe(0);
  } finally {
    emu.afterSubAccountList(undefined);
    emu.setFaults([]);
  }
}

/** The program's declaration of batch `name`, with `count` set to `count`. */
function setCount(name: string, count: number): void {
  const path = join(dir, "index.ts");
  const text = readFileSync(path, "utf8");
  const at = text.indexOf(`new llm.SubAccountBatch(${JSON.stringify(name)}, {`);
  expect(at).toBeGreaterThanOrEqual(0);
  const end = text.indexOf("\n});", at);
  writeFileSync(
    path,
    text.slice(0, at) + text.slice(at, end).replace(/\n {2}count: \d+,/, `\n  count: ${count},`) + text.slice(end),
  );
}

describe("import never treats an existing stack as new", () => {
  test("import into stack prod and up: everything adopted, nothing written", async () => {
    const credentials = {
      PATH: process.env.PATH ?? "",
      LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
      LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
      LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
    };
    const first = await llmImport(["--keys", "-"], credentials);
    expect(first.code).toBe(0);
    await typeCheckProgram(dir);
    stack = await PulumiStack.create({
      dir,
      stack: "prod",
      account: { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey },
      env: { ...WINDOW_ENV, ...LOOK_ENV },
      typeCheck: false,
    });
    await reimport([]);
    const before = live();
    expect(await upWrites()).toEqual({});
    expect(live()).toEqual(before);
  }, 300_000);

  test("no stack selected (a fresh PULUMI_HOME, as on a CI checkout): import --force without --stack refuses naming prod and writes nothing; up --stack prod writes nothing", async () => {
    const program = readFileSync(join(dir, "index.ts"), "utf8");
    freshHome = mkdtempSync(join(tmpdir(), "pulumi-home-"));
    const r = await llmImport(["--force", "--keys", "-"], { ...stack!.env, PULUMI_HOME: freshHome });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("no stack is selected in");
    expect(r.stderr).toContain("1 stack(s) in the backend: prod");
    expect(r.stderr).toContain("name the stack with --stack NAME");
    expect(r.stderr).toContain("nothing was written");
    expect(r.stdout).toBe("");
    expect(readFileSync(join(dir, "index.ts"), "utf8")).toBe(program);
    const before = live();
    expect(await upWrites()).toEqual({});
    expect(live()).toEqual(before);
  }, 300_000);
});

describe("import respects a lost create's mark", () => {
  test("a scale-up whose create answer was lost, then import --force: no second batch adopts what it made; the up it announces deletes nothing and renames them", async () => {
    setCount("team", 3);
    await upLosingCreate();
    const marked = emu.state.listSubAccounts().filter((s) => s.alias.startsWith("team~"));
    expect(marked).toHaveLength(1);
    const before = live();

    const out = await reimport([]);
    expect(out).toContain("Added 0 object(s) it does not manage yet.");
    expect(out).toContain(
      `SubAccountBatch team: 1 sub-account(s) made by its create whose answer was lost carry its mark (alias ${JSON.stringify(marked[0].alias)}): declared with count 3`,
    );
    expect(out).toContain(
      'which deletes nothing and writes one edit per batch whose lost create left sub-accounts under its mark ("team")',
    );
    expect(readFileSync(join(dir, "index.ts"), "utf8")).toMatch(
      /new llm\.SubAccountBatch\("team", \{\n {2}alias: "team",\n {2}balance: 10,[^\n]*\n {2}count: 3,/,
    );
    expect(await plannedOps()).toEqual({ team: "update" });

    expect(await upWrites()).toEqual({ "sub-account/edit": 1 });
    expect(live()).toEqual(before);
    expect(aliases()).toEqual(["team", "team", "team"]);
  }, 300_000);

  test("a new batch whose first create was lost, then import --force --drop-unlisted: kept, not dropped; the next up deletes nothing", async () => {
    appendFileSync(
      join(dir, "index.ts"),
      '\nnew llm.SubAccountBatch("extra", { alias: "extra", balance: 1, count: 1, modelPricing: [{ model: "model-a", pricingFactor: 1 }] });\n',
    );
    await upLosingCreate();
    expect(emu.state.listSubAccounts().filter((s) => s.alias.startsWith("extra~"))).toHaveLength(1);
    const before = live();

    const out = await reimport(["--drop-unlisted"]);
    expect(out).not.toContain("Dropped");
    expect(out).not.toContain("nothing live is deleted");
    expect(out).toContain(
      "SubAccountBatch extra: 1 sub-account(s) made by its create whose answer was lost carry its mark",
    );
    expect(await plannedOps()).toEqual({ extra: "update" });

    expect(await upWrites()).toEqual({ "sub-account/edit": 1 });
    expect(live()).toEqual(before);
    expect(aliases()).toEqual(["extra", "team", "team", "team"]);
  }, 300_000);
});

describe("a held batch's sub-account renamed alone in the console", () => {
  test("import --force names it (masked, its console alias escaped) and says the up --refresh it announces renames it back: that up makes one edit and deletes nothing", async () => {
    const [renamed] = emu.state.listSubAccounts().filter((s) => s.alias === "team");
    emu.state.editSubAccounts([renamed.token], "team\u202e-renamed", pricing("model-a", 1.2));
    // Another console change, so that the import asks for an up --refresh.
    emu.state.editKey(ciKey, "ci-renamed");
    const before = live();

    const out = await reimport([]);
    expect(out).toContain(
      `SubAccountBatch team: 1 of its sub-accounts changed alone in the console, sk-...${renamed.token.slice(-4)} (id ${renamed.id}) named "team\\u202e-renamed": ` +
        'declared as the batch (alias "team"); the next up --refresh gives it back the batch\'s alias and pricing (one edit), deleting nothing',
    );
    expect(out).not.toContain("\u202e");
    expect(out).toContain('Changed in the console since the state last read them (declared as they are now): "ci".');
    expect(out).toContain(
      "pulumi up --refresh --stack prod: the refresh reads first what changed in the console, so the up writes none of it back, but for the sub-accounts named above, " +
        'changed alone in the console: it gives them back their batch\'s alias and pricing (one edit per batch: "team"), deleting nothing.',
    );

    emu.clearRequests();
    const r = await stack!.up(["--refresh"], { env: farEnv() });
    printed += r.stdout + r.stderr;
    expect(writeCalls(emu.calls())).toEqual({ "sub-account/edit": 1 });
    expect(live()).toEqual(before);
    expect(emu.state.getSubAccount(renamed.token)?.alias).toBe("team");
    expect(emu.state.getKey(ciKey)?.alias).toBe("ci-renamed");
  }, 300_000);
});

describe("--drop-unlisted drops only objects of the account it read", () => {
  test("a held batch on another account (its connection): kept, never dropped; the next up deletes nothing there", async () => {
    appendFileSync(
      join(dir, "index.ts"),
      '\nnew llm.SubAccountBatch("far", { alias: "far", balance: 1, count: 1, modelPricing: [{ model: "model-a", pricingFactor: 1 }], connection: { baseUrl: process.env.FAR_BASE_URL, adminKeyEnv: "FAR_ADMIN_KEY", accountKeyEnv: "FAR_ACCOUNT_KEY" } });\n',
    );
    await upWrites();
    const farTokens = far.state.listSubAccounts().map((s) => s.token);
    expect(farTokens).toHaveLength(1);
    const before = live();

    const out = await reimport(["--drop-unlisted"]);
    expect(out).not.toContain("Dropped");
    expect(out).toContain(
      "SubAccountBatch far: held on another account (its connection): kept as the state holds it, not read here and never dropped",
    );
    expect(readFileSync(join(dir, "index.ts"), "utf8")).toContain('new llm.SubAccountBatch("far", {');
    expect(await plannedOps()).toEqual({});

    far.clearRequests();
    expect(await upWrites()).toEqual({});
    expect(writeCalls(far.calls())).toEqual({});
    expect(far.state.listSubAccounts().map((s) => s.token)).toEqual(farTokens);
    expect(live()).toEqual(before);
  }, 300_000);

  test("the stack's config names its account and the shell another: import --force --drop-unlisted refuses, naming both (masked), and writes nothing; the next up writes nothing", async () => {
    await stack!.setConfig("llm-accounts:baseUrl", emu.baseUrl);
    await stack!.setConfig("llm-accounts:adminKey", emu.adminKey, { secret: true });
    await stack!.setConfig("llm-accounts:accountKey", emu.accountKey, { secret: true });
    const program = readFileSync(join(dir, "index.ts"), "utf8");
    const before = live();
    const shell = {
      LLM_ACCOUNTS_BASE_URL: far.baseUrl,
      LLM_ACCOUNTS_ADMIN_KEY: far.adminKey,
      LLM_ACCOUNTS_ACCOUNT_KEY: far.accountKey,
    };
    const r = await llmImport(["--stack", "prod", "--force", "--drop-unlisted", "--keys", "-"], {
      ...stack!.env,
      ...farEnv(),
      ...shell,
    });
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("stack prod's config names another account than the environment");
    expect(r.stderr).toContain(`llm-accounts:baseUrl is ${emu.baseUrl}, LLM_ACCOUNTS_BASE_URL is ${far.baseUrl}`);
    expect(r.stderr).toContain(`llm-accounts:adminKey is sk-admin-...${emu.adminKey.slice(-4)}`);
    expect(r.stderr).toContain("nothing was written");
    expect(readFileSync(join(dir, "index.ts"), "utf8")).toBe(program);
    expect(await upWrites()).toEqual({});
    expect(live()).toEqual(before);
  }, 300_000);

  test("the stack's config alone names the account (no LLM_ACCOUNTS_* in the shell): import reads that account, keeps everything, and the next up writes nothing", async () => {
    const before = live();
    const shell = Object.fromEntries(
      Object.entries({ ...stack!.env, ...farEnv() }).filter(([k]) => !k.startsWith("LLM_ACCOUNTS_")),
    );
    const r = await llmImport(["--stack", "prod", "--force", "--drop-unlisted", "--keys", "-"], shell);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Added 0 object(s) it does not manage yet.");
    expect(r.stdout).not.toContain("Dropped");
    expect(await plannedOps()).toEqual({});
    expect(await upWrites()).toEqual({});
    expect(live()).toEqual(before);
  }, 300_000);

  test("destroy removes what the stack holds on both accounts; nothing printed holds a key", async () => {
    await stack!.destroy([], { env: farEnv() });
    expect(far.state.listSubAccounts()).toEqual([]);
    ledger.record();
    ledger.expectAbsent(printed, "the output of import and pulumi");
  }, 300_000);
});
