import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

const config = new pulumi.Config();
const keyAlias = config.get("alias") ?? "quickstart";
const keyEnabled = config.getBoolean("enabled") ?? true;
const allowedIps = config.getObject<string[]>("allowedIps") ?? ["203.0.113.10", "198.51.100.0/24"];
const countries = config.getObject<string[]>("countries") ?? ["SG", "JP"];
const monthlySpendLimit = config.getNumber("monthlySpendLimit") ?? 100;
const modelCategory = config.get("modelCategory") ?? "chat";

// One key, usable only from the listed addresses and countries, with a monthly spend cap.
const apiKey = new llm.ApiKey("quickstart", {
  alias: keyAlias,
  enabled: keyEnabled,
  securityConfig: {
    ip: { allow: allowedIps },
    geo: { countries },
    spendLimit: { monthly: monthlySpendLimit },
  },
});

// Data sources are read again at every preview and update.
const catalogue = llm.getModelsOutput({ category: modelCategory });
const balanceNow = llm.getBalanceOutput();

// The last 7 days in UTC, today included (today's figure is incomplete: the platform updates at T+1).
const utcDay = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
const usage = llm.getUsageOutput({ start: utcDay(6), end: utcDay(0) });

/** The key masked (`sk-...1a2b`): safe to show and to search the console for. */
export const keyHint = apiKey.keyHint;
/** The key itself, a secret: `pulumi stack output key --show-secrets`. */
export const key = apiKey.key;
export const alias = apiKey.alias;
export const enabled = apiKey.enabled;
/** The models of the category with their listed prices (CNY per 1M tokens; display prices, not billing). */
export const models = catalogue.models.apply((list) =>
  list.map((m) => ({ model: m.model, inputPrice: m.pricing.textInputPrice, outputPrice: m.pricing.textOutputPrice })),
);
/** The account balance, a decimal string. */
export const balance = balanceNow.balance;
/** Account-wide spend of the last 7 days, a decimal string. */
export const last7DaysCost = usage.totalCost;
