import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Emulator } from "../../provider/emulator/index.js";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  endFile,
  expectSettled,
  PulumiStack,
  requirePulumiCli,
  SecretLedger,
} from "./support.js";
import { writeCalls } from "../support/emulatorCalls.js";

let emu: Emulator;
let scratch: string;
let tarball: string;
let stack: PulumiStack;
let ledger: SecretLedger;

/** Runs a command as a user's shell would; resolves with its exit code and output, never rejects. */
function sh(
  file: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  stdin = "",
): Promise<{ code: number; out: string }> {
  return new Promise((done) => {
    const child = execFile(file, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      done({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, out: `${stdout}${stderr}` }),
    );
    child.stdin?.end(stdin);
  });
}

beforeAll(async () => {
  const cli = await requirePulumiCli();
  emu = await emulator({ rateWindowMs: 1000 });
  scratch = mkdtempSync(join(tmpdir(), "llm-install-"));
  // The tarball a user makes from a clone (README.md, "Install"), in a folder of its own: a new path each run, so
  // that npx never answers from a cache of another build.
  const packed = await sh("npm", ["pack", "--ignore-scripts", "--pack-destination", scratch], REPO, process.env);
  expect(packed.code).toBe(0);
  tarball = join(scratch, readdirSync(scratch).find((f) => f.endsWith(".tgz"))!);
  const dir = join(scratch, "account");
  mkdirSync(dir);
  stack = new PulumiStack(
    {
      dir,
      account: { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey },
      env: { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" },
    },
    cli,
  );
  ledger = new SecretLedger(emu);
}, CLI_BUILD_TIMEOUT_MS);

afterAll(() => endFile({ emu, ledger, stacks: [stack], folders: [scratch] }));

describe("the adoption guide's steps (docs/guides/adoption.md), as written, from an empty folder", () => {
  test("npx --package <tarball> llm-accounts import, npm install, pulumi up: no write, and the folder installs without the tarball it came from", async () => {
    const keys = [emu.state.createKey("ci-runner").key, emu.state.createKey("ops").key];
    emu.state.createSubAccounts({
      alias: "team-a",
      balance: 5,
      modelPricing: [{ model: "model-a", pricing_factor: 1.5 }],
      count: 2,
    });
    const keyFile = join(scratch, "console-keys.txt");
    writeFileSync(keyFile, keys.join("\n"));
    const env = { ...stack.env, npm_config_update_notifier: "false" };

    const imported = await sh(
      "npx",
      [
        "--yes",
        "--package",
        tarball,
        "llm-accounts",
        "import",
        "--out",
        ".",
        "--keys",
        keyFile,
        "--stack",
        stack.stack,
      ],
      stack.dir,
      env,
    );
    expect(imported.out).toContain("Stored the 2 API key(s) in the encrypted config of stack dev");
    expect(imported.code).toBe(0);
    const pkg = JSON.parse(readFileSync(join(stack.dir, "package.json"), "utf8"));
    expect(pkg.dependencies["pulumi-llm-accounts"]).toBe(`file:vendor/${tarball.split("/").pop()}`);
    expect(JSON.stringify(pkg)).not.toContain("_npx");

    // Another machine: the folder as committed, without the tarball the import ran from.
    rmSync(tarball);
    const installed = await sh("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], stack.dir, env);
    expect(installed.code).toBe(0);

    emu.clearRequests();
    const up = await stack.up();
    ledger.record();
    expect(Object.keys(writeCalls(emu.calls()))).toEqual([]);
    expect(emu.calls()["api-key/get"]).toBe(2);
    await expectSettled(stack);
    const folder = ["index.ts", "package.json", "Pulumi.yaml", `Pulumi.${stack.stack}.yaml`]
      .map((f) => readFileSync(join(stack.dir, f), "utf8"))
      .join("\n");
    ledger.expectAbsent(folder, "the program folder");
    ledger.expectAbsent(imported.out + up.stdout + up.stderr, "the output of import and pulumi up");
    // The installed program owns what it adopted: destroy deletes it all (the sweep at the end finds nothing).
    await stack.destroy();
    expect(emu.state.listKeys()).toEqual([]);
    expect(emu.state.listSubAccounts()).toEqual([]);
  }, 900_000);
});
