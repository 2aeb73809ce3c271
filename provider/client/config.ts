import { z } from "zod";
import { KEY_PREFIX } from "../api/assumptions.js";
import { settingsObject } from "../api/schemas/common.js";
import { parseBaseUrl, type TransportOptions } from "./http.js";
import { noBaseUrl, readSetting, SETTINGS, type StackConfig } from "./settings.js";

export type { StackConfig } from "./settings.js";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ENV_NAME_EXPECTED = "must be the name of an environment variable (letters, digits and _)";

/** The name of an environment variable; a key pasted in its place is told apart (and, as every value here, never shown). */
const EnvNameSchema = z.string({ error: ENV_NAME_EXPECTED }).refine((name) => ENV_NAME.test(name), {
  error: (issue) =>
    String(issue.input).startsWith(KEY_PREFIX)
      ? "must be the NAME of an environment variable that holds the key, never the key itself (inputs are stored in the state)"
      : ENV_NAME_EXPECTED,
});

/** A base URL the client accepts (https, or http on a loopback host; no credentials in it). */
const BaseUrlSchema = z.string({ error: "must be a URL" }).superRefine((raw, ctx) => {
  try {
    parseBaseUrl(raw);
  } catch (err) {
    ctx.addIssue({ code: "custom", message: (err as Error).message });
  }
});

/**
 * Where a resource finds its account: names of environment variables, never key values, so that nothing
 * secret is ever an input (inputs are written to the state). Omitted parts fall back to the stack config
 * and then to the standard environment variables.
 */
export const ConnectionSchema = settingsObject(
  {
    /** Base URL of the platform (not a secret). */
    baseUrl: BaseUrlSchema.optional(),
    /** Name of the environment variable that holds the admin key. */
    adminKeyEnv: EnvNameSchema.optional(),
    /** Name of the environment variable that holds the main account key. */
    accountKeyEnv: EnvNameSchema.optional(),
  },
  {
    notAnObject: "must be an object { baseUrl?, adminKeyEnv?, accountKeyEnv? }",
    unknownField: "is not a connection setting (baseUrl, adminKeyEnv, accountKeyEnv)",
  },
);
/** Where a resource finds its account (see ConnectionSchema). */
export type ConnectionArgs = z.output<typeof ConnectionSchema>;

/**
 * The value of the environment variable `name`, or undefined when unset or empty. An own-property lookup: a
 * name such as `__proto__` or `constructor` would otherwise read the prototype of the environment object.
 */
function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value: unknown = Object.getOwnPropertyDescriptor(env, name)?.value;
  return typeof value === "string" && value !== "" ? value : undefined;
}

function pickKey(
  which: "adminKey" | "accountKey",
  envName: string | undefined,
  config: StackConfig,
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (envName) return envValue(env, envName);
  return readSetting(which, config, env);
}

/**
 * Why a key named by `connection` is missing, for the transport to say when (and only when) an operation needs
 * it: a SubAccountBatch never needs the admin key, so an unset admin key variable must not stop it.
 */
function missingKeys(connection: ConnectionArgs | undefined, env: NodeJS.ProcessEnv): TransportOptions["missingKeys"] {
  const out: NonNullable<TransportOptions["missingKeys"]> = {};
  for (const which of ["adminKey", "accountKey"] as const) {
    const envName = connection?.[`${which}Env`];
    if (envName && envValue(env, envName) === undefined) out[which] = `the environment variable ${envName} (named by connection.${which}Env) is not set`;
  }
  return Object.keys(out).length > 0 ? out : undefined;
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
    missingKeys: missingKeys(connection, env),
    rateLimits: limits === false ? false : { windowMs, perOperation: limits?.perOperation },
  };
}

/** The `llm-accounts:` stack config keys the provider reads. */
export const STACK_CONFIG_KEYS: readonly string[] = Object.values(SETTINGS).map((s) => s.key);
