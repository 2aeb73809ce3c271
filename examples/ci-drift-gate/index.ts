import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

const config = new pulumi.Config();
// Aliases are `<prefix>-app`, `<prefix>-analytics`, `<prefix>-sandbox`; by default the prefix is the stack name.
const prefix = config.get("aliasPrefix") ?? pulumi.getStack();
const appIps = config.getObject<string[]>("appIps") ?? ["203.0.113.0/24"];
const countries = config.getObject<string[]>("countries") ?? ["SG"];
const appMonthlyLimit = config.getNumber("appMonthlyLimit") ?? 500;
const analyticsOn = config.getBoolean("analyticsEnabled") ?? true;
const sandboxCount = config.getNumber("sandboxCount") ?? 1;
const sandboxBalance = config.getNumber("sandboxBalance") ?? 20;

// The production service's key: only from its egress addresses, with a spend cap.
const app = new llm.ApiKey("app", {
  alias: `${prefix}-app`,
  securityConfig: {
    ip: { allow: appIps },
    geo: { countries },
    spendLimit: { monthly: appMonthlyLimit },
  },
});

// A low-limit key for the analytics jobs, that operators may switch off from the stack config.
const analytics = new llm.ApiKey("analytics", {
  alias: `${prefix}-analytics`,
  enabled: analyticsOn,
  securityConfig: { geo: { countries }, spendLimit: { monthly: 50 } },
});

// Sandbox sub-accounts limited to the account's cheapest chat model (or cheapest model, without a "chat" category).
const cheapestChat = llm.getModelsOutput().models.apply((models) => {
  const chat = models.filter((m) => m.category === "chat");
  const sorted = (chat.length > 0 ? chat : models)
    .slice()
    .sort(
      (a, b) => Number(a.pricing.textInputPrice) - Number(b.pricing.textInputPrice) || a.model.localeCompare(b.model),
    );
  if (sorted.length === 0) throw new Error("this account lists no model");
  return sorted[0].model;
});
const sandbox = new llm.SubAccountBatch("sandbox", {
  alias: `${prefix}-sandbox`,
  balance: sandboxBalance,
  count: sandboxCount,
  modelPricing: [{ model: cheapestChat, pricingFactor: 1 }],
});

export const appKeyHint = app.keyHint;
export const analyticsKeyHint = analytics.keyHint;
export const analyticsEnabled = analytics.enabled;
export const sandboxIds = pulumi.unsecret(sandbox.subAccounts.apply((list) => list.map((s) => s.id)));
