import { describe, expect, test } from "@jest/globals";
import type { Profile } from "../provider/api/profile.js";
import { EXIT } from "../provider/commands/command.js";
import { startEmulator, type Reading } from "../provider/emulator/index.js";
import { apiKey, startFresh } from "../provider/runtime/index.js";
import { checkedInputs } from "./support/check.js";
import { doctorBefore, doctorRun } from "./support/doctor.js";
import { expectNoSecret, secretsOf } from "./support/emulator.js";

// Issue 54: a meaning takes two agreeing readings and no transient; a signature with two meanings is decided by
// looking; a lenient platform and a cap refused in other words are measured as the lifecycle meets them.

type Report = {
  exitCode: number;
  rows: { point: string; verdict: string; observed: string; setting?: string }[];
  profile?: Profile;
  differs: string[];
};
const row = (report: Report, point: string) => report.rows.find((r) => r.point === point);
/** Every signature the profile saves for a meaning other than transient. */
const meanings = (p: Profile) => [...p.refused, ...p.goneKey, ...p.goneSubAccount, ...p.unauthorised];
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Answers the first `times` requests to paths ending in `path` with `answer` (the platform's own: nothing passed on). */
function firstAnswers(path: string, times: number, answer: { status: number; body: unknown; raw?: string }) {
  let left = times;
  return (p: string) => (p.endsWith(path) && left-- > 0 ? answer : undefined);
}

describe("a transient answer is tried again as the runtime tries it, and never saved as a meaning", () => {
  const transients: [string, { status: number; body: unknown; raw?: string }][] = [
    ["a 429 with an empty body", { status: 429, body: null, raw: "" }],
    ["a 429 in JSON", { status: 429, body: { error: { code: "rate_limited", message: "slow down" } } }],
    ["a 503", { status: 503, body: { error: { code: "service_unavailable", message: "unavailable" } } }],
    ["a gateway's 502 page", { status: 502, body: null, raw: "<html><body><h1>502 Bad Gateway</h1></body></html>" }],
    ["a gateway's 504 page", { status: 504, body: null, raw: "<html><body>504 Gateway Time-out</body></html>" }],
  ];

  test.each(transients)(
    "%s once on the get of an unknown key: gone is measured from the platform's own answers (404), exit 0",
    async (_name, answer) => {
      await doctorBefore(
        ["--write", "--save", "--json"],
        { refuse: firstAnswers("/api-key/get", 1, answer) },
        ({ code, out }) => {
          const report = JSON.parse(out) as Report;
          expect(code).toBe(EXIT.ok);
          expect(report.profile!.goneKey).toEqual([{ status: 404, code: "key_not_found" }]);
          expect(meanings(report.profile!).filter((s) => s.status === answer.status)).toEqual([]);
          expect(row(report, "gone: a key that does not exist")).toMatchObject({ verdict: "holds" });
        },
      );
    },
  );

  test.each(transients)(
    "%s once on the sub-account group's probes: never the gone sub-account answer, never a refusal of page_size=-1",
    async (_name, answer) => {
      for (const path of ["/sub-account/token/info", "/sub-account/list"]) {
        await doctorBefore(
          ["--write", "--save", "--json"],
          { refuse: firstAnswers(path, 1, answer) },
          ({ code, out }, emu) => {
            const report = JSON.parse(out) as Report;
            expect(code).toBe(EXIT.ok);
            expect(meanings(report.profile!).filter((s) => s.status === answer.status)).toEqual([]);
            expect(report.differs).not.toContain("list-all-refused");
            expect(emu.state.listSubAccounts()).toEqual([]);
          },
        );
      }
    },
  );

  test("one 503 on account/balance (the emulator's fault) never ends the doctor", async () => {
    await doctorBefore(
      ["--json"],
      { emulator: { faults: [{ kind: "503", ops: ["account/balance"], count: 1 }] } },
      ({ code, out }) => {
        expect(code).toBe(EXIT.ok);
        expect(JSON.parse(out)).toMatchObject({ ran: true });
      },
    );
  });

  test("an answer that stays transient through every retry: the point is 'not measured' with why, nothing of it saved, and the doctor ends", async () => {
    const busy = { status: 503, body: { error: { code: "service_unavailable", message: "unavailable" } } };
    const refuse = (path: string, request: unknown) =>
      path.endsWith("/api-key/get") && isObject(request) && String(request.key).startsWith("sk-doctor")
        ? busy
        : undefined;
    await doctorBefore(["--write", "--save", "--json"], { refuse }, ({ code, out }, emu) => {
      const report = JSON.parse(out) as Report;
      expect(row(report, "gone: a key that does not exist")).toMatchObject({
        verdict: "not checked",
        observed: expect.stringMatching(
          /^not measured: answered HTTP 503 service_unavailable after the runtime's retries/,
        ),
      });
      expect(report.profile!.goneKey).toEqual([]);
      expect(code).toBe(EXIT.ok);
      expect(emu.state.listKeys()).toEqual([]);
    });
  });

  test("two readings that differ (404, then 400): not measured, nothing saved", async () => {
    let gets = 0;
    const refuse = (path: string, request: unknown) =>
      path.endsWith("/api-key/get") && isObject(request) && String(request.key).startsWith("sk-doctor") && gets++ === 1
        ? { status: 400, body: { error: { code: "invalid_request", message: "bad" } } }
        : undefined;
    await doctorBefore(["--write", "--save", "--json"], { refuse }, ({ out }) => {
      const report = JSON.parse(out) as Report;
      expect(row(report, "gone: a key that does not exist")?.observed).toMatch(
        /^not measured: two readings differ: HTTP 404 key_not_found, then HTTP 400 invalid_request/,
      );
      expect(report.profile!.goneKey).toEqual([]);
    });
  });
});

describe("the profile measured under a transient fault leaves the lifecycle as well off as no profile", () => {
  test("measured while a 429 met the get of an unknown key: a key delete that meets a 429 under that profile is tried again and deletes the key, as without the profile", async () => {
    const emu = await startEmulator({
      port: 0,
      rateLimits: false,
      faults: [{ kind: "429", ops: ["api-key/get"], count: 1 }],
    });
    try {
      const env = {
        LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
        LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
        LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
      };
      const { out } = await doctorRun(["--write", "--save", "--json"], env, {
        clock: { now: () => Date.now(), sleep: async () => undefined },
      });
      const profile = JSON.stringify((JSON.parse(out) as Report).profile);
      for (const withProfile of [true, false]) {
        startFresh({
          stackConfig: {
            baseUrl: emu.baseUrl,
            adminKey: emu.adminKey,
            accountKey: emu.accountKey,
            rateLimits: "off",
            ...(withProfile && { profile }),
          },
          clientOverrides: { clock: { now: () => Date.now(), sleep: async () => undefined } },
        });
        const made = await apiKey.create(await checkedInputs(apiKey, { alias: "ci-runner" }));
        emu.setFaults([{ kind: "429", ops: ["api-key/delete"], count: 1 }]);
        startFresh();
        await apiKey.delete(made.id, made.outs);
        expect(emu.state.listKeys()).toEqual([]);
      }
    } finally {
      await emu.close();
    }
  });
});

describe("one signature, two meanings: decided by looking, never 'handled' by a guess", () => {
  test("busy and gone both {success: false, message} in a 200 (refusals-200 and transient-200 without codes): the profile lists it under both, the row says 'by looking', exit 0", async () => {
    const withoutCode = (_p: string, status: number, body: unknown) =>
      isObject(body) && body.success === false
        ? { status, body: { success: false, message: body.message } }
        : { status, body };
    const readings: Reading[] = ["refusals-200", "transient-200"];
    await doctorBefore(
      ["--write", "--save", "--json"],
      { rewrite: withoutCode, emulator: { readings } },
      ({ code, out }, emu) => {
        const report = JSON.parse(out) as Report;
        const shape = { status: 200, code: "success:false" };
        expect(report.profile!.transient).toContainEqual(shape);
        expect(report.profile!.goneSubAccount).toContainEqual(shape);
        const looking = report.rows.filter((r) => r.verdict === "by looking");
        expect(looking.map((r) => r.point)).toContain("one answer, two meanings (transient and goneSubAccount)");
        expect(looking[0].observed).toMatch(/the runtime decides each such answer by looking/);
        expect(
          report.rows
            .filter((r) => r.verdict === "handled")
            .map((r) => r.observed)
            .join("\n"),
        ).not.toMatch(/two meanings/);
        expect(code).toBe(EXIT.ok);
        expect(emu.state.listSubAccounts()).toEqual([]);
      },
    );
  });
});

describe("a lenient platform, and a cap in other words", () => {
  test("edit and delete naming an unknown token answer 200 done (idempotent-deletes, a lenient edit): exit 0, no setting", async () => {
    const lenient = (path: string, status: number, body: unknown) =>
      path.endsWith("/sub-account/token/info") && status === 404
        ? { status: 200, body: { success: true } }
        : { status, body };
    await doctorBefore(
      ["--write", "--json"],
      { rewrite: lenient, emulator: { readings: ["idempotent-deletes"] } },
      ({ code, out }) => {
        const report = JSON.parse(out) as Report;
        expect(report.rows.filter((r) => r.verdict === "setting")).toEqual([]);
        expect(row(report, "gone: a sub-account that does not exist")).toMatchObject({
          verdict: "handled",
          observed: expect.stringMatching(/lenient/),
        });
        expect(code).toBe(EXIT.ok);
      },
    );
  });

  test.each([
    [
      "a 400",
      {
        status: 400,
        body: { error: { code: "invalid_request", message: "too many sub-accounts in one request (at most 50)" } },
      },
    ],
    [
      "a 200 with success: false",
      { status: 200, body: { success: false, message: "too many sub-accounts in one request (at most 50)" } },
    ],
  ])(
    "a create cap refused in other words (%s, 'too many sub-accounts in one request (at most 50)'): measured, createCap 50 saved, exit 3",
    async (_name, answer) => {
      const refuse = (path: string, request: unknown) =>
        path.endsWith("/sub-account/token") && isObject(request) && Number(request.count) > 50 ? answer : undefined;
      await doctorBefore(["--write", "--save", "--json"], { refuse }, ({ code, out }, emu) => {
        const report = JSON.parse(out) as Report;
        expect(row(report, "largest count of one sub-account create")).toMatchObject({
          verdict: "setting",
          setting: expect.stringMatching(/createCap 50/),
        });
        expect(report.profile!.limits?.createCap).toBe(50);
        expect(code).toBe(EXIT.findings);
        expect(emu.state.listSubAccounts()).toEqual([]);
      });
    },
  );
});

describe("a platform issuing tokens without sk-", () => {
  test("the doctor leaves none of its sub-accounts", async () => {
    // Tokens answered as their 48 characters without `sk-`, and taken back in that form (the front adds it again).
    const bare = new Set<string>();
    const strip = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(strip);
      if (!isObject(value))
        return typeof value === "string" && /^sk-[A-Za-z0-9]{40,}$/.test(value)
          ? (bare.add(value.slice(3)), value.slice(3))
          : value;
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === "key" ? v : strip(v)]));
    };
    const rewrite = (path: string, status: number, body: unknown) => ({
      status,
      body: path.includes("/sub-account/") ? strip(body) : body,
    });
    const prefixed = (text: string) =>
      [...bare].reduce((t, token) => t.split(token).join(`sk-${token}`).split("sk-sk-").join("sk-"), text);
    const inbound = (url: string, text: string) =>
      url.includes("/sub-account/") ? { url: prefixed(url), text: prefixed(text) } : { url, text };
    await doctorBefore(["--write", "--json"], { rewrite, inbound }, ({ out, err }, emu) => {
      expect(emu.state.listSubAccounts()).toEqual([]);
      expect(emu.state.listKeys()).toEqual([]);
      expectNoSecret(out + err, secretsOf(emu));
    });
  });
});
