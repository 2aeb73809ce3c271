import { LlmAccountsClient } from "../client/client.js";
import { ConnectionSchema, readStackConfig, resolveClientOptions, type ConnectionArgs, type StackConfig, type TransportOptions } from "../client/config.js";
import { fingerprint } from "../api/redact.js";
import { STACK_CONFIG_SLOT } from "./slot.js";
import { canonical, neverShown, optionalOrNull, same } from "./values.js";

export { STACK_CONFIG_SLOT };

interface ConfigSource {
  get(key: string): string | undefined;
}

/** The stack config the engine gave `configure` (empty when there was none, as in direct tests). */
export function stackConfig(): StackConfig {
  const source = (globalThis as Record<string, unknown>)[STACK_CONFIG_SLOT] as ConfigSource | undefined;
  return source ? readStackConfig((key) => source.get(key)) : {};
}

/** Sets the stack config as `configure` would (tests; programs that drive the runtime directly). */
export function setStackConfig(values: Record<string, string | undefined>): void {
  (globalThis as Record<string, unknown>)[STACK_CONFIG_SLOT] = { get: (key: string) => values[key.replace(/^llm-accounts:/, "")] };
}

const clients = new Map<string, LlmAccountsClient>();
let overrides: Pick<TransportOptions, "retry" | "clock"> = {};

/**
 * Retry settings and clock for every client made from now on (tests: retries that record their waits instead
 * of sleeping them; programs that drive the runtime directly). Clients made before keep theirs.
 */
export function setClientOverrides(options: Pick<TransportOptions, "retry" | "clock">): void {
  overrides = options;
  startFresh();
}

/**
 * Forgets every client made so far, and with them what each kept for the rest of the process: the delete
 * coalescer's learned parallelism and the shared list's last answer (sharedList.ts). A plugin process serves one
 * `pulumi` command and starts this way; programs and tests that play several commands in one process call this
 * between them.
 */
export function startFresh(): void {
  clients.clear();
}

/**
 * The client for a connection, resolved now (at call time) from `connection`, the stack config and the
 * environment. Clients are shared by resources with the same settings; rate limiters are shared anyway.
 */
export function clientFor(connection: ConnectionArgs | undefined, config: StackConfig = stackConfig()): LlmAccountsClient {
  const options = { ...resolveClientOptions(connection, config), ...overrides };
  const id = fingerprint(canonical(options));
  let client = clients.get(id);
  if (!client) {
    client = new LlmAccountsClient(options);
    clients.set(id, client);
  }
  return client;
}

/**
 * How a change of `connection` affects a resource: another base URL is another platform, hence a
 * replacement; other changes (the names of variables) need no API call but are recorded.
 */
export function connectionDiff(olds: { connection?: ConnectionArgs }, news: { connection?: ConnectionArgs }): { replace: boolean; changed: boolean } {
  const before = olds.connection;
  const after = news.connection;
  return {
    replace: (before?.baseUrl ?? null) !== (after?.baseUrl ?? null),
    changed: !same(before ?? null, after ?? null),
  };
}

/** `connection` among a resource's inputs: null means not given, and its values are never shown in a failure. */
export const ConnectionInputSchema = neverShown(optionalOrNull(ConnectionSchema));
