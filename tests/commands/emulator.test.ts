import { afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { OPERATIONS } from "../../provider/api/operations.js";

// The CLI is tested as users run it: the built file (npm run build, or npx tsc -p tsconfig.build.json).
const CLI = resolve("dist/provider/cli.js");

interface Running {
  child: ChildProcess;
  info: { baseUrl: string; adminKey: string; accountKey: string };
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children: ChildProcess[] = [];

function run(args: string[]): {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Running["exited"];
} {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on("exit", (code, signal) => done({ code, signal })),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

async function startCli(args: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<Running> {
  const child = spawn(process.execPath, [CLI, "emulator", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env,
  });
  children.push(child);
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on("exit", (code, signal) => done({ code, signal })),
  );
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((done, fail) => {
    lines.once("line", done);
    child.once("exit", (code) => fail(new Error(`the CLI exited (${code}) before its first line: ${err}`)));
  });
  return { child, info: JSON.parse(first), stderr: () => err, exited };
}

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first`);
});
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

async function balance(info: Running["info"]): Promise<Response> {
  return fetch(info.baseUrl + OPERATIONS.balance.path, {
    method: "POST",
    headers: { authorization: `Bearer ${info.adminKey}`, "content-type": "application/json" },
    body: "{}",
  });
}

describe("llm-accounts emulator", () => {
  it("prints {baseUrl, adminKey, accountKey} as the first stdout line and serves the API there", async () => {
    const cli = await startCli();
    expect(Object.keys(cli.info)).toEqual(["baseUrl", "adminKey", "accountKey"]);
    expect(cli.info.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(cli.info.adminKey).toMatch(/^sk-admin-[A-Za-z0-9]{32}$/);
    expect(cli.info.accountKey).toMatch(/^sk-[A-Za-z0-9]{48}$/);
    expect((await balance(cli.info)).status).toBe(200);
  });

  it("exits 0 on SIGTERM", async () => {
    const cli = await startCli();
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toEqual({ code: 0, signal: null });
  });

  it("exits 0 on SIGINT, even with an idle keep-alive connection open", async () => {
    const cli = await startCli();
    await (await balance(cli.info)).text();
    cli.child.kill("SIGINT");
    expect(await cli.exited).toEqual({ code: 0, signal: null });
  });

  it("logs one line per request to stderr, without keys", async () => {
    const cli = await startCli();
    await (await balance(cli.info)).text();
    cli.child.kill("SIGTERM");
    await cli.exited;
    expect(cli.stderr()).toMatch(/^POST account\/balance 200 \d+ms$/m);
    expect(cli.stderr()).not.toContain(cli.info.adminKey);
    expect(cli.stderr()).not.toContain(cli.info.accountKey);
  });

  it("injects the faults given with --fault", async () => {
    const cli = await startCli(["--fault", "503:ops=account/balance,count=1", "--fault", "latency:ms=1"]);
    expect((await balance(cli.info)).status).toBe(503);
    expect((await balance(cli.info)).status).toBe(200);
  });

  it("uses the keys given with --admin-key and --account-key", async () => {
    const adminKey = "sk-admin-CliCliCliCliCliCliCliCliCliCliCl";
    const accountKey = "sk-CliCliCliCliCliCliCliCliCliCliCliCliCliCliCliCli";
    const cli = await startCli(["--admin-key", adminKey, "--account-key", accountKey, "--no-rate-limits"]);
    expect(cli.info).toMatchObject({ adminKey, accountKey });
    expect(cli.stderr()).toMatch(/--admin-key is visible to every user of this machine/);
  });

  // Issue 14 row 10: keys from the environment or a file, never only from argv (which `ps` shows).
  it("reads the keys from LLM_ACCOUNTS_ADMIN_KEY / LLM_ACCOUNTS_ACCOUNT_KEY, keeping them out of its command line", async () => {
    const adminKey = "sk-admin-EnvEnvEnvEnvEnvEnvEnvEnvEnvEnvEn";
    const accountKey = "sk-EnvEnvEnvEnvEnvEnvEnvEnvEnvEnvEnvEnvEnvEnvEnvEnv";
    const cli = await startCli(["--no-rate-limits"], {
      ...process.env,
      LLM_ACCOUNTS_ADMIN_KEY: adminKey,
      LLM_ACCOUNTS_ACCOUNT_KEY: accountKey,
    });
    expect(cli.info).toMatchObject({ adminKey, accountKey });
    expect(cli.child.spawnargs.join(" ")).not.toContain("Env");
    expect((await balance(cli.info)).status).toBe(200);
  });

  it("reads the keys from --admin-key-file / --account-key-file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "llm-cli-"));
    try {
      const adminKey = "sk-admin-FileFileFileFileFileFileFileFile";
      const accountKey = "sk-FileFileFileFileFileFileFileFileFileFileFileFile";
      await writeFile(join(dir, "admin"), `${adminKey}\n`, { mode: 0o600 });
      await writeFile(join(dir, "account"), accountKey, { mode: 0o600 });
      const cli = await startCli(["--admin-key-file", join(dir, "admin"), "--account-key-file", join(dir, "account")]);
      expect(cli.info).toMatchObject({ adminKey, accountKey });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  // Issue 23 row 12: a key file holds one key; its second line was taken as part of the key.
  it("refuses a key file of two lines, and a key variable with a space, naming the source and never the key", async () => {
    const dir = await mkdtemp(join(tmpdir(), "llm-cli-"));
    try {
      const file = join(dir, "admin");
      await writeFile(file, "sk-admin-LineOneLineOneLineOneLineOneLi\nsk-admin-LineTwoLineTwoLineTwoLineTwoLi\n", {
        mode: 0o600,
      });
      const twoLines = run(["emulator", "--port", "0", "--admin-key-file", file]);
      expect((await twoLines.exited).code).toBe(2);
      expect(twoLines.stderr()).toContain(
        `--admin-key-file ${file}: the admin key must hold only letters, digits and - . _ ~ + / = (no space, line break or other character)`,
      );
      expect(twoLines.stderr()).not.toContain("LineOneLineOne");
      const spaced = spawn(process.execPath, [CLI, "emulator", "--port", "0"], {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, LLM_ACCOUNTS_ACCOUNT_KEY: "sk-SpacedSpaced SpacedSpacedSpaced" },
      });
      children.push(spaced);
      let err = "";
      spaced.stderr!.on("data", (d) => (err += d));
      expect(await new Promise((done) => spaced.on("exit", done))).toBe(2);
      expect(err).toContain(
        "LLM_ACCOUNTS_ACCOUNT_KEY: the account key must hold only letters, digits and - . _ ~ + / = (no space, line break or other character)",
      );
      expect(err).not.toContain("SpacedSpaced");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("keeps generated keys in --state-file across a restart", async () => {
    const dir = await mkdtemp(join(tmpdir(), "llm-cli-"));
    try {
      const file = join(dir, "state.json");
      const first = await startCli(["--state-file", file]);
      first.child.kill("SIGTERM");
      await first.exited;
      const second = await startCli(["--state-file", file]);
      expect(second.info.adminKey).toBe(first.info.adminKey);
      expect(second.info.accountKey).toBe(first.info.accountKey);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses a bad --fault with exit code 2 and the usage", async () => {
    const cli = run(["emulator", "--port", "0", "--fault", "teapot"]);
    expect((await cli.exited).code).toBe(2);
    expect(cli.stderr()).toContain("--fault");
    expect(cli.stderr()).toContain("Usage: llm-accounts");
  });

  it("--clock-offset-hours issues keys with a created_at that much older; a bad value is refused", async () => {
    const cli = await startCli(["--clock-offset-hours=-48"]);
    const res = await fetch(cli.info.baseUrl + OPERATIONS.createApiKey.path, {
      method: "POST",
      headers: { authorization: `Bearer ${cli.info.adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ alias: "aged" }),
    });
    const age = Date.now() - Date.parse(((await res.json()) as { created_at: string }).created_at);
    expect(Math.abs(age - 48 * 3_600_000)).toBeLessThan(60_000);
    const bad = run(["emulator", "--port", "0", "--clock-offset-hours", "soon"]);
    expect((await bad.exited).code).toBe(2);
    expect(bad.stderr()).toContain('--clock-offset-hours: "soon" is not a number of hours');
    // Row 8 of issue 23: 1e12 hours is a number, yet no date; it made every POST cut its socket.
    const far = run(["emulator", "--port", "0", "--clock-offset-hours=1e12"]);
    expect((await far.exited).code).toBe(2);
    expect(far.stderr()).toContain("--clock-offset-hours: 1e12 is more than 87600 hours (ten years) either way");
  });

  it("refuses an unknown option with exit code 2", async () => {
    const cli = run(["emulator", "--colour", "red"]);
    expect((await cli.exited).code).toBe(2);
  });
});

describe("llm-accounts --help", () => {
  it("prints the commands and exits 0; `emulator --help` prints the emulator's options", async () => {
    const cli = run(["--help"]);
    expect((await cli.exited).code).toBe(0);
    expect(cli.stdout()).toContain("Usage: llm-accounts");
    expect(cli.stdout()).toContain("llm-accounts <command> --help");
    const own = run(["emulator", "--help"]);
    expect((await own.exited).code).toBe(0);
    expect(own.stdout()).toContain("--state-file");
  });
});
