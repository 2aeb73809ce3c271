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
export type { TypedProvider, ReadOutcome, ReadFound, Props } from "./contract.js";

/** Where the engine keeps the stored provider text, among the inputs and the outputs of every dynamic resource. */
const PROVIDER_KEY = "__provider";

/**
 * A create or update that fails with `properties` (the engine records them as the outputs: created or changed,
 * but failed) keeps the stored provider among them. The plugin adds it to the outputs of a success only, and a
 * later refresh or delete loads the provider from the outputs: without it they fail with "code must be a
 * string, not undefined", at every run, and the resource can be neither repaired nor destroyed.
 */
function keepingProvider<A extends unknown[], R>(method: (...args: A) => Promise<R>, inputsAt: number): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await method(...args);
    } catch (err) {
      const provider = (args[inputsAt] as Record<string, unknown> | undefined)?.[PROVIDER_KEY];
      const properties = (err as { properties?: unknown } | null)?.properties;
      if (typeof provider === "string" && properties !== null && typeof properties === "object") {
        (properties as Record<string, unknown>)[PROVIDER_KEY] ??= provider;
      }
      throw err;
    }
  };
}

/** The ApiKey provider's methods. */
export const apiKey: TypedProvider<ApiKeyInputs, ApiKeyOutputs> = {
  check: apiKeyImpl.check,
  diff: apiKeyImpl.diff,
  create: keepingProvider(apiKeyImpl.create, 0),
  read: apiKeyImpl.read,
  update: keepingProvider(apiKeyImpl.update, 2),
  delete: apiKeyImpl.remove,
};

/** The SubAccountBatch provider's methods. */
export const subAccountBatch: TypedProvider<SubAccountBatchInputs, SubAccountBatchOutputs> = {
  check: subAccountBatchImpl.check,
  diff: subAccountBatchImpl.diff,
  create: keepingProvider(subAccountBatchImpl.create, 0),
  read: subAccountBatchImpl.read,
  update: keepingProvider(subAccountBatchImpl.update, 2),
  delete: subAccountBatchImpl.remove,
};
