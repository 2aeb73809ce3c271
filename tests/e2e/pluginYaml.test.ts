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
  writesOf,
} from "./support.js";

// Issue 56: a YAML program manages keys and batches through the provider plugin `llm-accounts`
// (pulumi-resource-llm-accounts, the package's bin) on the real CLI with Pulumi's YAML language host: up, the
// gate, a change, native `pulumi import` of a key and a batch made in the console (zero writes, and the program
// Pulumi writes from them changes nothing), destroy; the credentials only in the provider's configuration (stack
// config, keys secret); no key in any output, the state, the backend or the program folder.

const PROGRAM = join(REPO, "tests/e2e/programs/yaml");
const run = setUpFile({ seed: (emu) => emu.state.createKey("console-key") });
let stack: PulumiStack;
let pluginDir: string;
let consoleKey: string;
let consoleBatch: string[];

const gate = () => run.pulumi(stack.run(["preview", "--refresh", "--expect-no-changes", "--diff"]));

beforeAll(async () => {
  const yaml = ensureGoTool("pulumi-language-yaml", { log: (m) => process.stderr.write(`[go-tools] ${m}\n`) });
  pluginDir = providerPluginDir();
  consoleKey = run.emu.state.listKeys()[0].key;
  consoleBatch = run.emu.state
    .createSubAccounts({ alias: "console-team", balance: 7, modelPricing: [{ model: "model-a", pricing_factor: 2 }], count: 2 })
    .map((s) => String(s.id));
  stack = await PulumiStack.create({
    dir: prepareProgram(PROGRAM, "llm-yaml-"),
    env: { PATH: [run.cli.binDir, pluginDir, yaml.binDir, process.env.PATH].join(delimiter) },
  });
  await stack.setConfig("llm-accounts:baseUrl", run.emu.baseUrl);
  await stack.setConfig("llm-accounts:adminKey", run.emu.adminKey, { secret: true });
  await stack.setConfig("llm-accounts:accountKey", run.emu.accountKey, { secret: true });
}, CLI_BUILD_TIMEOUT_MS);

afterAll(() => endFile({ emu: run.emu, ledger: run.ledger, stacks: [stack], destroy: [], folders: [pluginDir] }), 5 * 60_000);

describe("a YAML program on the provider plugin", () => {
  test("pulumi package get-schema prints the plugin's schema", () => {
    const r = spawnSync(run.cli.pulumi, ["package", "get-schema", join(pluginDir, "pulumi-resource-llm-accounts")], { env: stack.env, encoding: "utf8" });
    expect(r.status).toBe(0);
    const schema = JSON.parse(r.stdout) as { name: string; resources: Record<string, unknown> };
    expect(schema.name).toBe("llm-accounts");
    expect(Object.keys(schema.resources).sort()).toEqual(["llm-accounts:index:ApiKey", "llm-accounts:index:SubAccountBatch"]);
  });

  test("a wrong input fails the preview naming the field, before any call", async () => {
    await stack.setConfig("country", "sg");
    run.emu.clearRequests();
    try {
      const r = await run.pulumi(stack.preview([], { allowFailure: true }));
      expect(r.code).not.toBe(0);
      // The engine's own words around the check's: `property securityConfig.geo.countries[0] value {<nil>} has a problem: ...`.
      expect(r.stdout + r.stderr).toMatch(/securityConfig\.geo\.countries\[0\].*: "sg" must be a two-letter upper-case country code/);
      expect(writesOf(run.emu)).toEqual({});
    } finally {
      await stack.setConfig("country", "SG");
    }
  });

  test("up creates the key and the batch; the function answers; the gate is empty", async () => {
    await run.pulumi(stack.up());
    const out = revealed(await stack.outputs({ showSecrets: true })) as { key: string; keyHint: string; tokens: string[]; balance: string };
    expect(run.emu.state.getKey(out.key)?.alias).toBe("yaml-key");
    expect(out.keyHint).toBe(`sk-...${out.key.slice(-4)}`);
    expect(out.tokens).toHaveLength(2);
    expect(out.balance).toMatch(/^\d/);
    const shown = await stack.outputs();
    expect(shown.key).toBe("[secret]");
    expect(shown.tokens).toBe("[secret]");
    await gate();
  });

  test("a change: one edit of the key's alias and one more sub-account, then the gate is empty", async () => {
    await stack.setConfig("alias", "yaml-key-2");
    await stack.setConfig("count", "3");
    run.emu.clearRequests();
    await run.pulumi(stack.up());
    expect(writesOf(run.emu)).toEqual({ "api-key/edit": 1, "sub-account/create": 1, "sub-account/edit": 1 });
    const out = revealed(await stack.outputs({ showSecrets: true })) as { key: string; tokens: string[] };
    expect(run.emu.state.getKey(out.key)?.alias).toBe("yaml-key-2");
    expect(out.tokens).toHaveLength(3);
    await gate();
  });

  test("pulumi import adopts a console key (env:<VARIABLE>) and batch (ids) with zero writes; the program it writes changes nothing", async () => {
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
    await run.pulumi(stack.run(["import", "--file", importFile, "--out", generated, "--yes", "--protect=false"], { env: { CONSOLE_KEY: consoleKey } }));
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
  });

  test("destroy deletes every object the stack holds, adopted ones included; no key in any output or file", async () => {
    await run.pulumi(stack.destroy());
    expect(run.emu.state.listKeys()).toEqual([]);
    expect(run.emu.state.listSubAccounts()).toEqual([]);
    await expectNoSecretsAround(run.ledger, stack, stack.dir, run.printed);
  });
});
