import { describe, expect, test } from "@jest/globals";
import type { CheckFailure } from "../../../provider/runtime/engine/check.js";
import { apiKey, subAccountBatch, UNKNOWN } from "../../../provider/runtime/index.js";

type Props = Record<string, unknown>;

async function failuresOf(check: (olds: Props, news: Props) => Promise<{ failures: CheckFailure[] }>, news: Props) {
  const { failures } = await check({}, news);
  return failures;
}

describe("ApiKey check", () => {
  test.each([
    [{ alias: "" }, "alias"],
    [{}, "alias"],
    [{ alias: "a", enabled: "yes" }, "enabled"],
    [{ alias: "a", securityConfig: { geo: { countries: ["CN", "cn"] } } }, "securityConfig.geo.countries[1]"],
    [{ alias: "a", securityConfig: { geo: { countries: ["CHN"] } } }, "securityConfig.geo.countries[0]"],
    [{ alias: "a", securityConfig: { spendLimit: { monthly: -1 } } }, "securityConfig.spendLimit.monthly"],
    [{ alias: "a", securityConfig: { spendLimit: { monthly: "100" } } }, "securityConfig.spendLimit.monthly"],
    [{ alias: "a", securityConfig: { ip: { allow: ["300.1.1.1"] } } }, "securityConfig.ip.allow[0]"],
    [{ alias: "a", securityConfig: { ip: { allow: ["10.0.0.0/33"] } } }, "securityConfig.ip.allow[0]"],
    [{ alias: "a", securityConfig: { models: { mode: "family", items: ["m"] } } }, "securityConfig.models.mode"],
    [
      { alias: "a", securityConfig: { models: { mode: "model", items: ["m", "m"] } } },
      "securityConfig.models.items[1]",
    ],
    [{ alias: "a", securityConfig: { models: { mode: "model", items: [""] } } }, "securityConfig.models.items[0]"],
    [{ alias: "a", securityConfig: { colour: "blue" } }, "securityConfig"],
    [{ alias: "a", securityConfig: "none" }, "securityConfig"],
    [{ alias: "a", adoptKey: "sk-admin-abcdefghijkl" }, "adoptKey"],
    [{ alias: "a", adoptKey: "not-a-key" }, "adoptKey"],
    [{ alias: "a", connection: { baseUrl: "http://api.example.com" } }, "connection.baseUrl"],
    [{ alias: "a", connection: { adminKeyEnv: "sk-admin-abcdefghijklmnop" } }, "connection.adminKeyEnv"],
    [{ alias: "a", connection: { adminKey: "x" } }, "connection.adminKey"],
  ])("%j fails at %s", async (news, property) => {
    const failures = await failuresOf(apiKey.check, news as Props);
    expect(failures.map((f) => f.property)).toContain(property);
  });

  test("the reason of a country code quotes it and says what is wrong", async () => {
    const [f] = await failuresOf(apiKey.check, { alias: "a", securityConfig: { geo: { countries: ["CN", "cn"] } } });
    expect(f).toEqual({
      property: "securityConfig.geo.countries[1]",
      reason: '"cn" must be a two-letter upper-case country code',
    });
  });

  test("a duplicate model item is quoted exactly as the user wrote it: only field names become camelCase", async () => {
    const failures = await failuresOf(apiKey.check, {
      alias: "a",
      securityConfig: { models: { mode: "model", items: ["gpt_4o_mini", "gpt_4o_mini"] } },
    });
    expect(failures).toEqual([
      { property: "securityConfig.models.items[1]", reason: '"gpt_4o_mini" model "gpt_4o_mini" is listed twice' },
    ]);
  });

  test("a key given where an env var name belongs is never echoed", async () => {
    const key = "sk-admin-abcdefghijklmnop";
    const failures = await failuresOf(apiKey.check, {
      alias: "a",
      connection: { adminKeyEnv: key },
      adoptKey: "sk-admin-qrstuvwxyz12",
    });
    expect(JSON.stringify(failures)).not.toContain("abcdefghijklmnop");
    expect(JSON.stringify(failures)).not.toContain("qrstuvwxyz12");
  });

  test("valid input: no failure; defaults filled; IPv6 and CIDR accepted", async () => {
    const { inputs, failures } = await apiKey.check(
      {},
      {
        alias: "ok",
        securityConfig: { ip: { allow: ["2001:db8::1", "2001:db8::/32", "192.0.2.0/24"] }, spendLimit: { monthly: 0 } },
      },
    );
    expect(failures).toEqual([]);
    expect(inputs).toMatchObject({ enabled: true });
  });

  test("values not known yet (preview) pass", async () => {
    expect(
      await failuresOf(apiKey.check, { alias: UNKNOWN, enabled: UNKNOWN, securityConfig: UNKNOWN, adoptKey: UNKNOWN }),
    ).toEqual([]);
    expect(
      await failuresOf(apiKey.check, {
        alias: "a",
        securityConfig: { geo: { countries: [UNKNOWN, "SG"] }, ip: { allow: UNKNOWN } },
      }),
    ).toEqual([]);
  });

  test("an unknown security config key is named as the user wrote it, not as the wire spells it", async () => {
    const failures = await failuresOf(apiKey.check, { alias: "a", securityConfig: { ipAllow: ["192.0.2.1"] } });
    expect(failures).toEqual([{ property: "securityConfig", reason: 'Unrecognized key: "ipAllow"' }]);
  });

  test("garbage never throws: every input gives failures or passes", async () => {
    const garbage: unknown[] = [
      null,
      1,
      "x",
      [],
      [1],
      { a: 1 },
      true,
      UNKNOWN,
      { ip: null },
      { geo: { countries: null } },
    ];
    for (const alias of garbage) {
      for (const securityConfig of garbage) {
        for (const enabled of [undefined, null, "x", 1]) {
          await expect(apiKey.check({}, { alias, securityConfig, enabled, connection: alias })).resolves.toHaveProperty(
            "failures",
          );
        }
      }
    }
  });
});

describe("SubAccountBatch check", () => {
  const ok = { alias: "t", balance: 1, count: 1, modelPricing: [{ model: "m", pricingFactor: 1 }] };
  test.each([
    [{ ...ok, alias: "" }, "alias"],
    [{ ...ok, balance: -1 }, "balance"],
    [{ ...ok, balance: Number.POSITIVE_INFINITY }, "balance"],
    [{ ...ok, count: 0 }, "count"],
    [{ ...ok, count: 1.5 }, "count"],
    [{ ...ok, count: 1000 }, "count"],
    [{ ...ok, modelPricing: [{ model: "m", pricingFactor: 0 }] }, "modelPricing[0].pricingFactor"],
    [
      {
        ...ok,
        modelPricing: [
          { model: "m", pricingFactor: 1 },
          { model: "m", pricingFactor: 2 },
        ],
      },
      "modelPricing[1].model",
    ],
    [{ ...ok, modelPricing: [{ model: "m", promptPrice: 1, completionPrice: 2 }] }, "modelPricing[0].pricingFactor"],
    [{ ...ok, modelPricing: [{ model: "", pricingFactor: 1 }] }, "modelPricing[0].model"],
  ])("%j fails at %s", async (news, property) => {
    const failures = await failuresOf(subAccountBatch.check, news as Props);
    expect(failures.map((f) => f.property)).toContain(property);
  });

  test("a duplicate model keeps its snake_case name in the reason", async () => {
    const pricing = [
      { model: "my_model", pricingFactor: 1 },
      { model: "my_model", pricingFactor: 2 },
    ];
    const failures = await failuresOf(subAccountBatch.check, { ...ok, modelPricing: pricing });
    expect(failures).toEqual([
      { property: "modelPricing[1].model", reason: '"my_model" model "my_model" is listed twice' },
    ]);
  });

  test("deprecated prices without a factor tell the user to set pricingFactor", async () => {
    const [f] = await failuresOf(subAccountBatch.check, { ...ok, modelPricing: [{ model: "m", promptPrice: 1 }] });
    expect(f.reason).toMatch(/set pricing_factor|set pricingFactor/);
  });

  test("autoFollowing: true becomes pricingFactor 1; an empty list is allowed", async () => {
    const { inputs, failures } = await subAccountBatch.check(
      {},
      { ...ok, modelPricing: [{ model: "m", autoFollowing: true }] },
    );
    expect(failures).toEqual([]);
    expect(inputs.modelPricing).toEqual([{ model: "m", pricingFactor: 1 }]);
    expect((await subAccountBatch.check({}, { ...ok, modelPricing: [] })).failures).toEqual([]);
  });

  test("values not known yet pass", async () => {
    expect(
      await failuresOf(subAccountBatch.check, {
        alias: UNKNOWN,
        balance: UNKNOWN,
        count: UNKNOWN,
        modelPricing: UNKNOWN,
      }),
    ).toEqual([]);
  });
});

describe("one schema per resource", () => {
  test("every failure of a settings object is named at once, each at its own path", async () => {
    const failures = await failuresOf(apiKey.check, {
      alias: "a",
      rotation: { everyDay: 1, everyDays: 0, overlapHours: -1 },
      connection: { baseUrl: 1, adminKeyEnv: "1X" },
    });
    expect(failures.map((f) => f.property).sort()).toEqual(
      [
        "connection.adminKeyEnv",
        "connection.baseUrl",
        "rotation.everyDay",
        "rotation.everyDays",
        "rotation.overlapHours",
      ].sort(),
    );
  });

  test("the values of adoptKey, adoptTokens and connection are never shown, even when they are no key", async () => {
    const apiKeyFailures = await failuresOf(apiKey.check, {
      alias: "a",
      adoptKey: "almost-a-key-4711",
      connection: { adminKeyEnv: "almost-a-key-4712" },
    });
    const batchFailures = await failuresOf(subAccountBatch.check, {
      alias: "a",
      balance: 1,
      count: 2,
      adoptTokens: ["almost-a-key-4713", 5],
    });
    expect(apiKeyFailures.map((f) => f.property)).toEqual(["adoptKey", "connection.adminKeyEnv"]);
    expect(batchFailures.map((f) => f.property)).toEqual(["adoptTokens[0]", "adoptTokens[1]"]);
    expect(JSON.stringify([apiKeyFailures, batchFailures])).not.toMatch(/471[123]/);
  });

  test("null means not given: the inputs leave the field out, enabled defaults to true", async () => {
    const { inputs, failures } = await apiKey.check(
      {},
      { alias: "a", enabled: null, securityConfig: null, adoptKey: null, connection: null, rotation: null },
    );
    expect(failures).toEqual([]);
    expect(inputs).toEqual({ alias: "a", enabled: true, securityConfig: {} });
    const batch = await subAccountBatch.check(
      {},
      { alias: "a", balance: 1, count: 1, modelPricing: null, adoptTokens: null, connection: null },
    );
    expect(batch).toEqual({ inputs: { alias: "a", balance: 1, count: 1, modelPricing: [] }, failures: [] });
  });

  test("what the engine adds to the inputs (the serialized provider) is kept as given", async () => {
    const { inputs } = await apiKey.check({}, { alias: "a", __provider: "exports.handler = 1" });
    expect(inputs).toEqual({ alias: "a", enabled: true, securityConfig: {}, __provider: "exports.handler = 1" });
  });

  test("at preview, the fields already known get their defaults and canonical forms", async () => {
    const { inputs, failures } = await apiKey.check(
      {},
      { alias: UNKNOWN, securityConfig: { spendLimit: { monthly: 5 } }, rotation: { everyDays: UNKNOWN } },
    );
    expect(failures).toEqual([]);
    expect(inputs).toEqual({
      alias: UNKNOWN,
      enabled: true,
      securityConfig: { spendLimit: { monthly: 5 } },
      rotation: { everyDays: UNKNOWN },
    });
    const batch = await subAccountBatch.check(
      {},
      { alias: UNKNOWN, balance: 1, count: UNKNOWN, modelPricing: [{ model: "m", autoFollowing: true }] },
    );
    expect(batch).toEqual({
      inputs: { alias: UNKNOWN, balance: 1, count: UNKNOWN, modelPricing: [{ model: "m", pricingFactor: 1 }] },
      failures: [],
    });
  });
});
