import { describe, expect, test } from "@jest/globals";
import type {
  PolicyResource,
  ReportViolation,
  ResourceValidation,
  ResourceValidationArgs,
  ResourceValidationPolicy,
  StackValidationArgs,
  StackValidationPolicy,
} from "@pulumi/policy";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { llmAccountsPolicies, POLICY_DOCS_URL, RESOURCE_TYPES, RULES } from "../../provider/policy/index.js";
import { configSchema, parseOptions } from "../../provider/policy/rules.js";
import { batchFromLive, keyFromLive } from "../../provider/policy/subjects.js";

/** The rule of that name, or undefined. */
function ruleNamed(name: string): (typeof RULES)[number] | undefined {
  return RULES.find((r) => r.name === name);
}

// @pulumi/policy's own proxy, the way policies receive properties: a read of a value not known yet throws.
const require = createRequire(import.meta.url);
const proxy = require("@pulumi/policy/proxy") as {
  unknownCheckingProxy<T extends object>(o: T): T;
  unknownStringValue: string;
  unknownNumberValue: string;
  unknownObjectValue: string;
  unknownArrayValue: string;
};

const KEY = RESOURCE_TYPES.ApiKey;
const BATCH = RESOURCE_TYPES.SubAccountBatch;
const SECRET = "sk-adopted0123456789abcdefABCDEF";

const policies = llmAccountsPolicies();
const policy = (name: string) => policies.find((p) => p.name === name)!;
/** The options among `config` that the rule takes (each rule refuses options it does not know). */
const own = (name: string, config: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(config).filter(([k]) => k in policy(name).configSchema!.properties));

/** Runs a resource policy the way @pulumi/policy does; the messages it reports. */
function check(
  name: string,
  type: string,
  props: Record<string, unknown>,
  config: object = {},
  resource = "r",
): string[] {
  const messages: string[] = [];
  const report: ReportViolation = (m) => void messages.push(m);
  const args = {
    type,
    name: resource,
    urn: `urn:${resource}`,
    props: proxy.unknownCheckingProxy(props),
    getConfig: () => config,
  } as unknown as ResourceValidationArgs;
  void ((policy(name) as ResourceValidationPolicy).validateResource as ResourceValidation)(args, report);
  return messages;
}

/** Runs a stack policy over resources; the messages with the URN each names. */
function checkStack(
  name: string,
  resources: { type: string; name: string; props: Record<string, unknown> }[],
  config: object = {},
): { message: string; urn?: string }[] {
  const out: { message: string; urn?: string }[] = [];
  const report: ReportViolation = (message, urn) => void out.push({ message, urn });
  const rs = resources.map((r) => ({
    ...r,
    urn: `urn:${r.name}`,
    props: proxy.unknownCheckingProxy(r.props),
  })) as unknown as PolicyResource[];
  void (policy(name) as StackValidationPolicy).validateStack(
    { resources: rs, getConfig: () => config } as unknown as StackValidationArgs,
    report,
  );
  return out;
}

const restricted = {
  alias: "ci",
  enabled: true,
  securityConfig: {
    ip: { allow: ["10.1.2.3", "10.2.0.0/16"] },
    spendLimit: { monthly: 100 },
    geo: { countries: ["SG"] },
    models: { mode: "model", items: ["model-a"] },
  },
  rotation: { everyDays: 30, overlapHours: 24 },
};
const open = { alias: "open", enabled: true, securityConfig: {} };
const batch = { alias: "team", balance: 10, count: 3, modelPricing: [{ model: "model-a", pricingFactor: 1.5 }] };

describe("every rule: a compliant and a violating case, messages naming resource, property path and rule", () => {
  test("api-key-ip-allowlist: set, and every entry inside allowedRanges", () => {
    const config = { allowedRanges: ["10.0.0.0/8"] };
    expect(check("api-key-ip-allowlist", KEY, restricted, config)).toEqual([]);
    expect(check("api-key-ip-allowlist", KEY, open, config, "ci")).toEqual([
      'ApiKey "ci": securityConfig.ip.allow is not set: the key can be used from any IP address (api-key-ip-allowlist)',
    ]);
    const wide = {
      ...restricted,
      securityConfig: { ip: { allow: ["10.1.2.3", "0.0.0.0/0", "10.0.0.0/7", "2001:db8::1"] } },
    };
    expect(check("api-key-ip-allowlist", KEY, wide, config, "ci")).toEqual([
      'ApiKey "ci": securityConfig.ip.allow[1] "0.0.0.0/0" is outside allowedRanges ("10.0.0.0/8") (api-key-ip-allowlist)',
      'ApiKey "ci": securityConfig.ip.allow[2] "10.0.0.0/7" is outside allowedRanges ("10.0.0.0/8") (api-key-ip-allowlist)',
      'ApiKey "ci": securityConfig.ip.allow[3] "2001:db8::1" is outside allowedRanges ("10.0.0.0/8") (api-key-ip-allowlist)',
    ]);
    expect(check("api-key-ip-allowlist", KEY, { ...open, securityConfig: { ip: { allow: [] } } }, {}, "ci")).toEqual([
      'ApiKey "ci": securityConfig.ip.allow is empty: the key can be used from any IP address (api-key-ip-allowlist)',
    ]);
  });

  test("api-key-spend-limit: set, at most maxMonthly", () => {
    expect(check("api-key-spend-limit", KEY, restricted, { maxMonthly: 100 })).toEqual([]);
    expect(check("api-key-spend-limit", KEY, open, {}, "ci")).toEqual([
      `ApiKey "ci": securityConfig.spendLimit.monthly is not set: the key's monthly spend is unlimited (api-key-spend-limit)`,
    ]);
    expect(check("api-key-spend-limit", KEY, restricted, { maxMonthly: 99.5 }, "ci")).toEqual([
      'ApiKey "ci": securityConfig.spendLimit.monthly 100 is above maxMonthly 99.5 (api-key-spend-limit)',
    ]);
  });

  test("api-key-models and api-key-geo: set, only approved entries", () => {
    expect(check("api-key-models", KEY, restricted, { approvedModels: ["model-a"] })).toEqual([]);
    expect(check("api-key-models", KEY, restricted, { approvedModels: ["model-b"] }, "ci")).toEqual([
      'ApiKey "ci": securityConfig.models.items[0] "model-a" is not in approvedModels ("model-b") (api-key-models)',
    ]);
    expect(check("api-key-models", KEY, open, {}, "ci")).toEqual([
      'ApiKey "ci": securityConfig.models.items is not set: the key may call every model (api-key-models)',
    ]);
    expect(check("api-key-geo", KEY, restricted, { approvedCountries: ["SG", "CN"] })).toEqual([]);
    expect(check("api-key-geo", KEY, restricted, { approvedCountries: ["CN"] }, "ci")).toEqual([
      'ApiKey "ci": securityConfig.geo.countries[0] "SG" is not in approvedCountries ("CN") (api-key-geo)',
    ]);
    expect(check("api-key-geo", KEY, open, {}, "ci")).toEqual([
      'ApiKey "ci": securityConfig.geo.countries is not set: the key can be used from any country (api-key-geo)',
    ]);
  });

  test("api-key-rotation: everyDays set, at most maxAgeDays, overlap at least minOverlapHours (0 when not given)", () => {
    expect(check("api-key-rotation", KEY, restricted, { maxAgeDays: 30, minOverlapHours: 24 })).toEqual([]);
    expect(check("api-key-rotation", KEY, open, {}, "ci")).toEqual([
      'ApiKey "ci": rotation.everyDays is not set: the key is never rotated by age (api-key-rotation)',
    ]);
    expect(
      check(
        "api-key-rotation",
        KEY,
        { ...restricted, rotation: { everyDays: 120 } },
        { maxAgeDays: 90, minOverlapHours: 1 },
        "ci",
      ),
    ).toEqual([
      'ApiKey "ci": rotation.everyDays 120 is above maxAgeDays 90 (api-key-rotation)',
      'ApiKey "ci": rotation.overlapHours 0 is below minOverlapHours 1: clients get no time to switch keys (api-key-rotation)',
    ]);
  });

  test("sub-account-pricing-floor: every factor at least minFactor, 1 by default; deprecated autoFollowing counts as 1", () => {
    expect(check("sub-account-pricing-floor", BATCH, batch)).toEqual([]);
    expect(
      check(
        "sub-account-pricing-floor",
        BATCH,
        { ...batch, modelPricing: [{ model: "model-b", autoFollowing: true }] },
        { minFactor: 1 },
      ),
    ).toEqual([]);
    const cheap = {
      ...batch,
      modelPricing: [
        { model: "model-a", pricingFactor: 1.5 },
        { model: "model-b", pricingFactor: 0.8 },
      ],
    };
    expect(check("sub-account-pricing-floor", BATCH, cheap, {}, "team")).toEqual([
      'SubAccountBatch "team": modelPricing[1].pricingFactor 0.8 for "model-b" is below minFactor 1 (sub-account-pricing-floor)',
    ]);
    expect(check("sub-account-pricing-floor", BATCH, batch, { minFactor: 2 }, "team")).toHaveLength(1);
  });

  test("sub-account-models: every priced model approved; nothing to check without approvedModels", () => {
    expect(check("sub-account-models", BATCH, batch, { approvedModels: ["model-a"] })).toEqual([]);
    expect(check("sub-account-models", BATCH, batch)).toEqual([]);
    expect(check("sub-account-models", BATCH, batch, { approvedModels: ["model-b"] }, "team")).toEqual([
      'SubAccountBatch "team": modelPricing[0].model "model-a" is not in approvedModels ("model-b") (sub-account-models)',
    ]);
  });

  test("sub-account-balance: the batch's balance at most maxBalance", () => {
    expect(check("sub-account-balance", BATCH, batch, { maxBalance: 10 })).toEqual([]);
    expect(check("sub-account-balance", BATCH, batch, { maxBalance: 9 }, "team")).toEqual([
      'SubAccountBatch "team": balance 10 is above maxBalance 9 (sub-account-balance)',
    ]);
  });
});

describe("resource rules are marked with their type, so @pulumi/policy skips other resources cheaply", () => {
  // @pulumi/policy's server reads this mark before it deserializes a resource's properties for a policy: a
  // resource of another type is answered "not applicable" without that work (see provider/policy/pack.ts).
  const { getPulumiType } = require("@pulumi/policy/policy") as { getPulumiType(o: unknown): string | undefined };

  test.each(RULES.filter((r) => r.scope !== "stack").map((r) => [r.name, r.scope] as const))(
    "%s is marked %s",
    (name, scope) => {
      const p = policy(name) as ResourceValidationPolicy;
      expect(getPulumiType(p.validateResource)).toBe(RESOURCE_TYPES[scope as "ApiKey" | "SubAccountBatch"]);
    },
  );

  test("a resource of another type still reports nothing when a server calls the rule anyway", () => {
    expect(
      check(
        "api-key-spend-limit",
        "pulumi-nodejs:dynamic/other:ApiKey",
        { ...open, securityConfig: { spendLimit: { monthly: 10_000 } } },
        { maxMonthly: 1 },
      ),
    ).toEqual([]);
  });
});

describe("stack rules see every resource of the package, and only those", () => {
  const resources = [
    { type: BATCH, name: "a", props: { ...batch, balance: 100, count: 3 } },
    { type: BATCH, name: "b", props: { ...batch, balance: 50, count: 2 } },
    { type: "aws:s3/bucket:Bucket", name: "not-ours", props: { balance: 1_000_000, count: 10 } },
    { type: KEY, name: "k1", props: { ...open, alias: "shared" } },
    { type: KEY, name: "k2", props: { ...open, alias: "unique" } },
    { type: KEY, name: "k3", props: { ...open, alias: "shared" } },
    { type: "pulumi-nodejs:dynamic/other:ApiKey", name: "k4", props: { ...open, alias: "shared" } },
  ];

  test("account-budget: count x balance summed over the batches (3 x 100 + 2 x 50 = 400)", () => {
    expect(checkStack("account-budget", resources, { maxTotalBalance: 400 })).toEqual([]);
    expect(checkStack("account-budget", resources, { maxTotalBalance: 399 })).toEqual([
      {
        message:
          "the stack: count x balance of 5 sub-accounts in 2 batches comes to 400, above maxTotalBalance 399 (account-budget)",
        urn: undefined,
      },
    ]);
  });

  test("account-budget: money is summed in the platform's six-place decimals, exactly (3 x 0.1 is 0.3)", () => {
    const tenths = [{ type: BATCH, name: "t", props: { ...batch, balance: 0.1, count: 3 } }];
    expect(checkStack("account-budget", tenths, { maxTotalBalance: 0.3 })).toEqual([]);
    expect(checkStack("account-budget", tenths, { maxTotalBalance: 0.299999 })).toEqual([
      {
        message:
          "the stack: count x balance of 3 sub-accounts in 1 batch comes to 0.3, above maxTotalBalance 0.299999 (account-budget)",
        urn: undefined,
      },
    ]);
    const mixed = [
      { type: BATCH, name: "a", props: { ...batch, balance: 1.1, count: 1 } },
      { type: BATCH, name: "b", props: { ...batch, balance: 2.2, count: 1 } },
    ];
    expect(checkStack("account-budget", mixed, { maxTotalBalance: 3.3 })).toEqual([]);
    // The platform keeps six places: a balance past them counts as the platform will hold it.
    const fine = [{ type: BATCH, name: "f", props: { ...batch, balance: 1.0000004, count: 2 } }];
    expect(checkStack("account-budget", fine, { maxTotalBalance: 2 })).toEqual([]);
  });

  test("a finding about the whole stack names the stack's own resource (policy analyze cannot show one without a URN)", () => {
    const withStack = [...resources, { type: "pulumi:pulumi:Stack", name: "proj-dev", props: {} }];
    expect(checkStack("account-budget", withStack, { maxTotalBalance: 399 })).toEqual([
      {
        message:
          "the stack: count x balance of 5 sub-accounts in 2 batches comes to 400, above maxTotalBalance 399 (account-budget)",
        urn: "urn:proj-dev",
      },
    ]);
    // A finding about one resource keeps that resource's URN.
    expect(checkStack("api-key-unique-aliases", withStack).map((f) => f.urn)).toEqual(["urn:k1", "urn:k3"]);
  });

  test("api-key-unique-aliases: each key sharing an alias is reported by its URN; batches may share aliases", () => {
    expect(checkStack("api-key-unique-aliases", resources)).toEqual([
      {
        message: 'ApiKey "k1": alias "shared" is also the alias of ApiKey "k3" (api-key-unique-aliases)',
        urn: "urn:k1",
      },
      {
        message: 'ApiKey "k3": alias "shared" is also the alias of ApiKey "k1" (api-key-unique-aliases)',
        urn: "urn:k3",
      },
    ]);
    expect(
      checkStack(
        "api-key-unique-aliases",
        resources.filter((r) => r.name !== "k3"),
      ),
    ).toEqual([]);
  });

  test("resources are recognised by type token, never by shape", () => {
    expect(check("sub-account-balance", "aws:s3/bucket:Bucket", batch, { maxBalance: 1 })).toEqual([]);
    expect(check("api-key-spend-limit", "pulumi-nodejs:dynamic/other:ApiKey", open)).toEqual([]);
  });
});

describe("values not known at preview are never violations", () => {
  test("an unknown security config, limit, list entry or alias: no finding, no throw", () => {
    const unknownConfig = {
      alias: "ci",
      enabled: true,
      securityConfig: proxy.unknownObjectValue,
      rotation: proxy.unknownObjectValue,
    };
    for (const p of policies.filter((p) => "validateResource" in p)) {
      expect(
        check(
          p.name,
          KEY,
          unknownConfig,
          own(p.name, {
            maxMonthly: 1,
            approvedModels: [],
            approvedCountries: [],
            allowedRanges: ["10.0.0.0/8"],
            maxAgeDays: 1,
          }),
        ),
      ).toEqual([]);
    }
    const partly = {
      ...restricted,
      securityConfig: {
        ip: { allow: ["10.1.2.3", proxy.unknownStringValue] },
        spendLimit: { monthly: proxy.unknownNumberValue },
        models: { mode: "model", items: proxy.unknownArrayValue },
      },
      rotation: { everyDays: proxy.unknownNumberValue },
    };
    expect(check("api-key-ip-allowlist", KEY, partly, { allowedRanges: ["10.0.0.0/8"] })).toEqual([]);
    expect(check("api-key-spend-limit", KEY, partly, { maxMonthly: 1 })).toEqual([]);
    expect(check("api-key-models", KEY, partly, { approvedModels: ["x"] })).toEqual([]);
    expect(check("api-key-rotation", KEY, partly, { maxAgeDays: 1 })).toEqual([]);
  });

  test("unknown pricing, balance or count: no finding; a known part of the budget above it still is one", () => {
    const unknownBatch = {
      alias: "team",
      balance: proxy.unknownNumberValue,
      count: 3,
      modelPricing: [{ model: proxy.unknownStringValue, pricingFactor: proxy.unknownNumberValue }],
    };
    expect(check("sub-account-pricing-floor", BATCH, unknownBatch, { minFactor: 5 })).toEqual([]);
    expect(check("sub-account-models", BATCH, unknownBatch, { approvedModels: [] })).toEqual([]);
    expect(check("sub-account-balance", BATCH, unknownBatch, { maxBalance: 0 })).toEqual([]);
    const stack = [
      { type: BATCH, name: "known", props: { ...batch, balance: 100, count: 3 } },
      { type: BATCH, name: "later", props: unknownBatch },
    ];
    expect(checkStack("account-budget", stack, { maxTotalBalance: 300 })).toEqual([]);
    expect(checkStack("account-budget", stack, { maxTotalBalance: 299 })).toHaveLength(1);
    const aliases = [
      { type: KEY, name: "k1", props: { ...open, alias: proxy.unknownStringValue } },
      { type: KEY, name: "k2", props: { ...open, alias: proxy.unknownStringValue } },
    ];
    expect(checkStack("api-key-unique-aliases", aliases)).toEqual([]);
  });
});

describe("options: the engine validates them with each rule's configSchema; the rules refuse what it lets through", () => {
  test("every rule is advisory by default, described in one line, with a configSchema of its options", () => {
    expect(policies.map((p) => p.name)).toEqual([
      "api-key-ip-allowlist",
      "api-key-spend-limit",
      "api-key-models",
      "api-key-geo",
      "api-key-rotation",
      "sub-account-pricing-floor",
      "sub-account-models",
      "sub-account-balance",
      "account-budget",
      "api-key-unique-aliases",
    ]);
    for (const p of policies) {
      expect(p.enforcementLevel).toBe("advisory");
      expect(p.description).toMatch(/^[^\n]+\.$/);
      expect(p.configSchema).toBeDefined();
    }
    expect(policy("api-key-spend-limit").configSchema!.properties.maxMonthly).toMatchObject({
      type: "number",
      minimum: 0,
    });
    expect(policy("sub-account-pricing-floor").configSchema!.properties.minFactor).toMatchObject({
      type: "number",
      exclusiveMinimum: 0,
      default: 1,
    });
    expect(policy("api-key-ip-allowlist").configSchema!.properties.allowedRanges).toMatchObject({
      type: "array",
      items: { type: "string" },
    });
    expect(configSchema(ruleNamed("api-key-unique-aliases")!)).toEqual({ properties: {} });
  });

  test("every policy carries Pulumi's metadata: a severity, remediation steps, tags and a url to its own docs section", () => {
    for (const p of policies) {
      expect(["low", "medium", "high", "critical"]).toContain(p.severity);
      expect(p.remediationSteps).toMatch(/^[A-Z][^\n]+\.$/);
      expect(p.tags!.length).toBeGreaterThan(0);
      expect(p.url).toBe(`${POLICY_DOCS_URL}#${p.name}`);
    }
    expect(POLICY_DOCS_URL).toMatch(
      /^https:\/\/github\.com\/[^/]+\/pulumi-llm-accounts\/blob\/main\/docs\/guides\/policy\.md$/,
    );
    // Each url lands: the page has a heading named exactly as the rule.
    const page = readFileSync(new URL("../../docs/guides/policy.md", import.meta.url), "utf8");
    for (const p of policies) expect(page).toContain(`\n### ${p.name}\n`);
    expect(policy("api-key-spend-limit")).toMatchObject({ severity: "high", tags: ["api-key", "cost"] });
  });

  test("a wrong type, a negative cap, a bad range or an unknown option is an error naming the rule and the option", () => {
    const rule = (name: string) => ruleNamed(name)!;
    expect(() => parseOptions(rule("api-key-spend-limit"), { maxMonthly: -1 })).toThrow(
      "api-key-spend-limit: maxMonthly: must be 0 or more",
    );
    expect(() => parseOptions(rule("sub-account-balance"), { maxBalance: "100" })).toThrow(
      /^sub-account-balance: maxBalance: Invalid input: expected number, received string$/,
    );
    expect(() => parseOptions(rule("api-key-ip-allowlist"), { allowedRanges: ["10.0.0.0/33"] })).toThrow(
      "api-key-ip-allowlist: allowedRanges[0]: must be an IP address or CIDR range",
    );
    expect(() => parseOptions(rule("api-key-spend-limit"), { maxMonthy: 5 })).toThrow(
      'api-key-spend-limit: unknown option "maxMonthy" (options: maxMonthly)',
    );
    expect(() => check("api-key-spend-limit", KEY, open, { maxMonthly: -5 })).toThrow(
      "api-key-spend-limit: maxMonthly: must be 0 or more",
    );
  });
});

describe("no secret in any message", () => {
  test("adoptKey and adoptTokens (plain under the policy) appear nowhere; a key-shaped alias is masked", () => {
    const key = { ...open, alias: SECRET, adoptKey: SECRET, rotation: { everyDays: 999 } };
    const tokens = [SECRET, "sk-token00000000000000000000000"];
    const b = {
      alias: SECRET,
      balance: 1e9,
      count: 2,
      modelPricing: [{ model: SECRET, pricingFactor: 0.1 }],
      adoptTokens: tokens,
    };
    const all: string[] = [];
    const config = {
      maxMonthly: 0,
      approvedModels: ["m"],
      approvedCountries: ["CN"],
      allowedRanges: ["10.0.0.0/8"],
      maxAgeDays: 1,
      maxBalance: 0,
      minFactor: 1,
    };
    for (const p of policies) {
      if (!("validateResource" in p)) continue;
      all.push(
        ...check(p.name, KEY, key, own(p.name, config), "k"),
        ...check(p.name, BATCH, b, own(p.name, config), "b"),
      );
    }
    all.push(
      ...checkStack("api-key-unique-aliases", [
        { type: KEY, name: "a", props: key },
        { type: KEY, name: "c", props: key },
      ]).map((f) => f.message),
    );
    expect(all.length).toBeGreaterThan(5);
    for (const m of all) for (const s of tokens) expect(m).not.toContain(s);
    expect(all.join("\n")).toContain("sk-...CDEF");
  });
});

describe("live objects, as `llm-accounts audit` reads them", () => {
  test("a live key's age comes from created_at; a live group's balance is checked per sub-account", () => {
    const rotationRule = RULES.find((r) => r.name === "api-key-rotation")!;
    const now = Date.parse("2026-11-23T00:00:00Z");
    const old = keyFromLive(SECRET, { alias: "ci", securityConfig: {}, createdAt: "2026-07-01T00:00:00Z" }, now);
    expect(old.label).toBe("API key sk-...CDEF");
    expect(rotationRule.scope === "ApiKey" && rotationRule.check(old, { maxAgeDays: 90 })).toEqual([
      { object: "API key sk-...CDEF", path: "createdAt", message: "the key is 145 days old, older than maxAgeDays 90" },
    ]);
    expect(rotationRule.scope === "ApiKey" && rotationRule.check(old, { maxAgeDays: 200 })).toEqual([]);
    const group = batchFromLive([
      {
        id: 7,
        token: SECRET,
        alias: "team",
        balance: "5.000000",
        modelPricing: [{ model: "model-a", pricingFactor: 1 }],
      },
      {
        id: 9,
        token: "sk-token00000000000000000000000",
        alias: "team",
        balance: "250.500000",
        modelPricing: [{ model: "model-a", pricingFactor: 1 }],
      },
    ]);
    const balanceRule = ruleNamed("sub-account-balance")!;
    // Live balances are the platform's six-place strings: 1.1 + 2.2 is 3.3 exactly, within a cap of 3.3.
    const budgetRule = ruleNamed("account-budget")!;
    const decimals = batchFromLive([
      { id: 1, token: SECRET, alias: "d", balance: "1.100000", modelPricing: [] },
      { id: 2, token: "sk-token00000000000000000000000", alias: "d", balance: "2.200000", modelPricing: [] },
    ]);
    const scope = { label: "the account", keys: [], batches: [decimals] };
    expect(budgetRule.scope === "stack" && budgetRule.check(scope, { maxTotalBalance: 3.3 })).toEqual([]);
    expect(budgetRule.scope === "stack" && budgetRule.check(scope, { maxTotalBalance: 3.299999 })).toEqual([
      {
        object: "the account",
        path: "balance",
        message: "of 2 sub-accounts in 1 batch comes to 3.3, above maxTotalBalance 3.299999",
      },
    ]);
    expect(group.label).toBe('sub-accounts "team" (ids 7, 9)');
    expect(balanceRule.scope === "SubAccountBatch" && balanceRule.check(group, { maxBalance: 100 })).toEqual([
      { object: "sub-account 9 (sk-...0000)", path: "balance", message: "250.5 is above maxBalance 100" },
    ]);
  });
});
