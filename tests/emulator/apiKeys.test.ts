import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startEmulator, type Emulator } from "../../provider/emulator/index.js";
import { call, ok } from "../support/emulatorCalls.js";

let emu: Emulator;

beforeAll(async () => {
  emu = await startEmulator({ rateLimits: false });
});
afterAll(() => emu.close());

const fullConfig = {
  ip: { allow: ["10.0.0.1", "192.168.0.0/16"] },
  spend_limit: { monthly: 100 },
  geo: { countries: ["DE", "US"] },
  models: { mode: "model", items: ["model-a"] },
};

describe("api-key/create", () => {
  it("returns the new key once, enabled, with security_config {} when none is given and a UTC created_at", async () => {
    const before = Date.now();
    const created = await ok(emu, "createApiKey", { alias: "first" });
    expect(created.key).toMatch(/^sk-[A-Za-z0-9]{48}$/);
    expect(created).toEqual({
      key: created.key,
      alias: "first",
      enabled: true,
      security_config: {},
      created_at: expect.any(String),
    });
    expect(created.created_at).toMatch(/Z$/);
    expect(Date.parse(created.created_at)).toBeGreaterThanOrEqual(before - 1);
  });

  it("echoes the security_config given", async () => {
    const created = await ok(emu, "createApiKey", { alias: "configured", security_config: fullConfig });
    expect(created.security_config).toEqual(fullConfig);
  });

  it("gives every key a different value", async () => {
    const a = await ok(emu, "createApiKey", { alias: "a" });
    const b = await ok(emu, "createApiKey", { alias: "a" });
    expect(a.key).not.toBe(b.key);
  });
});

describe("api-key/get", () => {
  it("returns alias, enabled, security_config and created_at, never the key", async () => {
    const created = await ok(emu, "createApiKey", { alias: "get-me", security_config: fullConfig });
    const view = await ok(emu, "getApiKey", { key: created.key });
    expect(view).toEqual({
      alias: "get-me",
      enabled: true,
      security_config: fullConfig,
      created_at: created.created_at,
    });
    expect(JSON.stringify(view)).not.toContain(created.key);
  });

  it("answers 404 key_not_found for an unknown key, masking it in the message", async () => {
    const unknown = "sk-UNKNOWNunknownUNKNOWNunknownUNKNOWNunknown1a2b";
    const answer = await call(emu, "getApiKey", { key: unknown });
    expect(answer.status).toBe(404);
    expect(answer.json).toEqual({ error: { code: "key_not_found", message: "key sk-...1a2b does not exist" } });
    expect(answer.text).not.toContain(unknown);
  });

  it("refuses an admin key as the key to read (400 naming key)", async () => {
    const answer = await call(emu, "getApiKey", { key: emu.adminKey });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toBe("key: must not be an admin key");
  });
});

describe("api-key/edit", () => {
  it("replaces alias and security_config as a whole and returns the new view", async () => {
    const created = await ok(emu, "createApiKey", { alias: "before", security_config: fullConfig });
    const edited = await ok(emu, "editApiKey", {
      key: created.key,
      alias: "after",
      security_config: { geo: { countries: ["FR"] } },
    });
    expect(edited).toEqual({
      alias: "after",
      enabled: true,
      security_config: { geo: { countries: ["FR"] } },
      created_at: created.created_at,
    });
    expect(await ok(emu, "getApiKey", { key: created.key })).toEqual(edited);
  });

  it("clears security_config to {} when the edit omits it", async () => {
    const created = await ok(emu, "createApiKey", { alias: "x", security_config: fullConfig });
    const edited = await ok(emu, "editApiKey", { key: created.key, alias: "x" });
    expect(edited.security_config).toEqual({});
  });

  it("leaves enabled as it is (a disabled key stays disabled)", async () => {
    const created = await ok(emu, "createApiKey", { alias: "x" });
    await ok(emu, "setApiKeyStatus", { key: created.key, enabled: false });
    const edited = await ok(emu, "editApiKey", { key: created.key, alias: "y", enabled: true });
    expect(edited.enabled).toBe(false);
  });

  it("answers 404 key_not_found for an unknown key", async () => {
    const answer = await call(emu, "editApiKey", { key: "sk-doesnotexist", alias: "x" });
    expect(answer.status).toBe(404);
    expect(answer.json.error.code).toBe("key_not_found");
  });
});

describe("api-key/status", () => {
  it("changes only enabled and answers {enabled}", async () => {
    const created = await ok(emu, "createApiKey", { alias: "toggle", security_config: fullConfig });
    expect(await ok(emu, "setApiKeyStatus", { key: created.key, enabled: false })).toEqual({ enabled: false });
    expect(await ok(emu, "getApiKey", { key: created.key })).toEqual({
      alias: "toggle",
      enabled: false,
      security_config: fullConfig,
      created_at: created.created_at,
    });
    expect(await ok(emu, "setApiKeyStatus", { key: created.key, enabled: true })).toEqual({ enabled: true });
    expect((await ok(emu, "getApiKey", { key: created.key })).enabled).toBe(true);
  });

  it("answers 404 key_not_found for an unknown key", async () => {
    const answer = await call(emu, "setApiKeyStatus", { key: "sk-doesnotexist", enabled: true });
    expect(answer.status).toBe(404);
  });
});

describe("api-key/delete", () => {
  it("deletes every key listed and answers the count", async () => {
    const keys = [];
    for (let i = 0; i < 3; i++) keys.push((await ok(emu, "createApiKey", { alias: `del-${i}` })).key);
    expect(await ok(emu, "deleteApiKeys", { keys })).toEqual({ deleted: 3 });
    for (const key of keys) expect((await call(emu, "getApiKey", { key })).status).toBe(404);
  });

  it("rejects the whole batch with 404 when one key is unknown, deleting nothing", async () => {
    const a = (await ok(emu, "createApiKey", { alias: "keep-a" })).key;
    const b = (await ok(emu, "createApiKey", { alias: "keep-b" })).key;
    const unknown = "sk-ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ9f9f";
    const answer = await call(emu, "deleteApiKeys", { keys: [a, unknown, b] });
    expect(answer.status).toBe(404);
    expect(answer.json.error.code).toBe("key_not_found");
    expect(answer.json.error.message).toMatch(/^key sk-\.\.\.9f9f does not exist/);
    expect(answer.text).not.toContain(unknown);
    expect(emu.state.hasKey(a)).toBe(true);
    expect(emu.state.hasKey(b)).toBe(true);
  });

  it("rejects a batch that lists a key twice, deleting nothing", async () => {
    const a = (await ok(emu, "createApiKey", { alias: "twice" })).key;
    const answer = await call(emu, "deleteApiKeys", { keys: [a, a] });
    expect(answer.status).toBe(404);
    expect(answer.json.error.message).toContain("is listed twice");
    expect(emu.state.hasKey(a)).toBe(true);
  });

  it("refuses an empty batch (400 naming keys)", async () => {
    const answer = await call(emu, "deleteApiKeys", { keys: [] });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toMatch(/^keys: /);
  });
});

describe("state, out of band", () => {
  it("a key disabled through state reads as disabled over HTTP", async () => {
    const created = await ok(emu, "createApiKey", { alias: "console" });
    expect(emu.state.disableKey(created.key)).toBe(true);
    expect((await ok(emu, "getApiKey", { key: created.key })).enabled).toBe(false);
  });

  it("a key deleted through state is gone over HTTP", async () => {
    const created = await ok(emu, "createApiKey", { alias: "console" });
    expect(emu.state.deleteKey(created.key)).toBe(true);
    expect((await call(emu, "getApiKey", { key: created.key })).status).toBe(404);
    expect(emu.state.deleteKey(created.key)).toBe(false);
  });

  it("listKeys returns copies with the key values", async () => {
    const created = await ok(emu, "createApiKey", { alias: "listed" });
    const listed = emu.state.listKeys().find((k) => k.key === created.key)!;
    expect(listed).toEqual(created);
    listed.alias = "changed";
    expect(emu.state.getKey(created.key)!.alias).toBe("listed");
  });

  it("a key created through state can be read over HTTP", async () => {
    const record = emu.state.createKey("seeded", { geo: { countries: ["JP"] } });
    expect(await ok(emu, "getApiKey", { key: record.key })).toEqual({
      alias: "seeded",
      enabled: true,
      security_config: { geo: { countries: ["JP"] } },
      created_at: record.created_at,
    });
  });
});
