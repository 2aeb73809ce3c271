import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

// One owner over time (issue 36): ApiKey "a" adopts a key while the config gives `aKey` (removing it later changes
// nothing of what "a" holds); ApiKey "b" adopts `bKey` when given. Batch "team" creates its one sub-account;
// batch "twin" adopts `twinTokens` when given. `aName` and `teamName` rename "a" and "team" (no alias), and
// `teamTokens` makes "team" adopt, and `teamCount` sets its count (1 without it).
const config = new pulumi.Config();

const aKey = config.getSecret("aKey");
new llm.ApiKey(config.get("aName") ?? "a", { alias: "a", ...(aKey ? { adoptKey: aKey } : {}) });
const bKey = config.getSecret("bKey");
if (bKey) new llm.ApiKey("b", { alias: "b", adoptKey: bKey });

const teamTokens = config.getSecretObject<string[]>("teamTokens");
const team = new llm.SubAccountBatch(config.get("teamName") ?? "team", {
  alias: "team",
  balance: 1,
  count: config.getNumber("teamCount") ?? 1,
  modelPricing: [{ model: "model-a", pricingFactor: 1 }],
  ...(teamTokens ? { adoptTokens: teamTokens } : {}),
});
const twinTokens = config.getSecretObject<string[]>("twinTokens");
if (twinTokens)
  new llm.SubAccountBatch("twin", {
    alias: "team",
    balance: 1,
    count: 1,
    modelPricing: [{ model: "model-a", pricingFactor: 1 }],
    adoptTokens: twinTokens,
  });

export const teamCount = team.count;
