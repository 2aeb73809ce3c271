import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { ConfigurationError, LlmAccountsClient, type LlmAccountsError } from "../../provider/client/index.js";
import { classify } from "../../provider/client/retry.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { apiKey, setStackConfig, subAccountBatch } from "../../provider/runtime/index.js";
import { calls, emulator } from "../support/emulator.js";

/** Row 11 of issue 14: an operation resolves only the credential it needs. */
describe("credentials resolved per operation", () => {
  let emu: Emulator;
  const connection = { adminKeyEnv: "LLM_TEST_UNSET_ADMIN_KEY_14", accountKeyEnv: "LLM_TEST_ACCOUNT_KEY_14" };
  beforeAll(async () => {
    emu = await emulator({ rateLimits: false });
    setStackConfig({ baseUrl: emu.baseUrl });
    delete process.env[connection.adminKeyEnv];
    process.env[connection.accountKeyEnv] = emu.accountKey;
  });
  afterAll(async () => {
    delete process.env[connection.accountKeyEnv];
    await emu.close();
  });

  test("a SubAccountBatch works although the admin key variable it names is unset", async () => {
    const { inputs } = await subAccountBatch.check({}, { alias: "no-admin", balance: 1, count: 2, connection });
    const { outs } = await subAccountBatch.create(inputs);
    expect(outs.tokens).toHaveLength(2);
    expect(calls(emu)).toEqual({ "sub-account/create": 1, "sub-account/edit": 1 });
  });

  test("an ApiKey with the same connection fails naming the unset variable, and sends nothing", async () => {
    emu.clearRequests();
    const { inputs } = await apiKey.check({}, { alias: "needs-admin", connection });
    await expect(apiKey.create(inputs)).rejects.toThrow(
      "the environment variable LLM_TEST_UNSET_ADMIN_KEY_14 (named by connection.adminKeyEnv) is not set",
    );
    expect(emu.requests()).toEqual([]);
  });
});

/** Row 11 of issue 23: a variable name that is also a property of every object reads the variable, not the property. */
describe("variable names that are prototype properties", () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await emulator({ rateLimits: false });
    setStackConfig({ baseUrl: emu.baseUrl });
  });
  afterAll(async () => emu.close());

  test.each(["__proto__", "constructor", "toString"])(
    "adminKeyEnv %s, unset: the create fails naming the variable and sends nothing",
    async (name) => {
      emu.clearRequests();
      const { inputs, failures } = await apiKey.check({}, { alias: "proto", connection: { adminKeyEnv: name } });
      expect(failures ?? []).toEqual([]);
      await expect(apiKey.create(inputs)).rejects.toThrow(
        `the environment variable ${name} (named by connection.adminKeyEnv) is not set`,
      );
      expect(emu.requests()).toEqual([]);
    },
  );

  test("accountKeyEnv constructor, set: its value is the key", async () => {
    Reflect.set(process.env, "constructor", emu.accountKey);
    try {
      const { inputs } = await subAccountBatch.check(
        {},
        { alias: "proto", balance: 1, count: 1, connection: { accountKeyEnv: "constructor" } },
      );
      const { outs } = await subAccountBatch.create(inputs);
      expect(outs.tokens).toHaveLength(1);
    } finally {
      Reflect.deleteProperty(process.env, "constructor");
    }
  });
});

/** Rows 5 and 13 of issue 23: credentials a request cannot carry, and a base URL that is not one. */
describe("credentials HTTP cannot carry; base URLs that are not URLs", () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await emulator({ rateLimits: false });
  });
  afterAll(async () => {
    setStackConfig({});
    await emu.close();
  });

  test("a key variable written by echo (trailing newline) works: outer whitespace is dropped", async () => {
    setStackConfig({ baseUrl: emu.baseUrl });
    const connection = { adminKeyEnv: "LLM_TEST_ECHOED_ADMIN_KEY_23" };
    process.env[connection.adminKeyEnv] = `${emu.adminKey}\n`;
    try {
      const { inputs } = await apiKey.check({}, { alias: "echoed", connection });
      const { outs } = await apiKey.create(inputs);
      expect(emu.state.hasKey(outs.key)).toBe(true);
    } finally {
      delete process.env[connection.adminKeyEnv];
    }
  });

  test("a key with a line break inside or a non-Latin-1 character: a ConfigurationError naming the variable, nothing sent, no doubt", async () => {
    setStackConfig({ baseUrl: emu.baseUrl });
    const connection = { adminKeyEnv: "LLM_TEST_BAD_ADMIN_KEY_23", accountKeyEnv: "LLM_TEST_BAD_ACCOUNT_KEY_23" };
    process.env[connection.adminKeyEnv] = `${emu.adminKey.slice(0, -1)}ł`;
    process.env[connection.accountKeyEnv] = `${emu.accountKey}\n${emu.accountKey}`;
    emu.clearRequests();
    try {
      const key = await apiKey.check({}, { alias: "bad", connection });
      const keyError = await apiKey.create(key.inputs).catch((e: Error) => e);
      expect(keyError).toBeInstanceOf(ConfigurationError);
      expect((keyError as Error).message).toBe(
        "the environment variable LLM_TEST_BAD_ADMIN_KEY_23 (named by connection.adminKeyEnv) does not hold a key: it must hold only letters, digits and - . _ ~ + / = (no space, line break or other character)",
      );
      const batch = await subAccountBatch.check({}, { alias: "bad", balance: 1, count: 1, connection });
      const batchError = await subAccountBatch.create(batch.inputs).catch((e: Error) => e);
      expect(batchError).toBeInstanceOf(ConfigurationError);
      expect((batchError as Error).message).toContain(
        "LLM_TEST_BAD_ACCOUNT_KEY_23 (named by connection.accountKeyEnv) does not hold a key",
      );
      for (const err of [keyError, batchError] as LlmAccountsError[]) {
        expect(err.message).not.toContain("may have been created");
        expect(err.mayHaveSucceeded).toBeFalsy();
        expect(err.message).not.toContain(emu.accountKey.slice(3));
      }
      expect(emu.requests()).toEqual([]);
    } finally {
      delete process.env[connection.adminKeyEnv];
      delete process.env[connection.accountKeyEnv];
    }
  });

  test("a key given in code that HTTP cannot carry fails before sending, without 'may have been created'", async () => {
    emu.clearRequests();
    const client = new LlmAccountsClient({
      baseUrl: emu.baseUrl,
      adminKey: `${emu.adminKey}\n`,
      accountKey: `${emu.accountKey.slice(0, -1)}ł`,
    });
    for (const attempt of [
      () => client.apiKeys.create({ alias: "x" }),
      () => client.subAccounts.create({ alias: "x", balance: 1, count: 1, modelPricing: [] }),
    ]) {
      const err = (await attempt().catch((e: unknown) => e)) as LlmAccountsError;
      expect(err).toBeInstanceOf(ConfigurationError);
      expect(err.message).toMatch(/^the (admin|main account) key given must hold only letters, digits/);
      expect(err.mayHaveSucceeded).toBeFalsy();
    }
    expect(emu.requests()).toEqual([]);
  });

  test("a network error raised while the request is built is not 'sent'", () => {
    expect(classify({ code: "ERR_INVALID_CHAR", handshakeIncomplete: false })).toEqual({
      sent: false,
      transient: false,
      tls: false,
    });
  });

  test("a base URL that is not a URL (a token pasted there) is not echoed", async () => {
    const token = "ghp_SecretTokenSecretToken123";
    setStackConfig({ baseUrl: token });
    const { inputs } = await apiKey.check({}, { alias: "url" });
    const err = (await apiKey.create(inputs).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain("base URL is not a URL");
    expect(err.message).not.toContain("SecretToken");
    expect(() => new LlmAccountsClient({ baseUrl: "hunter2 password" })).toThrow(
      /^base URL is not a URL \(its 16 characters are not shown\)/,
    );
  });
});
