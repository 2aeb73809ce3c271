import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Emulator } from "../../provider/emulator/index.js";
import { pulumiEnv } from "../../scripts/pulumi-cli.mjs";
import { prepareProgram } from "../../scripts/lib/stack.mjs";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import { writeCalls } from "../support/emulatorCalls.js";
import { RESOURCE_TYPES } from "../../provider/resources/typeTokens.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  endFile,
  expectSettled,
  type PulumiStack,
  requirePulumiCli,
  revealed,
  SecretLedger,
  stackFor,
} from "./support.js";

// Issue 36, the claims registry of one program run (provider/resources/ownership.ts), on the real CLI:
// - an Automation API program (a portal) runs an inline program adopting a console key in two `up`s of one
//   process: the second finishes like the first (the registry of the first run is not the second's);
// - the one-owner error comes at once and with little memory: two ApiKeys adopting one key fail the preview in
//   seconds, also with the program's heap capped at 128 MiB. Before, the error thrown inside an apply made
//   @pulumi/pulumi's handler render it with util.inspect(err, { colors: true }), which on Node.js 20.20 never ends
//   for the SDK's source-mapped frames (`node_modules/@pulumi/output.ts`): 3.6 GiB in 35 s, or an abort.

const PORTAL = join(REPO, "tests/e2e/programs/portal");
const OWNERSHIP = join(REPO, "tests/e2e/programs/ownership");
const OVER_TIME = join(REPO, "tests/e2e/programs/ownerOverTime");

let emu: Emulator;
let ledger: SecretLedger;
let stack: PulumiStack | undefined;
let overTime: PulumiStack | undefined;
let failing: PulumiStack | undefined;
let moving: PulumiStack | undefined;
let renamed: PulumiStack | undefined;
let portalDir: string | undefined;
let portalBackend: string | undefined;
let portalHome: string | undefined;
let printed = "";

beforeAll(async () => {
  await requirePulumiCli();
  emu = await emulator({ rateWindowMs: 1000 });
  ledger = new SecretLedger(emu);
}, CLI_BUILD_TIMEOUT_MS);

afterAll(
  () =>
    endFile({
      emu,
      ledger,
      stacks: [stack, overTime, failing, moving, renamed].filter((s): s is PulumiStack => s !== undefined),
      destroy: [],
      left: { ci: "made in the console and adopted by the portal's stack, whose backend is a scratch folder" },
      folders: [portalDir, portalBackend, portalHome],
    }),
  5 * 60_000,
);

interface PortalRun {
  run: number;
  ok: boolean;
  ms: number;
  changes?: Record<string, number>;
  hint?: string;
  error?: string;
}

/** Runs the portal (one Node.js process, `runs` ups of its inline program); fails if it does not end in `limitMs`. */
function portal(
  runs: number,
  env: Record<string, string>,
  limitMs: number,
): Promise<{ runs: PortalRun[]; stderr: string; code: number | null }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(portalDir!, "portal.mjs"), portalDir!, String(runs)], {
      cwd: portalDir,
      env,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`the portal did not end within ${limitMs} ms (a hung up): ${stdout}\n${stderr.slice(-2000)}`));
    }, limitMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      printed += stdout + stderr;
      const lines = stdout.split("\n").filter((l) => l.startsWith("{"));
      done({ runs: lines.map((l) => JSON.parse(l) as PortalRun), stderr, code });
    });
  });
}

function portalEnv(key: string, extra: Record<string, string> = {}): Record<string, string> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k, v]) => v !== undefined && !k.startsWith("LLM_ACCOUNTS_") && !k.startsWith("PULUMI_"),
    ),
  ) as Record<string, string>;
  return {
    ...clean,
    ...pulumiEnv(portalBackend!),
    PULUMI_HOME: portalHome!,
    LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
    LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
    LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
    PORTAL_ADOPT_KEY: key,
    ...extra,
  };
}

describe("the claims registry belongs to one program run", () => {
  let key: string;

  test("an Automation API program runs an inline program adopting a console key in two ups of one process: both finish, the second writes nothing", async () => {
    portalDir = prepareProgram(PORTAL, "llm-portal-");
    portalBackend = mkdtempSync(join(tmpdir(), "pulumi-backend-"));
    portalHome = mkdtempSync(join(tmpdir(), "pulumi-home-"));
    key = emu.state.createKey("ci").key;
    emu.clearRequests();
    const { runs, code, stderr } = await portal(2, portalEnv(key), 240_000);
    expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
    expect(runs.map((r) => [r.run, r.ok, r.error])).toEqual([
      [1, true, undefined],
      [2, true, undefined],
    ]);
    expect(runs[0].changes).toEqual({ create: 2 }); // the stack and the key
    expect(runs[1].changes).toEqual({ same: 2 });
    expect(runs[1].hint).toBe(`sk-...${key.slice(-4)}`);
    expect(emu.state.hasKey(key)).toBe(true);
    // The adoption itself writes nothing (the key already has the declared alias); the second up reads only.
    expect(writeCalls(emu.calls())).toEqual({});
  }, 300_000);

  test("in the same portal, two ApiKeys adopting the key fail each up at once naming both, and the process goes on", async () => {
    const { runs, code } = await portal(2, portalEnv(key, { PORTAL_TWICE: "1" }), 120_000);
    expect(code).toBe(0);
    expect(runs).toHaveLength(2);
    for (const r of runs) {
      expect(r.ok).toBe(false);
      expect(r.error).toMatch(
        /the adoptKey of ApiKey "ci(-copy)?" \(sk-\.\.\.\w{4}\) is also the adoptKey of ApiKey "ci(-copy)?": one key has one owner/,
      );
      expect(r.ms).toBeLessThan(60_000);
    }
    expect(emu.state.hasKey(key)).toBe(true);
  }, 300_000);
});

describe("the one-owner error under the CLI", () => {
  test("two ApiKeys adopting one key: the preview fails in seconds naming both, with the program's heap capped at 128 MiB", async () => {
    stack = await stackFor(OWNERSHIP, emu, { env: { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" } });
    const teamToken = emu.state.createSubAccounts({
      alias: "team",
      balance: 10,
      modelPricing: [{ model: "model-a", pricing_factor: 1.2 }],
      count: 1,
    })[0].token;
    await stack.setConfig("tokens", JSON.stringify([teamToken]), { secret: true });
    await stack.setConfig("count", 1);
    const key = emu.state.createKey("ci").key;
    await stack.setConfig("adoptKey", key, { secret: true });
    emu.clearRequests();
    const r = await stack.preview([], { allowFailure: true, env: { NODE_OPTIONS: "--max-old-space-size=128" } });
    printed += r.stdout + r.stderr;
    const out = r.stdout + r.stderr;
    expect(r.code).not.toBe(0);
    expect(out).toMatch(
      /the adoptKey of ApiKey "ci(-copy)?" \(sk-\.\.\.\w{4}\) is also the adoptKey of ApiKey "ci(-copy)?": one key has one owner/,
    );
    expect(out).not.toMatch(/heap out of memory|Invalid string length/);
    expect(r.ms).toBeLessThan(60_000);
    expect(writeCalls(emu.calls())).toEqual({});
    expect(emu.state.hasKey(key)).toBe(true);
    // Nothing was adopted (the stack never went up): the console objects are removed here, as the console would.
    emu.state.deleteKey(key);
    emu.state.deleteSubAccount(teamToken);
  }, 300_000);
});

describe("one owner over time, at preview", () => {
  let key: string;

  test("ApiKey a adopts a console key, batch team creates one; then a's adoptKey is removed: nothing changes", async () => {
    overTime = await stackFor(OVER_TIME, emu, { env: { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" } });
    key = emu.state.createKey("a").key;
    await overTime.setConfig("aKey", key, { secret: true });
    printed += (await overTime.up()).stdout;
    await overTime.removeConfig("aKey");
    emu.clearRequests();
    printed += (await overTime.up()).stdout;
    expect(writeCalls(emu.calls())).toEqual({});
    expect(emu.state.hasKey(key)).toBe(true);
  }, 300_000);

  test("a new ApiKey b adopting the key a holds (its adoption config gone): the preview fails naming both, the key masked; nothing written", async () => {
    await overTime!.setConfig("bKey", key, { secret: true });
    emu.clearRequests();
    const r = await overTime!.preview([], { allowFailure: true });
    printed += r.stdout + r.stderr;
    expect(r.code).not.toBe(0);
    const out = r.stdout + r.stderr;
    expect(out).toMatch(
      new RegExp(
        `the (adoptKey of|key held by) ApiKey "[ab]" \\(sk-\\.\\.\\.${key.slice(-4)}\\) is also the (adoptKey of|key held by) ApiKey "[ab]": one key has one owner`,
      ),
    );
    expect(out).toContain('ApiKey "a"');
    expect(out).toContain('ApiKey "b"');
    expect(writeCalls(emu.calls())).toEqual({});
    await overTime!.removeConfig("bKey");
  }, 300_000);

  test("a new batch adopting the sub-account another batch created: the preview fails naming both; nothing written", async () => {
    const [token] = emu.state
      .listSubAccounts()
      .filter((s) => s.alias === "team")
      .map((s) => s.token);
    await overTime!.setConfig("twinTokens", JSON.stringify([token]), { secret: true });
    emu.clearRequests();
    const r = await overTime!.preview([], { allowFailure: true });
    printed += r.stdout + r.stderr;
    expect(r.code).not.toBe(0);
    const out = r.stdout + r.stderr;
    expect(out).toContain(`(sk-...${token.slice(-4)})`);
    expect(out).toContain('SubAccountBatch "team"');
    expect(out).toContain('SubAccountBatch "twin"');
    expect(out).toContain("one sub-account has one owner");
    expect(writeCalls(emu.calls())).toEqual({});
    await overTime!.removeConfig("twinTokens");
  }, 300_000);

  test("both renamed without an alias, each adopting what the old one holds: the up creates the new ones and deletes the old ones, and the key and sub-account stay", async () => {
    // What a user does to rename a resource that adopted: the new name with the adoption config. The engine creates
    // "a2" and "team2" (each adopting) and then deletes "a" and "team": those deletes deleted what the new ones had
    // just adopted (the key, the sub-account), and the up printed success.
    const [token] = emu.state
      .listSubAccounts()
      .filter((s) => s.alias === "team")
      .map((s) => s.token);
    await overTime!.setConfig("aName", "a2");
    await overTime!.setConfig("aKey", key, { secret: true });
    await overTime!.setConfig("teamName", "team2");
    await overTime!.setConfig("teamTokens", JSON.stringify([token]), { secret: true });
    emu.clearRequests();
    const r = await overTime!.up();
    printed += r.stdout;
    expect(r.stdout).toMatch(/2 created/);
    expect(r.stdout).toMatch(/2 deleted/);
    expect(writeCalls(emu.calls())).toEqual({});
    expect(emu.state.hasKey(key)).toBe(true);
    expect(emu.state.hasSubAccount(token)).toBe(true);
    await expectSettled(overTime!);
    await overTime!.destroy();
    expect(emu.state.hasKey(key)).toBe(false);
    expect(emu.state.hasSubAccount(token)).toBe(false);
  }, 300_000);

  test("no key or token in plain text in anything printed", () => {
    ledger.record();
    ledger.expectAbsent(printed, "the output of pulumi and the portal");
  });
});

describe("a failed create's claim under --continue-on-error (issue 43)", () => {
  /** Whether the stack's state holds the sub-account (`pulumi stack export --show-secrets`, not printed). */
  async function holds(s: PulumiStack, token: string): Promise<boolean> {
    const exported = revealed(JSON.parse((await s.run(["stack", "export", "--show-secrets"])).stdout)) as {
      deployment: { resources?: { outputs?: { tokens?: string[] } }[] };
    };
    return (exported.deployment.resources ?? []).some((r) => r.outputs?.tokens?.includes(token));
  }

  test("a batch renamed without an alias whose create fails: the old one's delete neither deletes its sub-account nor drops it; the next up moves it, destroy deletes it", async () => {
    const before = new Set(emu.state.listSubAccounts().map((s) => s.token));
    failing = await stackFor(OVER_TIME, emu, { env: { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" } });
    printed += (await failing.up()).stdout;
    const [token] = emu.state
      .listSubAccounts()
      .filter((s) => !before.has(s.token))
      .map((s) => s.token);
    expect(await holds(failing, token)).toBe(true);

    // "team2" adopts what "team" holds; its create fails at its one list, and the engine goes on to delete "team".
    await failing.setConfig("teamName", "team2");
    await failing.setConfig("teamTokens", JSON.stringify([token]), { secret: true });
    // Two refusals: the client reads a refused whole list (page_size=-1) by pages, and the first page is refused too.
    emu.setFaults([{ kind: "400", ops: ["sub-account/list"], count: 2 }]);
    const r = await failing.up(["--continue-on-error"], { allowFailure: true });
    emu.setFaults([]);
    printed += r.stdout + r.stderr;
    expect(r.code).not.toBe(0);
    // Before, "team"'s delete left the sub-account and dropped "team": it stayed on the platform in no state.
    expect(emu.state.hasSubAccount(token)).toBe(true);
    expect(await holds(failing, token)).toBe(true);

    const next = await failing.up();
    printed += next.stdout;
    expect(emu.state.hasSubAccount(token)).toBe(true);
    expect(await holds(failing, token)).toBe(true);
    await failing.destroy();
    expect(emu.state.hasSubAccount(token)).toBe(false);
    ledger.record();
    ledger.expectAbsent(printed, "the output of pulumi");
  }, 300_000);
});

describe("a sub-account moved between batches by an up --target that leaves the giver out (issue 43)", () => {
  /** The batches whose state holds `token` (`pulumi stack export --show-secrets`, not printed). */
  async function holders(s: PulumiStack, token: string): Promise<string[]> {
    const exported = revealed(JSON.parse((await s.run(["stack", "export", "--show-secrets"])).stdout)) as {
      deployment: { resources?: { urn: string; outputs?: { tokens?: string[] } }[] };
    };
    return (exported.deployment.resources ?? [])
      .filter((r) => r.outputs?.tokens?.includes(token))
      .map((r) => r.urn.split("::").pop()!);
  }

  test("up --target <taker> fails at its preview naming both and the remedy, writing nothing; with both targeted the move is done, the gate is empty, destroy deletes it", async () => {
    moving = await stackFor(OVER_TIME, emu, { env: { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" } });
    const [t, u] = emu.state.createSubAccounts({
      alias: "team",
      balance: 1,
      modelPricing: [{ model: "model-a", pricing_factor: 1 }],
      count: 2,
    });
    await moving.setConfig("teamTokens", JSON.stringify([t.token, u.token]), { secret: true });
    await moving.setConfig("teamCount", 2);
    printed += (await moving.up()).stdout;
    expect(await holders(moving, t.token)).toEqual(["team"]);

    // "team" keeps u alone and "twin" adopts t: an up that targets "twin" alone never runs "team"'s update.
    await moving.setConfig("teamTokens", JSON.stringify([u.token]), { secret: true });
    await moving.setConfig("teamCount", 1);
    await moving.setConfig("twinTokens", JSON.stringify([t.token]), { secret: true });
    const project = "llm-accounts-e2e-owner-over-time";
    const urn = (name: string) => `urn:pulumi:${moving!.stack}::${project}::${RESOURCE_TYPES.SubAccountBatch}::${name}`;
    emu.clearRequests();
    const r = await moving.run(["up", "--yes", "--target", urn("twin")], { allowFailure: true });
    printed += r.stdout + r.stderr;
    expect(r.code).not.toBe(0);
    const out = r.stdout + r.stderr;
    expect(out).toMatch(/tokens\[\d\] still held by SubAccountBatch "team"/);
    expect(out).toContain(`adoptTokens[0] of SubAccountBatch "twin"`);
    expect(out).toContain(`(sk-...${t.token.slice(-4)})`);
    expect(out).toContain("run pulumi up with both batches (a --target for each, or none)");
    expect(writeCalls(emu.calls())).toEqual({});
    // Before, "twin" was created holding t beside "team", and a destroy --target of "team" deleted it.
    expect(await holders(moving, t.token)).toEqual(["team"]);

    const both = await moving.run(["up", "--yes", "--target", urn("twin"), "--target", urn("team")]);
    printed += both.stdout;
    expect(await holders(moving, t.token)).toEqual(["twin"]);
    expect(await holders(moving, u.token)).toEqual(["team"]);
    expect(emu.state.hasSubAccount(t.token)).toBe(true);
    await expectSettled(moving);
    await moving.destroy();
    expect(emu.state.hasSubAccount(t.token)).toBe(false);
    expect(emu.state.hasSubAccount(u.token)).toBe(false);
    ledger.record();
    ledger.expectAbsent(printed, "the output of pulumi");
  }, 300_000);
});

describe("a batch and an adopting key removed from the program while new ones adopt what they held, by an up --target of the new ones (issue 53)", () => {
  /** The resources whose state holds `value` as a token or a key (`pulumi stack export --show-secrets`, not printed). */
  async function holders(s: PulumiStack, value: string): Promise<string[]> {
    const exported = revealed(JSON.parse((await s.run(["stack", "export", "--show-secrets"])).stdout)) as {
      deployment: { resources?: { urn: string; outputs?: { tokens?: string[]; key?: string } }[] };
    };
    return (exported.deployment.resources ?? [])
      .filter((r) => r.outputs?.tokens?.includes(value) || r.outputs?.key === value)
      .map((r) => r.urn.split("::").pop()!);
  }

  test("up --target of the takers leaves both states holding them; the next plain up deletes the givers and never what the takers hold; destroy deletes it", async () => {
    renamed = await stackFor(OVER_TIME, emu, { env: { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" } });
    const key = emu.state.createKey("a").key;
    const before = new Set(emu.state.listSubAccounts().map((s) => s.token));
    await renamed.setConfig("aKey", key, { secret: true });
    printed += (await renamed.up()).stdout;
    const [teamToken] = emu.state
      .listSubAccounts()
      .filter((s) => !before.has(s.token))
      .map((s) => s.token);
    expect(await holders(renamed, teamToken)).toEqual(["team"]);

    // "a" and "team" leave the program; "a2" adopts a's key and "team2" team's sub-account, and only they are targeted.
    await renamed.setConfig("aName", "a2");
    await renamed.setConfig("teamName", "team2");
    await renamed.setConfig("teamTokens", JSON.stringify([teamToken]), { secret: true });
    const project = "llm-accounts-e2e-owner-over-time";
    const urn = (type: string, name: string) => `urn:pulumi:${renamed!.stack}::${project}::${type}::${name}`;
    const targeted = await renamed.run([
      "up",
      "--yes",
      "--target",
      urn(RESOURCE_TYPES.ApiKey, "a2"),
      "--target",
      urn(RESOURCE_TYPES.SubAccountBatch, "team2"),
    ]);
    printed += targeted.stdout;
    expect((await holders(renamed, teamToken)).sort()).toEqual(["team", "team2"]);
    expect((await holders(renamed, key)).sort()).toEqual(["a", "a2"]);

    // Before, this up deleted "a" and "team" and with them the key and the sub-account "a2" and "team2" hold, exit 0:
    // an adopter has the id of what it adopts, and the delete of that id took what the diff of "a2" / "team2" kept.
    const plain = await renamed.up();
    printed += plain.stdout;
    expect(plain.stdout).toMatch(/2 deleted/);
    expect({ key: emu.state.hasKey(key), subAccount: emu.state.hasSubAccount(teamToken) }).toEqual({
      key: true,
      subAccount: true,
    });
    expect(await holders(renamed, teamToken)).toEqual(["team2"]);
    expect(await holders(renamed, key)).toEqual(["a2"]);
    await expectSettled(renamed);
    await renamed.destroy();
    expect(emu.state.hasKey(key)).toBe(false);
    expect(emu.state.hasSubAccount(teamToken)).toBe(false);
    ledger.record();
    ledger.expectAbsent(printed, "the output of pulumi");
  }, 300_000);
});
