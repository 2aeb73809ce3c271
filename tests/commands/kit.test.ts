import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { Emulator } from "../../provider/emulator/index.js";
import { runAudit } from "../../provider/commands/audit.js";
import { PolicyConfigError } from "../../provider/policy/rules.js";
import { runSweep } from "../../provider/commands/sweep.js";
import { UsageError } from "../../provider/usageError.js";
import { emulator } from "../support/emulator.js";

/** What the commands do alike through provider/commands/kit.ts, each failing with its own error class (its exit code). */

let emu: Emulator;
let work: string;
let config: string;

beforeAll(async () => {
  emu = await emulator({ rateLimits: false });
  work = mkdtempSync(join(tmpdir(), "llm-kit-test-"));
  config = join(work, "policy.json");
  writeFileSync(config, "{}");
});

afterAll(async () => {
  await emu.close();
  rmSync(work, { recursive: true, force: true });
});

const io = (env: NodeJS.ProcessEnv) => ({
  stdin: new PassThrough(),
  stdout: new PassThrough(),
  stderr: new PassThrough(),
  env,
  stderrIsTty: false,
});
const account = (overrides: NodeJS.ProcessEnv = {}) => ({
  LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
  LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
  LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
  ...overrides,
});

describe("the commands' kit", () => {
  test("an unreadable --keys file is named alike by audit and sweep (as by import), each with its own error", async () => {
    const missing = join(work, "missing.txt");
    const message = `--keys ${missing}: cannot read the key file (ENOENT)`;
    const audit = runAudit(["--policy-config", config, "--keys", missing], io(account()));
    await expect(audit).rejects.toThrow(message);
    await expect(audit).rejects.toBeInstanceOf(PolicyConfigError);
    const sweep = runSweep(["--any-alias", "--keys", missing], io(account()));
    await expect(sweep).rejects.toThrow(message);
    await expect(sweep).rejects.toBeInstanceOf(UsageError);
  });

  test("a refused credential is named alike by audit and sweep: which one, where it is set, and the base URL to check", async () => {
    const key = emu.state.createKey("kit-test").key;
    const keys = join(work, "keys.txt");
    writeFileSync(keys, `${key}\n`);
    const wrongAdmin = account({ LLM_ACCOUNTS_ADMIN_KEY: "sk-admin-wrongwrongwrongwrong" });
    const admin = /^the platform refused the admin key \(LLM_ACCOUNTS_ADMIN_KEY\) \(401\): check it, and the base URL/;
    await expect(runAudit(["--policy-config", config, "--keys", keys], io(wrongAdmin))).rejects.toThrow(admin);
    await expect(runSweep(["--any-alias", "--keys", keys], io(wrongAdmin))).rejects.toThrow(admin);
    const wrongAccount = account({ LLM_ACCOUNTS_ACCOUNT_KEY: "sk-wrongwrongwrongwrongwrong" });
    const main =
      /^the platform refused the main account key \(LLM_ACCOUNTS_ACCOUNT_KEY\) \(401\): check it, and the base URL/;
    await expect(runAudit(["--policy-config", config], io(wrongAccount))).rejects.toThrow(main);
    await expect(runSweep(["--any-alias"], io(wrongAccount))).rejects.toThrow(main);
  });
});
