/**
 * What the provider shims load at call time, by package name (`pulumi-llm-accounts/runtime`). This path and
 * the names below are read by state written by every earlier version of the package: keep them stable.
 */
import * as apiKeyImpl from "./apiKey.js";
import type { ApiKeyInputs, ApiKeyOutputs } from "./apiKey.js";
import type { TypedProvider } from "./contract.js";
import type { SubAccountBatchInputs, SubAccountBatchOutputs } from "./subAccountBatch.js";
import * as subAccountBatchImpl from "./subAccountBatch.js";
import { currentSession, type Session } from "./session.js";

export { setStackConfig, stackConfig, STACK_CONFIG_SLOT } from "./connection.js";
export { setClientOverrides, startFresh, clientFor, currentSession, Session, SessionClient, type SessionOptions, type ClientOverrides } from "./session.js";
export { DeleteCoalescer, COALESCING_SWITCH } from "./deleteCoalescer.js";
export { SharedSubAccountList, SHARE, SHARING_SWITCH } from "./sharedList.js";
export { UNKNOWN } from "./check.js";
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

/** A runtime method given the session of the process, made at its first call (session.ts), as its first argument. */
function inSession<A extends unknown[], R>(method: (session: Session, ...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return (...args) => method(currentSession(), ...args);
}

/** The ApiKey provider's methods. */
export const apiKey: TypedProvider<ApiKeyInputs, ApiKeyOutputs> = {
  check: apiKeyImpl.check,
  diff: apiKeyImpl.diff,
  create: keepingProvider(inSession(apiKeyImpl.create), 0),
  read: inSession(apiKeyImpl.read),
  update: keepingProvider(inSession(apiKeyImpl.update), 2),
  delete: inSession(apiKeyImpl.remove),
};

/** The SubAccountBatch provider's methods. */
export const subAccountBatch: TypedProvider<SubAccountBatchInputs, SubAccountBatchOutputs> = {
  check: subAccountBatchImpl.check,
  diff: inSession(subAccountBatchImpl.diff),
  create: keepingProvider(inSession(subAccountBatchImpl.create), 0),
  read: inSession(subAccountBatchImpl.read),
  update: keepingProvider(inSession(subAccountBatchImpl.update), 2),
  delete: inSession(subAccountBatchImpl.remove),
};
