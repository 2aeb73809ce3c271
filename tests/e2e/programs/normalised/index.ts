import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

const config = new pulumi.Config();

// Values a platform may keep in another form: mixed case, longer than 32 characters, a factor of 4 decimals.
const key = new llm.ApiKey("key", {
  alias: config.get("alias") ?? "Deploy-Key-Of-The-Production-Cluster",
  securityConfig: { spendLimit: { monthly: 100 } },
});

const team = new llm.SubAccountBatch("team", {
  alias: config.get("teamAlias") ?? "Team-Alpha-Production-Europe-West",
  balance: 10,
  count: config.getNumber("count") ?? 2,
  modelPricing: [{ model: "model-a", pricingFactor: config.getNumber("factor") ?? 1.2345 }],
});

export const alias = key.alias;
export const tokens = team.tokens;
