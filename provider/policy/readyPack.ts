import { llmAccountsPolicies } from "./pack.js";

/** The name of the ready pack, as `Policy Packs run:` and the organisation's policy groups show it. */
export const READY_PACK_NAME = "llm-accounts-policies";

/**
 * Starts the ready pack of the package: every rule, advisory until `--policy-pack-config` sets levels and
 * options. `policy-pack/index.js` at the package's root calls it; `run-policy-pack` of @pulumi/pulumi loads that
 * file in that folder when `pulumi preview --policy-pack node_modules/pulumi-llm-accounts/policy-pack` runs.
 * Compiled JavaScript: nothing for ts-node to type-check. @pulumi/policy (an optional peer dependency) and
 * @pulumi/pulumi resolve from the program's node_modules, as every package does from inside node_modules.
 */
export async function startReadyPack(): Promise<void> {
  let policy: typeof import("@pulumi/policy");
  try {
    policy = await import("@pulumi/policy");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") throw err;
    throw new Error(
      "the policy pack of pulumi-llm-accounts needs @pulumi/policy installed beside the package: " +
        "npm install --save-dev @pulumi/policy (in the program's folder)",
    );
  }
  new policy.PolicyPack(READY_PACK_NAME, { policies: llmAccountsPolicies() });
}
