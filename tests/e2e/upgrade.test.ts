import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { buildRelease, RELEASE_0_1_0 } from "../../scripts/lib/release.mjs";
import type { Emulator } from "../../provider/emulator/index.js";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import { CLI_BUILD_TIMEOUT_MS, disposeStack, requirePulumiCli, SecretLedger, stackFor, type PulumiStack } from "./support.js";

// A state written by release 0.1.0 (built from git), then driven by this version: refresh, update, destroy.
const PROGRAM = join(REPO, "tests/e2e/programs/many-keys");

let emu: Emulator;
let stack: PulumiStack;
let ledger: SecretLedger;

/** Points the program's node_modules/pulumi-llm-accounts at a package folder. */
function install(packageDir: string): void {
  const link = join(stack.dir, "node_modules", "pulumi-llm-accounts");
  rmSync(link, { force: true });
  symlinkSync(packageDir, link);
}

type Resource = { type: string; inputs: Record<string, unknown>; outputs: Record<string, unknown> };
async function ours(): Promise<Resource[]> {
  const exported = JSON.parse(await stack.exportState()) as { deployment: { resources: Resource[] } };
  return exported.deployment.resources.filter((r) => r.type.startsWith("pulumi-nodejs:dynamic/llm-accounts:"));
}

beforeAll(async () => {
  await requirePulumiCli();
  emu = await emulator({ rateLimits: false });
  ledger = new SecretLedger(emu);
  stack = await stackFor(PROGRAM, emu, { env: { LLM_ACCOUNTS_RATE_LIMITS: "off" } });
  await stack.setConfig("count", 3);
  await stack.setConfig("subAccounts", 5);
  install(buildRelease(RELEASE_0_1_0));
  await stack.up();
  ledger.record();
  install(REPO);
}, CLI_BUILD_TIMEOUT_MS);

afterAll(async () => {
  disposeStack(stack);
  await emu?.close();
});

describe("a state written by 0.1.0", () => {
  test("holds 0.1.0's serialized provider (the starting point is really the old state)", async () => {
    const resources = await ours();
    expect(resources).toHaveLength(4);
    for (const r of resources) expect(String(r.inputs.__provider).length).toBeGreaterThan(1500);
  });

  test("refresh: one get per key, one shared list for the batch; drift made elsewhere is seen", async () => {
    const key0 = emu.state.listKeys().find((k) => k.alias === "key-0")!;
    emu.state.editKey(key0.key, "renamed-elsewhere");
    emu.clearRequests();
    await stack.refresh(["--skip-preview"]);
    expect(emu.calls()).toEqual({ "api-key/get": 3, "sub-account/list": 1 });
    const r = (await ours()).find((x) => x.outputs.keyHint && x.outputs.alias === "renamed-elsewhere");
    expect(r).toBeDefined();
  });

  test("update: the drift is put back with one edit, nothing is replaced, and the state shrinks to the new provider", async () => {
    emu.clearRequests();
    const before = await ours();
    await stack.up();
    expect(emu.calls()).toEqual({ "api-key/edit": 1 });
    expect(emu.state.listKeys().map((k) => k.alias).sort()).toEqual(["key-0", "key-1", "key-2"]);
    const after = await ours();
    const edited = after.find((r) => r.outputs.alias === "key-0")!;
    expect(String(edited.inputs.__provider).length).toBeLessThan(512);
    expect(String(edited.outputs.__provider).length).toBeLessThan(512);
    expect(JSON.stringify(after).length).toBeLessThan(JSON.stringify(before).length);
    ledger.expectAbsent(stack.backendText(), "the state");
  });

  test("destroy: one delete call for the keys, one for the sub-accounts; nothing is left", async () => {
    emu.clearRequests();
    await stack.destroy();
    expect(emu.calls()).toEqual({ "api-key/delete": 1, "sub-account/delete": 1 });
    expect(emu.state.listKeys()).toEqual([]);
    expect(emu.state.listSubAccounts()).toEqual([]);
  });
});
