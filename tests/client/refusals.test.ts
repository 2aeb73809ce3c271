import { afterEach, describe, expect, test } from "@jest/globals";
import { NotFoundError, RateLimitError } from "../../provider/client/index.js";
import { ambiguousMeanings, judge, meaningOf, platformError, readBody } from "../../provider/client/refusals.js";
import type { Profile } from "../../provider/api/profile.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { clientOf, emulator } from "../support/emulator.js";

/**
 * The one reading of what a 2xx answer means (client/refusals.ts): a refusal in any shape is never taken for a
 * success. Issue 43 (envelope refusals without `data`) and issue 44 (one judge).
 */

let emu: Emulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

describe("envelope refusals without data (issue 43)", () => {
  test("a 2xx {code: <not done>, message} with no data is a refusal, whatever the code's form; a done code or an answer's own fields is an answer", () => {
    for (const code of [1001, "1001", "rate_limited", "FORBIDDEN", -1]) {
      expect(readBody({ code, message: "refused" })).toMatchObject({
        refusal: { code: String(code), apiMessage: "refused" },
      });
      expect(readBody({ code, msg: "refused", request_id: "r-1" })).toMatchObject({
        refusal: { apiMessage: "refused" },
      });
    }
    expect(readBody({ code: 0, message: "success" })).toEqual({ answer: {} });
    expect(readBody({ code: "succeeded", msg: "ok" })).toMatchObject({ answer: {} });
    expect(readBody({ code: 0, message: "success", data: { deleted: 1 } })).toEqual({ answer: { deleted: 1 } });
    // An answer that carries a field of its own beside a code is read as the answer (a refusal has nothing else to say).
    expect(readBody({ code: "x1", message: "m", deleted: 1 })).toEqual({
      answer: { code: "x1", message: "m", deleted: 1 },
    });
  });

  test("envelope-no-data: a rate-limited key delete answered 200 {code, message} is waited out, never counted as done; a refusal that lasts fails the delete and the key stays", async () => {
    emu = await emulator({ rateLimits: false, readings: ["envelope-no-data"] });
    const client = clientOf(emu, {
      rateLimits: false,
      retry: { baseDelayMs: 1, maxDelayMs: 2, maxRateLimitAttempts: 3 },
    });
    const { key } = await client.apiKeys.create({ alias: "kept" });
    emu.setFaults([{ kind: "429", ops: ["api-key/delete"] }]);
    const raw = await fetch(`${emu.baseUrl}/api/v1/management/api-key/delete`, {
      method: "POST",
      headers: { authorization: `Bearer ${emu.adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ keys: [key] }),
    });
    expect({ status: raw.status, body: await raw.json() }).toEqual({
      status: 200,
      body: { code: "rate_limited", message: expect.any(String) },
    });
    await expect(client.apiKeys.delete([key])).rejects.toBeInstanceOf(RateLimitError);
    expect(emu.state.getKey(key)).toBeDefined();
    emu.setFaults([{ kind: "429", ops: ["api-key/delete"], count: 2 }]);
    expect(await client.apiKeys.delete([key])).toBe(1);
    expect(emu.state.listKeys()).toEqual([]);
    await expect(client.apiKeys.get(key)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("transient refusals in a 200, in any language (issue 44)", () => {
  test("busy and too-many words in English and Chinese are transient; 不存在 is gone; other words refuse", () => {
    expect(meaningOf(undefined, "system busy, try again")).toEqual({ meaning: "transient", status: 503 });
    expect(meaningOf(undefined, "系统繁忙，请稍后再试")).toEqual({ meaning: "transient", status: 503 });
    expect(meaningOf(undefined, "请求过于频繁")).toEqual({ meaning: "transient", status: 429 });
    expect(meaningOf(undefined, "令牌不存在")).toEqual({ meaning: "gone", status: 404 });
    expect(meaningOf("invalid_alias", "alias must be at most 32 characters")).toEqual({
      meaning: "refused",
      status: 400,
    });
    expect(meaningOf(undefined, "余额不足")).toEqual({ meaning: "refused", status: 400 });
  });

  test("the words are read without the keys a message names: a masked key's digits (sk-...a429, sk-...4040) never make a refusal transient or gone", () => {
    expect(meaningOf("key_not_found", "key not found: sk-...a429")).toEqual({ meaning: "gone", status: 404 });
    expect(meaningOf("invalid_alias", "alias refused for sk-...4040")).toEqual({ meaning: "refused", status: 400 });
    expect(meaningOf("invalid_request", "refused: sk-doctor4291abc")).toEqual({ meaning: "refused", status: 400 });
  });

  test("transient-200: a read and a create answered 200 {success: false, message: busy} are tried again and succeed; the create makes one key", async () => {
    emu = await emulator({ rateLimits: false, readings: ["transient-200"] });
    const client = clientOf(emu, { rateLimits: false, retry: { baseDelayMs: 1, maxDelayMs: 2 } });
    const raw = await fetch(`${emu.baseUrl}/api/v1/management/models`, {
      headers: { authorization: `Bearer ${emu.adminKey}` },
    });
    expect({ status: raw.status, body: await raw.json() }).toEqual({
      status: 200,
      body: { success: false, message: "system busy, try again" },
    });
    expect(await client.account.balance()).toMatch(/^\d+\.\d{6}$/);
    expect(emu.calls()["account/balance"]).toBe(3);
    const { key } = await client.apiKeys.create({ alias: "once" });
    expect(emu.state.listKeys().map((k) => k.key)).toEqual([key]);
    expect(emu.calls()["api-key/create"]).toBe(3);
    expect((await client.subAccounts.create({ alias: "busy", balance: 0, count: 2 })).length).toBe(2);
    expect(emu.state.listSubAccounts()).toHaveLength(2);
  });

  test("a busy answer that lasts fails the call as a 503 naming how the platform answered, never as a bad request", async () => {
    emu = await emulator({ rateLimits: false, readings: ["transient-200"] });
    const client = clientOf(emu, {
      rateLimits: false,
      retry: { baseDelayMs: 1, maxDelayMs: 2, maxRateLimitAttempts: 2 },
    });
    const err = (await client.account.balance().catch((x: unknown) => x)) as Error & { status?: number };
    expect(err.status).toBe(503);
    expect(err.message).toMatch(/系统繁忙，请稍后再试 \(answered HTTP 200 with success: false\)/);
  });
});

describe("one judge tells an ambiguous answer from an unclassified one (issue 53)", () => {
  const profile: Profile = {
    version: 1,
    done: { shape: "plain" },
    refused: [{ status: 400, code: "invalid_key" }],
    goneKey: [{ status: 400, code: "invalid_key" }],
    goneSubAccount: [],
    transient: [],
    unauthorised: [{ status: 401 }],
  };

  test("a signature the profile gives two meanings is unclassified with those meanings (the runtime looks); one it does not know has none", () => {
    const two = judge("management", 400, { error: { code: "invalid_key", message: "invalid key" } }, profile);
    expect(ambiguousMeanings(two)).toEqual(["gone", "refused"]);
    expect("unclassified" in two && two.unclassified).toMatch(/matches more than one meaning \(gone, refused\)/);
    const none = judge("management", 400, { error: { code: "other", message: "no" } }, profile);
    expect("unclassified" in none && none.unclassified).toMatch(/matches no signature/);
    expect(ambiguousMeanings(none)).toBeUndefined();
    expect(ambiguousMeanings(judge("management", 200, { alias: "a" }, profile))).toBeUndefined();
  });

  test("an error body is the platform's only as a JSON object with a code or a message: never a page, text, an empty body or null", () => {
    expect(platformError('{"error":{"code":"key_not_found","message":"no"}}')).toBe(true);
    expect(platformError('{"success":false,"message":"令牌不存在"}')).toBe(true);
    for (const body of ["<html><title>404 Not Found</title></html>", "Not Found", "", "null", "[]", "{}"])
      expect(platformError(body)).toBe(false);
  });
});
