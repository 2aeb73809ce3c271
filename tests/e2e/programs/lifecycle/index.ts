import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

const config = new pulumi.Config();

const key = new llm.ApiKey("key", {
  alias: config.get("alias") ?? "lifecycle",
  enabled: config.getBoolean("enabled") ?? true,
  securityConfig: {
    // An IP allow-list only when the stack config names one (tests/e2e/readings.test.ts, normalised-values).
    ...(config.getObject<string[]>("ips") ? { ip: { allow: config.getObject<string[]>("ips")! } } : {}),
    geo: { countries: config.getObject<string[]>("countries") ?? ["SG"] },
    spendLimit: { monthly: config.getNumber("monthly") ?? 100 },
  },
});

const team = new llm.SubAccountBatch("team", {
  alias: config.get("teamAlias") ?? "team",
  balance: config.getNumber("balance") ?? 10,
  count: config.getNumber("count") ?? 2,
  modelPricing: [{ model: "model-a", pricingFactor: 1.5 }],
});

const extra = Array.from(
  { length: config.getNumber("extraKeys") ?? 0 },
  (_, i) => new llm.ApiKey(`extra-${i}`, { alias: `extra-${i}` }),
);

export const keyHint = key.keyHint;
export const apiKey = key.key;
export const enabled = key.enabled;
export const alias = key.alias;
export const tokens = team.tokens;
export const teamCount = team.count;
export const extraKeys = extra.length;
