import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
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
    expect(calls(emu)).toEqual({ "sub-account/create": 1 });
  });

  test("an ApiKey with the same connection fails naming the unset variable, and sends nothing", async () => {
    emu.clearRequests();
    const { inputs } = await apiKey.check({}, { alias: "needs-admin", connection });
    await expect(apiKey.create(inputs)).rejects.toThrow("the environment variable LLM_TEST_UNSET_ADMIN_KEY_14 (named by connection.adminKeyEnv) is not set");
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

  test.each(["__proto__", "constructor", "toString"])("adminKeyEnv %s, unset: the create fails naming the variable and sends nothing", async (name) => {
    emu.clearRequests();
    const { inputs, failures } = await apiKey.check({}, { alias: "proto", connection: { adminKeyEnv: name } });
    expect(failures ?? []).toEqual([]);
    await expect(apiKey.create(inputs)).rejects.toThrow(`the environment variable ${name} (named by connection.adminKeyEnv) is not set`);
    expect(emu.requests()).toEqual([]);
  });

  test("accountKeyEnv constructor, set: its value is the key", async () => {
    Reflect.set(process.env, "constructor", emu.accountKey);
    try {
      const { inputs } = await subAccountBatch.check({}, { alias: "proto", balance: 1, count: 1, connection: { accountKeyEnv: "constructor" } });
      const { outs } = await subAccountBatch.create(inputs);
      expect(outs.tokens).toHaveLength(1);
    } finally {
      Reflect.deleteProperty(process.env, "constructor");
    }
  });
});
