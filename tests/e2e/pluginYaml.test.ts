import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { ensureGoTool } from "../../scripts/go-tools.mjs";
import { REPO } from "../support/programDir.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  endFile,
  expectNoSecretsAround,
  prepareProgram,
  providerPluginDir,
  PulumiStack,
  revealed,
  setUpFile,
  stackFor,
  writesOf,
} from "./support.js";

// Issue 56: a YAML program manages keys and batches through the provider plugin `llm-accounts`
// (pulumi-resource-llm-accounts, the package's bin) on the real CLI with Pulumi's YAML language host: up, the
// gate, a change, native `pulumi import` of a key and a batch made in the console (zero writes, and the program
// Pulumi writes from them changes nothing), destroy; the credentials only in the provider's configuration (stack
// config, keys secret); no key in any output, the state, the backend or the program folder.

/** A test of a few `pulumi` commands on a machine that may be loaded. */
const STEP_TIMEOUT_MS = 5 * 60_000;
const PROGRAM = join(REPO, "tests/e2e/programs/yaml");
const run = setUpFile({ seed: (emu) => emu.state.createKey("console-key") });
let stack: PulumiStack;
let moved: PulumiStack | undefined;
let pluginDir: string;
let consoleKey: string;
let consoleBatch: string[];

const gate = () => run.pulumi(stack.run(["preview", "--refresh", "--expect-no-changes", "--diff"]));

beforeAll(async () => {
  const yaml = ensureGoTool("pulumi-language-yaml", { log: (m) => process.stderr.write(`[go-tools] ${m}\n`) });
  pluginDir = providerPluginDir();
  consoleKey = run.emu.state.listKeys()[0].key;
  consoleBatch = run.emu.state
    .createSubAccounts({
      alias: "console-team",
      balance: 7,
      modelPricing: [{ model: "model-a", pricing_factor: 2 }],
      count: 2,
    })
    .map((s) => String(s.id));
  stack = await PulumiStack.create({
    dir: prepareProgram(PROGRAM, "llm-yaml-"),
    env: { PATH: [run.cli.binDir, pluginDir, yaml.binDir, process.env.PATH].join(delimiter) },
  });
  await stack.setConfig("llm-accounts:baseUrl", run.emu.baseUrl);
  await stack.setConfig("llm-accounts:adminKey", run.emu.adminKey, { secret: true });
  await stack.setConfig("llm-accounts:accountKey", run.emu.accountKey, { secret: true });
}, CLI_BUILD_TIMEOUT_MS);

afterAll(
  () => endFile({ emu: run.emu, ledger: run.ledger, stacks: [stack, moved], destroy: [], folders: [pluginDir] }),
  5 * 60_000,
);

describe("a YAML program on the provider plugin", () => {
  test(
    "pulumi package get-schema prints the plugin's schema",
    () => {
      const r = spawnSync(run.cli.pulumi, ["package", "get-schema", join(pluginDir, "pulumi-resource-llm-accounts")], {
        env: stack.env,
        encoding: "utf8",
      });
      expect(r.status).toBe(0);
      const schema = JSON.parse(r.stdout) as { name: string; resources: Record<string, unknown> };
      expect(schema.name).toBe("llm-accounts");
      expect(Object.keys(schema.resources).sort()).toEqual([
        "llm-accounts:index:ApiKey",
        "llm-accounts:index:SubAccountBatch",
      ]);
    },
    STEP_TIMEOUT_MS,
  );

  test(
    "a wrong input fails the preview naming the field, before any call",
    async () => {
      await stack.setConfig("country", "sg");
      run.emu.clearRequests();
      try {
        const r = await run.pulumi(stack.preview([], { allowFailure: true }));
        expect(r.code).not.toBe(0);
        // The engine's own words around the check's: `property securityConfig.geo.countries[0] value {<nil>} has a problem: ...`.
        expect(r.stdout + r.stderr).toMatch(
          /securityConfig\.geo\.countries\[0\].*: "sg" must be a two-letter upper-case country code/,
        );
        expect(writesOf(run.emu)).toEqual({});
      } finally {
        await stack.setConfig("country", "SG");
      }
    },
    STEP_TIMEOUT_MS,
  );

  test(
    "up creates the key and the batch; the function answers; the gate is empty",
    async () => {
      await run.pulumi(stack.up());
      const out = revealed(await stack.outputs({ showSecrets: true })) as {
        key: string;
        keyHint: string;
        tokens: string[];
        balance: string;
      };
      expect(run.emu.state.getKey(out.key)?.alias).toBe("yaml-key");
      expect(out.keyHint).toBe(`sk-...${out.key.slice(-4)}`);
      expect(out.tokens).toHaveLength(2);
      expect(out.balance).toMatch(/^\d/);
      const shown = await stack.outputs();
      expect(shown.key).toBe("[secret]");
      expect(shown.tokens).toBe("[secret]");
      await gate();
    },
    STEP_TIMEOUT_MS,
  );

  test(
    "a change: one edit of the key's alias and one more sub-account, then the gate is empty",
    async () => {
      await stack.setConfig("alias", "yaml-key-2");
      await stack.setConfig("count", "3");
      run.emu.clearRequests();
      await run.pulumi(stack.up());
      expect(writesOf(run.emu)).toEqual({ "api-key/edit": 1, "sub-account/create": 1, "sub-account/edit": 1 });
      const out = revealed(await stack.outputs({ showSecrets: true })) as { key: string; tokens: string[] };
      expect(run.emu.state.getKey(out.key)?.alias).toBe("yaml-key-2");
      expect(out.tokens).toHaveLength(3);
      await gate();
    },
    STEP_TIMEOUT_MS,
  );

  test(
    "objects deleted in the console: up --refresh makes them again (1 key create, 1 sub-account create and its edit), then the gate is empty",
    async () => {
      const out = revealed(await stack.outputs({ showSecrets: true })) as { key: string; tokens: string[] };
      run.emu.state.deleteKey(out.key);
      run.emu.state.deleteSubAccount(out.tokens[0]);
      run.emu.clearRequests();
      await run.pulumi(stack.up(["--refresh"]));
      expect(writesOf(run.emu)).toEqual({ "api-key/create": 1, "sub-account/create": 1, "sub-account/edit": 1 });
      const after = revealed(await stack.outputs({ showSecrets: true })) as { key: string; tokens: string[] };
      expect(after.key).not.toBe(out.key);
      expect(run.emu.state.getKey(after.key)?.alias).toBe("yaml-key-2");
      expect(after.tokens.filter((t) => run.emu.state.hasSubAccount(t))).toHaveLength(3);
      await gate();
    },
    STEP_TIMEOUT_MS,
  );

  test(
    "pulumi import adopts a console key (env:<VARIABLE>) and batch (ids) with zero writes; the program it writes changes nothing",
    async () => {
      const importFile = join(stack.dir, "import.json");
      writeFileSync(
        importFile,
        JSON.stringify({
          resources: [
            { type: "llm-accounts:index:ApiKey", name: "consoleKey", id: "env:CONSOLE_KEY" },
            { type: "llm-accounts:index:SubAccountBatch", name: "consoleTeam", id: consoleBatch.join(",") },
          ],
        }),
      );
      run.emu.clearRequests();
      const generated = join(stack.dir, "imported.yaml");
      await run.pulumi(
        stack.run(["import", "--file", importFile, "--out", generated, "--yes", "--protect=false"], {
          env: { CONSOLE_KEY: consoleKey },
        }),
      );
      expect(writesOf(run.emu)).toEqual({});
      const code = readFileSync(generated, "utf8");
      expect(code).toContain("type: llm-accounts:ApiKey");
      expect(code).toContain("alias: console-team");
      // The resources Pulumi wrote, appended to the program's (its last section).
      const program = join(stack.dir, "Pulumi.yaml");
      writeFileSync(program, readFileSync(program, "utf8") + code.replace(/^resources:\n/m, ""));
      run.emu.clearRequests();
      await run.pulumi(stack.run(["preview", "--expect-no-changes", "--diff"]));
      await run.pulumi(stack.up());
      expect(writesOf(run.emu)).toEqual({});
      await gate();
    },
    STEP_TIMEOUT_MS,
  );

  test(
    "destroy deletes every object the stack holds, adopted ones included; no key in any output or file",
    async () => {
      await run.pulumi(stack.destroy());
      expect(run.emu.state.listKeys()).toEqual([]);
      expect(run.emu.state.listSubAccounts()).toEqual([]);
      await expectNoSecretsAround(run.ledger, stack, stack.dir, run.printed);
    },
    STEP_TIMEOUT_MS,
  );
});

/** A YAML program declaring what tests/e2e/programs/lifecycle declares by default, on the provider's types. */
const LIFECYCLE_IN_YAML = `name: llm-accounts-e2e-lifecycle
runtime: yaml
resources:
  key:
    type: llm-accounts:index:ApiKey
    properties:
      alias: lifecycle
      enabled: true
      securityConfig:
        geo:
          countries: [SG]
        spendLimit:
          monthly: 100
  team:
    type: llm-accounts:index:SubAccountBatch
    properties:
      alias: team
      balance: 10
      count: 2
      modelPricing:
        - model: model-a
          pricingFactor: 1.5
`;

describe("a stack on the TypeScript resources moves to the provider's, as docs/provider.md says", () => {
  test(
    "import under the new types, state delete of the old, a YAML program: nothing created, deleted or written",
    async () => {
      moved = await stackFor(join(REPO, "tests/e2e/programs/lifecycle"), run.emu, { stack: "moving" });
      moved.env.PATH = [run.cli.binDir, pluginDir, ensureGoTool("pulumi-language-yaml").binDir, process.env.PATH].join(
        delimiter,
      );
      const live = () => ({
        keys: run.emu.state.listKeys().map((k) => k.key),
        subAccounts: run.emu.state.listSubAccounts().map((s) => s.token),
      });
      const others = live();
      await run.pulumi(moved.up());
      // What the TypeScript program made: the objects that move.
      const before = {
        keys: live().keys.filter((k) => !others.keys.includes(k)),
        subAccounts: live().subAccounts.filter((t) => !others.subAccounts.includes(t)),
      };
      expect([before.keys.length, before.subAccounts.length]).toEqual([1, 2]);
      const state = revealed(JSON.parse((await moved.run(["stack", "export", "--show-secrets"])).stdout)) as {
        deployment: {
          resources: { urn: string; type: string; outputs?: { key?: string; subAccounts?: { id: unknown }[] } }[];
        };
      };
      const old = state.deployment.resources.filter((r) => r.type.startsWith("pulumi-nodejs:dynamic/"));
      const key = old.find((r) => r.type.endsWith(":ApiKey"))!.outputs!.key!;
      const ids = old.find((r) => r.type.endsWith(":SubAccountBatch"))!.outputs!.subAccounts!.map((s) => String(s.id));
      const importFile = join(moved.dir, "import.json");
      writeFileSync(
        importFile,
        JSON.stringify({
          resources: [
            { type: "llm-accounts:index:ApiKey", name: "key", id: "env:MOVED_KEY" },
            { type: "llm-accounts:index:SubAccountBatch", name: "team", id: ids.join(",") },
          ],
        }),
      );
      run.emu.clearRequests();
      await run.pulumi(
        moved.run(["import", "--file", importFile, "--yes", "--protect=false", "--generate-code=false"], {
          env: { MOVED_KEY: key },
        }),
      );
      for (const r of old) await run.pulumi(moved.run(["state", "delete", r.urn, "--yes"]));
      writeFileSync(join(moved.dir, "Pulumi.yaml"), LIFECYCLE_IN_YAML);
      await run.pulumi(moved.run(["preview", "--expect-no-changes", "--diff"]));
      await run.pulumi(moved.up());
      await run.pulumi(moved.run(["preview", "--refresh", "--expect-no-changes", "--diff"]));
      expect(writesOf(run.emu)).toEqual({});
      expect(live()).toEqual({
        keys: [...others.keys, ...before.keys],
        subAccounts: [...others.subAccounts, ...before.subAccounts],
      });
      await run.pulumi(moved.destroy());
      expect(before.keys.filter((k) => run.emu.state.hasKey(k))).toEqual([]);
      expect(before.subAccounts.filter((t) => run.emu.state.hasSubAccount(t))).toEqual([]);
      await expectNoSecretsAround(run.ledger, moved, moved.dir, run.printed);
    },
    STEP_TIMEOUT_MS,
  );
});
