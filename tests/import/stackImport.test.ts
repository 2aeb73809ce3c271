import { beforeAll, describe, expect, test } from "@jest/globals";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { standInPulumi } from "../support/standInPulumi.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { promisify } from "node:util";
import type { Emulator } from "../../provider/emulator/index.js";
import { readAccount, type ImportedAccount } from "../../provider/import/account.js";
import { runImport } from "../../provider/commands/import.js";
import { DATA_FILE, renderAccountData, renderStateProgram, TSCONFIG } from "../../provider/import/program.js";
import { deploymentResources } from "../../provider/import/stackImport.js";
import { identityMark } from "../../provider/runtime/subAccountBatch/index.js";
import { apiKey, subAccountBatch } from "../../provider/runtime/index.js";
import { clientOf, expectNoSecret, secretsOf, useRuntimeEmulator } from "../support/emulator.js";
import { programDir, REPO } from "../support/programDir.js";

// Issue 41: adoption through the stack's state writes each object as the provider's own adopting create leaves it,
// under the inputs the generated program declares, so that the first `up` changes nothing and a refresh reads back
// exactly what was written. Checked here against the provider's methods; tests/e2e/largeAccount.test.ts runs the CLI.

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

const SIG = "4dabf18193072939515e22adb298388d";
/** A deployment value with every secret marker replaced by its value. */
function revealed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(revealed);
  if (value === null || typeof value !== "object") return value;
  const o = value as Record<string, unknown>;
  if (SIG in o) return JSON.parse(o.plaintext as string);
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, revealed(v)]));
}
/** Props without the stored provider text (what the provider's methods take and give). */
const withoutProvider = (props: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(props).filter(([k]) => k !== "__provider"));

let account: ImportedAccount;
let keys: string[];
beforeAll(async () => {
  keys = [
    emu.state.createKey("ci").key,
    emu.state.createKey("locked", { spend_limit: { monthly: 100 }, ip: { allow: ["10.0.0.0/8"] } }).key,
  ];
  emu.state.disableKey(keys[1]);
  emu.state.createSubAccounts({
    alias: "team-a",
    balance: 5,
    modelPricing: [{ model: "model-a", pricing_factor: 1.2 }],
    count: 3,
  });
  emu.state.createSubAccounts({
    alias: "team-b",
    balance: 7,
    modelPricing: [{ model: "model-b", pricing_factor: 2 }],
    count: 2,
  });
  account = await readAccount(clientOf(emu), keys);
});

describe("the deployment `llm-accounts import` writes into a stack's state", () => {
  test("the stack, its default provider with the stack's config (secret values as secrets), then every object under the stack", async () => {
    const resources = await deploymentResources(
      account,
      { project: "p", stack: "dev" },
      { "p:team": { value: "a", secret: false }, "llm-accounts:adminKey": { value: emu.adminKey, secret: true } },
    );
    expect(resources.map((r) => r.urn)).toEqual([
      "urn:pulumi:dev::p::pulumi:pulumi:Stack::p-dev",
      "urn:pulumi:dev::p::pulumi:providers:pulumi-nodejs::default",
      "urn:pulumi:dev::p::pulumi-nodejs:dynamic/llm-accounts:ApiKey::ci",
      "urn:pulumi:dev::p::pulumi-nodejs:dynamic/llm-accounts:ApiKey::locked",
      "urn:pulumi:dev::p::pulumi-nodejs:dynamic/llm-accounts:SubAccountBatch::team-a",
      "urn:pulumi:dev::p::pulumi-nodejs:dynamic/llm-accounts:SubAccountBatch::team-b",
    ]);
    expect(resources[1].inputs).toEqual({
      "p:team": "a",
      "llm-accounts:adminKey": { [SIG]: expect.any(String), plaintext: JSON.stringify(emu.adminKey) },
    });
    for (const r of resources.slice(2)) {
      expect(r).toMatchObject({
        custom: true,
        parent: resources[0].urn,
        provider: `${resources[1].urn}::${resources[1].id as string}`,
      });
      // Every secret is marked for the CLI to encrypt: no key or token outside a marker.
      const unmarked = JSON.stringify({
        ...r,
        outputs: Object.fromEntries(
          Object.entries(r.outputs as object).filter(([, v]) => !(v && typeof v === "object" && SIG in v)),
        ),
      });
      expectNoSecret(unmarked, secretsOf(emu));
    }
  });

  test("each object as the provider's adopting create leaves it; its diff against the program's inputs is empty, and a read gives it back unchanged", async () => {
    const resources = await deploymentResources(account, { project: "p", stack: "dev" }, {});
    const [ci, locked, teamA, teamB] = resources.slice(2);
    for (const [r, adopt] of [
      [ci, { alias: "ci", enabled: true, securityConfig: {}, adoptKey: keys[0] }],
      [
        locked,
        {
          alias: "locked",
          enabled: false,
          securityConfig: { spendLimit: { monthly: 100 }, ip: { allow: ["10.0.0.0/8"] } },
          adoptKey: keys[1],
        },
      ],
    ] as const) {
      const { inputs } = await apiKey.check({}, adopt);
      emu.clearRequests();
      const created = await apiKey.create(inputs);
      expect(emu.calls()).toEqual({ "api-key/get": 1 });
      const outputs = withoutProvider(revealed(r.outputs) as Record<string, unknown>);
      expect(outputs).toEqual(created.outs);
      expect(r.id).toBe(created.id);
      const declared = await apiKey.check({}, withoutProvider(r.inputs as Record<string, unknown>));
      expect((await apiKey.diff(r.id as string, outputs, declared.inputs)).changes).toBe(false);
      expect((await apiKey.read(r.id as string, outputs)).props).toEqual(outputs);
    }
    for (const [r, alias] of [
      [teamA, "team-a"],
      [teamB, "team-b"],
    ] as const) {
      const batch = account.batches.find((b) => b.alias === alias)!;
      const mark = identityMark(["p", "dev", "SubAccountBatch", alias]);
      const { inputs } = await subAccountBatch.check(
        {},
        {
          alias,
          balance: batch.balance,
          count: batch.count,
          modelPricing: batch.modelPricing,
          mark,
          adoptTokens: batch.tokens,
        },
      );
      emu.clearRequests();
      const created = await subAccountBatch.create(inputs);
      expect(Object.keys(emu.calls()).filter((op) => op !== "sub-account/list")).toEqual([]);
      const outputs = withoutProvider(revealed(r.outputs) as Record<string, unknown>);
      expect(outputs).toEqual(created.outs);
      expect(r.id).toBe(created.id);
      const declared = await subAccountBatch.check({}, withoutProvider(r.inputs as Record<string, unknown>));
      expect(declared.inputs).not.toHaveProperty("adoptTokens");
      expect((await subAccountBatch.diff(r.id as string, outputs, declared.inputs)).changes).toBe(false);
      expect((await subAccountBatch.read(r.id as string, outputs)).props).toEqual(outputs);
    }
  });

  test("the program and its data file: no secret, and the program type-checks against the built package", async () => {
    const dir = programDir("llm-state-program-");
    try {
      writeFileSync(join(dir, "index.ts"), renderStateProgram(account, emu.baseUrl, new Date()));
      writeFileSync(join(dir, DATA_FILE), renderAccountData(account));
      writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG));
      expectNoSecret(renderStateProgram(account, emu.baseUrl, new Date()) + renderAccountData(account), secretsOf(emu));
      const tsc = join(REPO, "node_modules/typescript/bin/tsc");
      const args = [tsc, "-p", "tsconfig.json", "--noEmit", "--ignoreDeprecations", "6.0"];
      const result = await promisify(execFile)(process.execPath, args, { cwd: dir }).catch(
        (e: { stdout: string }) => e,
      );
      expect(result.stdout).toBe("");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

/**
 * A stand-in `pulumi` for a new stack: `stack export` gives an empty deployment with a secrets provider, `config`
 * an empty config, and `stack import` keeps its stdin; every run is logged.
 */
function fakePulumi(): { env: Record<string, string>; runs: () => string[]; imported: () => string } {
  const fake = standInPulumi(tmpdir(), {
    '"stack export"*': `echo '{"version":3,"deployment":{"secrets_providers":{"type":"passphrase","state":{"salt":"x"}}}}'`,
    '"config --show-secrets"*': "echo '{}'",
    '"stack import"*': 'cat > "$BIN/imported"',
  });
  return { env: fake.env, runs: fake.runs, imported: () => fake.read("imported") };
}

describe("llm-accounts import past the stack config's 128 KiB", () => {
  test("1,300 keys: one command writes them into the named stack's state on the CLI's stdin (never the config, never a file), then the data file", async () => {
    const many = Array.from(
      { length: 1300 },
      (_, i) => emu.state.createKey(`key-${String(i).padStart(4, "0")}-${"x".repeat(31)}`).key,
    );
    const dir = join(mkdtempSync(join(tmpdir(), "llm-large-unit-")), "prog");
    const pulumi = fakePulumi();
    const stdin = new PassThrough();
    stdin.end(many.join("\n"));
    const stdout = new PassThrough();
    let out = "";
    stdout.on("data", (d: Buffer) => (out += d.toString()));
    const env = {
      ...pulumi.env,
      LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
      LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
      LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
      LLM_ACCOUNTS_RATE_LIMITS: "off",
    };
    emu.clearRequests();
    await runImport(["--out", dir, "--keys", "-", "--stack", "prod"], {
      stdin,
      stdout,
      stderr: new PassThrough(),
      env,
      stderrIsTty: false,
      source: { kind: "spec", spec: "^0.1.0" },
    });
    expect(emu.calls()).toEqual({ "sub-account/list": 1, "api-key/get": 1300 });
    expect(pulumi.runs()).toEqual([
      "stack select --create prod --non-interactive",
      "stack export --stack prod --non-interactive",
      "config --show-secrets --json --stack prod --non-interactive",
      "stack import --stack prod --non-interactive",
    ]);
    const deployment = JSON.parse(pulumi.imported()) as {
      deployment: { secrets_providers: unknown; resources: { type: string; outputs?: Record<string, unknown> }[] };
    };
    expect(deployment.deployment.secrets_providers).toEqual({ type: "passphrase", state: { salt: "x" } });
    const keys = deployment.deployment.resources.filter((r) => r.type === "pulumi-nodejs:dynamic/llm-accounts:ApiKey");
    expect(keys).toHaveLength(1300);
    expect(keys.every((r) => SIG in (r.outputs!.key as object) && SIG in (r.outputs!.adoptKey as object))).toBe(true);
    expect(out).toContain("Adopted 1300 API key(s) and 2 batch(es) into the state of stack prod");
    const data = JSON.parse(readFileSync(join(dir, DATA_FILE), "utf8")) as { keys: unknown[] };
    expect(data.keys).toHaveLength(1300);
    expectNoSecret(
      out +
        readFileSync(join(dir, "index.ts"), "utf8") +
        readFileSync(join(dir, DATA_FILE), "utf8") +
        pulumi.runs().join("\n"),
      secretsOf(emu),
    );
  }, 120_000);
});

/**
 * A stand-in `pulumi` that keeps a stack's state: `stack export` gives what the last `stack import` was given (an
 * empty deployment before), as `--show-secrets` would (secrets as plaintext markers); every run is logged.
 */
function statefulPulumi(): {
  env: Record<string, string>;
  runs: () => string[];
  state: () => { resources: DeploymentResourceOf[] };
  edit: (f: (r: DeploymentResourceOf) => void) => void;
} {
  const empty = `{"version":3,"deployment":{"secrets_providers":{"type":"passphrase","state":{"salt":"x"}}}}`;
  const fake = standInPulumi(tmpdir(), {
    '"stack export"*': `if [ -f "$BIN/imported" ]; then cat "$BIN/imported"; else echo '${empty}'; fi`,
    '"config --show-secrets"*': "echo '{}'",
    '"stack import"*': 'cat > "$BIN/imported"',
  });
  const state = () =>
    (JSON.parse(fake.read("imported")) as { deployment: { resources: DeploymentResourceOf[] } }).deployment;
  /** Changes each resource of the kept state (as a `pulumi up` of another program would). */
  const edit = (f: (r: DeploymentResourceOf) => void) => {
    const all = JSON.parse(fake.read("imported")) as { deployment: { resources: DeploymentResourceOf[] } };
    all.deployment.resources.forEach(f);
    writeFileSync(join(fake.bin, "imported"), JSON.stringify(all));
  };
  return { env: fake.env, runs: fake.runs, state, edit };
}
type DeploymentResourceOf = {
  urn: string;
  type: string;
  id?: string;
  protect?: boolean;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
};

const KEY_TYPE = "pulumi-nodejs:dynamic/llm-accounts:ApiKey";
const BATCH_TYPE = "pulumi-nodejs:dynamic/llm-accounts:SubAccountBatch";
const nameOf = (urn: string) => urn.split("::").pop()!;

/**
 * What the next `pulumi up` of the program over the data file does to a state, counted by the provider's own
 * methods: the objects it creates (listed, not held), deletes (held, not listed) and updates (a diff).
 */
async function nextUp(
  resources: DeploymentResourceOf[],
  dir: string,
  project: string,
  stack: string,
): Promise<{ create: string[]; update: string[]; delete: string[] }> {
  const data = JSON.parse(readFileSync(join(dir, DATA_FILE), "utf8")) as {
    keys: { name: string; alias: string; enabled: boolean; securityConfig: unknown }[];
    batches: { name: string; alias: string; balance: number; count: number; modelPricing: unknown }[];
  };
  const held = new Map(
    resources
      .filter((r) => r.type === KEY_TYPE || r.type === BATCH_TYPE)
      .map((r) => [`${r.type}::${nameOf(r.urn)}`, r]),
  );
  const plan = { create: [] as string[], update: [] as string[], delete: [] as string[] };
  const listed = new Set<string>();
  for (const k of data.keys) {
    const r = held.get(`${KEY_TYPE}::${k.name}`);
    listed.add(`${KEY_TYPE}::${k.name}`);
    if (!r) plan.create.push(k.name);
    else {
      const { inputs } = await apiKey.check(
        {},
        { alias: k.alias, enabled: k.enabled, securityConfig: k.securityConfig },
      );
      if ((await apiKey.diff(r.id!, withoutProvider(revealed(r.outputs) as Record<string, unknown>), inputs)).changes)
        plan.update.push(k.name);
    }
  }
  for (const b of data.batches) {
    const r = held.get(`${BATCH_TYPE}::${b.name}`);
    listed.add(`${BATCH_TYPE}::${b.name}`);
    if (!r) plan.create.push(b.name);
    else {
      const mark = identityMark([project, stack, "SubAccountBatch", b.name]);
      const { inputs } = await subAccountBatch.check(
        {},
        { alias: b.alias, balance: b.balance, count: b.count, modelPricing: b.modelPricing, mark },
      );
      if (
        (await subAccountBatch.diff(r.id!, withoutProvider(revealed(r.outputs) as Record<string, unknown>), inputs))
          .changes
      )
        plan.update.push(b.name);
    }
  }
  for (const [id, r] of held) if (!listed.has(id)) plan.delete.push(nameOf(r.urn));
  return plan;
}

describe("llm-accounts import run again on a stack whose state it wrote", () => {
  test("it adds only what is new, through the state again; keeps what the state holds; --drop-unlisted leaves a key for the next up to delete: each promise counted", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "llm-rerun-unit-")), "prog");
    const pulumi = statefulPulumi();
    const env = {
      ...pulumi.env,
      LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
      LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
      LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
      LLM_ACCOUNTS_RATE_LIMITS: "off",
    };
    const run = async (keys: string[], args: string[]): Promise<string> => {
      const stdin = new PassThrough();
      stdin.end(keys.join("\n"));
      const stdout = new PassThrough();
      let out = "";
      stdout.on("data", (d: Buffer) => (out += d.toString()));
      await runImport(["--out", dir, "--keys", "-", "--stack", "prod", ...args], {
        stdin,
        stdout,
        stderr: new PassThrough(),
        env,
        stderrIsTty: false,
        source: { kind: "spec", spec: "^0.1.0" },
      });
      return out;
    };
    const writes = (from: number) =>
      pulumi
        .runs()
        .slice(from)
        .filter((r) => /^(stack import|config set)/.test(r));
    const objects = () => pulumi.state().resources.filter((r) => r.type === KEY_TYPE || r.type === BATCH_TYPE);
    const [a, b] = [emu.state.createKey("rerun-a").key, emu.state.createKey("rerun-b").key];
    await run([a, b], ["--into-state"]);
    const first = pulumi.state().resources;
    const heldBefore = objects().length;
    expect(await nextUp(first, dir, "prog", "prod")).toEqual({ create: [], update: [], delete: [] });

    // New on the platform since: one key and one group of sub-accounts. The data file tells the route: no --into-state.
    const c = emu.state.createKey("rerun-c").key;
    emu.state.createSubAccounts({
      alias: "rerun-team",
      balance: 3,
      modelPricing: [{ model: "model-c", pricing_factor: 1.1 }],
      count: 2,
    });
    let from = pulumi.runs().length;
    emu.clearRequests();
    const again = await run([a, b, c], ["--force"]);
    expect(emu.calls()).toEqual({ "sub-account/list": 1, "api-key/get": 3 });
    expect(writes(from)).toEqual(["stack import --stack prod --non-interactive"]);
    expect(again).toContain(`Kept ${heldBefore} object(s) stack prod manages`);
    expect(again).toContain('Added 2 object(s) it does not manage yet: "rerun-c", "rerun-team"');
    expect(again).toContain("Adopted 1 API key(s) and 1 batch(es) into the state of stack prod");
    expect(again).toContain("pulumi preview --stack prod (no change)");
    // What the state held is written back as it was, the new objects after it; the next up changes nothing.
    const second = pulumi.state().resources;
    expect(second.slice(0, first.length)).toEqual(first);
    expect(second.slice(first.length).map((r) => nameOf(r.urn))).toEqual(["rerun-c", "rerun-team"]);
    expect(await nextUp(second, dir, "prog", "prod")).toEqual({ create: [], update: [], delete: [] });
    expect(readFileSync(join(dir, "index.ts"), "utf8")).toContain(DATA_FILE);

    // --drop-unlisted, b not listed: nothing new, so the state is not written; the program leaves b for the next up to delete.
    from = pulumi.runs().length;
    const dropped = await run([a, c], ["--force", "--drop-unlisted"]);
    expect(writes(from)).toEqual([]);
    expect(dropped).toContain(`Kept ${heldBefore + 1} object(s)`);
    expect(dropped).toContain("Added 0 object(s)");
    expect(dropped).toContain("Dropped 1 object(s) the stack manages, as --drop-unlisted asks:\n  ApiKey rerun-b");
    expect(dropped).toContain("Nothing new to adopt: the state of stack prod holds every object the program declares");
    expect(dropped).toContain(
      "pulumi preview --stack prod (1 to delete: the object(s) dropped above; nothing else changes)",
    );
    expect(pulumi.state().resources).toEqual(second);
    expect(await nextUp(second, dir, "prog", "prod")).toEqual({ create: [], update: [], delete: ["rerun-b"] });
    expectNoSecret(
      again +
        dropped +
        readFileSync(join(dir, "index.ts"), "utf8") +
        readFileSync(join(dir, DATA_FILE), "utf8") +
        pulumi.runs().join("\n"),
      secretsOf(emu),
    );
  }, 120_000);

  test("a stack holding what the program over the data file cannot declare (protect): refused, naming it, before anything is written", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "llm-rerun-protect-")), "prog");
    const pulumi = statefulPulumi();
    const env = {
      ...pulumi.env,
      LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
      LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
      LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
      LLM_ACCOUNTS_RATE_LIMITS: "off",
    };
    const io = (keys: string[]) => {
      const stdin = new PassThrough();
      stdin.end(keys.join("\n"));
      return {
        stdin,
        stdout: new PassThrough(),
        stderr: new PassThrough(),
        env,
        stderrIsTty: false,
        source: { kind: "spec" as const, spec: "^0.1.0" },
      };
    };
    const key = emu.state.createKey("protected-one").key;
    await runImport(["--out", dir, "--keys", "-", "--stack", "prod", "--into-state"], io([key]));
    pulumi.edit((r) => void (nameOf(r.urn) === "protected-one" && (r.protect = true)));
    const data = readFileSync(join(dir, DATA_FILE), "utf8");
    const from = pulumi.runs().length;
    await expect(runImport(["--out", dir, "--keys", "-", "--stack", "prod", "--force"], io([key]))).rejects.toThrow(
      "stack prod holds objects the program over account.json cannot declare as they are: ApiKey protected-one (protect).",
    );
    expect(
      pulumi
        .runs()
        .slice(from)
        .filter((r) => /^(stack import|stack select|config set)/.test(r)),
    ).toEqual([]);
    expect(readFileSync(join(dir, DATA_FILE), "utf8")).toBe(data);
    // The remedy it names moves index.ts out too: the program over the data file alone keeps the state route.
    rmSync(join(dir, DATA_FILE));
    await expect(runImport(["--out", dir, "--keys", "-", "--stack", "prod", "--force"], io([key]))).rejects.toThrow(
      /cannot declare as they are: ApiKey protected-one \(protect\)\. .*with account\.json and index\.ts moved out of the folder/,
    );
  }, 60_000);
});
