import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { ConfigurationError, LlmAccountsClient, resolveClientOptions, SETTINGS } from "../../provider/client/index.js";
import { readStackConfig } from "../../provider/client/config.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { apiKey, setStackConfig } from "../../provider/runtime/index.js";
import { calls, emulator } from "../support/emulator.js";

const BASE = { LLM_ACCOUNTS_BASE_URL: "http://127.0.0.1:1" };
const resolveWith = (env: Record<string, string>, config: Record<string, string> = {}) =>
  resolveClientOptions(undefined, config, { ...BASE, ...env });

describe("settings are validated where they are read", () => {
  test.each([
    [
      '{"api-key/create":"abc"}',
      /LLM_ACCOUNTS_RATE_LIMITS is invalid: "api-key\/create" must be a positive whole number/,
    ],
    ['[{"limit":"x"}]', /LLM_ACCOUNTS_RATE_LIMITS is invalid: .*"off", or a JSON object/],
    ['{"models":0}', /LLM_ACCOUNTS_RATE_LIMITS is invalid: "models" must be above 0/],
    ['{"models":-5}', /LLM_ACCOUNTS_RATE_LIMITS is invalid: "models" must be above 0/],
    ['{"models":1.5}', /LLM_ACCOUNTS_RATE_LIMITS is invalid: "models" must be a whole number/],
    [
      '{"models":[{"limit":0,"windowMs":1000}]}',
      /LLM_ACCOUNTS_RATE_LIMITS is invalid: "models".0."limit" must be above 0/,
    ],
    ['{"model":10}', /LLM_ACCOUNTS_RATE_LIMITS is invalid: "model" is not an operation name \(api-key\/create, /],
    ["{not json", /LLM_ACCOUNTS_RATE_LIMITS is invalid: is not JSON; it must be "off", or a JSON object/],
  ])("LLM_ACCOUNTS_RATE_LIMITS=%s is a ConfigurationError naming the setting", (raw, message) => {
    const thrown = (() => {
      try {
        resolveWith({ LLM_ACCOUNTS_RATE_LIMITS: raw });
      } catch (err) {
        return err;
      }
    })();
    expect(thrown).toBeInstanceOf(ConfigurationError);
    expect((thrown as Error).message).toMatch(message);
  });

  test("the window must be a positive number of milliseconds; the stack config is named when it gave the value", () => {
    expect(() => resolveWith({ LLM_ACCOUNTS_RATE_WINDOW_MS: "soon" })).toThrow(
      /LLM_ACCOUNTS_RATE_WINDOW_MS is invalid: must be a number/,
    );
    expect(() => resolveWith({ LLM_ACCOUNTS_RATE_WINDOW_MS: "0" })).toThrow(/must be above 0/);
    expect(() => resolveWith({}, { rateLimits: '{"models":0}' })).toThrow(
      /the stack config llm-accounts:rateLimits is invalid/,
    );
  });

  test("valid settings: off, limits by operation (a number or a list), a scaled window", () => {
    expect(resolveWith({ LLM_ACCOUNTS_RATE_LIMITS: "off" }).rateLimits).toBe(false);
    expect(
      resolveWith({
        LLM_ACCOUNTS_RATE_LIMITS: '{"models":120,"usage/summary":[{"limit":5,"windowMs":1000}]}',
        LLM_ACCOUNTS_RATE_WINDOW_MS: "600",
      }).rateLimits,
    ).toEqual({
      windowMs: 600,
      perOperation: { models: 120, "usage/summary": [{ limit: 5, windowMs: 1000 }] },
    });
  });

  test("limits given in code are checked as well: a limit of 0 would wait forever", () => {
    expect(
      () => new LlmAccountsClient({ baseUrl: BASE.LLM_ACCOUNTS_BASE_URL, rateLimits: { perOperation: { models: 0 } } }),
    ).toThrow(/rateLimits option is invalid: "perOperation"."models" must be above 0/);
  });
});

describe("a bad setting fails before anything is sent", () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await emulator({ rateLimits: false });
  });
  afterAll(async () => {
    setStackConfig({});
    await emu.close();
  });

  test.each(['{"api-key/create":"abc"}', '{"api-key/create":0}'])(
    "create with rateLimits %s: a ConfigurationError and no request",
    async (raw) => {
      setStackConfig({ baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey, rateLimits: raw });
      const created = apiKey.create({ alias: "a", enabled: true, securityConfig: {} });
      const outcome = await Promise.race([
        created.then(
          () => "created",
          (e: unknown) => e,
        ),
        new Promise((r) => setTimeout(() => r("hung"), 2_000).unref()),
      ]);
      expect(outcome).toBeInstanceOf(ConfigurationError);
      expect((outcome as Error).message).toMatch(
        /the stack config llm-accounts:rateLimits is invalid: "api-key\/create" must be/,
      );
      expect(calls(emu)).toEqual({});
    },
  );
});

describe("readStackConfig", () => {
  test("reads every llm-accounts: setting by its full key and names it by its short one; other keys are not read", () => {
    const asked: string[] = [];
    const config = readStackConfig((key) => {
      asked.push(key);
      return { "llm-accounts:baseUrl": "https://api.example.com", "llm-accounts:rateLimits": "off", "aws:region": "x" }[
        key
      ];
    });
    expect(config).toEqual({ baseUrl: "https://api.example.com", rateLimits: "off" });
    expect(asked.every((k) => k.startsWith("llm-accounts:"))).toBe(true);
    expect(asked.map((k) => k.slice("llm-accounts:".length)).sort()).toEqual(
      Object.values(SETTINGS)
        .map((s) => s.key)
        .sort(),
    );
  });
});
