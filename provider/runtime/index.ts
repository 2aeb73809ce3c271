/**
 * What the provider shims load at call time, by package name (`pulumi-llm-accounts/runtime`). This path and
 * the names below are read by state written by every earlier version of the package: keep them stable.
 */
import * as apiKeyImpl from "./apiKey.js";
import type { ApiKeyInputs, ApiKeyOutputs } from "./apiKey.js";
import type { TypedProvider } from "./contract.js";
import type { SubAccountBatchInputs, SubAccountBatchOutputs } from "./subAccountBatch.js";
import * as subAccountBatchImpl from "./subAccountBatch.js";

export { setStackConfig, setClientOverrides, startFresh, stackConfig, clientFor, STACK_CONFIG_SLOT } from "./connection.js";
export { DeleteCoalescer, COALESCING_SWITCH } from "./deleteCoalescer.js";
export { SharedSubAccountList, SHARE, SHARING_SWITCH } from "./sharedList.js";
export { UNKNOWN } from "./values.js";
export type { ApiKeyInputs, ApiKeyOutputs } from "./apiKey.js";
export type { SubAccountBatchInputs, SubAccountBatchOutputs, SubAccountView } from "./subAccountBatch.js";
export type { TypedProvider, ReadOutcome, Props } from "./contract.js";

/** The ApiKey provider's methods. */
export const apiKey: TypedProvider<ApiKeyInputs, ApiKeyOutputs> = {
  check: apiKeyImpl.check,
  diff: apiKeyImpl.diff,
  create: apiKeyImpl.create,
  read: apiKeyImpl.read,
  update: apiKeyImpl.update,
  delete: apiKeyImpl.remove,
};

/** The SubAccountBatch provider's methods. */
export const subAccountBatch: TypedProvider<SubAccountBatchInputs, SubAccountBatchOutputs> = {
  check: subAccountBatchImpl.check,
  diff: subAccountBatchImpl.diff,
  create: subAccountBatchImpl.create,
  read: subAccountBatchImpl.read,
  update: subAccountBatchImpl.update,
  delete: subAccountBatchImpl.remove,
};
