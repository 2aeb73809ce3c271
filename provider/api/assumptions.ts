/**
 * Every decision this package makes where the platform's specification says "not shown".
 *
 * Client, emulator, resources and docs all read these values from here, so that a change of mind (or a
 * clarification from the platform) is a one-line edit. docs/decisions.md ("What the spec left open") lists
 * the same decisions for users.
 */

/** Prefix of every API key, sub-account token and admin key (spec 2.1, 2.5, 5). */
export const KEY_PREFIX = "sk-";
/** Prefix of the admin key that authenticates the management group (spec 5). */
export const ADMIN_KEY_PREFIX = "sk-admin-";

/**
 * A key or token issued without KEY_PREFIX (the spec's notes say prefixes may change; one-api and its forks issue 48
 * letters and digits): read when it is at least this many letters and digits and nothing else, so that redaction
 * (api/redact.ts), which masks such runs, masks it whole. The emulator's reading `unprefixed-keys` issues them.
 */
export const UNPREFIXED_KEY_MIN_LENGTH = 32;

/**
 * The characters of a key, as a regular expression class (the spec shows keys of letters and digits only): those
 * of an OAuth bearer token (RFC 6750), letters, digits and `- . _ ~ + /`, with `=` padding. A key of any other
 * character is refused where it enters (check, settings, answers), so that redaction, which masks runs of these
 * characters (api/redact.ts), masks every key whole, and no credential holds a character HTTP cannot send.
 */
export const KEY_CHARACTERS = "A-Za-z0-9._~+/=-";
/** What a failure says of a key with another character. */
export const KEY_CHARACTERS_EXPECTED =
  "must hold only letters, digits and - . _ ~ + / = (no space, line break or other character)";

/**
 * The usage summary pages with `has_more` / `next_page`, but the spec does not name the request field for a
 * further page. We send the `next_page` value back, unchanged, in this request field.
 */
export const USAGE_NEXT_PAGE_FIELD = "page";

/** The usage summary covers "the last year": 365 days back from today (UTC), today included. */
export const USAGE_HISTORY_DAYS = 365;
/** Rows the emulator puts on one usage summary page (the platform's page size is not shown). */
export const USAGE_PAGE_SIZE = 100;
/**
 * Most models one usage day may have rows for, with `with_model` (not shown): the model list cap. The usage
 * summary holds at most one row per day (and model, with `with_model`), so the client stops a paging that
 * goes past that many rows, or whose page (but the last) is empty: at most rows + 1 pages, whatever the server.
 */
export const USAGE_MODELS_PER_DAY_MAX = 200;

/** With `with_model`, the model is named in this field of each usage row (not shown in the spec). */
export const USAGE_MODEL_FIELD = "model";

/**
 * Largest `count` of one sub-account batch create, and largest `sks` list of a batch edit or delete: the
 * spec does not show them. 100 is a conservative count; 1000 matches the API key delete limit.
 */
export const SUB_ACCOUNT_MAX_COUNT = 100;
export const SUB_ACCOUNT_MAX_SKS = 1000;

/**
 * Field caps of a request (the spec shows none). Without them one request within the 1 MiB body limit (a
 * 1,000,000-character alias, times a `count` of 100) could grow the platform's (or the emulator's) data by
 * 100 MB and break every later write. Client, emulator and check() read them from the shared request schemas.
 * With these caps one request adds at most about 4 MB to the state (100 sub-accounts of 200 models of 128
 * characters; measured in tests/hardening/emulator.test.ts).
 * - an alias is a readable label: 128 characters;
 * - a model name: 128 characters (the catalogue's longest is under 40);
 * - `security_config.models.items` and a sub-account's `model_pricing`: 200 entries (more than any catalogue);
 * - `security_config.ip.allow`: 200 entries, each at most 64 characters (an IPv6 range is at most 43);
 * - `security_config.geo.countries`: 250 entries (there are 249 two-letter country codes);
 * - a key or token named in a request: 256 characters (the platform's are about 50);
 * - a filter of the sub-account list (`alias`, `sk`): 256 characters.
 */
export const ALIAS_MAX_LENGTH = 128;
export const MODEL_NAME_MAX_LENGTH = 128;
export const MODEL_LIST_MAX = USAGE_MODELS_PER_DAY_MAX;
export const IP_ALLOW_MAX = 200;
export const IP_ENTRY_MAX_LENGTH = 64;
export const COUNTRIES_MAX = 250;
export const KEY_MAX_LENGTH = 256;
export const QUERY_VALUE_MAX_LENGTH = 256;

/**
 * Largest answer the client reads, counted after decompression (the spec shows no size). The largest honest
 * answer is a whole sub-account list: 1000 sub-accounts of 200 models at the caps above are about 30 MB.
 * A larger body (or a gzip that inflates past it) is cut off unread and not retried. `maxResponseBytes` of the
 * client options changes it.
 */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/**
 * Values a platform may keep in another form than the one written (not shown; api/keptForms.ts compares them): an
 * alias cut at a length is the declared one when at least this many characters are kept (a shorter one is drift,
 * a rename in the console); a pricing factor kept at 2 to 6 decimals is the declared one when less than one unit of
 * the last decimal kept apart.
 */
export const ALIAS_CUT_MIN_LENGTH = 16;
export const FACTOR_DECIMALS_MIN = 2;
export const FACTOR_DECIMALS_MAX = 6;

/** At most this many keys go into one `api-key/delete` call (spec 4.5). */
export const API_KEY_DELETE_MAX = 1000;

/** The only `security_config.models.mode` value the spec shows; others are rejected until documented. */
export const MODEL_MODES = ["model"] as const;

/**
 * IP allow-list entries: IPv4 or IPv6 addresses, and CIDR ranges of either. The spec says "IP addresses"; a
 * platform that takes allow-lists for admin keys (spec 5.3) takes ranges in practice, so ranges are accepted.
 */
export const IP_ALLOW_ACCEPTS_CIDR = true;

/** A windowed limit: at most `limit` requests in any `windowMs` (sliding). */
export interface RateLimit {
  limit: number;
  windowMs: number;
}

/** Milliseconds in a minute. */
export const MINUTE_MS = 60_000;
/** Milliseconds in an hour. */
export const HOUR_MS = 60 * MINUTE_MS;
/** Milliseconds in a day. */
export const DAY_MS = 24 * HOUR_MS;

/**
 * Per-operation limits (spec 8). Rates of the sub-account group are not shown: we assume the management
 * group's write rate (60 a minute) for its writes and the get rate (600 a minute) for its list.
 * The scope of a limit is not shown either: we assume one budget per credential and operation.
 */
export const DEFAULT_RATE_LIMITS: Record<string, RateLimit[]> = {
  "api-key/create": [{ limit: 60, windowMs: MINUTE_MS }],
  "api-key/get": [{ limit: 600, windowMs: MINUTE_MS }],
  "api-key/edit": [{ limit: 60, windowMs: MINUTE_MS }],
  "api-key/status": [{ limit: 60, windowMs: MINUTE_MS }],
  "api-key/delete": [{ limit: 60, windowMs: MINUTE_MS }],
  "account/balance": [{ limit: 60, windowMs: MINUTE_MS }],
  "usage/summary": [
    { limit: 60, windowMs: MINUTE_MS },
    { limit: 2000, windowMs: DAY_MS },
  ],
  models: [{ limit: 60, windowMs: MINUTE_MS }],
  "sub-account/list": [{ limit: 600, windowMs: MINUTE_MS }],
  "sub-account/create": [{ limit: 60, windowMs: MINUTE_MS }],
  "sub-account/edit": [{ limit: 60, windowMs: MINUTE_MS }],
  "sub-account/delete": [{ limit: 60, windowMs: MINUTE_MS }],
};

/*
 * The sub-account group's error shape is not shown: we assume (and the emulator answers with) the management
 * group's `{error: {code, message}}`, ErrorBodySchema in schemas/common.ts. The client also understands a bare
 * `{code, message}` or `{message}` body.
 */

/**
 * A 429 is the status of an exceeded rate limit (not shown in the spec). The emulator sends `Retry-After`
 * (whole seconds, as HTTP defines it) and `Retry-After-Ms` (milliseconds, for scaled test windows).
 */
export const RATE_LIMIT_STATUS = 429;

/**
 * The longest `Retry-After` the client waits through: two minutes, twice the per-minute windows of spec 8.
 * A server that asks for more (a day, or a value that would overflow a timer) gets a RateLimitError that
 * says when to retry; sleeping inside a deployment for longer helps nobody (not shown in the spec).
 */
export const MAX_RETRY_AFTER_MS = 2 * MINUTE_MS;

/**
 * What marks the sub-accounts of one batch create until the edit that follows it gives them the declared alias:
 * the create sends `<alias>~<12 hex digits>` (the alias cut to fit 128 characters). The hex is the resource's own
 * mark (subAccountBatch/recovery.ts identityMark: its project, stack, type and name), the same at every run, so that what a
 * killed `up` created is found by the next run of the same resource (one list of the account before a create,
 * shared by the command); random for a batch without one (an older program, a direct caller). The spec
 * gives a create no request id and a sub-account no field of ours but its alias and pricing, and a lost create's
 * recovery must find what THIS create made: by alias, balance and time it may take what another stack (another
 * plugin process, on the same account) created with the same alias and balance at the same moment, and delete
 * it later. Costs one sub-account edit per create that has nothing else to edit (an update that also renames or
 * reprices makes the one edit it made before); in exchange a lost create's recovery needs no clock and no list
 * before a replacing create. Chosen over refusing to adopt what cannot be told apart: a process cannot tell
 * another stack's sub-accounts from its own create's, so it would refuse every time and leave every lost
 * create's sub-accounts to the user.
 */
export const CREATE_MARKER = "~";

/**
 * The forms of a create's marked alias (CREATE_MARKER above; subAccountBatch/recovery.ts markedAlias). A platform may cap an
 * alias below ALIAS_MAX_LENGTH or allow only some characters (not shown), and refuse the marked alias where the
 * declared one passes:
 * - `tilde` (the default): `<alias>~<12 hex digits>`, cut to ALIAS_MAX_LENGTH;
 * - `fit`: as long as the declared alias (16 characters at least), its characters and hex digits only: the alias cut
 *   to make room for 12 hex digits (`team-a` -> `team3f09b2c41d7e`; `production-team-a` -> `produ3f09b2c41d7e`), so
 *   that it passes wherever the declared alias passes and 16 characters of letters and digits do.
 * A create refused for its alias under `tilde` is sent once more under `fit` (a refusal made nothing), and the
 * client keeps `fit` from then on; setting `llm-accounts:createMark` to `fit` saves that call (`llm-accounts doctor
 * --write` says when).
 */
export const CREATE_MARK_FORMS = ["tilde", "fit"] as const;
export type CreateMarkForm = (typeof CREATE_MARK_FORMS)[number];
/** Shortest `fit` marked alias: 4 characters of the alias and 12 hex digits. */
export const FIT_MARK_MIN_LENGTH = 16;

/**
 * How far the platform's clock may be behind ours when a lost batch create is looked for by `created_at`:
 * sub-accounts created up to this long before the request count as its own (the spec shows no clock guarantee).
 * Used only for states written before CREATE_MARKER, whose lost creates carry no marked alias.
 */
export const CLOCK_SKEW_MS = 5_000;

/**
 * How long the platform may take to show what was just written (the spec does not say whether a list or a get is
 * up to date at once; behind a cache or a replica it may lag seconds): the first waits of a look that goes on until
 * what was written may show (lookWaits). Only a read that misses something pays them.
 */
export const LATE_VISIBILITY_WAITS_MS: readonly number[] = [500, 1_000, 2_000];

/**
 * How long after a write the platform may still be making or showing it (not shown in the spec), in milliseconds: a
 * create whose answer was lost (a gateway's 504, a timeout) is looked for that long after the answer was lost before
 * it is sent again, and a read that misses an object written less than that long ago (by its `created_at`, allowing
 * for CLOCK_SKEW_MS) looks until then before it takes the object for gone. 35 s: a gateway's 30 s cap, after which
 * the platform may go on working on what the gateway gave up waiting for, and a 5 s read lag. `llm-accounts:lateWritesMs`
 * sets it (client/settings.ts); a profile that measured a longer lag (`limits.visibilityMs`) makes it half as long
 * again as that lag (lookBound). An object (tests scale it as they scale LATE_VISIBILITY_WAITS_MS).
 */
export const LATE_WRITES = { boundMs: 35_000 };

/** The bound of looks for a late write (LATE_WRITES): the setting when set, else the default or half as long again as a measured lag, whichever is longer. */
export function lookBound(settingMs: number | undefined, measuredLagMs: number | undefined): number {
  if (settingMs !== undefined) return settingMs;
  return Math.max(LATE_WRITES.boundMs, Math.ceil((measuredLagMs ?? 0) * 1.5));
}

/**
 * The waits of a look that goes on for `ms` more (what was written may show until then): LATE_VISIBILITY_WAITS_MS, then
 * each twice the one before, at most four times the last listed (2, 4, 8 s...), the last cut so that they add up to `ms`.
 * None when `ms` is not above 0. A count, not a deadline on a clock: a look makes the same calls on any clock.
 */
export function lookWaits(ms: number): number[] {
  const listed = LATE_VISIBILITY_WAITS_MS;
  const longest = 4 * listed[listed.length - 1];
  const waits: number[] = [];
  let left = ms;
  for (let i = 0; left > 0; i++) {
    const next = i < listed.length ? listed[i] : Math.min(2 * waits[i - 1], longest);
    waits.push(Math.min(next, left));
    left -= next;
  }
  return waits;
}

/**
 * The waits of a read that misses what was just written, on a platform whose profile measured that a write took
 * `lagMs` to show (`llm-accounts doctor --write`): LATE_VISIBILITY_WAITS_MS, then waits of 2 s until they add up to
 * half as long again as the lag. Without a lag, or one they cover, LATE_VISIBILITY_WAITS_MS. The doctor's report of
 * a measured lag; the runtime looks for LATE_WRITES (lookWaits).
 */
export function visibilityWaits(lagMs: number | undefined): readonly number[] {
  const waits = [...LATE_VISIBILITY_WAITS_MS];
  const sum = () => waits.reduce((a, b) => a + b, 0);
  if (lagMs === undefined || lagMs <= sum()) return LATE_VISIBILITY_WAITS_MS;
  while (sum() < lagMs * 1.5) waits.push(2_000);
  return waits;
}
/** The longest write lag a profile may record (`limits.visibilityMs`). */
export const LATE_VISIBILITY_WINDOW_MS = 2 * MINUTE_MS;

/**
 * Longest rotation period and longest overlap of `ApiKey.rotation` (the package's own limits, not the spec's):
 * ten years and one year. Beyond them a date is out of reach (`overlapHours: 1e12` made the expiry of the
 * previous key an invalid date, found only after the new key was created); within them every date is valid.
 */
export const ROTATION_EVERY_DAYS_MAX = 3650;
export const ROTATION_OVERLAP_HOURS_MAX = 8760;

/*
 * Deprecated sub-account pricing (spec 2.5): `auto_following: true` becomes `pricing_factor: 1`. An entry with
 * only `prompt_price` / `completion_price` is "not converted": we treat it as a request error naming the entry,
 * rather than creating a sub-account whose permission for that model is undefined. Enforced by
 * ModelPricingInputSchema in schemas/subAccounts.ts, which client, emulator and check() share.
 */
