import { mkdtemp, rm, stat } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import {
  ALIAS_MAX_LENGTH,
  MODEL_LIST_MAX,
  MODEL_NAME_MAX_LENGTH,
  SUB_ACCOUNT_MAX_COUNT,
} from "../../provider/api/assumptions.js";
import { OPERATIONS, type OperationId } from "../../provider/api/operations.js";
import { MAX_CLOCK_OFFSET_HOURS, type Emulator } from "../../provider/emulator/index.js";
import { call, ok } from "../support/emulatorCalls.js";
import { emulator } from "../support/emulator.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await emulator({ rateLimits: false });
});
afterAll(async () => emu.close());

const longest = (n: number, tag: string) => `${tag}-`.padEnd(n, "x");
const maximalPricing = Array.from({ length: MODEL_LIST_MAX }, (_, i) => ({
  model: longest(MODEL_NAME_MAX_LENGTH, `m${i}`),
  pricing_factor: 1,
}));

/** Row 1 of issue 14: field caps, 400s naming the field; no single request can break later ones. */
describe("request field caps", () => {
  test("a 1,000,000-character alias is refused with a 400 naming alias, on create and on edit", async () => {
    const alias = "a".repeat(1_000_000);
    const create = await call(emu, "createSubAccounts", { alias, balance: 1, count: 100 });
    expect(create.status).toBe(400);
    expect(create.json.error).toEqual({
      code: "invalid_request",
      message: `alias: must be at most ${ALIAS_MAX_LENGTH} characters`,
    });
    const [sub] = (await ok(emu, "createSubAccounts", { alias: "ok", balance: 1, count: 1 })).items;
    const edit = await call(emu, "editSubAccounts", { sks: [sub.token], alias, model_pricing: [] });
    expect(edit.status).toBe(400);
    expect(edit.json.error.message).toMatch(/^alias: must be at most/);
    const key = await call(emu, "createApiKey", { alias });
    expect(key.status).toBe(400);
  });

  test.each([
    [
      "createApiKey",
      { alias: "k", security_config: { ip: { allow: Array(201).fill("10.0.0.1") } } },
      "security_config.ip.allow",
    ],
    [
      "createApiKey",
      { alias: "k", security_config: { geo: { countries: Array(251).fill("DE") } } },
      "security_config.geo.countries",
    ],
    [
      "createApiKey",
      {
        alias: "k",
        security_config: { models: { mode: "model", items: Array.from({ length: 201 }, (_, i) => `m${i}`) } },
      },
      "security_config.models.items",
    ],
    [
      "createApiKey",
      { alias: "k", security_config: { models: { mode: "model", items: ["m".repeat(129)] } } },
      "security_config.models.items[0]",
    ],
    [
      "createSubAccounts",
      {
        alias: "s",
        balance: 1,
        count: 1,
        model_pricing: [...maximalPricing, { model: "one-more", pricing_factor: 1 }],
      },
      "model_pricing",
    ],
    ["createSubAccounts", { alias: "s", balance: 1, count: SUB_ACCOUNT_MAX_COUNT + 1 }, "count"],
    ["deleteSubAccounts", { sks: ["sk-" + "t".repeat(300)] }, "sks[0]"],
  ] as [OperationId, Record<string, unknown>, string][])(
    "%s over a cap: 400 naming the field (case %#)",
    async (id, body, field) => {
      const answer = await call(emu, id, body);
      expect(answer.status).toBe(400);
      expect(answer.json.error.message.startsWith(`${field}: `)).toBe(true);
    },
  );

  test("requests at every cap succeed, and the emulator (state file included) keeps answering after them", async () => {
    const dir = await mkdtemp(join(tmpdir(), "llm-caps-"));
    const file = join(dir, "state.json");
    const e = await emulator({ rateLimits: false, stateFile: file });
    try {
      for (let i = 0; i < 3; i++) {
        const created = await ok(e, "createSubAccounts", {
          alias: longest(ALIAS_MAX_LENGTH, `a${i}`),
          balance: 1,
          count: SUB_ACCOUNT_MAX_COUNT,
          model_pricing: maximalPricing,
        });
        expect(created.items).toHaveLength(SUB_ACCOUNT_MAX_COUNT);
      }
      // The documented bound (assumptions.ts): one request adds at most about 4 MB to the state.
      const { size } = await stat(file);
      expect(size / 3).toBeLessThan(4.5 * 1024 * 1024);
      const list = await ok(e, "listSubAccounts", { page_size: -1 });
      expect(list.total).toBe(3 * SUB_ACCOUNT_MAX_COUNT);
      expect((await ok(e, "createSubAccounts", { alias: "after", balance: 1, count: 1 })).items).toHaveLength(1);
    } finally {
      await e.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** Row 15 of issue 14: a body that is not declared JSON gets 415 in the spec's error shape. */
describe("content type", () => {
  async function post(type: string | undefined, body: string) {
    const op = OPERATIONS.createApiKey;
    const headers: Record<string, string> = { authorization: `Bearer ${emu.adminKey}` };
    if (type !== undefined) headers["content-type"] = type;
    const res = await fetch(emu.baseUrl + op.path, { method: "POST", headers, body });
    return { status: res.status, json: (await res.json()) as { error: { code: string; message: string } } };
  }

  test("text/plain, form and a missing type with a body: 415; JSON types pass", async () => {
    const before = emu.state.listKeys().length;
    for (const type of ["text/plain", "application/x-www-form-urlencoded", undefined]) {
      const answer = await post(type, JSON.stringify({ alias: "typed" }));
      expect(answer.status).toBe(415);
      expect(answer.json.error.code).toBe("unsupported_media_type");
      expect(answer.json.error.message).toContain("application/json");
    }
    expect(emu.state.listKeys().length).toBe(before);
    expect((await post("application/json; charset=utf-8", JSON.stringify({ alias: "typed" }))).status).toBe(200);
  });
});

/** Row 7 of issue 14: the request log is a ring buffer of a configurable size; paths in it are cut. */
describe("request log", () => {
  test("keeps the newest requestLogSize entries, in order, with long paths cut", async () => {
    const e = await emulator({ rateLimits: false, requestLogSize: 50 });
    try {
      const long = "/" + "p".repeat(15_000);
      for (let i = 0; i < 120; i++) await fetch(`${e.baseUrl}${i % 2 ? long : `/n${i}`}`);
      const log = e.requests();
      expect(log).toHaveLength(50);
      expect(log[48].path).toBe("/n118");
      expect(log[49].path.length).toBeLessThan(300);
      expect(log.filter((r) => r.path.startsWith("/n")).map((r) => r.path)).toEqual(
        Array.from({ length: 25 }, (_, i) => `/n${70 + 2 * i}`),
      );
      e.clearRequests();
      await fetch(`${e.baseUrl}/after`);
      expect(e.requests().map((r) => r.path)).toEqual(["/after"]);
    } finally {
      await e.close();
    }
  });

  test("a requestLogSize that is not a whole number above 0 is refused", async () => {
    await expect(emulator({ requestLogSize: 0 })).rejects.toThrow(/requestLogSize/);
  });
});

/** Sends `GET <target>` as it is (fetch would normalize it) and resolves with the status, or the socket error code. */
function rawGet(baseUrl: string, target: string): Promise<number | string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const req = request({ host: hostname, port, method: "GET", path: target }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? "error"));
    req.end();
  });
}

/** Row 7 of issue 23: a request target that is not a URL is that request's 400, not the end of the server. */
describe("unparseable request target", () => {
  test("GET http://a:99999/ gets a 400 and the emulator answers the next request", async () => {
    const lines: string[] = [];
    const e = await emulator({ rateLimits: false, log: (line) => lines.push(line) });
    try {
      expect(await rawGet(e.baseUrl, "http://a:99999/")).toBe(400);
      expect(e.requests().at(-1)).toMatchObject({ op: "unknown", method: "GET", status: 400 });
      expect((await call(e, "balance")).status).toBe(200);
      expect(lines.some((l) => l.startsWith("GET unknown 400"))).toBe(true);
    } finally {
      await e.close();
    }
  });
});

/** Row 8 of issue 23: an internal error after the body was read is a logged 500, never a silently cut socket. */
describe("internal errors", () => {
  test("a create whose timestamp cannot be written answers 500 internal_error, logs why, and changes nothing", async () => {
    const lines: string[] = [];
    // A clock past the last valid date makes the timestamp of every create throw (what an offset of 1e12 hours did).
    const e = await emulator({ rateLimits: false, clock: () => 9e15, log: (line) => lines.push(line) });
    try {
      const answer = await call(e, "createApiKey", { alias: "late" });
      expect(answer.status).toBe(500);
      expect(answer.json.error.code).toBe("internal_error");
      expect(lines).toContainEqual(
        expect.stringMatching(/^internal error in POST api-key\/create: RangeError: Invalid time value/),
      );
      expect(lines).toContainEqual(expect.stringMatching(/^POST api-key\/create 500 /));
      expect(e.state.listKeys()).toEqual([]);
      expect((await call(e, "balance")).status).toBe(200);
    } finally {
      await e.close();
    }
  });

  test("a clock offset past ten years is refused at start and by setClockOffset; ten years is accepted", async () => {
    const limit = MAX_CLOCK_OFFSET_HOURS * 3_600_000;
    await expect(emulator({ clockOffsetMs: 1e12 * 3_600_000 })).rejects.toThrow(
      `clockOffsetMs must be a number of milliseconds between -${MAX_CLOCK_OFFSET_HOURS} and ${MAX_CLOCK_OFFSET_HOURS} hours`,
    );
    await expect(emulator({ clockOffsetMs: -limit - 1 })).rejects.toThrow(/clockOffsetMs/);
    const e = await emulator({ rateLimits: false, clockOffsetMs: -limit });
    try {
      expect(() => e.setClockOffset(limit + 1)).toThrow(/clockOffsetMs/);
      e.setClockOffset(limit);
      const created = await ok(e, "createApiKey", { alias: "far" });
      expect(Date.parse(created.created_at) - Date.now()).toBeGreaterThan(limit - 60_000);
    } finally {
      await e.close();
    }
  });
});
