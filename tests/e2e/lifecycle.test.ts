import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Emulator } from "../../provider/emulator/index.js";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  disposeStack,
  endFile,
  expectSettled,
  type PulumiStack,
  requirePulumiCli,
  SecretLedger,
  stackFor,
  upSettled,
} from "./support.js";

// The platform's own limits, with a one-second "minute" on both sides so that the suite runs fast.
const WINDOW = { rateWindowMs: 1000 };
const WINDOW_ENV = { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" };
const PROGRAM = join(REPO, "tests/e2e/programs/lifecycle");

let emu: Emulator;
let ledger: SecretLedger;
let stack: PulumiStack;

beforeAll(async () => {
  await requirePulumiCli();
  emu = await emulator(WINDOW);
  ledger = new SecretLedger(emu);
  stack = await stackFor(PROGRAM, emu, { env: WINDOW_ENV });
}, CLI_BUILD_TIMEOUT_MS);

afterAll(() => endFile({ emu, ledger, stacks: [stack] }));

const liveKeys = () => emu.state.listKeys();
const liveTeam = () => emu.state.listSubAccounts().filter((s) => s.alias.startsWith("team"));

/** Runs `pulumi up` and returns the calls it made; then proves the stack settled (expectSettled). */
async function upCalls(extra: string[] = []): Promise<Record<string, number>> {
  emu.clearRequests();
  await stack.up(extra);
  ledger.record();
  const calls = emu.calls();
  await expectSettled(stack);
  return calls;
}

async function expectDriftShown(pattern: RegExp): Promise<void> {
  const r = await stack.preview(["--refresh", "--expect-no-changes"], { allowFailure: true });
  expect(r.code).not.toBe(0);
  expect(r.stdout + r.stderr).toMatch(pattern);
}

describe("a stack through its life with the real Pulumi CLI", () => {
  test("up creates what is declared; keys and tokens are [secret] unless --show-secrets", async () => {
    emu.clearRequests();
    // Settled by the next test, which counts the reads of the settled check.
    await stack.up();
    ledger.record();
    const calls = emu.calls();
    // One list for what a killed run of the batch may have left under its mark, a batch create, then the edit that
    // gives its sub-accounts the declared alias (provider/api/assumptions.ts, CREATE_MARKER).
    expect(calls).toEqual({
      "api-key/create": 1,
      "sub-account/list": 1,
      "sub-account/create": 1,
      "sub-account/edit": 1,
    });
    const shown = await stack.outputs();
    expect(shown).toMatchObject({
      apiKey: "[secret]",
      tokens: "[secret]",
      enabled: true,
      alias: "lifecycle",
      teamCount: 2,
    });
    expect(shown.keyHint).toMatch(/^sk-\.\.\.[A-Za-z0-9]{4}$/);
    const revealed = await stack.outputs({ showSecrets: true });
    expect(liveKeys().map((k) => k.key)).toEqual([revealed.apiKey]);
    expect(revealed.tokens).toEqual(liveTeam().map((s) => s.token));
    const text = (await stack.run(["stack", "output"])).stdout;
    ledger.expectAbsent(text, "pulumi stack output");
  }, 120_000);

  test("no perpetual diff: preview and refresh expect no changes (expectSettled), with reads only", async () => {
    emu.clearRequests();
    await expectSettled(stack);
    // preview calls no write; the refresh reads one key and lists sub-accounts once.
    expect(emu.calls()).toEqual({ "api-key/get": 1, "sub-account/list": 1 });
  }, 120_000);

  test("enabled flipped: exactly one status call", async () => {
    await stack.setConfig("enabled", false);
    expect(await upCalls()).toEqual({ "api-key/status": 1 });
    expect(liveKeys()[0].enabled).toBe(false);
  }, 120_000);

  test("alias changed: exactly one edit, and the key keeps its state", async () => {
    await stack.setConfig("alias", "lifecycle-renamed");
    // One get before the edit: an edit replaces the whole config, and the console may have changed it (issue 43).
    expect(await upCalls()).toEqual({ "api-key/get": 1, "api-key/edit": 1 });
    expect(liveKeys()[0]).toMatchObject({ alias: "lifecycle-renamed", enabled: false });
  }, 120_000);

  test("sub-account count 2 -> 4 -> 1: one create and its edit, then one delete", async () => {
    await stack.setConfig("count", 4);
    // The list of the batch's mark, the create of the difference and the edit that sets the declared alias on what it made (CREATE_MARKER).
    expect(await upCalls()).toEqual({ "sub-account/list": 1, "sub-account/create": 1, "sub-account/edit": 1 });
    expect(liveTeam()).toHaveLength(4);
    await stack.setConfig("count", 1);
    const first = liveTeam()[0].token;
    expect(await upCalls()).toEqual({ "sub-account/delete": 1 });
    expect(liveTeam().map((s) => s.token)).toEqual([first]);
  }, 120_000);

  test("balance changed: preview shows a replacement naming balance, and calls nothing", async () => {
    await stack.setConfig("balance", 20);
    emu.clearRequests();
    const r = await stack.preview();
    expect(r.stdout).toMatch(/\+-\s*pulumi-nodejs:dynamic\/llm-accounts:SubAccountBatch:? \(?replace/);
    expect(r.stdout).toMatch(/~ balance\s*: 10 => 20/);
    expect(emu.requests()).toHaveLength(0);
    await stack.setConfig("balance", 10);
  }, 120_000);

  test("drift: a key disabled elsewhere shows in preview --refresh, and up --refresh repairs it", async () => {
    await stack.setConfig("enabled", true);
    await upSettled(stack);
    const key = liveKeys()[0].key;
    emu.state.disableKey(key);
    await expectDriftShown(/enabled/);
    await upSettled(stack, ["--refresh"]);
    expect(emu.state.getKey(key)?.enabled).toBe(true);
  }, 180_000);

  test("drift: a key deleted elsewhere is shown and recreated", async () => {
    const old = liveKeys()[0].key;
    emu.state.deleteKey(old);
    await expectDriftShown(/create/);
    await upSettled(stack, ["--refresh"]);
    ledger.record();
    expect(liveKeys()).toHaveLength(1);
    expect(liveKeys()[0].key).not.toBe(old);
    expect((await stack.outputs({ showSecrets: true })).apiKey).toBe(liveKeys()[0].key);
  }, 180_000);

  test("drift: a sub-account deleted elsewhere is shown and recreated to reach count", async () => {
    await stack.setConfig("count", 2);
    await upSettled(stack);
    ledger.record();
    emu.state.deleteSubAccount(liveTeam()[1].token);
    await expectDriftShown(/count|tokens|subAccounts/);
    await upSettled(stack, ["--refresh"]);
    ledger.record();
    expect(liveTeam()).toHaveLength(2);
  }, 180_000);

  test("the state and the backend files hold no key or token that was ever issued, nor the credentials", async () => {
    ledger.expectAbsent(await stack.exportState(), "pulumi stack export");
    ledger.expectAbsent(stack.backendText(), "the backend folder");
  }, 60_000);

  test("destroy of 200 keys with --parallel 256 takes one delete call (two if the engine pauses); destroy never runs the program", async () => {
    await stack.setConfig("extraKeys", 200);
    await upSettled(stack, ["--parallel", "256"], { extra: ["--parallel", "256"] });
    ledger.record();
    expect(liveKeys()).toHaveLength(201);
    // Credentials from the stack config only (as secrets). The engine keeps the provider's config from the
    // last update, so one `up` records it (it calls no API); then a program that would fail if it ran.
    const noEnv = { LLM_ACCOUNTS_BASE_URL: "", LLM_ACCOUNTS_ADMIN_KEY: "", LLM_ACCOUNTS_ACCOUNT_KEY: "" };
    await stack.setConfig("llm-accounts:baseUrl", emu.baseUrl);
    await stack.setConfig("llm-accounts:adminKey", emu.adminKey, { secret: true });
    await stack.setConfig("llm-accounts:accountKey", emu.accountKey, { secret: true });
    emu.clearRequests();
    await stack.up([], { env: noEnv });
    expect(emu.requests()).toHaveLength(0);
    // Not settled again here: the program and config are those of the up above, settled with 201 keys; this up only
    // records the stack config's credentials in the provider's config and calls nothing (asserted just above).
    writeFileSync(join(stack.dir, "index.ts"), 'throw new Error("the program must not run at destroy");\n');
    emu.clearRequests();
    await stack.destroy(["--parallel", "256"], { env: noEnv });
    // The batch's delete lists what a killed run may have left under its mark (one list, shared by every delete).
    // The 201 key deletes go in one call when the engine sends them without pausing longer than a quiet period
    // (COALESCE.minQuietMs); on a loaded machine it may pause once, which costs one more call, never one per key
    // (tests/runtime/command/deleteCoalescer.test.ts holds the schedule exactly).
    const { "api-key/delete": keyDeletes, ...others } = emu.calls();
    expect(others).toEqual({ "sub-account/list": 1, "sub-account/delete": 1 });
    expect(keyDeletes).toBeGreaterThanOrEqual(1);
    expect(keyDeletes).toBeLessThanOrEqual(2);
    expect(liveKeys()).toHaveLength(0);
    expect(emu.state.listSubAccounts()).toHaveLength(0);
    ledger.expectAbsent(stack.backendText(), "the backend folder (with secret config)");
    ledger.expectAbsent(readFileSync(join(stack.dir, `Pulumi.${stack.stack}.yaml`), "utf8"), "the stack config file");
  }, 300_000);
});

describe("failures the user must see clearly", () => {
  let bad: PulumiStack | undefined;
  afterAll(() => disposeStack(bad));

  test("bad input fails at preview with the property path, and the platform sees no call", async () => {
    bad = await stackFor(PROGRAM, emu, { env: WINDOW_ENV });
    await bad.setConfig("countries", JSON.stringify(["SG", "cn"]));
    emu.clearRequests();
    const r = await bad.preview([], { allowFailure: true });
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain("securityConfig.geo.countries[1]");
    expect(r.stdout + r.stderr).toMatch(/two-letter upper-case country code/);
    await bad.setConfig("countries", JSON.stringify(["SG"]));
    await bad.setConfig("monthly", -1);
    const r2 = await bad.preview([], { allowFailure: true });
    expect(r2.code).not.toBe(0);
    expect(r2.stdout + r2.stderr).toContain("securityConfig.spendLimit.monthly");
    expect(emu.requests()).toHaveLength(0);
  }, 120_000);

  test("missing credentials at destroy: a clear error naming the env var and config key; the state keeps every resource", async () => {
    const s = await stackFor(PROGRAM, emu, { env: WINDOW_ENV });
    const before = new Set(liveKeys().map((k) => k.key));
    const ours = () => liveKeys().filter((k) => !before.has(k.key));
    try {
      await upSettled(s);
      ledger.record();
      const r = await s.destroy([], {
        allowFailure: true,
        env: { LLM_ACCOUNTS_ADMIN_KEY: "", LLM_ACCOUNTS_ACCOUNT_KEY: "" },
      });
      expect(r.code).not.toBe(0);
      expect(r.stdout + r.stderr).toMatch(/LLM_ACCOUNTS_ADMIN_KEY.*llm-accounts:adminKey/);
      expect(r.stdout + r.stderr).toMatch(/LLM_ACCOUNTS_ACCOUNT_KEY.*llm-accounts:accountKey/);
      const state = JSON.parse(await s.exportState()) as { deployment: { resources: { type: string }[] } };
      const types = state.deployment.resources.map((x) => x.type);
      expect(types).toEqual(
        expect.arrayContaining([
          "pulumi-nodejs:dynamic/llm-accounts:ApiKey",
          "pulumi-nodejs:dynamic/llm-accounts:SubAccountBatch",
        ]),
      );
      expect(ours()).toHaveLength(1);
      await s.destroy();
      expect(ours()).toHaveLength(0);
    } finally {
      disposeStack(s);
    }
  }, 240_000);
});
