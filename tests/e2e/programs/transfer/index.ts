import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

// A sub-account moved between two batches in one up (issue 36). "taker" is registered first, so the engine may start
// its update before it has even diffed "giver", whose non-empty `giverTokens` leaves out what "taker" adopts.
const config = new pulumi.Config();
const modelPricing = [{ model: "model-a", pricingFactor: 1 }];

const takerTokens = config.getSecretObject<string[]>("takerTokens");
new llm.SubAccountBatch("taker", {
  alias: "taker",
  balance: 1,
  count: config.requireNumber("takerCount"),
  modelPricing,
  ...(takerTokens ? { adoptTokens: takerTokens } : {}),
});
new llm.SubAccountBatch("giver", {
  alias: "giver",
  balance: 1,
  count: config.requireNumber("giverCount"),
  modelPricing,
  adoptTokens: config.requireSecretObject<string[]>("giverTokens"),
});
