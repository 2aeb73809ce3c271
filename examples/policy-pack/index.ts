import { PolicyPack } from "@pulumi/policy";
import { llmAccountsPolicies } from "pulumi-llm-accounts/policy";

// Every rule of the package, advisory by default. Levels (advisory, mandatory, disabled) and options are set
// per rule in the pack's config: `pulumi preview --policy-pack . --policy-pack-config policy-config.json`,
// or in the organisation's policy group once the pack is published.
new PolicyPack("llm-accounts-policies", {
  policies: llmAccountsPolicies(),
});
