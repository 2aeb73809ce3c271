import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

// The program `npm run demo` runs against the built-in emulator; it runs as well against the real platform.
const config = new pulumi.Config();
const prefix = config.get("prefix") ?? "demo";

// A key usable only from Singapore and one address range, capped at 100 a month.
const key = new llm.ApiKey("demo", {
  alias: `${prefix}-key`,
  securityConfig: {
    ip: { allow: ["203.0.113.0/24"] },
    geo: { countries: ["SG"] },
    spendLimit: { monthly: 100 },
  },
});

// Two sub-accounts with a virtual balance of 10 each, allowed the two cheapest chat models.
const chatModels = llm.getModelsOutput({ category: "chat" }).models;
const modelPricing = chatModels.apply((models) =>
  [...models]
    .sort(
      (a, b) => Number(a.pricing.textInputPrice) - Number(b.pricing.textInputPrice) || a.model.localeCompare(b.model),
    )
    .slice(0, 2)
    .map((m, i) => ({ model: m.model, pricingFactor: i === 0 ? 1 : 1.5 })),
);
const team = new llm.SubAccountBatch("demo-team", { alias: `${prefix}-team`, balance: 10, count: 2, modelPricing });

export const keyHint = key.keyHint;
/** Secret: `pulumi stack output apiKey --show-secrets`. */
export const apiKey = key.key;
export const keySecurityConfig = key.securityConfig;
export const subAccountIds = pulumi.unsecret(team.subAccounts.apply((list) => list.map((s) => s.id)));
/** Secret: the sub-account keys. */
export const subAccountTokens = team.tokens;
export const subAccountPricing = team.modelPricing;
export const chatModelPrices = chatModels.apply((models) =>
  Object.fromEntries(models.map((m) => [m.model, `${m.pricing.textInputPrice} in / ${m.pricing.textOutputPrice} out`])),
);
export const balance = llm.getBalanceOutput().balance;
