import { LlmAccountsClient } from "../client/client.js";
import { resolveClientOptions, TUNING, type ConnectionArgs, type StackConfig } from "../client/config.js";
import { parseBaseUrl, SETTINGS } from "../client/http.js";
import { fingerprint } from "../client/redact.js";
import { UNKNOWN, type CheckFailure } from "./values.js";

/**
 * Where the provider shim's `configure` leaves the stack config. It is written synchronously when the plugin
 * configures the provider, before any method can run, and read by every method when it is called.
 */
export const STACK_CONFIG_SLOT = "__pulumiLlmAccountsStackConfig";

/** The `llm-accounts:` stack config keys the provider reads. */
export const STACK_CONFIG_KEYS = [
  SETTINGS.baseUrl.config,
  SETTINGS.adminKey.config,
  SETTINGS.accountKey.config,
  `llm-accounts:${TUNING.rateWindowMs.config}`,
  `llm-accounts:${TUNING.rateLimits.config}`,
];

/** The stack config captured by `configure` (empty when the program runs without it, as in tests). */
export function stackConfig(): StackConfig {
  return ((globalThis as Record<string, unknown>)[STACK_CONFIG_SLOT] as StackConfig | undefined) ?? {};
}

/** Stores the stack config (short names, `llm-accounts:` stripped) for methods to read. */
export function setStackConfig(values: Record<string, string | undefined>): void {
  const config: StackConfig = {};
  for (const [k, v] of Object.entries(values)) if (v !== undefined) config[k.replace(/^llm-accounts:/, "")] = v;
  (globalThis as Record<string, unknown>)[STACK_CONFIG_SLOT] = config;
}

const clients = new Map<string, LlmAccountsClient>();

/**
 * The client for a connection, resolved now (at call time) from `connection`, the stack config and the
 * environment. Clients are shared by resources with the same settings; rate limiters are shared anyway.
 */
export function clientFor(connection: ConnectionArgs | undefined, config: StackConfig = stackConfig()): LlmAccountsClient {
  const options = resolveClientOptions(connection, config);
  const id = fingerprint(JSON.stringify(options));
  let client = clients.get(id);
  if (!client) {
    client = new LlmAccountsClient(options);
    clients.set(id, client);
  }
  return client;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Check failures of a `connection` input: a URL the client accepts, and names (never values) of variables. */
export function connectionFailures(connection: unknown): CheckFailure[] {
  if (connection === undefined || connection === null || connection === UNKNOWN) return [];
  if (typeof connection !== "object" || Array.isArray(connection)) {
    return [{ property: "connection", reason: "must be an object { baseUrl?, adminKeyEnv?, accountKeyEnv? }" }];
  }
  const failures: CheckFailure[] = [];
  const c = connection as Record<string, unknown>;
  for (const name of Object.keys(c)) {
    if (!["baseUrl", "adminKeyEnv", "accountKeyEnv"].includes(name)) {
      failures.push({ property: `connection.${name}`, reason: "is not a connection setting (baseUrl, adminKeyEnv, accountKeyEnv)" });
    }
  }
  if (c.baseUrl !== undefined && c.baseUrl !== UNKNOWN) {
    try {
      parseBaseUrl(String(c.baseUrl));
    } catch (err) {
      failures.push({ property: "connection.baseUrl", reason: (err as Error).message });
    }
  }
  for (const name of ["adminKeyEnv", "accountKeyEnv"] as const) {
    const v = c[name];
    if (v === undefined || v === UNKNOWN) continue;
    if (typeof v !== "string" || !ENV_NAME.test(v)) {
      const looksLikeKey = typeof v === "string" && v.startsWith("sk-");
      failures.push({
        property: `connection.${name}`,
        reason: looksLikeKey
          ? "must be the NAME of an environment variable that holds the key, never the key itself (inputs are stored in the state)"
          : "must be the name of an environment variable (letters, digits and _)",
      });
    }
  }
  return failures;
}
