import { ConfigurationError } from "./errors.js";
import type { TransportOptions } from "./http.js";
import { noBaseUrl, readSetting, SETTINGS, type StackConfig } from "./settings.js";

export type { StackConfig } from "./settings.js";

/**
 * Where a resource finds its account: names of environment variables, never key values, so that nothing
 * secret is ever an input (inputs are written to the state). Omitted parts fall back to the stack config
 * and then to the standard environment variables.
 */
export interface ConnectionArgs {
  /** Base URL of the platform (not a secret). */
  baseUrl?: string;
  /** Name of the environment variable that holds the admin key. */
  adminKeyEnv?: string;
  /** Name of the environment variable that holds the main account key. */
  accountKeyEnv?: string;
}

function pickKey(
  which: "adminKey" | "accountKey",
  envName: string | undefined,
  config: StackConfig,
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (envName) {
    const value = env[envName];
    if (!value) throw new ConfigurationError(`the environment variable ${envName} (named by connection.${which}Env) is not set`);
    return value;
  }
  return readSetting(which, config, env);
}

/**
 * Client options for a connection, read and validated at call time: stack config wins over the standard
 * environment variables (as with other Pulumi providers); `connection` wins over both.
 */
export function resolveClientOptions(
  connection: ConnectionArgs | undefined,
  config: StackConfig = {},
  env: NodeJS.ProcessEnv = process.env,
): TransportOptions {
  const baseUrl = connection?.baseUrl || readSetting("baseUrl", config, env);
  if (!baseUrl) throw noBaseUrl();
  const windowMs = readSetting("rateWindowMs", config, env);
  const limits = readSetting("rateLimits", config, env);
  return {
    baseUrl,
    adminKey: pickKey("adminKey", connection?.adminKeyEnv, config, env),
    accountKey: pickKey("accountKey", connection?.accountKeyEnv, config, env),
    rateLimits: limits === false ? false : { windowMs, perOperation: limits?.perOperation },
  };
}

/** The `llm-accounts:` stack config keys the provider reads. */
export const STACK_CONFIG_KEYS: readonly string[] = Object.values(SETTINGS).map((s) => s.key);
