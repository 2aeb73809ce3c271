import { describe, expect, test } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { Emulator } from "../../provider/emulator/index.js";
import { runImport } from "../../provider/commands/import.js";
import { RESOURCE_TYPES } from "../../provider/resources/typeTokens.js";
import { expectNoSecret, secretsOf, useAccountAndFolder } from "../support/emulator.js";
import { standInPulumi } from "../support/standInPulumi.js";

// Issue 43: a re-import never adopts what a stack of ANOTHER project on the same backend holds (team A's and team
// B's projects on one account): it reads the backend's stacks of every project (`pulumi stack ls --all`), leaves
// out the target by its whole name (another project's stack of the same short name is read), and names what it
// left out as it does for the project's own stacks. tests/e2e/importOtherStack.test.ts runs it through the real CLI.

let emu: Emulator;
let work: string;
const pricing = [{ model: "model-a", pricing_factor: 1.2 }];

useAccountAndFolder("llm-other-projects-", (e, dir) => {
  emu = e;
  work = dir;
});

const SIG = "4dabf18193072939515e22adb298388d";
const secret = (value: unknown) => ({ [SIG]: "1b47061264138c4ac30d75fd1eb44270", plaintext: JSON.stringify(value) });

/** An exported state (secrets revealed) of `project`'s stack holding one ApiKey and one batch. */
function holding(project: string, stack: string, key: string, subs: { id: number; token: string }[]): string {
  const urn = (type: string, name: string) => `urn:pulumi:${stack}::${project}::${type}::${name}`;
  const views = subs.map((s) => ({
    id: s.id,
    token: s.token,
    alias: "team",
    enabled: true,
    modelPricing: [{ model: "model-a", pricingFactor: 1.2 }],
    createdAt: "2026-11-21T00:00:00Z",
  }));
  const resources = [
    { urn: urn("pulumi:pulumi:Stack", `${project}-${stack}`), type: "pulumi:pulumi:Stack" },
    {
      urn: urn(RESOURCE_TYPES.ApiKey, "ci"),
      type: RESOURCE_TYPES.ApiKey,
      id: "k",
      outputs: {
        key: secret(key),
        adoptKey: secret(key),
        alias: "ci",
        enabled: true,
        securityConfig: null,
        keyHint: "x",
        createdAt: "2026-11-21T00:00:00Z",
      },
    },
    {
      urn: urn(RESOURCE_TYPES.SubAccountBatch, "team"),
      type: RESOURCE_TYPES.SubAccountBatch,
      id: "b",
      outputs: {
        alias: "team",
        balance: 10,
        count: subs.length,
        modelPricing: [{ model: "model-a", pricingFactor: 1.2 }],
        subAccounts: secret(views),
        tokens: secret(subs.map((s) => s.token)),
      },
    },
  ];
  return JSON.stringify({ version: 3, deployment: { manifest: {}, resources } });
}

const EMPTY = JSON.stringify({ version: 3, deployment: { manifest: {}, resources: [] } });

/** `llm-accounts import` in `dir` with the stand-in CLI, the API keys on stdin. */
async function run(
  dir: string,
  args: string[],
  keys: string[],
  pathEnv: Record<string, string>,
): Promise<{ out: string; err: string }> {
  const stdin = new PassThrough();
  stdin.end(keys.join("\n"));
  const [stdout, stderr] = [new PassThrough(), new PassThrough()];
  let out = "";
  let err = "";
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  stderr.on("data", (d: Buffer) => (err += d.toString()));
  const env = {
    ...pathEnv,
    LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
    LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
    LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
    LLM_ACCOUNTS_RATE_LIMITS: "off",
  };
  await runImport(["--out", dir, ...args, "--force", "--keys", "-"], {
    stdin,
    stdout,
    stderr,
    env,
    stderrIsTty: false,
    source: { kind: "spec", spec: "^0.1.0" },
  });
  return { out, err };
}

/** A folder of project `teama` with the user's program. */
function projectFolder(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "Pulumi.yaml"), "name: teama\nruntime: nodejs\n");
  writeFileSync(join(dir, "index.ts"), "// the user's program\n");
  return dir;
}

const exportsOf = (runs: string[]) =>
  runs.filter((r) => r.startsWith("stack export")).map((r) => r.replace(/ --non-interactive$/, ""));

describe("import into stack dev of project teama, on a backend where project teamb also has a stack dev", () => {
  test.each(["dev", "organization/teama/dev"])(
    "--stack %s: teamb's dev is read (its state only), what it holds is named and not adopted; an unreadable stack of teamc is named on stderr",
    async (target) => {
      const theirKey = emu.state.createKey("ci").key;
      const theirs = emu.state.createSubAccounts({ alias: "team", balance: 10, modelPricing: pricing, count: 2 });
      const freeKey = emu.state.createKey("free-key").key;
      emu.state.createSubAccounts({ alias: "free", balance: 1, modelPricing: pricing, count: 1 });
      const dir = projectFolder(`a-${target.length}`);
      const files = mkdtempSync(join(work, "answers-"));
      // As `pulumi stack ls --all --json` lists a file backend in project mode: this project's stacks by short name.
      const listed = [
        { name: "dev", current: true },
        { name: "organization/teamb/dev", current: false },
        { name: "organization/teamc/ops", current: false },
        { name: "prod", current: false },
      ];
      writeFileSync(join(files, "ls.json"), JSON.stringify(listed));
      writeFileSync(join(files, "teamb.json"), holding("teamb", "dev", theirKey, theirs));
      writeFileSync(join(files, "empty.json"), EMPTY);
      const pulumi = standInPulumi(work, {
        '"stack ls --all --json"*': `cat "${files}/ls.json"`,
        '"stack export --show-secrets --stack organization/teamb/dev"*': `cat "${files}/teamb.json"`,
        '"stack export --show-secrets --stack organization/teamc/ops"*': `echo "error: incorrect passphrase; ${theirKey}" >&2; exit 255`,
        '"stack export"*': `cat "${files}/empty.json"`,
        // Another project's config is never asked for: the CLI would answer with this folder's file of that short
        // name, here one adopting the free key (which would then be left out as teamb's).
        '"config --show-secrets --json --stack organization/teamb/dev"*': `echo '{"teama:adoptKey-mine":{"value":"${freeKey}","secret":true}}'`,
        '"config --show-secrets"*': "echo '{}'",
        '*"config set"*': "cat > /dev/null",
      });

      const { out, err } = await run(dir, ["--stack", target], [theirKey, freeKey], pulumi.env);
      expect(out).toContain(
        `API key sk-...${theirKey.slice(-4)}: held by stack organization/teamb/dev of project teamb: not adopted (one object, one owner)`,
      );
      expect(out).toContain("2 sub-account(s) held by stack organization/teamb/dev of project teamb (");
      const program = readFileSync(join(dir, "index.ts"), "utf8");
      expect(out).toContain(": 1 API key(s), 1 sub-account(s) in 1 batch(es).");
      expect(program).toMatch(/new llm\.SubAccountBatch\("free"/);
      expect(program).not.toMatch(/new llm\.SubAccountBatch\("team"/);
      expect(err).toMatch(
        /llm-accounts import: stack organization\/teamc\/ops of project teamc could not be read \(.*incorrect passphrase.*\): what it holds may be adopted here too/,
      );

      // One export of each stack of the backend, the target's once; a config read of this project's stacks only.
      expect(exportsOf(pulumi.runs())).toEqual([
        `stack export --show-secrets --stack ${target}`,
        "stack export --show-secrets --stack organization/teamb/dev",
        "stack export --show-secrets --stack organization/teamc/ops",
        "stack export --show-secrets --stack prod",
      ]);
      expect(pulumi.runs().filter((r) => r.startsWith("config --show-secrets"))).toEqual([
        `config --show-secrets --json --stack ${target} --non-interactive`,
        "config --show-secrets --json --stack prod --non-interactive",
      ]);
      expectNoSecret(out + err + program + pulumi.runs().join("\n"), secretsOf(emu));
    },
  );

  test("a CLI that refuses --all: the project's own list is read as before (its stack prod's key is not adopted)", async () => {
    const theirKey = emu.state.createKey("ci").key;
    const theirs = emu.state.createSubAccounts({ alias: "team", balance: 10, modelPricing: pricing, count: 1 });
    const dir = projectFolder("old-cli");
    const files = mkdtempSync(join(work, "answers-"));
    writeFileSync(
      join(files, "ls.json"),
      JSON.stringify([
        { name: "dev", current: true },
        { name: "prod", current: false },
      ]),
    );
    writeFileSync(join(files, "prod.json"), holding("teama", "prod", theirKey, theirs));
    writeFileSync(join(files, "empty.json"), EMPTY);
    const pulumi = standInPulumi(work, {
      '"stack ls --all"*': 'echo "error: unknown flag: --all" >&2; exit 1',
      '"stack ls --json"*': `cat "${files}/ls.json"`,
      '"stack export --show-secrets --stack prod"*': `cat "${files}/prod.json"`,
      '"stack export"*': `cat "${files}/empty.json"`,
      '"config --show-secrets"*': "echo '{}'",
      '*"config set"*': "cat > /dev/null",
    });
    const { out } = await run(dir, ["--stack", "dev"], [theirKey], pulumi.env);
    expect(pulumi.runs().filter((r) => r.startsWith("stack ls"))).toEqual([
      "stack ls --all --json --non-interactive",
      "stack ls --json --non-interactive",
    ]);
    expect(out).toContain(
      `API key sk-...${theirKey.slice(-4)}: held by stack prod of this project: not adopted (one object, one owner)`,
    );
    expect(out).toContain("1 sub-account(s) held by stack prod of this project (");
  });
});
