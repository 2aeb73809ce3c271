import * as llm from "pulumi-llm-accounts";

// What tests/e2e/importFile.test.ts imports with `pulumi import --file`: one key with a restriction and one
// priced batch, declared as a program that created them would declare them.
new llm.ApiKey("key", { alias: "import-file-key", securityConfig: { spendLimit: { monthly: 100 } } });
new llm.SubAccountBatch("batch", {
  alias: "import-file-team",
  balance: 5,
  count: 2,
  modelPricing: [{ model: "model-a", pricingFactor: 1.5 }],
});
