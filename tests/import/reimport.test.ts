import { beforeEach, describe, expect, test } from "@jest/globals";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { runInNewContext } from "node:vm";
import ts from "typescript";
import { fingerprint } from "../../provider/api/redact.js";
import { LlmAccountsClient } from "../../provider/client/client.js";
import { resolveClientOptions } from "../../provider/client/config.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { readAccount, type ImportedAccount } from "../../provider/import/account.js";
import { runImport } from "../../provider/commands/import.js";
import { keysConfigValue, renderProgram } from "../../provider/import/program.js";
import {
  parseConfigKeys,
  parseStackExport,
  type StackState,
  type StateBatch,
  type StateKey,
} from "../../provider/import/stackState.js";
import { RESOURCE_TYPES } from "../../provider/resources/typeTokens.js";
import { subAccountBatch } from "../../provider/runtime/index.js";
import { identityMark, markedAlias } from "../../provider/runtime/subAccountBatch/index.js";
import { expectNoSecret, secretsOf, useAccountAndFolder } from "../support/emulator.js";

// Issue 28: `import` run again where a stack manages the account keeps what the state holds under its resource
// names (every shape of state), writes every value as data whatever it holds, and adopts sub-accounts whose
// balance is below zero.

let emu: Emulator;
let client: LlmAccountsClient;
let work: string;
const pricingA = [{ model: "model-a", pricing_factor: 1.2 }];
const camelA = [{ model: "model-a", pricingFactor: 1.2 }];

useAccountAndFolder("llm-reimport-unit-", (e, dir) => {
  emu = e;
  work = dir;
});
beforeEach(() => {
  client = new LlmAccountsClient(resolveClientOptions(undefined, {}, env()));
  emu.clearRequests();
});

function env(): Record<string, string> {
  return {
    LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
    LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
    LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
    LLM_ACCOUNTS_RATE_LIMITS: "off",
  };
}

const heldKey = (name: string, key: string, more: Partial<StateKey> = {}): StateKey => ({
  name,
  key,
  alias: name,
  enabled: true,
  securityConfig: {},
  options: {},
  ...more,
});
const heldBatch = (
  name: string,
  subs: { id: number; token: string }[],
  more: Partial<StateBatch> = {},
): StateBatch => ({
  name,
  alias: name,
  balance: 10,
  count: subs.length,
  modelPricing: camelA,
  subAccounts: subs.map((s) => ({ id: s.id, token: s.token })),
  adoptTokens: subs.map((s) => s.token),
  options: {},
  ...more,
});
const stateOf = (keys: StateKey[], batches: StateBatch[], configKeys: StackState["configKeys"] = []): StackState => ({
  stack: "dev",
  keys,
  batches,
  foreign: [],
  configKeys,
});

describe("a sub-account whose live balance is below zero", () => {
  test("is adopted with the others of its alias (balance applies to later creates), and a declared negative balance is still refused", async () => {
    const team = emu.state.createSubAccounts({ alias: "team", balance: 40, modelPricing: pricingA, count: 2 });
    const [broke] = emu.state.createSubAccounts({ alias: "broke", balance: 1, modelPricing: pricingA, count: 1 });
    emu.state.setSubAccountBalance(team[1].token, -3.5);
    emu.state.setSubAccountBalance(broke.token, -0.25);
    const account = await readAccount(client, []);
    expect(account.leftOut).toEqual([]);
    expect(account.batches.map((b) => [b.name, b.ids, b.balance, b.count])).toEqual([
      ["team", [team[0].id, team[1].id], 40, 2],
      ["broke", [broke.id], 0, 1],
    ]);
    const declared = await subAccountBatch.check({}, { alias: "team", balance: -1, count: 1, modelPricing: camelA });
    expect(declared.failures).toEqual([{ property: "balance", reason: expect.stringContaining("must be 0 or more") }]);
  });
});

/** Runs the generated program with stand-ins for both modules, recording each resource's name, args and options. */
function evaluate(program: string): { type: string; name: string; args: Record<string, unknown>; opts?: unknown }[] {
  const out = ts.transpileModule(program, {
    reportDiagnostics: true,
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020 },
  });
  expect(out.diagnostics ?? []).toEqual([]);
  const declared: { type: string; name: string; args: Record<string, unknown>; opts?: unknown }[] = [];
  const output = { apply: () => output };
  const resource = (type: string) =>
    class {
      constructor(name: string, args: Record<string, unknown>, opts?: unknown) {
        declared.push({ type, name, args, ...(opts === undefined ? {} : { opts }) });
      }
    };
  const modules: Record<string, unknown> = {
    "@pulumi/pulumi": {
      Config: class {
        requireSecretObject = () => output;
      },
      log: { warn: () => undefined },
    },
    "pulumi-llm-accounts": {
      ApiKey: resource("ApiKey"),
      SubAccountBatch: resource("SubAccountBatch"),
      getSubAccountsOutput: () => ({ subAccounts: output }),
    },
  };
  const exports = {};
  runInNewContext(out.outputText, { require: (m: string) => modules[m], exports, module: { exports } });
  return declared;
}

describe("the generated program is data-safe (issue 28)", () => {
  // Each ends a comment or string, or opens code, in some place of a program: line terminators JavaScript knows
  // (U+2028 and U+2029 end a `//` comment and, before ES2019 and in TypeScript's scanner, a string), `*/`,
  // backticks and `${`, quotes, a bidirectional override.
  const hostile = [
    "line\nbreak",
    "carriage\rreturn",
    "ls\u2028require('child_process').execSync('touch /tmp/pwned')",
    "ps\u2029process.exit(1)",
    "*/ process.exit(2) /*",
    "`${process.exit(3)}`",
    '"); process.exit(4); ("',
    "nel\u0085end",
    "rtl\u202eoverride",
    "\\u2028 written out",
  ];

  test("every alias, name, model, note and URL round-trips as data: the program parses and declares exactly what was read", () => {
    const account: ImportedAccount = {
      keys: hostile.map((alias, i) => ({
        name: `k${i}${alias}`,
        key: `sk-${"a".repeat(40)}${i}`,
        alias,
        enabled: true,
        securityConfig: {},
        kept: i % 2 === 0,
        options: { parentedUrn: `urn:pulumi:dev::p::my:C$${RESOURCE_TYPES.ApiKey}::${alias}` },
      })),
      batches: hostile.map((alias, i) => ({
        name: `b${i}${alias}`,
        alias,
        modelPricing: [{ model: alias, pricingFactor: 1 }],
        balance: 1,
        count: 1,
        ids: [i + 1],
        tokens: [],
        kept: i % 2 === 1,
      })),
      leftOut: hostile.map((h) => `sub-account id 9: alias: ${JSON.stringify(h)} ${h}`),
      dropped: hostile,
      drifted: [],
      notes: hostile,
      pending: [],
      reverted: [],
    };
    const program = renderProgram(account, `http://127.0.0.1:1/\u2028x()`, new Date(0));
    const declared = evaluate(program);
    expect(declared.map((d) => [d.type, d.name, d.args.alias])).toEqual([
      ...account.keys.map((k) => ["ApiKey", k.name, k.alias]),
      ...account.batches.map((b) => ["SubAccountBatch", b.name, b.alias]),
    ]);
    expect(declared.filter((d) => d.type === "SubAccountBatch").map((d) => d.args.modelPricing)).toEqual(
      account.batches.map((b) => b.modelPricing),
    );
    expect(declared.filter((d) => d.type === "ApiKey").map((d) => d.opts)).toEqual(
      account.keys.map((k) => ({ aliases: [k.options!.parentedUrn] })),
    );
    // No raw line terminator but \n anywhere, and nothing but comments and the expected statements.
    // (The one template literal is the program's own warning, which interpolates its own variables.)
    const generated = program
      .split("\n")
      .filter((l) => !l.includes("pulumi.log.warn(`${batch}"))
      .join("\n");
    expect(generated).not.toMatch(/[\r\u2028\u2029\u0085\u202e]|\*\/|\$\{/);
    const statements = ts.createSourceFile("index.ts", program, ts.ScriptTarget.ES2020).statements;
    expect(statements.length).toBe(2 + 1 + 2 + 2 + hostile.length * 2);
  });

  test("hostile aliases read from the platform: declared as data, the program parses", async () => {
    for (const alias of hostile) emu.state.createKey(alias);
    const keys = emu.state.listKeys().map((k) => k.key);
    for (const alias of hostile) emu.state.createSubAccounts({ alias, balance: 1, modelPricing: pricingA, count: 1 });
    const account = await readAccount(client, keys);
    expect(account.leftOut).toEqual([]);
    const declared = evaluate(renderProgram(account, emu.baseUrl, new Date(0)));
    expect(declared.filter((d) => d.type === "ApiKey").map((d) => d.args.alias)).toEqual(hostile);
    expect(declared.filter((d) => d.type === "SubAccountBatch").map((d) => d.args.alias)).toEqual(hostile);
  });
});

describe("what a stack's state holds keeps its resource name, in every shape of state", () => {
  test("keys matched by key (renamed in the console, rotated, unlisted, gone, only in the config), never by alias; held ones in name order", async () => {
    const renamed = emu.state.createKey("ci-runner-renamed").key;
    const unlisted = emu.state.createKey("deploy-bot").key;
    const rotatedTo = emu.state.createKey("rotating").key;
    const rotatedFrom = `sk-${"r".repeat(40)}`; // deleted by the rotation: not on the platform any more
    const gone = `sk-${"g".repeat(40)}`;
    const pending = emu.state.createKey("pending").key;
    const old = emu.state.createKey("old-config").key;
    const fresh = emu.state.createKey("ci-runner").key; // the alias the held key had: a new key, not the held one
    const state = stateOf(
      [
        heldKey("ci-runner", renamed),
        heldKey("deploy-bot", unlisted, { options: { retainOnDelete: true } }),
        heldKey("rotating", rotatedTo, { adoptKey: rotatedFrom, rotation: { everyDays: 30 } }),
        heldKey("gone", gone),
      ],
      [],
      [
        { name: "ci-runner", key: renamed },
        { name: "pending", key: pending },
        { name: "legacy", key: old },
      ],
    );
    emu.clearRequests();
    const account = await readAccount(client, [rotatedFrom, fresh], () => {}, state);
    expect(emu.calls()).toEqual({ "sub-account/list": 1, "api-key/get": 7 });
    expect(account.keys.map((k) => [k.name, k.alias, !!k.kept])).toEqual([
      ["ci-runner", "ci-runner-renamed", true],
      ["deploy-bot", "deploy-bot", true],
      ["gone", "gone", true],
      ["rotating", "rotating", true],
      ["ci-runner-2", "ci-runner", false],
      ["pending", "pending", false],
      ["legacy", "old-config", false],
    ]);
    expect(account.keys.find((k) => k.name === "rotating")?.rotation).toEqual({ everyDays: 30 });
    expect(account.drifted).toEqual(["ci-runner"]);
    expect(account.notes).toEqual([
      expect.stringMatching(
        /^ApiKey gone \(sk-\.\.\.gggg\): no longer on the platform; declared as the state holds it/,
      ),
    ]);
    // Only the keys the program adopts: one the stack holds needs no adoptKey (it would go stale at its next rotation).
    const stored = JSON.parse(keysConfigValue(account)) as Record<string, string>;
    expect(stored).toEqual({ "ci-runner-2": fresh, pending, legacy: old });
    const program = renderProgram(account, emu.baseUrl, new Date(0));
    expect(program).toContain(`  // sk-...${rotatedTo.slice(-4)}: held by the stack already, no adoptKey needed\n});`);
    expect(program).not.toContain('adoptKey: consoleKey("rotating")');
    expect(program).toContain('  rotation: {"everyDays":30},');
    expect(program).toContain('}, {"retainOnDelete":true});');
    expect(program).toContain("// Kept under their resource names: 4 object(s)");

    // A state lists its resources in the order their operations finished (Pulumi CLI 3.260.0 lists them otherwise
    // than 3.248.0): what is dropped is said in name order whatever that order.
    const dropping = await readAccount(
      client,
      [rotatedFrom],
      () => {},
      { ...state, keys: [...state.keys].reverse() },
      { dropUnlisted: true },
    );
    expect(dropping.keys.map((k) => k.name)).toEqual(["rotating"]);
    expect(dropping.dropped).toEqual([
      `ApiKey ci-runner (sk-...${renamed.slice(-4)}): not in --keys; the next up DELETES it from the platform`,
      `ApiKey deploy-bot (sk-...${unlisted.slice(-4)}): not in --keys; the next up DELETES it from the platform`,
      "ApiKey gone (sk-...gggg): not in --keys; the next up DELETES it from the platform",
    ]);
    expectNoSecret(
      JSON.stringify({ ...account, keys: [] }) + JSON.stringify({ ...dropping, keys: [] }) + program,
      secretsOf(emu, [rotatedFrom, gone]),
    );
  });

  test("batches: split team-a / team-a-2 kept as split, count and balance kept, renamed members, created and gone ones; new sub-accounts get free names", async () => {
    const team = emu.state.createSubAccounts({ alias: "team-a", balance: 7, modelPricing: pricingA, count: 4 });
    const made = emu.state.createSubAccounts({ alias: "made", balance: 3, modelPricing: pricingA, count: 2 });
    const [newcomer] = emu.state.createSubAccounts({ alias: "team-a", balance: 1, modelPricing: pricingA, count: 1 });
    const gone = { id: 999, token: `sk-${"z".repeat(40)}` };
    // team-a: two adopted, plus one adopted and deleted since; team-a-2: two, one renamed alone in the console.
    emu.state.editSubAccounts([team[3].token], "odd-one", pricingA);
    const state = stateOf(
      [],
      [
        heldBatch("team-a", [team[0], team[1], gone], { balance: 50, count: 3 }),
        heldBatch("team-a-2", [team[2], team[3]], { alias: "team-a" }),
        // A batch the program created (no adoptTokens), renamed as a whole in the console.
        heldBatch("made", made, { alias: "made-before", adoptTokens: [], balance: 3 }),
      ],
    );
    const account = await readAccount(client, [], () => {}, state);
    expect(account.batches.map((b) => [b.name, b.alias, b.ids, b.count, b.balance, !!b.kept])).toEqual([
      ["made", "made", [], 2, 3, true],
      ["team-a", "team-a", [team[0].id, team[1].id], 3, 50, true],
      ["team-a-2", "team-a", [team[2].id, team[3].id], 2, 10, true],
      ["team-a-3", "team-a", [newcomer.id], 1, 1, false],
    ]);
    expect(account.drifted).toEqual(["made"]);
    // team-a-2 is declared as its batch, not as its member renamed alone: the import names that member and says
    // what the next up --refresh does with it.
    expect(account.reverted).toEqual(["team-a-2"]);
    expect(account.notes).toEqual([
      `SubAccountBatch team-a-2: 1 of its sub-accounts changed alone in the console, sk-...${team[3].token.slice(-4)} (id ${team[3].id}) named "odd-one": ` +
        'declared as the batch (alias "team-a"); the next up --refresh gives it back the batch\'s alias and pricing (one edit), deleting nothing',
    ]);
    const program = renderProgram(account, emu.baseUrl, new Date(0));
    // The batch that created its sub-accounts declares no adoptTokens; each declaration passes the check.
    expect(program).toContain(
      'new llm.SubAccountBatch("made", {\n  alias: "made",\n  balance: 3, // for sub-accounts created later; adopted ones keep their balances\n  count: 2,\n  modelPricing: [{"model":"model-a","pricingFactor":1.2}],\n});',
    );
    for (const b of account.batches) {
      const { failures } = await subAccountBatch.check(
        {},
        { alias: b.alias, balance: b.balance, count: b.count, modelPricing: b.modelPricing, adoptTokens: b.tokens },
      );
      expect(failures).toEqual([]);
    }
    // --drop-unlisted leaves out a held batch only when nothing it holds is live.
    const emptied = stateOf([], [heldBatch("vanished", [gone])]);
    const dropped = await readAccount(client, [], () => {}, emptied, { dropUnlisted: true });
    expect(dropped.dropped).toEqual([
      "SubAccountBatch vanished: none of the 1 sub-account(s) it holds is on the platform (nothing live is deleted)",
    ]);
    expect((await readAccount(client, [], () => {}, emptied)).batches[0]).toMatchObject({
      name: "vanished",
      count: 1,
      ids: [],
      kept: true,
    });
  });
});

describe("a held batch's sub-account changed alone in the console (issue 36)", () => {
  test("named masked, its console alias escaped as audit escapes it, its pricing change said; the batch is declared as the state holds it", async () => {
    const team = emu.state.createSubAccounts({ alias: "crew", balance: 5, modelPricing: pricingA, count: 3 });
    const hostile = 'evil\u202eeno\u2028"x\u0085';
    emu.state.editSubAccounts([team[1].token], hostile, pricingA);
    emu.state.editSubAccounts([team[2].token], "crew", [{ model: "model-a", pricing_factor: 3 }]);
    const account = await readAccount(client, [], () => {}, stateOf([], [heldBatch("crew", team)]));
    expect(account.batches.map((b) => [b.name, b.alias, b.modelPricing, b.count])).toEqual([
      ["crew", "crew", camelA, 3],
    ]);
    expect(account.drifted).toEqual([]);
    expect(account.reverted).toEqual(["crew"]);
    const [note] = account.notes;
    expect(note).toBe(
      `SubAccountBatch crew: 2 of its sub-accounts changed alone in the console, sk-...${team[1].token.slice(-4)} (id ${team[1].id}) named "evil\\u202eeno\\u2028\\"x\\u0085", ` +
        `sk-...${team[2].token.slice(-4)} (id ${team[2].id}) priced otherwise: declared as the batch (alias "crew"); the next up --refresh gives them back the batch's alias and pricing (one edit), deleting nothing`,
    );
    expect(note).not.toMatch(/[\u0085\u202e\u2028]/);
    expectNoSecret(note, secretsOf(emu));
  });
});

/** A secret value as `pulumi stack export --show-secrets` writes it. */
const secret = (value: unknown) => ({
  "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
  plaintext: JSON.stringify(value),
});

describe("reading the stack's state and config", () => {
  const key = `sk-${"k".repeat(40)}`;
  const token = `sk-${"t".repeat(40)}`;
  const exported = (resources: unknown[]) => JSON.stringify({ version: 3, deployment: { manifest: {}, resources } });
  const urn = (type: string, name: string) => `urn:pulumi:dev::proj::${type}::${name}`;
  // A sub-account as every version's outputs show it (the state module reads each field).
  const subAccount = (id: number, t: string) => ({
    id,
    token: t,
    alias: "team-a",
    enabled: true,
    modelPricing: [{ model: "m", pricingFactor: 2 }],
    createdAt: "2026-11-21T00:00:00Z",
  });
  const resources = [
    { urn: urn("pulumi:pulumi:Stack", "proj-dev"), type: "pulumi:pulumi:Stack", custom: false },
    { urn: urn("pulumi:providers:pulumi-nodejs", "default"), type: "pulumi:providers:pulumi-nodejs", custom: true },
    {
      urn: `urn:pulumi:dev::proj::my:Team$${RESOURCE_TYPES.ApiKey}::ci`,
      type: RESOURCE_TYPES.ApiKey,
      id: fingerprint(key),
      protect: true,
      parent: "x",
      outputs: {
        key: secret(key),
        adoptKey: secret(key),
        alias: "ci",
        enabled: false,
        securityConfig: null,
        keyHint: "sk-...kkkk",
        createdAt: "2026-11-21T00:00:00Z",
      },
    },
    {
      urn: urn(RESOURCE_TYPES.SubAccountBatch, "team-a-2"),
      type: RESOURCE_TYPES.SubAccountBatch,
      id: `sab-${fingerprint(token)}`,
      // A state of an early version: no adoptTokens, pricing with the deprecated field.
      outputs: {
        alias: "team-a",
        balance: 5,
        count: 1,
        modelPricing: [{ model: "m", pricing_factor: 2 }],
        subAccounts: secret([subAccount(4, token)]),
        tokens: secret([token]),
      },
    },
    {
      urn: urn(RESOURCE_TYPES.SubAccountBatch, "old"),
      type: RESOURCE_TYPES.SubAccountBatch,
      delete: true,
      outputs: { alias: "x", balance: 1, count: 1 },
    },
    { urn: urn("random:index/randomPet:RandomPet", "pet"), type: "random:index/randomPet:RandomPet", custom: true },
  ];

  test("an export with secrets revealed: names from URNs, options, parents as aliases; replaced resources skipped, others named foreign", () => {
    const state = parseStackExport(exported(resources), "dev");
    expect(state.keys).toEqual([
      {
        name: "ci",
        key,
        adoptKey: key,
        alias: "ci",
        enabled: false,
        securityConfig: {},
        options: { protect: true, parentedUrn: resources[2].urn },
      },
    ]);
    expect(state.batches).toEqual([
      // Read through the provider's upgrade chain: the pricing of an older state in today's spelling.
      {
        name: "team-a-2",
        alias: "team-a",
        balance: 5,
        count: 1,
        modelPricing: [{ model: "m", pricingFactor: 2 }],
        subAccounts: [{ id: 4, token }],
        adoptTokens: [],
        options: {},
      },
    ]);
    expect(state.foreign).toEqual(['random:index/randomPet:RandomPet "pet"']);
    expect(() =>
      parseStackExport(
        exported([
          {
            ...resources[2],
            outputs: {
              key: { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", ciphertext: "v1:abc" },
            },
          },
        ]),
        "dev",
      ),
    ).toThrow("the exported state holds a secret without its plaintext");
  });

  test("the config's adoption keys: adoptKeys and the adoptKey-<name> of older programs; adoptTokens-<name> is not a key", () => {
    const config = JSON.stringify({
      "proj:adoptKeys": { value: JSON.stringify({ a: key }), secret: true },
      "proj:adoptKey-legacy": { value: token, secret: true },
      "proj:adoptTokens-team": { value: JSON.stringify([token]), secret: true },
      "llm-accounts:baseUrl": { value: "http://x", secret: false },
    });
    expect(parseConfigKeys(config)).toEqual([
      { name: "a", key },
      { name: "legacy", key: token },
    ]);
  });

  /** A stand-in `pulumi` answering `stack export` and `config` from files, and logging its arguments. */
  function fakePulumi(exportText: string, configText = "{}"): { env: Record<string, string>; runs: () => string[] } {
    const bin = mkdtempSync(join(work, "bin-"));
    writeFileSync(join(bin, "export.json"), exportText);
    writeFileSync(join(bin, "config.json"), configText);
    const script = [
      "#!/bin/sh",
      `echo "$*" >> "${bin}/runs"`,
      'case "$*" in',
      `  "stack export"*) cat "${bin}/export.json";;`,
      `  "config --show-secrets"*) cat "${bin}/config.json";;`,
      `  *"config set"*) cat > /dev/null;;`,
      "esac",
      "exit 0",
    ].join("\n");
    writeFileSync(join(bin, "pulumi"), script);
    chmodSync(join(bin, "pulumi"), 0o755);
    return {
      env: { PATH: `${bin}:/usr/bin:/bin` },
      runs: () => readFileSync(join(bin, "runs"), "utf8").split("\n").filter(Boolean),
    };
  }

  async function run(args: string[], extraEnv: Record<string, string>): Promise<{ out: string; err?: Error }> {
    const stdout = new PassThrough();
    let out = "";
    stdout.on("data", (d: Buffer) => (out += d.toString()));
    const stdin = new PassThrough();
    stdin.end("");
    const err = await runImport(args, {
      stdin,
      stdout,
      stderr: new PassThrough(),
      env: { ...env(), ...extraEnv },
      stderrIsTty: false,
      source: { kind: "spec", spec: "^0.1.0" },
    }).then(
      () => undefined,
      (e: Error) => e,
    );
    return { out, err };
  }

  test("the command: one export, kept names on stdout, foreign resources refused unless --drop-unlisted, a folder with stacks and no CLI refused", async () => {
    const [sub] = emu.state.createSubAccounts({
      alias: "renamed-team",
      balance: 5,
      modelPricing: [{ model: "m", pricing_factor: 2 }],
      count: 1,
    });
    const live = emu.state.createKey("ci").key;
    const withLive = JSON.parse(exported(resources)) as {
      deployment: { resources: { outputs?: Record<string, unknown> }[] };
    };
    withLive.deployment.resources[2].outputs = {
      ...withLive.deployment.resources[2].outputs,
      key: secret(live),
      adoptKey: secret(live),
    };
    withLive.deployment.resources[3].outputs = {
      ...withLive.deployment.resources[3].outputs,
      subAccounts: secret([subAccount(sub.id, sub.token)]),
      tokens: secret([sub.token]),
    };
    const dir = join(work, "cmd");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "Pulumi.yaml"), "name: proj\nruntime: nodejs\n");
    writeFileSync(join(dir, "index.ts"), "// the user's program\n");

    const pulumi = fakePulumi(JSON.stringify(withLive));
    const refused = await run(["--out", dir, "--stack", "dev", "--force"], pulumi.env);
    expect(refused.err?.message).toMatch(
      /^stack dev also manages what import cannot declare \(random:index\/randomPet:RandomPet "pet"\): .* pass --drop-unlisted to drop them; nothing was written$/,
    );
    expect(readFileSync(join(dir, "index.ts"), "utf8")).toBe("// the user's program\n");

    withLive.deployment.resources.pop();
    const ok = fakePulumi(JSON.stringify(withLive));
    const { out, err } = await run(["--out", dir, "--stack", "dev", "--force"], ok.env);
    expect(err).toBeUndefined();
    expect(ok.runs()[0]).toBe("stack export --show-secrets --stack dev --non-interactive");
    expect(out).toContain('Kept 2 object(s) stack dev manages, under their resource names: "ci", "team-a-2".');
    expect(out).toContain(
      'Changed in the console since the state last read them (declared as they are now): "ci", "team-a-2".',
    );
    const program = readFileSync(join(dir, "index.ts"), "utf8");
    expect(program).toContain(
      `}, {"protect":true,"aliases":["urn:pulumi:dev::proj::my:Team$${RESOURCE_TYPES.ApiKey}::ci"]});`,
    );
    expect(program).toContain('new llm.SubAccountBatch("team-a-2", {\n  alias: "renamed-team",\n  balance: 5,');
    expectNoSecret(out + program + ok.runs().join("\n"), secretsOf(emu));

    writeFileSync(join(dir, "Pulumi.dev.yaml"), "config: {}\n");
    const noCli = await run(["--out", dir, "--stack", "dev", "--force"], { PATH: join(work, "no-such-bin") });
    expect(noCli.err?.message).toMatch(
      /has stacks \(Pulumi\.dev\.yaml\) and no pulumi CLI is on PATH .* nothing was written$/,
    );
  });
});

describe("sub-accounts under a create's mark that no state records (an up killed before it recorded them)", () => {
  test("never adopted: named masked in leftOut (that batch, of this or another stack or project, adopts them at its next up); the rest of the alias is adopted", async () => {
    const team = emu.state.createSubAccounts({ alias: "team", balance: 10, modelPricing: pricingA, count: 1 });
    const marked = emu.state.createSubAccounts({
      alias: "team~0123456789ab",
      balance: 10,
      modelPricing: pricingA,
      count: 2,
    });
    const notAMark = emu.state.createSubAccounts({
      alias: "team~short",
      balance: 10,
      modelPricing: pricingA,
      count: 1,
    });
    const account = await readAccount(client, []);
    const adopted = account.batches.flatMap((b) => b.ids);
    expect(adopted.sort()).toEqual([team[0].id, notAMark[0].id].sort());
    expect(account.leftOut).toHaveLength(1);
    expect(account.leftOut[0]).toContain(
      "2 sub-account(s) under the mark of a create whose up was killed before it recorded them",
    );
    for (const s of marked) expect(account.leftOut[0]).toContain(`sk-...${s.token.slice(-4)}`);
    expectNoSecret(account.leftOut.join("\n"), secretsOf(emu));
  });

  // Issue 53: the import knew only the `~` form; the `fit` form the doctor advises (createMark=fit) was grouped anew and
  // adopted, another team's leftovers with it.
  test("under a mark of the `fit` form (createMark=fit) too: never adopted, named in leftOut; an alias that is no mark of either form is adopted", async () => {
    const fit = markedAlias("production-team-a", identityMark(["other", "prod", "SubAccountBatch", "a"]), "fit");
    const short = markedAlias("team-a", "3f09b2c41d7e", "fit");
    const marked = [
      ...emu.state.createSubAccounts({ alias: fit, balance: 10, modelPricing: pricingA, count: 2 }),
      ...emu.state.createSubAccounts({ alias: short, balance: 10, modelPricing: pricingA, count: 1 }),
    ];
    const plain = emu.state.createSubAccounts({ alias: "team-b-2026", balance: 10, modelPricing: pricingA, count: 1 });
    const account = await readAccount(client, []);
    expect(account.batches.flatMap((b) => b.ids)).toEqual([plain[0].id]);
    expect(account.leftOut).toHaveLength(1);
    expect(account.leftOut[0]).toContain(
      "3 sub-account(s) under the mark of a create whose up was killed before it recorded them",
    );
    for (const s of marked) expect(account.leftOut[0]).toContain(`sk-...${s.token.slice(-4)}`);
  });

  test("another stack's unconfirmed create mark is recognised as the platform keeps it (lower-cased): the sub-accounts are named as that stack's", async () => {
    const kept = emu.state.createSubAccounts({
      alias: "team~0123456789ab",
      balance: 10,
      modelPricing: pricingA,
      count: 1,
    });
    const elsewhere = [
      {
        stack: "staging",
        keys: new Set<string>(),
        tokens: new Set<string>(),
        markedAliases: new Set(["Team~0123456789ab"]),
      },
    ];
    const account = await readAccount(client, [], () => {}, undefined, { elsewhere });
    expect(account.batches).toEqual([]);
    expect(account.leftOut).toEqual([
      `1 sub-account(s) held by stack staging of this project (sk-...${kept[0].token.slice(-4)}): not adopted (one object, one owner)`,
    ]);
  });
});
