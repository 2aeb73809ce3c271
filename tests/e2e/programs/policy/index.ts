import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

const config = new pulumi.Config();

// Created by the program: its monthly limit comes from the config.
new llm.ApiKey("ci", {
  alias: "ci",
  securityConfig: {
    ip: { allow: ["10.1.2.3"] },
    spendLimit: { monthly: config.requireNumber("monthly") },
    geo: { countries: ["SG"] },
    models: { mode: "model", items: ["model-a"] },
  },
  rotation: { everyDays: 30, overlapHours: 24 },
});

// Made elsewhere and adopted: the key and the tokens are secrets of the stack config.
new llm.ApiKey("legacy", {
  alias: "legacy",
  adoptKey: config.requireSecret("legacyKey"),
  securityConfig: {
    ip: { allow: ["10.9.0.0/16"] },
    spendLimit: { monthly: 50 },
    geo: { countries: ["CN"] },
    models: { mode: "model", items: ["model-b"] },
  },
  rotation: { everyDays: 60, overlapHours: 48 },
});

new llm.SubAccountBatch("team", {
  alias: "team",
  balance: config.requireNumber("balance"),
  count: 3,
  modelPricing: [{ model: "model-a", pricingFactor: 1.5 }],
  adoptTokens: config.requireSecretObject<string[]>("teamTokens"),
});
