/**
 * What the provider shims load at call time, by package name (`pulumi-llm-accounts/runtime`). This path and
 * the names below are read by state written by every earlier version of the package: keep them stable.
 */
import { API_KEY_STATE, apiKeyLifecycle, type ApiKeyInputs, type ApiKeyOutputs } from "./apiKey/index.js";
import { currentSession, type Session } from "./command/index.js";
import type { Props, StateError, StateVersions, TypedProvider } from "./engine/index.js";
import {
  BATCH_STATE,
  subAccountBatchLifecycle,
  type SubAccountBatchInputs,
  type SubAccountBatchOutputs,
} from "./subAccountBatch/index.js";

export {
  clientFor,
  COALESCING_SWITCH,
  currentSession,
  DeleteCoalescer,
  deleteTokens,
  Session,
  SessionClient,
  setClientOverrides,
  setStackConfig,
  SHARE,
  SharedSubAccountList,
  SHARING_SWITCH,
  stackConfig,
  startFresh,
  type ClientOverrides,
  type SessionOptions,
} from "./command/index.js";
export {
  STACK_CONFIG_SLOT,
  StateError,
  UNKNOWN,
  type Props,
  type ReadFound,
  type ReadOutcome,
  type TypedProvider,
} from "./engine/index.js";
export type { ApiKeyInputs, ApiKeyOutputs } from "./apiKey/index.js";
export type { SubAccountBatchInputs, SubAccountBatchOutputs, SubAccountView } from "./subAccountBatch/index.js";

/** Where the engine keeps the stored provider text, among the inputs and the outputs of every dynamic resource. */
const PROVIDER_KEY = "__provider";

/**
 * A create or update that fails with `properties` (the engine records them as the outputs: created or changed,
 * but failed) keeps the stored provider among them. The plugin adds it to the outputs of a success only, and a
 * later refresh or delete loads the provider from the outputs: without it they fail with "code must be a
 * string, not undefined", at every run, and the resource can be neither repaired nor destroyed.
 */
function keepingProvider<A extends unknown[], R>(
  method: (...args: A) => Promise<R>,
  inputsAt: number,
): (...args: A) => Promise<R> {
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

/** A runtime method given the session of the process, made at its first call (command/session.ts), as its first argument. */
function inSession<A extends unknown[], R>(
  method: (session: Session, ...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return (...args) => method(currentSession(), ...args);
}

/**
 * The methods of one resource with its stored state parsed once, here, where the engine hands it over: diff, read
 * and update get it in today's shape (`versions`), or stop with the StateError that names the field; a delete of
 * a state that does not parse goes to `removeUnreadable`, which deletes what the state identifies or fails.
 */
function parsedAtEntry<I, O extends object>(
  versions: StateVersions<O>,
  impl: {
    check: TypedProvider<I, O>["check"];
    diff(session: Session, id: string, olds: O, news: I): ReturnType<TypedProvider<I, O>["diff"]>;
    create(session: Session, inputs: I): ReturnType<TypedProvider<I, O>["create"]>;
    read(session: Session, id: string, olds: O): ReturnType<TypedProvider<I, O>["read"]>;
    update(session: Session, id: string, olds: O, news: I): ReturnType<TypedProvider<I, O>["update"]>;
    remove(session: Session, id: string, olds: O): Promise<void>;
    removeUnreadable(session: Session, id: string, olds: Props, error: StateError): Promise<void>;
  },
): TypedProvider<I, O> {
  return {
    // A check or a diff: the engine going through the program's registrations (command/transfers.ts).
    check: (olds, news) => (currentSession().arrived(), impl.check(olds, news)),
    diff: inSession(
      async (session, id: string, olds: Props, news: I) => (
        session.arrived(), impl.diff(session, id, versions.parse(olds), news)
      ),
    ),
    create: keepingProvider(inSession(impl.create), 0),
    read: inSession(async (session, id: string, olds: Props) => impl.read(session, id, versions.parse(olds))),
    update: keepingProvider(
      inSession(async (session, id: string, olds: Props, news: I) =>
        impl.update(session, id, versions.parse(olds), news),
      ),
      2,
    ),
    delete: inSession(async (session, id: string, olds: Props) => {
      const parsed = versions.safeParse(olds);
      return parsed.success
        ? impl.remove(session, id, parsed.data)
        : impl.removeUnreadable(session, id, olds, parsed.error);
    }),
  };
}

/** The ApiKey provider's methods. */
export const apiKey: TypedProvider<ApiKeyInputs, ApiKeyOutputs> = parsedAtEntry(API_KEY_STATE, apiKeyLifecycle);

/** The SubAccountBatch provider's methods. */
export const subAccountBatch: TypedProvider<SubAccountBatchInputs, SubAccountBatchOutputs> = parsedAtEntry(
  BATCH_STATE,
  subAccountBatchLifecycle,
);
