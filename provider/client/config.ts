import type { RateLimit } from "./assumptions.js";
import { ConfigurationError } from "./errors.js";
import { SETTINGS, type TransportOptions } from "./http.js";

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

/** Stack config values under the `llm-accounts:` namespace, by short name (`baseUrl`, `adminKey`...). */
export type StackConfig = Partial<Record<string, string>>;

/** Extra settings for accounts with other limits, or for an emulator run with scaled windows. */
export const TUNING = {
  /** Window of the per-minute limits, in ms (the emulator's `--rate-window-ms`). */
  rateWindowMs: { env: "LLM_ACCOUNTS_RATE_WINDOW_MS", config: "rateWindowMs" },
  /** JSON object of per-minute limits by operation (`{"api-key/create":120}`), or `off`. */
  rateLimits: { env: "LLM_ACCOUNTS_RATE_LIMITS", config: "rateLimits" },
} as const;

const short = (full: string) => full.slice(full.indexOf(":") + 1);

function pickKey(
  which: "adminKey" | "accountKey",
  envName: string | undefined,
  config: StackConfig,
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (envName) return env[envName] || undefined;
  return config[short(SETTINGS[which].config)] || env[SETTINGS[which].env] || undefined;
}

/**
 * Why a key named by `connection` is missing, for the transport to say when (and only when) an operation needs
 * it: a SubAccountBatch never needs the admin key, so an unset admin key variable must not stop it.
 */
function missingKeys(connection: ConnectionArgs | undefined, env: NodeJS.ProcessEnv): TransportOptions["missingKeys"] {
  const out: NonNullable<TransportOptions["missingKeys"]> = {};
  for (const which of ["adminKey", "accountKey"] as const) {
    const envName = connection?.[`${which}Env`];
    if (envName && !env[envName]) out[which] = `the environment variable ${envName} (named by connection.${which}Env) is not set`;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function parseRateLimits(raw: string | undefined, windowRaw: string | undefined): TransportOptions["rateLimits"] {
  const windowMs = windowRaw ? Number(windowRaw) : undefined;
  if (windowMs !== undefined && !(Number.isFinite(windowMs) && windowMs > 0)) {
    throw new ConfigurationError(`${TUNING.rateWindowMs.env} must be a positive number of milliseconds`);
  }
  if (raw === "off") return false;
  let perOperation: Record<string, number | RateLimit[]> | undefined;
  if (raw) {
    try {
      perOperation = JSON.parse(raw) as Record<string, number>;
    } catch {
      throw new ConfigurationError(`${TUNING.rateLimits.env} must be "off" or a JSON object such as {"api-key/create":120}`);
    }
  }
  return { windowMs, perOperation };
}

/**
 * Client options for a connection, read at call time: stack config wins over the standard environment
 * variables (as with other Pulumi providers); `connection` wins over both.
 */
export function resolveClientOptions(
  connection: ConnectionArgs | undefined,
  config: StackConfig = {},
  env: NodeJS.ProcessEnv = process.env,
): TransportOptions {
  const baseUrl = connection?.baseUrl || config[short(SETTINGS.baseUrl.config)] || env[SETTINGS.baseUrl.env];
  if (!baseUrl) {
    throw new ConfigurationError(
      `no base URL: set ${SETTINGS.baseUrl.env} or the stack config ${SETTINGS.baseUrl.config} (the platform has no default)`,
    );
  }
  return {
    baseUrl,
    adminKey: pickKey("adminKey", connection?.adminKeyEnv, config, env),
    accountKey: pickKey("accountKey", connection?.accountKeyEnv, config, env),
    missingKeys: missingKeys(connection, env),
    rateLimits: parseRateLimits(
      config[TUNING.rateLimits.config] || env[TUNING.rateLimits.env],
      config[TUNING.rateWindowMs.config] || env[TUNING.rateWindowMs.env],
    ),
  };
}
