import { z } from "zod";
import { ADMIN_KEY_PREFIX, KEY_PREFIX, type CreateMarkForm } from "../api/assumptions.js";
import type { Group } from "../api/operations.js";
import { isKeyForm, KeyTextSchema, settingsObject } from "../api/schemas/common.js";
import { looksLikeKey } from "../api/redact.js";
import type { Profile } from "../api/profile.js";
import type { Clock } from "./clock.js";
import { ConfigurationError } from "./errors.js";
import type { RetryOptions } from "./retry.js";
import {
  limitsFromSettings,
  missingSetting,
  noBaseUrl,
  readSetting,
  SETTINGS,
  type RateLimitOptions,
  type StackConfig,
} from "./settings.js";

export type { StackConfig } from "./settings.js";

/** What a transport (and so a client) is made with: where, which credentials, and how it behaves. */
export interface TransportOptions {
  baseUrl: string;
  adminKey?: string;
  accountKey?: string;
  /** Why a credential is absent or unusable (an unset variable, a line break): said when an operation needs it. */
  missingKeys?: { adminKey?: string; accountKey?: string };
  /** Largest answer read, in bytes after decompression (default MAX_RESPONSE_BYTES, 32 MiB). */
  maxResponseBytes?: number;
  /** Connect and whole-request timeouts. */
  timeouts?: { connectMs?: number; requestMs?: number };
  retry?: Partial<RetryOptions>;
  /**
   * Limits per operation name; `false` turns the client-side limiter off. A number replaces the per-minute
   * limit of an operation. `windowMs` rescales every per-minute window (for an emulator run with scaled windows).
   */
  rateLimits?: RateLimitOptions;
  /** Receives one line per request; lines never contain a key. */
  logger?: (line: string) => void;
  /** The clock retries wait on (tests pass a fake one so that no test sleeps through a real wait). */
  clock?: Pick<Clock, "now" | "sleep">;
  /** How the platform reads the spec's open points where a setting decides (docs/decisions.md). */
  platform?: PlatformReadings;
}

/** The readings of the spec's open points that a setting chooses (the others are handled whichever the platform shows). */
export interface PlatformReadings {
  /** The usage summary's request field that carries `next_page` back (USAGE_NEXT_PAGE_FIELD when not set). */
  usagePageField?: string;
  /** The form of a create's marked alias (CREATE_MARK_FORMS; `tilde` when not set). */
  createMark?: CreateMarkForm;
  /** The platform profile (`llm-accounts:profile`): with one, answers are classified by its signatures only (client/refusals.ts). */
  profile?: Profile;
  /** How long after a write the platform may still be making or showing it (`llm-accounts:lateWritesMs`; assumptions.ts LATE_WRITES when not set). */
  lateWritesMs?: number;
}

function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** Parses and checks the base URL: https, or http on a loopback host only. */
export function parseBaseUrl(raw: string | undefined): URL {
  if (!raw) throw noBaseUrl();
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // Not shown: text that is not a URL may be a token or password set in the wrong place.
    throw new ConfigurationError(
      `base URL is not a URL (its ${raw.length} characters are not shown); it must be the platform's address, such as https://api.example.com`,
    );
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopback(url.hostname))) {
    throw new ConfigurationError(
      `base URL must use https (plain http is allowed on a loopback host only): ${url.origin}`,
    );
  }
  if (url.username || url.password) throw new ConfigurationError("base URL must not carry credentials");
  return url;
}

/**
 * The credential an operation of `group` is sent with: the admin key for the management group, the main account
 * key for the sub-account group. A missing or wrong kind of key fails before anything is sent, saying where to
 * set it (never the key).
 */
export function credentialFor(
  group: Group,
  options: Pick<TransportOptions, "adminKey" | "accountKey" | "missingKeys">,
): string {
  if (group === "management") {
    const key = options.adminKey;
    if (!key && options.missingKeys?.adminKey) throw new ConfigurationError(options.missingKeys.adminKey);
    if (!key) {
      throw missingSetting("adminKey", "no admin key for the management group", " (--secret)");
    }
    if (!key.startsWith(ADMIN_KEY_PREFIX)) {
      throw new ConfigurationError(
        `the management group needs an admin key (one that begins with "${ADMIN_KEY_PREFIX}"); the key given is not one: check ${SETTINGS.adminKey.env} / ${SETTINGS.adminKey.config}`,
      );
    }
    return keyText(key, "adminKey");
  }
  const key = options.accountKey;
  if (!key && options.missingKeys?.accountKey) throw new ConfigurationError(options.missingKeys.accountKey);
  if (!key) {
    throw missingSetting("accountKey", "no main account key for the sub-account group", " (--secret)");
  }
  if (key.startsWith(ADMIN_KEY_PREFIX) || !isKeyForm(key)) {
    throw new ConfigurationError(
      `the sub-account group needs the main account key (${KEY_PREFIX}... or a key issued without the prefix, not an admin key); check ${SETTINGS.accountKey.env} / ${SETTINGS.accountKey.config}`,
    );
  }
  return keyText(key, "accountKey");
}

/** A key given in code as it is sent, or a ConfigurationError when it holds a character no key has (never sent). */
function keyText(key: string, which: "adminKey" | "accountKey"): string {
  const parsed = KeyTextSchema.safeParse(key);
  if (parsed.success) return key;
  const what = which === "adminKey" ? "admin key" : "main account key";
  throw new ConfigurationError(
    `the ${what} given ${parsed.error.issues[0].message}: check ${SETTINGS[which].env} / ${SETTINGS[which].config}`,
  );
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ENV_NAME_EXPECTED = "must be the name of an environment variable (letters, digits and _)";

/** The name of an environment variable; a key pasted in its place is told apart (and, as every value here, never shown). */
const EnvNameSchema = z
  .string({ error: ENV_NAME_EXPECTED })
  .refine((name) => ENV_NAME.test(name) && !looksLikeKey(name), {
    error: (issue) =>
      String(issue.input).startsWith(KEY_PREFIX) || looksLikeKey(String(issue.input))
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

/**
 * A credential from the variable `connection` names, else from the stack config or the standard variable, with
 * outer whitespace dropped (a key file written by `echo` ends in a newline; no key holds a space). When it is
 * unset, or holds a character no key has (KeyTextSchema), `problem` says so naming where it came from, for the
 * transport to say when (and only when) an operation needs it: a SubAccountBatch never needs the admin key, so
 * a bad admin key variable must not stop it. A value that cannot be a key is never sent.
 */
function pickKey(
  which: "adminKey" | "accountKey",
  connection: ConnectionArgs | undefined,
  config: StackConfig,
  env: NodeJS.ProcessEnv,
): { key?: string; problem?: string } {
  const envName = connection?.[`${which}Env`];
  const setting = SETTINGS[which];
  const source = envName
    ? `the environment variable ${envName} (named by connection.${which}Env)`
    : config[setting.key]
      ? `the stack config ${setting.config}`
      : setting.env;
  const raw = envName ? envValue(env, envName) : readSetting(which, config, env);
  const key = raw?.trim() || undefined;
  if (key === undefined) return envName ? { problem: `${source} is not set` } : {};
  const parsed = KeyTextSchema.safeParse(key);
  if (!parsed.success) return { problem: `${source} does not hold a key: it ${parsed.error.issues[0].message}` };
  return { key };
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
  const admin = pickKey("adminKey", connection, config, env);
  const account = pickKey("accountKey", connection, config, env);
  const missing = {
    ...(admin.problem && { adminKey: admin.problem }),
    ...(account.problem && { accountKey: account.problem }),
  };
  const profile = readSetting("profile", config, env);
  // A setting of its own wins over what the profile measured.
  const usagePageField = readSetting("usagePageField", config, env) ?? profile?.limits?.usagePageField;
  const createMark = readSetting("createMark", config, env) ?? profile?.limits?.createMark;
  const lateWritesMs = readSetting("lateWritesMs", config, env);
  const readings = { usagePageField, createMark, profile, lateWritesMs };
  return {
    ...(Object.values(readings).some((v) => v !== undefined) && { platform: readings }),
    baseUrl,
    adminKey: admin.key,
    accountKey: account.key,
    missingKeys: Object.keys(missing).length > 0 ? missing : undefined,
    rateLimits: limitsFromSettings(windowMs, limits),
  };
}

/** The `llm-accounts:` stack config keys the provider reads. */
export const STACK_CONFIG_KEYS: readonly string[] = Object.values(SETTINGS).map((s) => s.key);

/**
 * The one reader of the stack config: the `llm-accounts:` settings from a source that answers by full key (the
 * config the engine gave the provider, or the running program's own), by short name.
 */
export function readStackConfig(get: (fullKey: string) => string | undefined): StackConfig {
  const config: StackConfig = {};
  for (const s of Object.values(SETTINGS)) {
    const value = get(s.config);
    if (value !== undefined) config[s.key] = value;
  }
  return config;
}
