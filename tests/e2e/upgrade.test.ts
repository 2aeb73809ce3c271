import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RELEASES } from "../../scripts/lib/release.mjs";
import type { Emulator } from "../../provider/emulator/index.js";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  expectSettled,
  expectSwept,
  PulumiStack,
  prepareProgram,
  requirePulumiCli,
  revealed,
  SecretLedger,
  typeCheckedOnce,
} from "./support.js";

// A state written by each release of this package (RELEASES: 0.1.0 and the main of each later round), kept as a
// fixture the release itself wrote (scripts/upgrade-fixtures.mjs, never edited by hand), driven by today's code:
// refresh, a preview that replaces nothing, an update that repairs console drift, the settled check, destroy.
const PROGRAM = join(REPO, "tests/e2e/programs/many-keys");
const FIXTURES = join(REPO, "tests/e2e/fixtures/upgrade");
const KEY = "pulumi-nodejs:dynamic/llm-accounts:ApiKey";
const BATCH = "pulumi-nodejs:dynamic/llm-accounts:SubAccountBatch";

type Resource = { urn: string; type: string; inputs: Record<string, unknown>; outputs: Record<string, unknown> };
type Snapshot = {
  admin_key: string;
  account_key: string;
  api_keys: { key: string; alias: string }[];
  sub_accounts: { token: string }[];
};

beforeAll(async () => {
  await requirePulumiCli();
}, CLI_BUILD_TIMEOUT_MS);

test("every release has a fixture written by itself", () => {
  for (const r of RELEASES) {
    const made = JSON.parse(readFileSync(join(FIXTURES, r.name, "release.json"), "utf8")) as {
      commit: string;
      writtenBy: string;
    };
    expect([r.name, made.commit, made.writtenBy]).toEqual([r.name, r.commit, "scripts/upgrade-fixtures.mjs"]);
  }
});

describe.each(RELEASES.map((r) => [r.name, r] as const))("a state written by %s", (name) => {
  const fixture = join(FIXTURES, name);
  let emu: Emulator;
  let stack: PulumiStack;
  let ledger: SecretLedger;
  let scratch: string;

  async function ours(): Promise<Resource[]> {
    const exported = JSON.parse(await stack.exportState()) as { deployment: { resources: Resource[] } };
    return exported.deployment.resources.filter((r) => r.type === KEY || r.type === BATCH);
  }

  beforeAll(async () => {
    const cli = await requirePulumiCli();
    scratch = mkdtempSync(join(tmpdir(), "llm-upgrade-"));
    const dir = prepareProgram(PROGRAM);
    await typeCheckedOnce(PROGRAM, dir);
    const made = JSON.parse(readFileSync(join(fixture, "release.json"), "utf8")) as { stack: string };
    // The stack's config file (its values and passphrase salt) as the release wrote it, then its state.
    copyFileSync(join(fixture, "stack.yaml"), join(dir, `Pulumi.${made.stack}.yaml`));
    stack = new PulumiStack(
      { dir, stack: made.stack, env: { LLM_ACCOUNTS_RATE_LIMITS: "off" }, typeCheck: false },
      cli,
    );
    await stack.run(["stack", "init", made.stack]);
    await stack.run(["stack", "import", "--file", join(fixture, "state.json")]);
    // The emulator as the release left it: its keys and tokens put back from the decrypted state.
    const shown = revealed(JSON.parse((await stack.run(["stack", "export", "--show-secrets"])).stdout)) as {
      deployment: { resources: Resource[] };
    };
    const secretAt = new Map<string, string>();
    for (const r of shown.deployment.resources.filter((x) => x.type === KEY || x.type === BATCH)) {
      const resource = r.urn.split("::").pop()!;
      if (typeof r.outputs.key === "string") secretAt.set(`state:${resource}#key`, r.outputs.key);
      ((r.outputs.tokens as string[] | undefined) ?? []).forEach((t, i) =>
        secretAt.set(`state:${resource}#tokens.${i}`, t),
      );
    }
    const fill = (ref: string) => secretAt.get(ref) ?? ref;
    const snapshot = JSON.parse(readFileSync(join(fixture, "emulator.json"), "utf8")) as Snapshot;
    const fresh = await emulator();
    [snapshot.admin_key, snapshot.account_key] = [fresh.adminKey, fresh.accountKey];
    await fresh.close();
    for (const k of snapshot.api_keys) k.key = fill(k.key);
    for (const s of snapshot.sub_accounts) s.token = fill(s.token);
    const stateFile = join(scratch, "emulator.json");
    writeFileSync(stateFile, JSON.stringify(snapshot), { mode: 0o600 });
    emu = await emulator({ rateLimits: false, stateFile });
    Object.assign(stack.env, {
      LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
      LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
      LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
    });
    ledger = new SecretLedger(emu);
    // Every key and token of the state was found on the emulator, as the release left them.
    expect(emu.state.listKeys()).toHaveLength(3);
    expect(emu.state.listSubAccounts()).toHaveLength(2);
  }, CLI_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    try {
      if (emu) await expectSwept(emu, ledger);
    } finally {
      stack?.dispose();
      if (stack) rmSync(stack.dir, { recursive: true, force: true });
      if (scratch) rmSync(scratch, { recursive: true, force: true });
      await emu?.close();
    }
  });

  test("the fixture holds no key or token in plain text, and is the release's own state", async () => {
    for (const file of ["state.json", "stack.yaml", "emulator.json", "release.json"])
      ledger.expectAbsent(readFileSync(join(fixture, file), "utf8"), `${name}/${file}`);
    const resources = await ours();
    expect(resources).toHaveLength(4);
    // 0.1.0 stored its whole serialized provider in every resource; later releases a short text.
    for (const r of resources) expect(String(r.inputs.__provider).length > 1500).toBe(name === "0.1.0");
  });

  test("refresh: one get per key, one list for the batch; drift made in the console is seen", async () => {
    const key0 = emu.state.listKeys().find((k) => k.alias === "key-0")!;
    emu.state.editKey(key0.key, "renamed-elsewhere");
    emu.clearRequests();
    await stack.refresh(["--skip-preview"]);
    expect(emu.calls()).toEqual({ "api-key/get": 3, "sub-account/list": 1 });
    expect((await ours()).filter((r) => r.outputs.alias === "renamed-elsewhere")).toHaveLength(1);
  }, 300_000);

  test("preview on today's code: the drift is an update, nothing is replaced, nothing is called", async () => {
    emu.clearRequests();
    const r = await stack.preview(["--json"]);
    const steps = (JSON.parse(r.stdout) as { steps: { op: string; urn: string }[] }).steps.filter((s) =>
      s.urn.includes("llm-accounts:"),
    );
    expect(steps.filter((s) => !["same", "update"].includes(s.op))).toEqual([]);
    expect(steps.filter((s) => s.op === "update").map((s) => s.urn.split("::").pop())).toContain("key-0");
    expect(emu.requests()).toEqual([]);
  }, 300_000);

  test("update: one edit puts the drift back, nothing is replaced, and the stack is settled on today's code", async () => {
    emu.clearRequests();
    await stack.up();
    // One get before the edit: an edit replaces the whole config, and the console may have changed it (issue 43).
    expect(emu.calls()).toEqual({ "api-key/get": 1, "api-key/edit": 1 });
    expect(
      emu.state
        .listKeys()
        .map((k) => k.alias)
        .sort(),
    ).toEqual(["key-0", "key-1", "key-2"]);
    await expectSettled(stack);
    ledger.expectAbsent(stack.backendText(), "the state");
  }, 300_000);

  test("destroy: one delete call for the keys, one for the sub-accounts; nothing is left", async () => {
    emu.clearRequests();
    await stack.destroy();
    expect(emu.calls()).toEqual({ "api-key/delete": 1, "sub-account/delete": 1 });
    expect(emu.state.listKeys()).toEqual([]);
    expect(emu.state.listSubAccounts()).toEqual([]);
  }, 300_000);
});
