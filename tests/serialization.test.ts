import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { copyFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Emulator } from "../provider/emulator/index.js";
import { emulator, expectNoSecret, secretsOf } from "./support/emulator.js";
import { programDir, REPO } from "./support/programDir.js";

let emu: Emulator;
let dir: string;
const texts: Record<string, string> = {};

beforeAll(async () => {
  emu = await emulator({ rateLimits: false });
  dir = programDir();
  for (const f of ["serializeProvider.mjs", "runSerialized.cjs"])
    copyFileSync(join(REPO, "tests/support", f), join(dir, f));
  for (const name of ["apiKey", "subAccountBatch"]) {
    // With credentials in the environment of the serializing process too: none may be captured.
    const out = execFileSync(process.execPath, ["serializeProvider.mjs", name], {
      cwd: dir,
      env: {
        ...process.env,
        LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
        LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
        LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
      },
    });
    texts[name] = (JSON.parse(out.toString()) as { text: string }).text;
  }
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs a lifecycle in a child process from the serialized text, as the plugin would. Asynchronously: the
 * emulator answering it runs in this process.
 */
async function runSerialized(
  name: string,
  plan: unknown,
  env: Record<string, string>,
  config?: Record<string, string>,
): Promise<Record<string, any>> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LLM_ACCOUNTS_")));
  const child = promisify(execFile)(process.execPath, ["runSerialized.cjs"], { cwd: dir, env: { ...clean, ...env } });
  child.child.stdin?.end(JSON.stringify({ text: texts[name], plan, config }));
  const { stdout } = await child;
  return JSON.parse(stdout) as Record<string, any>;
}

describe("the serialized provider", () => {
  test.each(["apiKey", "subAccountBatch"])(
    "%s is stored as under 512 bytes of provider text and holds no credential",
    (name) => {
      expect(texts[name].length).toBeLessThan(512);
      expect(texts[name]).toContain('import("pulumi-llm-accounts/runtime")');
      expectNoSecret(texts[name], [emu.adminKey, emu.accountKey]);
      expect(texts[name]).not.toMatch(/sk-[A-Za-z0-9]{8}/);
    },
  );

  test("ApiKey: evaluated like the plugin does, it runs check/create/read/diff/update/delete with env credentials", async () => {
    emu.clearRequests();
    const out = await runSerialized(
      "apiKey",
      { news: { alias: "ser" }, changed: { alias: "ser", enabled: false } },
      { LLM_ACCOUNTS_BASE_URL: emu.baseUrl, LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey },
    );
    expect(out.check.failures).toEqual([]);
    expect(out.create.outs).toMatchObject({ alias: "ser", enabled: true });
    expect(out.read.props.alias).toBe("ser");
    expect(out.diff.changes).toBe(true);
    expect(out.update.outs.enabled).toBe(false);
    expect(out.delete).toBeUndefined();
    expect(emu.requests().map((r) => r.op)).toEqual([
      "api-key/create",
      "api-key/get",
      "api-key/status",
      "api-key/delete",
    ]);
    expect(emu.state.listKeys().filter((k) => k.alias === "ser")).toHaveLength(0);
  });

  test("SubAccountBatch: the same, with credentials from the stack config given to configure", async () => {
    emu.clearRequests();
    const out = await runSerialized(
      "subAccountBatch",
      {
        news: { alias: "ser-team", balance: 5, count: 2, modelPricing: [{ model: "model-a", pricingFactor: 1 }] },
        changed: { alias: "ser-team", balance: 5, count: 3, modelPricing: [{ model: "model-a", pricingFactor: 1 }] },
      },
      {},
      { "llm-accounts:baseUrl": emu.baseUrl, "llm-accounts:accountKey": emu.accountKey },
    );
    expect(out.create.outs.count).toBe(2);
    expect(out.update.outs.count).toBe(3);
    // Each create (the batch's, then the raise's) is followed by the edit that gives its sub-accounts the declared
    // alias in place of the create's marked one (provider/api/assumptions.ts, CREATE_MARKER).
    expect(emu.requests().map((r) => r.op)).toEqual([
      "sub-account/create",
      "sub-account/edit",
      "sub-account/list",
      "sub-account/create",
      "sub-account/edit",
      "sub-account/delete",
    ]);
    expect(emu.state.listSubAccounts().filter((s) => s.alias === "ser-team")).toHaveLength(0);
  });

  test("without credentials, a method fails with a message naming the env var and the config key, and no secret", async () => {
    const out = await runSerialized(
      "apiKey",
      { news: { alias: "nocred" }, changed: { alias: "nocred" } },
      { LLM_ACCOUNTS_BASE_URL: emu.baseUrl },
    );
    expect(out.create.error).toMatch(/LLM_ACCOUNTS_ADMIN_KEY.*llm-accounts:adminKey/);
    expectNoSecret(JSON.stringify(out), secretsOf(emu));
  });
});
