import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { z } from "zod";
import {
  AuthenticationError,
  BadRequestError,
  ConfigurationError,
  HttpTransport,
  NotFoundError,
  OPERATIONS,
  ServerError,
} from "../../provider/client/index.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { calls, clientOf, emulator } from "../support/emulator.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await emulator({ rateLimits: false });
});
afterAll(async () => emu.close());

describe("API keys", () => {
  test("create returns the key once in camelCase; get returns the configuration without the key", async () => {
    const client = clientOf(emu);
    const created = await client.apiKeys.create({
      alias: "ci",
      securityConfig: {
        ip: { allow: ["203.0.113.7", "10.0.0.0/8"] },
        spendLimit: { monthly: 100 },
        geo: { countries: ["CN", "SG"] },
      },
    });
    expect(created.key).toMatch(/^sk-/);
    expect(created.enabled).toBe(true);
    expect(created.securityConfig).toEqual({
      ip: { allow: ["203.0.113.7", "10.0.0.0/8"] },
      spendLimit: { monthly: 100 },
      geo: { countries: ["CN", "SG"] },
    });
    const got = await client.apiKeys.get(created.key);
    expect(got).toEqual({
      alias: "ci",
      enabled: true,
      securityConfig: created.securityConfig,
      createdAt: created.createdAt,
    });
    expect(JSON.stringify(got)).not.toContain(created.key);
  });

  test("edit replaces alias and security config as a whole and leaves enabled alone", async () => {
    const client = clientOf(emu);
    const { key } = await client.apiKeys.create({ alias: "a", securityConfig: { geo: { countries: ["CN"] } } });
    await client.apiKeys.setStatus(key, false);
    const edited = await client.apiKeys.edit({ key, alias: "b", securityConfig: { spendLimit: { monthly: 5 } } });
    expect(edited.alias).toBe("b");
    expect(edited.enabled).toBe(false);
    expect(edited.securityConfig).toEqual({ spendLimit: { monthly: 5 } });
  });

  test("status changes only enabled and returns the confirmed state", async () => {
    const client = clientOf(emu);
    const { key } = await client.apiKeys.create({ alias: "s", securityConfig: { geo: { countries: ["SG"] } } });
    expect(await client.apiKeys.setStatus(key, false)).toBe(false);
    const view = await client.apiKeys.get(key);
    expect(view).toMatchObject({ alias: "s", enabled: false, securityConfig: { geo: { countries: ["SG"] } } });
  });

  test("delete removes a batch; one unknown key rejects the whole batch with NotFoundError", async () => {
    const client = clientOf(emu);
    const a = await client.apiKeys.create({ alias: "d1" });
    const b = await client.apiKeys.create({ alias: "d2" });
    await client.apiKeys.delete([a.key]);
    await expect(client.apiKeys.delete([a.key, b.key])).rejects.toBeInstanceOf(NotFoundError);
    expect(emu.state.hasKey(b.key)).toBe(true);
    expect(await client.apiKeys.delete([b.key])).toBe(1);
  });

  test("get of an unknown key is a NotFoundError that names the operation and masks the key", async () => {
    const client = clientOf(emu);
    const missing = "sk-" + "x".repeat(44) + "9z9z";
    const err = await client.apiKeys.get(missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).status).toBe(404);
    expect((err as NotFoundError).operation).toBe("POST api-key/get");
    expect(String(err)).toContain("(POST api-key/get)");
    expect(String(err)).not.toContain(missing);
  });

  test("a 400 from the server is a BadRequestError with the API's code and the field in its message", async () => {
    // The client validates before sending, so a permissive copy of the operation gets the bad body through.
    const http = new HttpTransport({ baseUrl: emu.baseUrl, adminKey: emu.adminKey });
    const err = await http
      .send({ op: { ...OPERATIONS.createApiKey, request: z.any() }, body: { alias: "" } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).code).toBeTruthy();
    expect((err as BadRequestError).message).toContain("alias");
    expect((err as BadRequestError).message).toMatch(/^400 \S+: .*\(POST api-key\/create\)$/);
  });

  test("send takes the body type from the operation's request schema and returns its response schema's type", async () => {
    const http = new HttpTransport({ baseUrl: emu.baseUrl, adminKey: emu.adminKey, rateLimits: false });
    // @ts-expect-error `enabled` is a boolean in ApiKeyStatusRequestSchema: the compiler refuses the call.
    const refused = http.send({ op: OPERATIONS.setApiKeyStatus, body: { key: "sk-" + "a".repeat(48), enabled: "no" } });
    await expect(refused).rejects.toThrow(/invalid request: enabled: .*\(POST api-key\/status\)/);
    const answer = await http.send({ op: OPERATIONS.balance, body: {} });
    const balance: string = answer.balance;
    // @ts-expect-error BalanceResponseSchema has no `deleted` field.
    expect(answer.deleted).toBeUndefined();
    expect(balance).toMatch(/^\d/);
  });

  test("a wrong admin key is an AuthenticationError (401)", async () => {
    const client = clientOf(emu, { adminKey: "sk-admin-" + "w".repeat(32) });
    await expect(client.apiKeys.get("sk-" + "a".repeat(48))).rejects.toBeInstanceOf(AuthenticationError);
  });

  test("the client refuses the wrong kind of credential before sending anything", async () => {
    emu.clearRequests();
    const wrongAdmin = clientOf(emu, { adminKey: emu.accountKey });
    await expect(wrongAdmin.apiKeys.create({ alias: "x" })).rejects.toBeInstanceOf(ConfigurationError);
    const wrongAccount = clientOf(emu, { accountKey: emu.adminKey });
    await expect(wrongAccount.subAccounts.list()).rejects.toBeInstanceOf(ConfigurationError);
    const none = clientOf(emu, { adminKey: undefined });
    await expect(none.account.balance()).rejects.toThrow(/LLM_ACCOUNTS_ADMIN_KEY.*llm-accounts:adminKey/);
    expect(emu.requests()).toHaveLength(0);
  });

  test("invalid input is refused before sending, naming the wire field", async () => {
    emu.clearRequests();
    const client = clientOf(emu);
    await expect(client.apiKeys.create({ alias: "x", securityConfig: { geo: { countries: ["cn"] } } })).rejects.toThrow(
      /security_config\.geo\.countries\[0\]/,
    );
    expect(emu.requests()).toHaveLength(0);
  });

  test("a create that gets a 500 is not retried and says the key may exist", async () => {
    emu.clearRequests();
    emu.setFaults([{ kind: "500", ops: ["api-key/create"], count: 1 }]);
    const err = await clientOf(emu)
      .apiKeys.create({ alias: "maybe" })
      .catch((e: unknown) => e);
    emu.setFaults([]);
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).mayHaveSucceeded).toBe(true);
    // The client says what it knows; what to do about it (adoptKey) is the runtime's advice, which knows resources.
    expect((err as Error).message).toMatch(
      /the key may have been created although no answer came back \(POST api-key\/create\)$/,
    );
    expect(calls(emu)["api-key/create"]).toBe(1);
  });

  test("reads are retried on 5xx and succeed", async () => {
    const client = clientOf(emu);
    const { key } = await client.apiKeys.create({ alias: "r" });
    emu.clearRequests();
    emu.setFaults([{ kind: "503", ops: ["api-key/get"], count: 2 }]);
    await expect(client.apiKeys.get(key)).resolves.toMatchObject({ alias: "r" });
    emu.setFaults([]);
    expect(calls(emu)["api-key/get"]).toBe(3);
  });

  test("edit and status are retried after a lost response (they set a target state)", async () => {
    const client = clientOf(emu);
    const { key } = await client.apiKeys.create({ alias: "t" });
    emu.clearRequests();
    emu.setFaults([
      { kind: "drop-after", ops: ["api-key/status"], count: 1 },
      { kind: "drop-after", ops: ["api-key/edit"], count: 1 },
    ]);
    expect(await client.apiKeys.setStatus(key, false)).toBe(false);
    await expect(client.apiKeys.edit({ key, alias: "t2" })).resolves.toMatchObject({ alias: "t2", enabled: false });
    emu.setFaults([]);
    expect(calls(emu)).toMatchObject({ "api-key/status": 2, "api-key/edit": 2 });
  });

  test("a delete sent again after a lost answer says so: its 404 carries afterLostAnswer (the first send may have deleted the key); a first 404 does not", async () => {
    const client = clientOf(emu);
    const { key } = await client.apiKeys.create({ alias: "lost-then-gone" });
    emu.setFaults([{ kind: "drop-after", ops: ["api-key/delete"], count: 1 }]);
    const err = await client.apiKeys.delete([key]).catch((e: unknown) => e);
    emu.setFaults([]);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).afterLostAnswer).toBe(true);
    const again = await client.apiKeys.delete([key]).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(NotFoundError);
    expect((again as NotFoundError).afterLostAnswer).toBeUndefined();
  });
});
