import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

// Every resource shape the proof steps of issue 30 run through (tests/e2e/proof.test.ts): ApiKey plain, with each
// security restriction alone and all at once, disabled, rotated; SubAccountBatch created, priced, scaled. With the
// secret config object `adopt` ({name: key} and {name: [tokens]}), each resource adopts the object it names.

const config = new pulumi.Config();
const adopt = config.getSecretObject<Record<string, string | string[]>>("adopt");
const adoptKey = (name: string) => adopt?.apply((a) => a[name] as string);
const adoptTokens = (name: string) => adopt?.apply((a) => a[name] as string[]);
/** Names left out of the program (a JSON list), for a step that drops a resource. */
const without = new Set(config.getObject<string[]>("without") ?? []);

const restrictions = {
  ip: { ip: { allow: ["203.0.113.7", "10.0.0.0/8"] } },
  spend: { spendLimit: { monthly: 100 } },
  geo: { geo: { countries: ["CN", "SG"] } },
  models: { models: { mode: "model", items: ["model-a"] } },
};

const keys: Record<string, Omit<llm.ApiKeyArgs, "alias" | "adoptKey">> = {
  plain: {},
  ...Object.fromEntries(Object.entries(restrictions).map(([name, securityConfig]) => [name, { securityConfig }])),
  locked: { securityConfig: Object.assign({}, ...Object.values(restrictions)) },
  disabled: { enabled: false },
  rotated: { rotation: { triggers: [config.get("trigger") ?? "t1"] } },
};

const batches: Record<string, Omit<llm.SubAccountBatchArgs, "alias" | "adoptTokens">> = {
  team: { balance: 10, count: 2 },
  priced: {
    balance: 5,
    count: 2,
    modelPricing: [
      { model: "model-a", pricingFactor: 1.5 },
      { model: "model-b", pricingFactor: 2 },
    ],
  },
  scaled: {
    balance: 1,
    count: config.getNumber("scaledCount") ?? 2,
    modelPricing: [{ model: "model-a", pricingFactor: 1 }],
  },
};

for (const [name, args] of Object.entries(keys)) {
  if (!without.has(`key-${name}`))
    new llm.ApiKey(`key-${name}`, { alias: `proof-${name}`, ...args, adoptKey: adoptKey(`key-${name}`) });
}
for (const [name, args] of Object.entries(batches)) {
  if (!without.has(`batch-${name}`))
    new llm.SubAccountBatch(`batch-${name}`, {
      alias: `proof-${name}`,
      ...args,
      adoptTokens: adoptTokens(`batch-${name}`),
    });
}
