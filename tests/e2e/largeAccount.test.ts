import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Emulator } from "../../provider/emulator/index.js";
import { keysConfigEnvBytes } from "../../provider/import/program.js";
import { writeCalls } from "../support/emulatorCalls.js";
import {
  endFile,
  expectNoSecretsAround,
  expectSettled,
  llmImport,
  PulumiStack,
  seedLargeAccount,
  setUpFile,
  type SecretLedger,
  LOOK_ENV,
} from "./support.js";

// Issue 41, "large accounts": an account whose keys do not fit in a stack config (Pulumi's Node.js language host
// hands the whole config to the program in one environment variable, which Linux caps at 128 KiB) is adopted by
// one `llm-accounts import`, through the stack's state (pulumi stack import, on stdin). At CI's size: 1,250 keys of
// 48-character aliases (about 133 KiB of adoptKeys) and 40 batches of 5.
const KEYS = 1250;
const BATCHES = 40;
const PER_BATCH = 5;
const WINDOW_ENV = { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" };

let apiKeys: string[];
const file = setUpFile({
  emulator: { rateWindowMs: 1000 },
  seed: (emu) =>
    (apiKeys = seedLargeAccount(emu, { keys: KEYS, batches: BATCHES, perBatch: PER_BATCH, aliasFill: 35 })),
  folder: "llm-large-",
});
let emu: Emulator;
let ledger: SecretLedger;
let stack: PulumiStack;
let dir: string;

beforeAll(async () => {
  ({ emu, ledger, dir } = file);
  writeFileSync(join(dir, "Pulumi.yaml"), "name: large\nruntime: nodejs\n");
  stack = await PulumiStack.create({
    dir,
    account: { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey },
    env: { ...WINDOW_ENV, ...LOOK_ENV },
    typeCheck: false,
  });
  // A stack config of the user's own, one value secret: the engine hands the whole config to the default provider,
  // whose inputs the import writes as the engine would (else the first up would update the provider).
  await stack.setConfig("large:team", "platform");
  await stack.setConfig("large:owner", "ops@example.com", { secret: true });
}, 120_000);

// What the stack adopted is deleted from the emulator directly, not by `pulumi destroy`: at this size a destroy
// would take most of the file's time in CI, and `npm run bench` measures it (bench/largeAccount.mjs).
afterAll(async () => {
  if (emu) {
    emu.state.deleteKeys(emu.state.listKeys().map((k) => k.key));
    emu.state.deleteSubAccounts(emu.state.listSubAccounts().map((s) => s.token));
  }
  await endFile({ emu, ledger, stacks: [stack], sweepEnv: WINDOW_ENV });
}, 120_000);

/** The data file the import writes beside index.ts. */
const accountData = () =>
  JSON.parse(readFileSync(join(dir, "account.json"), "utf8")) as {
    keys: { name: string; hint: string }[];
    batches: { name: string; count: number }[];
  };

describe("an account past the stack config's 128 KiB, imported with one command through the stack's state", () => {
  test("one import: one list and one get per key, every object written into the state, no key in the config or a file", async () => {
    emu.clearRequests();
    const r = await file.pulumi(llmImport(dir, ["--keys", "-", "--stack", stack.stack], apiKeys.join("\n"), stack.env));
    expect(r.stderr).not.toMatch(/error|failed/i);
    expect(r.code).toBe(0);
    expect(emu.calls()).toEqual({ "sub-account/list": 1, "api-key/get": KEYS });
    expect(r.stdout).toContain(
      `Adopted ${KEYS} API key(s) and ${BATCHES} batch(es) into the state of stack dev (pulumi stack import`,
    );
    // Past the cap: the keys as the config would carry them take more than one environment variable may.
    const data = accountData();
    const asConfig = JSON.stringify(Object.fromEntries(data.keys.map((k, i) => [k.name, apiKeys[i]])));
    expect(keysConfigEnvBytes(asConfig, "large")).toBeGreaterThan(128 * 1024);
    expect(data.keys).toHaveLength(KEYS);
    expect(data.batches.map((b) => b.count)).toEqual(Array(BATCHES).fill(PER_BATCH));
    const config = JSON.parse((await stack.run(["config", "--json"])).stdout) as Record<string, unknown>;
    expect(Object.keys(config).sort()).toEqual(["large:owner", "large:team"]);
  }, 300_000);

  test("the first pulumi up makes no call and changes nothing; the gate reads each key once and the list once, and is empty", async () => {
    emu.clearRequests();
    const up = await file.pulumi(stack.up());
    expect(emu.calls()).toEqual({});
    expect(up.stdout).toContain(`${KEYS + BATCHES + 1} unchanged`);
    expect(up.stdout).not.toMatch(/\d+ (created|updated|replaced|deleted)/);
    emu.clearRequests();
    const gate = await file.pulumi(stack.run(["preview", "--refresh", "--expect-no-changes"]));
    expect(gate.code).toBe(0);
    expect(emu.calls()).toEqual({ "api-key/get": KEYS, "sub-account/list": 1 });
    // The outputs the import wrote are those the provider reads back: a refresh changes nothing.
    emu.clearRequests();
    await expectSettled(stack, { skip: { preview: "the gate just above is this preview, with a refresh first" } });
    expect(writeCalls(emu.calls())).toEqual({});
  }, 600_000);

  test("no key or token in plain text in the state, the backend folder, the program folder or any output", async () => {
    const folder = await expectNoSecretsAround(ledger, stack, dir, file.printed);
    expect(folder).not.toContain("adoptKey");
  }, 120_000);
});
