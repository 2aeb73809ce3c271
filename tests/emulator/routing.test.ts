import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { OPERATIONS } from "../../provider/api/operations.js";
import { startEmulator, type Emulator } from "../../provider/emulator/index.js";
import { call, ok } from "../support/emulatorCalls.js";

let emu: Emulator;

beforeAll(async () => {
  emu = await startEmulator({ rateLimits: false });
});
afterAll(() => emu.close());

describe("routing", () => {
  it("answers 404 not_found for a path no operation has, logged as op unknown", async () => {
    emu.clearRequests();
    const res = await fetch(`${emu.baseUrl}/api/v1/management/nothing`, {
      method: "POST",
      headers: { authorization: `Bearer ${emu.adminKey}` },
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: "not_found", message: expect.any(String) } });
    expect(emu.requests()).toEqual([
      expect.objectContaining({ op: "unknown", status: 404, path: "/api/v1/management/nothing" }),
    ]);
  });

  it("answers 405 with Allow for a known path with the wrong method", async () => {
    const res = await fetch(emu.baseUrl + OPERATIONS.createSubAccounts.path, {
      method: "GET",
      headers: { authorization: `Bearer ${emu.accountKey}` },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST, DELETE");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
  });

  it("routes the same path by method: POST token creates, DELETE token deletes", async () => {
    const created = await ok(emu, "createSubAccounts", { alias: "route", balance: 0, count: 1 });
    await ok(emu, "deleteSubAccounts", { sks: [created.items[0].token] });
    expect(emu.state.hasSubAccount(created.items[0].token)).toBe(false);
  });

  it("sends a request id with every answer", async () => {
    const answer = await call(emu, "balance");
    expect(answer.headers.get("x-request-id")).toMatch(/^req_\d+$/);
  });
});

describe("validation", () => {
  it("answers 400 invalid_json to a body that is not JSON", async () => {
    const answer = await call(emu, "createApiKey", undefined, { rawBody: "{alias:" });
    expect(answer.status).toBe(400);
    expect(answer.json.error.code).toBe("invalid_json");
  });

  it("names a missing field in a 400 invalid_request", async () => {
    const answer = await call(emu, "createApiKey", {});
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({
      error: { code: "invalid_request", message: "alias: Invalid input: expected string, received undefined" },
    });
  });

  it("names a nested field by its wire path with an index", async () => {
    const answer = await call(emu, "createApiKey", {
      alias: "a",
      security_config: { geo: { countries: ["DE", "fr"] } },
    });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toBe(
      "security_config.geo.countries[1]: must be a two-letter upper-case country code",
    );
  });

  it("refuses an unknown security_config part (the schema is strict)", async () => {
    const answer = await call(emu, "createApiKey", { alias: "a", security_config: { colour: "red" } });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toMatch(/^security_config: /);
  });

  it("refuses more than 1000 keys in one delete, naming keys", async () => {
    const keys = Array.from({ length: 1001 }, (_, i) => `sk-${String(i).padStart(48, "0")}`);
    const answer = await call(emu, "deleteApiKeys", { keys });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toBe("keys: must name at most 1000 keys");
  });

  it("validates the query of a GET: page_size 0 is refused, naming page_size", async () => {
    const answer = await call(emu, "listSubAccounts", { page_size: 0 });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toMatch(/^page_size: /);
  });

  it("names the body itself when it is not an object", async () => {
    const answer = await call(emu, "getApiKey", undefined, { rawBody: "[]" });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toMatch(/^body: /);
  });

  it("takes an empty body as {}", async () => {
    const res = await fetch(emu.baseUrl + OPERATIONS.balance.path, {
      method: "POST",
      headers: { authorization: `Bearer ${emu.adminKey}` },
    });
    expect(res.status).toBe(200);
  });

  it("ignores the query of the models GET", async () => {
    const answer = await call(emu, "models", { anything: "x" });
    expect(answer.status).toBe(200);
  });
});

describe("request log", () => {
  it("has one entry per request, with op, method, path, status and arrival time", async () => {
    emu.clearRequests();
    const before = Date.now();
    await call(emu, "balance");
    await call(emu, "models");
    await call(emu, "getApiKey", { key: "sk-missing0000" });
    const log = emu.requests();
    expect(log.map((e) => [e.op, e.method, e.status])).toEqual([
      ["account/balance", "POST", 200],
      ["models", "GET", 200],
      ["api-key/get", "POST", 404],
    ]);
    for (const entry of log) {
      expect(entry.at).toBeGreaterThanOrEqual(before);
      expect(entry.at).toBeLessThanOrEqual(Date.now());
    }
  });

  it("holds no body, key or query string", async () => {
    emu.clearRequests();
    const { key } = await ok(emu, "createApiKey", { alias: "secret-alias" });
    const created = await ok(emu, "createSubAccounts", { alias: "secret-sub", balance: 0, count: 1 });
    await call(emu, "listSubAccounts", { sk: created.items[0].token });
    const text = JSON.stringify(emu.requests());
    for (const secret of [key, created.items[0].token, emu.adminKey, emu.accountKey, "secret-alias", "secret-sub"]) {
      expect(text).not.toContain(secret);
    }
    expect(emu.requests()[2].path).toBe(OPERATIONS.listSubAccounts.path);
  });

  it("returns copies, and clearRequests empties it", async () => {
    await call(emu, "balance");
    const log = emu.requests();
    log[0].status = 999;
    expect(emu.requests()[0].status).not.toBe(999);
    emu.clearRequests();
    expect(emu.requests()).toEqual([]);
  });

  it("writes one log line per request without keys", async () => {
    const lines: string[] = [];
    const logged = await startEmulator({ log: (line) => lines.push(line) });
    try {
      const { key } = await ok(logged, "createApiKey", { alias: "x" });
      await call(logged, "getApiKey", { key });
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^POST api-key\/create 200 \d+ms$/);
      expect(lines.join("\n")).not.toContain(key);
      expect(lines.join("\n")).not.toContain(logged.adminKey);
    } finally {
      await logged.close();
    }
  });
});
