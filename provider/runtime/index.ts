/**
 * What the provider shims load at call time, by package name (`pulumi-llm-accounts/runtime`). This path and
 * the names below are read by state written by every earlier version of the package: keep them stable.
 */
import * as apiKey from "./apiKey.js";
import * as subAccountBatch from "./subAccountBatch.js";

export { setStackConfig, stackConfig, clientFor, STACK_CONFIG_SLOT } from "./connection.js";
export { DeleteCoalescer, COALESCING_SWITCH } from "./deleteCoalescer.js";
export { UNKNOWN } from "./values.js";
export type { ApiKeyInputs, ApiKeyOutputs } from "./apiKey.js";
export type { SubAccountBatchInputs, SubAccountBatchOutputs, SubAccountView } from "./subAccountBatch.js";

/** The ApiKey provider's methods. */
export const apiKeyProvider = {
  check: apiKey.check,
  diff: apiKey.diff,
  create: apiKey.create,
  read: apiKey.read,
  update: apiKey.update,
  delete: apiKey.remove,
};

/** The SubAccountBatch provider's methods. */
export const subAccountBatchProvider = {
  check: subAccountBatch.check,
  diff: subAccountBatch.diff,
  create: subAccountBatch.create,
  read: subAccountBatch.read,
  update: subAccountBatch.update,
  delete: subAccountBatch.remove,
};
