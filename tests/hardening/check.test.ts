import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { ALIAS_MAX_LENGTH } from "../../provider/api/assumptions.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { apiKey, subAccountBatch } from "../../provider/runtime/index.js";
import { clientOf, emulator } from "../support/emulator.js";

const key = "sk-" + "q".repeat(40) + "K3Y9";
const hugeAlias = "a".repeat(1_000_000);

/** Row 1 of issue 14 at preview and in the client: the same caps as the emulator, before any request. */
describe("field caps before any request", () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await emulator({ rateLimits: false });
  });
  afterAll(async () => emu.close());

  test("check() names alias, with a short reason, for a 1,000,000-character alias", async () => {
    for (const check of [apiKey.check, subAccountBatch.check]) {
      const { failures } = await check({}, { alias: hugeAlias, balance: 1, count: 1 });
      expect(failures).toHaveLength(1);
      expect(failures[0].property).toBe("alias");
      expect(failures[0].reason).toContain(`must be at most ${ALIAS_MAX_LENGTH} characters`);
      expect(failures[0].reason.length).toBeLessThan(200);
    }
  });

  test("check() names the list over its cap", async () => {
    const { failures } = await apiKey.check(
      {},
      { alias: "a", securityConfig: { ip: { allow: Array(201).fill("10.0.0.1") } } },
    );
    expect(failures.map((f) => f.property)).toEqual(["securityConfig.ip.allow"]);
    const sub = await subAccountBatch.check(
      {},
      {
        alias: "a",
        balance: 1,
        count: 1,
        modelPricing: Array.from({ length: 201 }, (_, i) => ({ model: `m${i}`, pricingFactor: 1 })),
      },
    );
    expect(sub.failures.map((f) => f.property)).toEqual(["modelPricing"]);
  });

  test("the client refuses an over-cap request without sending it", async () => {
    const client = clientOf(emu);
    await expect(client.subAccounts.create({ alias: hugeAlias, balance: 1, count: 100 })).rejects.toThrow(
      /alias: must be at most 128 characters/,
    );
    await expect(
      client.apiKeys.create({ alias: "k", securityConfig: { models: { mode: "model", items: ["m".repeat(129)] } } }),
    ).rejects.toThrow(/security_config\.models\.items\[0\]: must be at most 128 characters/);
    expect(emu.requests()).toEqual([]);
  });
});

/** Row 12 of issue 14: key-shaped values in plain fields fail check (masked); property names are redacted. */
describe("keys in plain fields", () => {
  test.each([
    [apiKey.check, { alias: key }, "alias"],
    [apiKey.check, { alias: `team ${key}` }, "alias"],
    [
      apiKey.check,
      { alias: "a", securityConfig: { models: { mode: "model", items: ["gpt", key] } } },
      "securityConfig.models.items[1]",
    ],
    [subAccountBatch.check, { alias: key, balance: 1, count: 1 }, "alias"],
    [
      subAccountBatch.check,
      { alias: "a", balance: 1, count: 1, modelPricing: [{ model: key, pricingFactor: 1 }] },
      "modelPricing[0].model",
    ],
  ])("case %# fails at its field, masked", async (check, news, property) => {
    const { failures } = await check({}, news);
    expect(failures.map((f) => f.property)).toContain(property);
    const text = JSON.stringify(failures);
    expect(text).not.toContain(key);
    expect(text).toContain("sk-...K3Y9");
    expect(text).toContain("looks like a key");
  });

  test("a key past the quoted part of a long alias shows no part of the key but its masked form", async () => {
    // The quote is cut at 60 characters; a key starting just before the cut must be masked before it is cut.
    for (const start of [50, 54, 57, 58, 59]) {
      const alias = "x".repeat(start) + " " + key;
      const { failures } = await apiKey.check({}, { alias });
      const text = JSON.stringify(failures);
      for (let i = 3; i + 4 <= key.length - 4; i++) expect(text).not.toContain(key.slice(i, i + 4));
    }
  });

  test("an alias that merely contains sk- or describes a prefix passes", async () => {
    for (const alias of ["task-runner", "disk-cleanup-job", "uses sk-admin- keys"]) {
      expect((await apiKey.check({}, { alias })).failures).toEqual([]);
    }
  });

  test("a key given as a property name under connection is redacted in the failure", async () => {
    const { failures } = await apiKey.check({}, { alias: "a", connection: { [key]: "x" } });
    expect(failures).toHaveLength(1);
    expect(JSON.stringify(failures)).not.toContain(key);
    expect(failures[0].property).toBe("connection.sk-...K3Y9");
  });
});
