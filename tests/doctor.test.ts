import { describe, expect, test } from "@jest/globals";
import * as childProcess from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { maskKey } from "../provider/api/redact.js";
import { REPO } from "./support/programDir.js";
import type { DoctorClock } from "../provider/commands/doctor/index.js";
import { EXIT } from "../provider/commands/command.js";
import { doctorRun, platformBefore } from "./support/doctor.js";
import { startFresh, subAccountBatch, type SubAccountBatchOutputs } from "../provider/runtime/index.js";
import { checkedInputs } from "./support/check.js";
import { READING_NAMES, startEmulator, type Emulator, type Reading } from "../provider/emulator/index.js";
import { DOCTOR_UNNAMED, secretsOf, expectNoSecret } from "./support/emulator.js";
import { ProfileSchema, type Profile } from "../provider/api/profile.js";
import { BadRequestError, LlmAccountsClient, NotFoundError, resolveClientOptions } from "../provider/client/index.js";

/** Runs the doctor against an emulator (on a fake `clock` when given); its exit code, stdout and stderr. */
async function doctor(
  emu: Emulator,
  args: string[],
  env: Record<string, string> = {},
  clock?: DoctorClock,
): Promise<{ code: number; out: string; err: string }> {
  return doctorRun(
    args,
    {
      LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
      LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
      LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
      ...env,
    },
    { clock },
  );
}

/**
 * What each reading needs of the user (docs/decisions.md): the usage field is a setting the package cannot learn; a
 * list that masks tokens stops `up` at its first list (no setting exists), and a redirect stops every call.
 */
const NEEDS_SETTING: Reading[] = ["usage-cursor", "masked-tokens"];
const CANNOT_RUN: Reading[] = ["redirects"];

describe("llm-accounts doctor (issue 35)", () => {
  test("on the package's own reading: every point holds, read-only makes no write, --write leaves nothing behind; exit 0", async () => {
    const emu = await startEmulator({ port: 0, rateLimits: false });
    try {
      const read = await doctor(emu, ["--json"]);
      expect(read.code).toBe(EXIT.ok);
      expect(JSON.parse(read.out)).toMatchObject({ ran: true, differs: [], exitCode: 0 });
      const writes = emu
        .requests()
        .filter((r) => !["account/balance", "sub-account/list", "models", "api-key/get"].includes(r.op));
      expect(writes).toEqual([]);
      const written = await doctor(emu, ["--write"]);
      expect(written.code).toBe(EXIT.ok);
      expect(written.out).toMatch(/^holds +create mark/m);
      expect(written.out).toMatch(/Every point checked holds or is handled by the package\.$/m);
      expect(emu.state.listKeys()).toEqual([]);
      expect(emu.state.listSubAccounts()).toEqual([]);
      expectNoSecret(read.out + written.out, secretsOf(emu));
    } finally {
      await emu.close();
    }
  });

  test("gone-400: a key's or token's 400 is reported as the runtime reads it (gone, handled: a get's refusal, a delete looked at key by key, a sub-account delete followed by a list), not as a setting", async () => {
    const emu = await startEmulator({ port: 0, rateLimits: false, readings: ["gone-400"] });
    try {
      const { out } = await doctor(emu, ["--write", "--json"]);
      const report = JSON.parse(out) as { rows: { point: string; verdict: string; reading?: string }[] };
      expect(report.rows.find((r) => r.point === "gone: a key that does not exist")).toMatchObject({
        verdict: "handled",
        reading: "gone-400",
      });
      expect(report.rows.find((r) => r.point === "deletes of what does not exist")).toMatchObject({
        verdict: "handled",
        reading: "gone-400",
      });
      expect(report.rows.find((r) => r.point === "gone: a sub-account that does not exist")).toMatchObject({
        verdict: "handled",
        reading: "gone-400",
      });
      expect(emu.state.listKeys()).toEqual([]);
      expect(emu.state.listSubAccounts()).toEqual([]);
    } finally {
      await emu.close();
    }
  });

  test.each(READING_NAMES.filter((r) => !DOCTOR_UNNAMED.includes(r)))(
    "names exactly the reading %s, says whether a setting is needed, and leaves nothing behind",
    async (reading) => {
      const emu = await startEmulator({ port: 0, rateLimits: false, readings: [reading] });
      try {
        const { code, out } = await doctor(emu, ["--write", "--json"]);
        const report = JSON.parse(out) as {
          differs: string[];
          settings: string[];
          rows: { point: string; observed: string }[];
          error?: string;
          profile?: Profile;
        };
        expect(report.differs).toEqual([reading]);
        // The length a platform cuts aliases at is the profile's, for the runtime to place a create's mark within it.
        expect(report.profile?.limits?.aliasCut).toBe(reading === "cut-aliases" ? 32 : undefined);
        if (CANNOT_RUN.includes(reading)) {
          // A redirect stops every call, the doctor's first included, with the client's own message: `up` stops on it too.
          expect(code).toBe(EXIT.failed);
          expect(report.error).toMatch(/redirected \(308\).*not followed.*baseUrl/);
          return;
        }
        // The parts extra-fields adds to a key's security_config are sent back once, as the package's edits send them.
        const parts = report.rows.find((r) => r.point === "security_config parts the spec does not show");
        expect(parts?.observed).toBe(reading === "extra-fields" ? "x_flag, x_meta; sent back and accepted" : undefined);
        expect(code).toBe(NEEDS_SETTING.includes(reading) ? EXIT.findings : EXIT.ok);
        if (reading === "usage-cursor")
          expect(report.settings).toEqual(["llm-accounts:usagePageField=cursor (or LLM_ACCOUNTS_USAGE_PAGE_FIELD)"]);
        // The client's own message for a masked list: the one `up` stops with at its first list.
        if (reading === "masked-tokens")
          expect(report.rows.find((r) => r.point === "the sub-account list as the client reads it")?.observed).toMatch(
            /masked.*stops at its first list.*readings? masked-tokens/,
          );
        expect(emu.state.listKeys()).toEqual([]);
        expect(emu.state.listSubAccounts()).toEqual([]);
        expectNoSecret(out, secretsOf(emu));
        // With the setting the doctor names, the same platform needs none.
        if (reading === "usage-cursor")
          expect((await doctor(emu, ["--write"], { LLM_ACCOUNTS_USAGE_PAGE_FIELD: "cursor" })).code).toBe(EXIT.ok);
      } finally {
        await emu.close();
      }
    },
  );

  test("a refused credential or no answer: exit 1, the cause named on stderr, no key shown", async () => {
    const emu = await startEmulator({ port: 0, rateLimits: false });
    try {
      const wrong = await doctor(emu, [], { LLM_ACCOUNTS_ADMIN_KEY: "sk-admin-" + "w".repeat(32) });
      expect(wrong.code).toBe(EXIT.failed);
      expect(wrong.out).toBe("");
      expect(wrong.err).toMatch(/could not run: the admin key was refused \(401\)/);
      expectNoSecret(wrong.err, [...secretsOf(emu), "sk-admin-" + "w".repeat(32)]);
      const none = await doctor(emu, ["--json"], { LLM_ACCOUNTS_ACCOUNT_KEY: "" });
      expect(none.code).toBe(EXIT.failed);
      expect(JSON.parse(none.out)).toMatchObject({
        ran: false,
        error: expect.stringMatching(/LLM_ACCOUNTS_ACCOUNT_KEY/),
      });
    } finally {
      await emu.close();
    }
  });
});

describe("misuse (issue 55's one scheme)", () => {
  test.each([
    [["--bogus"], /Unknown option '--bogus'/],
    [["--save"], /--save needs --write/],
    [["--write", "--stack", "dev"], /--stack needs --save/],
  ])("%j: exit 2, the message and the doctor's usage on stderr, nothing on stdout, no request", async (args, said) => {
    const emu = await startEmulator({ port: 0, rateLimits: false });
    try {
      const { code, out, err } = await doctor(emu, args);
      expect(code).toBe(EXIT.usage);
      expect(out).toBe("");
      expect(err).toMatch(said);
      expect(err).toContain("Usage: llm-accounts doctor [options]");
      expect(err).toMatch(/Exit codes \(docs\/commands\.md#exit-codes\):\n {2}0 .*\n {2}1 .*\n {2}2 .*\n {2}3 /);
      expect(emu.requests()).toEqual([]);
    } finally {
      await emu.close();
    }
  });
});

describe("the docs name every reading", () => {
  test("docs/emulator.md's table and docs/decisions.md hold each reading the emulator plays", async () => {
    const { readFileSync } = await import("node:fs");
    const emulatorDoc = readFileSync("docs/emulator.md", "utf8");
    const decisions = readFileSync("docs/decisions.md", "utf8");
    for (const reading of READING_NAMES) {
      expect(emulatorDoc).toContain(`| \`${reading}\` |`);
      expect(decisions).toContain(`**\`${reading}\`**`);
    }
  });
});

/** Whether a JSON value is an object (not an array). */
const isObjectLike = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** Every `created_at` of a JSON value rewritten by `form`. */
function timestamps(value: unknown, form: (t: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => timestamps(v, form));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === "created_at" && typeof v === "string" ? form(v) : timestamps(v, form),
    ]),
  );
}

describe("llm-accounts doctor against platforms nobody here wrote (issue 44)", () => {
  const withPlatform = async (
    rewrite: Parameters<typeof platformBefore>[1],
    args: string[],
    io: { env?: Record<string, string> } = {},
    refuse?: Parameters<typeof platformBefore>[2],
  ) => {
    const emu = await startEmulator({ port: 0, rateLimits: false });
    const front = await platformBefore(emu, rewrite, refuse);
    try {
      const { code, out, err } = await doctorRun(args, {
        LLM_ACCOUNTS_BASE_URL: front.baseUrl,
        LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
        LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
        ...io.env,
      });
      expect(emu.state.listKeys()).toEqual([]);
      expect(emu.state.listSubAccounts()).toEqual([]);
      return { code, out, err, emu, front };
    } finally {
      await front.close();
      await emu.close();
    }
  };
  type Report = {
    exitCode: number;
    rows: { point: string; verdict: string; observed: string; setting?: string }[];
    profile?: Profile;
    saved?: string;
  };
  const row = (report: Report, point: string) => report.rows.find((r) => r.point === point);

  test("timestamps the client cannot read (`2026-11-25 21:00:00+08:00`): value forms need a fix, never 'handled'; exit 1", async () => {
    const { code, out } = await withPlatform(
      (_p, status, body) => ({ status, body: timestamps(body, (t) => `${t.slice(0, 10)} ${t.slice(11, 19)}+08:00`) }),
      ["--write", "--json"],
    );
    const report = JSON.parse(out) as Report;
    expect(row(report, "value forms")).toMatchObject({
      verdict: "setting",
      observed: expect.stringMatching(
        /^the client cannot read [a-z/-]+: (items\[0\]\.)?created_at must be a timestamp/,
      ),
    });
    expect(code).toBe(EXIT.findings);
  });

  test("values kept in a form the runtime does not know (an alias upper-cased, a factor moved by more than its rounding): 'none exists', exit 1; read-only: not checked", async () => {
    const rewrite = (path: string, status: number, body: unknown) => {
      if (path.endsWith("/api-key/get") && isObjectLike(body) && typeof body.alias === "string")
        return { status, body: { ...body, alias: body.alias.toUpperCase() } };
      if (!path.endsWith("/sub-account/list") || !isObjectLike(body) || !Array.isArray(body.items))
        return { status, body };
      const items = body.items.map((i: Record<string, unknown>) => ({
        ...i,
        model_pricing: ((i.model_pricing ?? []) as { model: string; pricing_factor: number }[]).map((m) => ({
          ...m,
          pricing_factor: m.pricing_factor === 1 ? 1 : 1.3,
        })),
      }));
      return { status, body: { ...body, items } };
    };
    const { code, out } = await withPlatform(rewrite, ["--write", "--json"]);
    const report = JSON.parse(out) as Report;
    expect(row(report, "alias case as kept")).toMatchObject({
      verdict: "setting",
      setting: "none exists: report this platform's alias form",
      observed: expect.stringMatching(/^"Doctor-[0-9a-f]{12}" kept as "DOCTOR-[0-9A-F]{12}", not a form of it/),
    });
    expect(row(report, "pricing factor as kept")).toMatchObject({
      verdict: "setting",
      observed: expect.stringMatching(/^1\.2345678 kept as 1\.3, not a rounding of it/),
    });
    expect(row(report, "a pricing edit that leaves a model out")).toMatchObject({ verdict: "holds" });
    expect(code).toBe(EXIT.findings);
    const read = JSON.parse((await withPlatform(rewrite, ["--json"])).out) as Report;
    expect(row(read, "aliases and pricing as kept")).toMatchObject({
      verdict: "not checked",
      observed: "checked with --write only",
    });
  });

  test("a field named by a live token, and one with control characters: masked and escaped in the table and in --json", async () => {
    const token = "sk-" + "t".repeat(40);
    const rewrite = (_p: string, status: number, body: unknown) => ({
      status,
      body:
        body && typeof body === "object" && !Array.isArray(body)
          ? { ...body, [token]: { used: 1 }, "x\u001b[2Jred": 1 }
          : body,
    });
    for (const args of [["--write", "--json"], ["--write"]]) {
      const { out } = await withPlatform(rewrite, args);
      expect(out).not.toContain(token);
      expect(out).not.toContain("\u001b");
      expect(out).toMatch(/sk-\.\.\.tttt/);
      expect(out).toContain(args.includes("--json") ? "x\\\\u001b[2Jred" : "x\\u001b[2Jred");
    }
  });

  test("a sub-account list refused (403, or success: false in a 200): the doctor cannot run, never 'credentials: both accepted'", async () => {
    for (const refusal of [
      { status: 403, body: { error: { code: "forbidden", message: "not allowed" } } },
      { status: 200, body: { success: false, message: "no sub-account access for this account" } },
    ]) {
      const { code, out, err } = await withPlatform(
        (path, status, body) => (path.endsWith("/sub-account/list") ? refusal : { status, body }),
        [],
      );
      expect(code).toBe(EXIT.failed);
      expect(out).not.toMatch(/both accepted/);
      expect(err).toMatch(/could not run: .*(refused|sub-account list)/);
    }
  });

  test("a count cap refused in other words ('at most 50 in one request') is named, exit 1, and the profile keeps the cap", async () => {
    const refuse = (path: string, request: unknown) =>
      path.endsWith("/sub-account/token") && ((request as { count?: number } | undefined)?.count ?? 0) > 50
        ? { status: 400, body: { error: { code: "invalid_request", message: "at most 50 in one request" } } }
        : undefined;
    const { code, out } = await withPlatform(
      (_p, status, body) => ({ status, body }),
      ["--write", "--save", "--json"],
      {},
      refuse,
    );
    const report = JSON.parse(out) as Report;
    expect(row(report, "largest count of one sub-account create")).toMatchObject({
      verdict: "setting",
      observed: expect.stringMatching(/at most 50 in one request.*does not name count/),
    });
    expect(code).toBe(EXIT.findings);
    expect(report.profile?.limits?.createCap).toBe(50);
  });

  test("a create of 100 whose answer is lost: looked for and found, the doctor goes on (exit 0), and deletes them all the same", async () => {
    const rewrite = (path: string, status: number, body: unknown, request: unknown) =>
      path.endsWith("/sub-account/token") && (request as { count?: number } | undefined)?.count === 100
        ? null
        : { status, body };
    const { code, out } = await withPlatform(rewrite, ["--write", "--json"]);
    // Looked for by its alias, as the package looks: found, the doctor goes on, and deletes them with the rest.
    expect(code).toBe(EXIT.ok);
    expect(JSON.parse(out)).toMatchObject({
      rows: expect.arrayContaining([
        expect.objectContaining({
          point: "a write whose answer is lost",
          observed: expect.stringMatching(/sub-account\/create/),
        }),
      ]),
    });
  });

  test("--save: a gone key answered 400 invalid_key is named; the saved profile makes the client read it as gone where the defaults cannot; (--stack: tests/doctorSave.test.ts)", async () => {
    const rewrite = (path: string, status: number, body: unknown) =>
      status === 404 && path.endsWith("/api-key/get")
        ? { status: 400, body: { error: { code: "invalid_key", message: "invalid key" } } }
        : { status, body };
    const { out, code } = await withPlatform(rewrite, ["--write", "--save"]);
    // The runtime reads a get's 400 naming the key as gone without a profile (client/apiKeys.ts keyUnknown): handled.
    expect(out).toMatch(/^handled +gone: a key that does not exist +.*HTTP 400 invalid_key .*read as gone/m);
    expect(code).toBe(EXIT.ok);
    const line = /^pulumi config set llm-accounts:profile '(.+)'$/m.exec(out);
    expect(line).not.toBeNull();
    const profile = ProfileSchema.parse(JSON.parse(line![1]));
    expect(profile.goneKey).toEqual([{ status: 400, code: "invalid_key" }]);
    expect(profile.refused).toContainEqual({ status: 400, code: "invalid_request" });

    // The same platform, once more: the client with the saved profile reads the gone key as gone; without it, a bad request.
    const emu = await startEmulator({ port: 0, rateLimits: false });
    const front = await platformBefore(emu, rewrite);
    try {
      const options = resolveClientOptions(
        undefined,
        { profile: line![1] },
        { LLM_ACCOUNTS_BASE_URL: front.baseUrl, LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey },
      );
      await expect(
        new LlmAccountsClient({ ...options, rateLimits: false }).apiKeys.get("sk-gone"),
      ).rejects.toBeInstanceOf(NotFoundError);
      await expect(
        new LlmAccountsClient({ baseUrl: front.baseUrl, adminKey: emu.adminKey, rateLimits: false }).apiKeys.get(
          "sk-gone",
        ),
      ).rejects.toBeInstanceOf(BadRequestError);
    } finally {
      await front.close();
      await emu.close();
    }
  });
});

describe("the profile shown in docs/doctor.md", () => {
  test("is one the package reads", async () => {
    const { readFileSync } = await import("node:fs");
    const doc = readFileSync("docs/doctor.md", "utf8");
    const block = /```json\n(\{\n {2}"version": 1[\s\S]*?)```/.exec(doc);
    expect(block).not.toBeNull();
    expect(ProfileSchema.safeParse(JSON.parse(block![1])).success).toBe(true);
    expect(
      resolveClientOptions(undefined, { profile: block![1] }, { LLM_ACCOUNTS_BASE_URL: "https://api.example.com" })
        .platform?.profile?.limits,
    ).toEqual({ createCap: 50 });
  });
});

describe("readings that combine (issue 44)", () => {
  test("list-all-refused with alias-filter-prefix: the alias filter is probed by pages as the client lists, and both readings are named", async () => {
    const emu = await startEmulator({
      port: 0,
      rateLimits: false,
      readings: ["list-all-refused", "alias-filter-prefix"],
    });
    try {
      const { code, out } = await doctor(emu, ["--write", "--json"]);
      const report = JSON.parse(out) as { differs: string[] };
      expect([...report.differs].sort()).toEqual(["alias-filter-prefix", "list-all-refused"]);
      expect(code).toBe(EXIT.ok);
    } finally {
      await emu.close();
    }
  });
});

describe("limits measured, saved in the profile and obeyed by the runtime (issue 44)", () => {
  type Report = {
    exitCode: number;
    rows: { point: string; verdict: string; observed: string; setting?: string }[];
    profile?: Profile;
  };
  const batch = (count: number) =>
    checkedInputs(subAccountBatch, {
      alias: "team-a",
      balance: 5,
      count,
      modelPricing: [{ model: "model-a", pricingFactor: 1 }],
    });

  // The runtime looks for a late write for 35 s by default (lateWritesMs; issue 53): a lag beyond it is the profile's.
  test("a list 40 s behind writes: the doctor states the lag (a setting), its profile makes the runtime look long enough; without it a refresh right after a create takes the batch for gone", async () => {
    // One fake clock for the emulator, the doctor and the runtime: every wait moves it, nothing sleeps.
    let now = Date.now();
    const clock = { now: () => now, sleep: async (ms: number) => void (now += ms) };
    const emu = await startEmulator({ port: 0, rateLimits: false, lateVisibilityMs: 40_000, clock: () => now });
    try {
      const { code, out, err } = await doctor(emu, ["--write", "--save", "--json"], {}, clock);
      const report = JSON.parse(out) as Report;
      // The wait says what it waits for on stderr, a plain line every 5 s; stdout holds the report alone.
      expect(err).toMatch(
        /^llm-accounts doctor: waiting for the new (API key|sub-account) to show: 5\.\d s of at most 60\.0 s$/m,
      );
      expect(report.rows.find((r) => r.point === "late visibility of a write")).toMatchObject({
        verdict: "setting",
        observed: expect.stringMatching(/shown after 40\.\d s, later than the runtime looks \(35\.0 s\)/),
      });
      expect(code).toBe(EXIT.findings);
      expect(report.profile?.limits?.visibilityMs).toBeGreaterThanOrEqual(40_000);
      expect(emu.state.listSubAccounts()).toEqual([]);
      const profile = JSON.stringify(report.profile);

      const refreshedTokens = async (withProfile: boolean): Promise<string[]> => {
        startFresh({
          stackConfig: {
            baseUrl: emu.baseUrl,
            adminKey: emu.adminKey,
            accountKey: emu.accountKey,
            rateLimits: "off",
            ...(withProfile && { profile }),
          },
          clientOverrides: { clock },
        });
        const made = await subAccountBatch.create(await batch(3));
        startFresh();
        const read = await subAccountBatch.read(made.id, made.outs);
        startFresh();
        await subAccountBatch.delete(made.id, made.outs);
        return [...((read.props as SubAccountBatchOutputs | undefined)?.tokens ?? [])]
          .sort()
          .concat(made.outs.tokens.length === 3 ? [] : ["(create failed)"]);
      };
      expect(await refreshedTokens(true)).toHaveLength(3);
      expect(await refreshedTokens(false)).not.toHaveLength(3);
      // With the profile set, the same platform needs no setting.
      expect((await doctor(emu, ["--write"], { LLM_ACCOUNTS_PROFILE: profile }, clock)).code).toBe(EXIT.ok);
    } finally {
      await emu.close();
    }
  });

  test("short-aliases: the longest alias is measured (aliasMax 32) and saved", async () => {
    const emu = await startEmulator({ port: 0, rateLimits: false, readings: ["short-aliases"] });
    try {
      const report = JSON.parse((await doctor(emu, ["--write", "--save", "--json"])).out) as Report;
      expect(report.profile?.limits?.aliasMax).toBe(32);
      expect(report.rows.find((r) => r.point === "create mark")?.observed).toMatch(
        /longest alias taken: 32 characters/,
      );
    } finally {
      await emu.close();
    }
  });

  test("a count cap refused in other words: the profile's createCap is what the runtime's split obeys (a batch of 60 made in creates the platform takes); without it the create fails", async () => {
    const emu = await startEmulator({ port: 0, rateLimits: false });
    const refuse = (path: string, request: unknown) =>
      path.endsWith("/sub-account/token") && ((request as { count?: number } | undefined)?.count ?? 0) > 50
        ? { status: 400, body: { error: { code: "invalid_request", message: "at most 50 in one request" } } }
        : undefined;
    const front = await platformBefore(emu, (_p, status, body) => ({ status, body }), refuse);
    try {
      const env = { LLM_ACCOUNTS_BASE_URL: front.baseUrl };
      const report = JSON.parse((await doctor(emu, ["--write", "--save", "--json"], env)).out) as Report;
      expect(report.profile?.limits?.createCap).toBe(50);
      expect(report.rows.find((r) => r.point === "largest count of one sub-account create")).toMatchObject({
        verdict: "setting",
        setting: expect.stringMatching(/llm-accounts:profile .*createCap 50/),
      });
      const profile = JSON.stringify(report.profile);
      const config = { baseUrl: front.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey, rateLimits: "off" };
      startFresh({
        stackConfig: { ...config, profile },
        clientOverrides: { clock: { now: () => Date.now(), sleep: async () => undefined } },
      });
      emu.clearRequests();
      const made = await subAccountBatch.create(await batch(60));
      expect(made.outs.tokens).toHaveLength(60);
      // Split by the profile's cap from the first create: none refused.
      expect(
        emu
          .requests()
          .filter((r) => r.op === "sub-account/create")
          .map((r) => r.status),
      ).toEqual([200, 200]);
      startFresh();
      await subAccountBatch.delete(made.id, made.outs);
      startFresh({
        stackConfig: config,
        clientOverrides: { clock: { now: () => Date.now(), sleep: async () => undefined } },
      });
      await expect(subAccountBatch.create(await batch(60))).rejects.toThrow(/at most 50 in one request/);
      expect(emu.state.listSubAccounts()).toEqual([]);
      // With the profile set, the doctor names the cap as handled.
      expect((await doctor(emu, ["--write"], { ...env, LLM_ACCOUNTS_PROFILE: profile })).code).toBe(EXIT.ok);
    } finally {
      await front.close();
      await emu.close();
    }
  });
});

describe("doctor --write interrupted (issue 44): a real CLI process sent SIGINT mid-write", () => {
  const { execFile } = childProcess;
  /** Runs `llm-accounts doctor --write --json` as a child process, sends it SIGINT once `ready` holds; its exit code and stdout. */
  const interrupted = (emu: Emulator, ready: () => boolean) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      // A HOME of its own: the doctor's journal of its keys is not the user's.
      const home = mkdtempSync(join(tmpdir(), "llm-doctor-home-"));
      const env = {
        ...process.env,
        HOME: home,
        LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
        LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
        LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
      };
      const child = execFile(
        process.execPath,
        [join(REPO, "dist/provider/cli.js"), "doctor", "--write", "--json"],
        { env },
        (err, stdout) => {
          clearInterval(timer);
          rmSync(home, { recursive: true, force: true });
          resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, out: stdout });
        },
      );
      const timer = setInterval(() => {
        if (!ready()) return;
        clearInterval(timer);
        child.kill("SIGINT");
      }, 20);
    });

  test("Ctrl-C while a write is under way: the doctor stops, deletes its sub-accounts and key, exit 130 saying so", async () => {
    const emu = await startEmulator({ port: 0, rateLimits: false });
    try {
      // The first sub-account edit (after the create of 100) is held 5 s: the signal comes while it is under way.
      emu.setFaults([{ kind: "latency", ops: ["sub-account/edit"], ms: 5_000 }]);
      const { code, out } = await interrupted(
        emu,
        () => emu.state.listSubAccounts().length > 100 && emu.calls()["sub-account/list"] >= 4,
      );
      expect(code).toBe(130);
      expect(JSON.parse(out)).toMatchObject({ ran: false, error: expect.stringMatching(/^interrupted \(SIGINT\)$/) });
      expect(emu.state.listSubAccounts()).toEqual([]);
      expect(emu.state.listKeys()).toEqual([]);
    } finally {
      await emu.close();
    }
  });

  test("Ctrl-C where the deletes are refused: every sub-account left is named, masked, with the command that deletes it", async () => {
    const emu = await startEmulator({ port: 0, rateLimits: false });
    try {
      emu.setFaults([
        { kind: "latency", ops: ["sub-account/edit"], ms: 5_000 },
        { kind: "400", ops: ["sub-account/delete"] },
      ]);
      const { code, out } = await interrupted(
        emu,
        () => emu.state.listSubAccounts().length > 100 && emu.calls()["sub-account/list"] >= 4,
      );
      expect(code).toBe(130);
      const left = emu.state.listSubAccounts();
      expect(left.length).toBeGreaterThan(100);
      const { error } = JSON.parse(out) as { error: string };
      expect(error).toMatch(/^interrupted \(SIGINT\); left on the account, not deleted: sub-accounts sk-\.\.\./);
      for (const s of left) expect(error).toContain(maskKey(s.token));
      expect(error).toMatch(/llm-accounts sweep --prefix 'doctor~[0-9a-f]{12}'.* --yes/);
      expectNoSecret(out, secretsOf(emu));
      emu.state.deleteSubAccounts(left.map((s) => s.token));
    } finally {
      await emu.close();
    }
  });
});
