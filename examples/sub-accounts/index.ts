import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

const config = new pulumi.Config();
const batchAlias = config.get("alias") ?? "team-a";
// The API cannot change a balance later: a new balance replaces the whole batch (new sub-accounts, new tokens).
const batchBalance = config.getNumber("balance") ?? 50;
const batchCount = config.getNumber("count") ?? 2;
// Model name -> price factor. When not set: the two cheapest chat models of the account, at factors 1 and 1.2.
const configuredPricing = config.getObject<Record<string, number>>("modelPricing");

const available = llm.getModelsOutput();

const modelPricing = available.models.apply((models) => {
  if (configuredPricing === undefined) {
    // The spec does not list the categories: without a "chat" one, pick from every model.
    const chat = models.filter((m) => m.category === "chat");
    const cheapest = (chat.length > 0 ? chat : models)
      .slice()
      .sort(
        (a, b) => Number(a.pricing.textInputPrice) - Number(b.pricing.textInputPrice) || a.model.localeCompare(b.model),
      )
      .slice(0, 2);
    return cheapest.map((m, i) => ({ model: m.model, pricingFactor: i === 0 ? 1 : 1.2 }));
  }
  const names = new Set(models.map((m) => m.model));
  const unknown = Object.keys(configuredPricing).filter((name) => !names.has(name));
  if (unknown.length > 0) {
    throw new Error(
      `modelPricing names models this account does not have: ${unknown.join(", ")} (it has: ${[...names].join(", ")})`,
    );
  }
  return Object.entries(configuredPricing).map(([model, pricingFactor]) => ({ model, pricingFactor }));
});

const batch = new llm.SubAccountBatch("team", {
  alias: batchAlias,
  balance: batchBalance,
  count: batchCount,
  modelPricing,
});

// `subAccounts` is secret as a whole because each entry carries its token; ids and aliases are not secrets.
export const subAccountIds = pulumi.unsecret(batch.subAccounts.apply((list) => list.map((s) => s.id)));
export const aliases = pulumi.unsecret(batch.subAccounts.apply((list) => list.map((s) => s.alias)));
/** The sub-account keys, a secret: `pulumi stack output tokens --show-secrets`. */
export const tokens = batch.tokens;
export const count = batch.count;
export const pricing = batch.modelPricing;
