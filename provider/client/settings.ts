import { z } from "zod";
import { CREATE_MARK_FORMS, DEFAULT_RATE_LIMITS, type CreateMarkForm, type RateLimit } from "../api/assumptions.js";
import { ProfileSchema, type Profile } from "../api/profile.js";
import { ConfigurationError } from "./errors.js";

/** Per-operation limits as a caller gives them: a number replaces the per-minute limit, a list replaces them all. */
export type PerOperationLimits = Partial<Record<string, number | RateLimit[]>>;

/** The client-side limiter's settings: `false` turns it off; `windowMs` rescales every per-minute window. */
export type RateLimitOptions = false | { windowMs?: number; perOperation?: PerOperationLimits };

// A missing value keeps zod's own "expected number, received undefined"; any other wrong type is "must be a number".
const positiveWhole = z
  .number({
    error: (issue) => (issue.code === "invalid_type" && issue.input !== undefined ? "must be a number" : undefined),
  })
  // A refinement, not .int(): zod 4 stops at a failed .int(), so the union below would hide which rule failed.
  .refine(Number.isInteger, "must be a whole number")
  .positive("must be above 0");
const OPERATION_NAMES = Object.keys(DEFAULT_RATE_LIMITS);
const LIMIT_EXPECTS =
  "a positive whole number of calls per minute, or a list of { limit, windowMs } of positive whole numbers";

/** What `rateLimits.perOperation` must hold: known operation names, and limits a limiter can keep (0 never could). */
// A string key checked by a refinement, not a z.enum: zod 4 reports a key outside an enum as an unrecognized key of
// the whole object, where a failed key check is reported at the key itself (the path the message names).
export const PerOperationLimitsSchema = z.record(
  z.string().refine((name) => OPERATION_NAMES.includes(name)),
  z.union([positiveWhole, z.array(z.strictObject({ limit: positiveWhole, windowMs: positiveWhole })).nonempty()], {
    error: `must be ${LIMIT_EXPECTS}`,
  }),
  {
    error: (issue) =>
      issue.code === "invalid_key" ? `is not an operation name (${OPERATION_NAMES.join(", ")})` : undefined,
  },
);

/** Parses a setting's raw text (from the environment or the stack config); a failed parse names what is expected. */
const fromJson = (text: string, ctx: z.RefinementCtx): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    ctx.addIssue({ code: "custom", message: "is not JSON", continue: false });
    return z.NEVER;
  }
};

/** One setting: where a user sets it (environment variable, stack config key) and what it must look like. */
export interface Setting<T> {
  /** The environment variable. */
  env: string;
  /** The stack config key, namespace included (`llm-accounts:baseUrl`). */
  config: string;
  /** The stack config key without its namespace, as the engine's config object is read. */
  key: string;
  /** What a valid value looks like, for the error that refuses another. */
  expects: string;
  /** Parses the raw text; a failure is a ConfigurationError naming the setting. */
  schema: z.ZodType<T, string>;
}

function setting<T>(key: string, env: string, expects: string, schema: z.ZodType<T, string>): Setting<T> {
  return { env, config: `llm-accounts:${key}`, key, expects, schema };
}

const text = z.string();

/** Every setting the package reads, in one table that the client, the runtime and the data sources share. */
export const SETTINGS = {
  baseUrl: setting("baseUrl", "LLM_ACCOUNTS_BASE_URL", "the platform's https URL", text),
  adminKey: setting("adminKey", "LLM_ACCOUNTS_ADMIN_KEY", "the admin key (sk-admin-...), set as a secret", text),
  accountKey: setting("accountKey", "LLM_ACCOUNTS_ACCOUNT_KEY", "the main account key (sk-...), set as a secret", text),
  rateWindowMs: setting(
    "rateWindowMs",
    "LLM_ACCOUNTS_RATE_WINDOW_MS",
    "a positive whole number of milliseconds (the window of the per-minute limits)",
    text.transform(Number).pipe(positiveWhole),
  ),
  rateLimits: setting<RateLimitOptions>(
    "rateLimits",
    "LLM_ACCOUNTS_RATE_LIMITS",
    `"off", or a JSON object of limits by operation such as {"api-key/create":120}, each ${LIMIT_EXPECTS}`,
    text.transform((raw, ctx): RateLimitOptions => {
      if (raw.trim() === "off") return false;
      const limits = PerOperationLimitsSchema.safeParse(fromJson(raw, ctx));
      if (limits.success) return { perOperation: limits.data };
      for (const { path, message } of limits.error.issues) ctx.addIssue({ code: "custom", path, message });
      return z.NEVER;
    }),
  ),
  usagePageField: setting(
    "usagePageField",
    "LLM_ACCOUNTS_USAGE_PAGE_FIELD",
    "the name of the usage summary's request field that carries `next_page` back (letters, digits and _; default page)",
    text.pipe(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "is not a field name")),
  ),
  createMark: setting<CreateMarkForm>(
    "createMark",
    "LLM_ACCOUNTS_CREATE_MARK",
    `the form of the alias a sub-account create is marked with: ${CREATE_MARK_FORMS.map((f) => JSON.stringify(f)).join(" or ")}`,
    text.pipe(z.enum(CREATE_MARK_FORMS)),
  ),
  lateWritesMs: setting(
    "lateWritesMs",
    "LLM_ACCOUNTS_LATE_WRITES_MS",
    "a positive whole number of milliseconds: how long after a write the platform may still be making or showing it (default 35000)",
    text.transform(Number).pipe(positiveWhole),
  ),
  profile: setting<Profile>(
    "profile",
    "LLM_ACCOUNTS_PROFILE",
    "the platform profile `llm-accounts doctor --write --save` writes: a JSON object {version: 1, done, refused, goneKey, goneSubAccount, transient, unauthorised, ...} (docs/doctor.md)",
    text.transform((raw, ctx): Profile => {
      const parsed = ProfileSchema.safeParse(fromJson(raw, ctx));
      if (parsed.success) return parsed.data;
      for (const { path, message } of parsed.error.issues) ctx.addIssue({ code: "custom", path, message });
      return z.NEVER;
    }),
  ),
} as const;

/** Names of the settings (`baseUrl`, `rateLimits`...). */
export type SettingName = keyof typeof SETTINGS;

/** Stack config values under the `llm-accounts:` namespace, by short name (`baseUrl`, `adminKey`...). */
export type StackConfig = Partial<Record<string, string>>;

/** The error for a required setting nobody set: says where to set it. */
export function missingSetting(name: SettingName, what: string, extra = ""): ConfigurationError {
  const s = SETTINGS[name];
  return new ConfigurationError(`${what}: set ${s.env} or the stack config ${s.config}${extra}`);
}

/** The message when no base URL is set anywhere (the platform has no default). */
export const noBaseUrl = (): ConfigurationError =>
  missingSetting("baseUrl", "no base URL", " (the platform has no default)");

/**
 * A setting's value: the stack config wins over the environment (as with other Pulumi providers); empty counts
 * as unset. The value is validated here, before anything is sent, and a bad one names where it came from.
 */
export function readSetting<N extends SettingName>(
  name: N,
  config: StackConfig,
  env: NodeJS.ProcessEnv,
): z.output<(typeof SETTINGS)[N]["schema"]> | undefined {
  const s: Setting<unknown> = SETTINGS[name];
  const fromConfig = config[s.key];
  const raw = fromConfig || env[s.env] || undefined;
  if (raw === undefined) return undefined;
  const parsed = s.schema.safeParse(raw);
  if (parsed.success) return parsed.data as z.output<(typeof SETTINGS)[N]["schema"]>;
  const where = fromConfig ? `the stack config ${s.config}` : s.env;
  const issue = parsed.error.issues[0];
  const at = issue.path.map((p) => JSON.stringify(p)).join(".");
  throw new ConfigurationError(`${where} is invalid: ${at ? `${at} ` : ""}${issue.message}; it must be ${s.expects}`);
}

/**
 * Marks limits made of settings that readSetting has already checked, so that no value is checked twice: a
 * property of the limits object itself (not enumerable, so neither copied nor fingerprinted), not a registry.
 */
const FROM_CHECKED_SETTINGS = Symbol("limits from checked settings");

/** Limits built from the checked `rateWindowMs` and `rateLimits` settings (resolveClientOptions). */
export function limitsFromSettings(
  windowMs: number | undefined,
  limits: RateLimitOptions | undefined,
): RateLimitOptions {
  if (limits === false) return false;
  const options = { windowMs, perOperation: limits?.perOperation };
  Object.defineProperty(options, FROM_CHECKED_SETTINGS, { value: true });
  return options;
}

/**
 * Checks limits given in code (`TransportOptions.rateLimits`) as the settings are checked; limits built from the
 * settings were checked where they were read, naming the variable or config key, and pass through.
 */
export function validateRateLimitOptions(options: RateLimitOptions | undefined): void {
  if (!options || (options as { [FROM_CHECKED_SETTINGS]?: true })[FROM_CHECKED_SETTINGS]) return;
  const checked = z
    .object({ windowMs: positiveWhole.optional(), perOperation: PerOperationLimitsSchema.optional() })
    .safeParse(options);
  if (checked.success) return;
  const issue = checked.error.issues[0];
  throw new ConfigurationError(
    `the rateLimits option is invalid: ${issue.path.map((p) => JSON.stringify(p)).join(".")} ${issue.message}`,
  );
}
