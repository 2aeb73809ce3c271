import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

// Adoption ownership (issue 28): a batch whose adoptTokens grow, and, when the config asks, a second batch or a
// second key adopting what another resource adopts. Every variable part comes from the stack config.
const config = new pulumi.Config();

const team = new llm.SubAccountBatch("team", {
  alias: "team",
  balance: 10,
  count: config.requireNumber("count"),
  modelPricing: [{ model: "model-a", pricingFactor: 1.2 }],
  adoptTokens: config.requireSecretObject<string[]>("tokens"),
});

const twinTokens = config.getSecretObject<string[]>("twinTokens");
if (twinTokens) {
  new llm.SubAccountBatch("team-twin", {
    alias: "team",
    balance: 10,
    count: 1,
    modelPricing: [{ model: "model-a", pricingFactor: 1.2 }],
    adoptTokens: twinTokens,
  });
}

const adoptKey = config.getSecret("adoptKey");
if (adoptKey) {
  new llm.ApiKey("ci", { alias: "ci", adoptKey });
  new llm.ApiKey("ci-copy", { alias: "ci", adoptKey });
}

export const teamCount = team.count;
