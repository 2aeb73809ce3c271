/**
 * Other readings of the spec's open points, which the emulator plays on demand (`--reading NAME`, option `readings`):
 * each answers one point the way a real platform plausibly may, where the default emulator answers the package's own
 * reading (docs/decisions.md). Tests run a user's lifecycle under each, and `llm-accounts doctor` must name exactly
 * the readings that differ from the package's.
 */
import { USAGE_NEXT_PAGE_FIELD } from "../api/assumptions.js";
import { maskKey } from "../api/redact.js";
import { isObject } from "../api/canonical.js";
import { ErrorAnswer } from "./errors.js";

/** Every reading the emulator can play, with what it changes. */
export const READINGS = {
  "extra-fields":
    "every answer carries fields the spec does not list, at every depth (inside security_config.ip, each sub-account, each model pricing entry)",
  "other-forms":
    "decimals as JSON numbers, ids and counts as strings of digits, timestamps without an offset and with a space (`2026-11-25 21:00:00`, UTC)",
  "terse-writes":
    "writes confirm with {success: true} or {} instead of the fields the spec shows (status without `enabled`, delete without `deleted`, a create without `success`)",
  "refusals-200":
    "the sub-account group refuses with HTTP 200 and {success: false, code, message} (the spec's own answer shape), a rate limit included",
  "bare-errors": "error bodies are {code, message} without the `error` wrapper",
  envelope:
    "every answer is wrapped as {code: 0, message, data}; a refusal is HTTP 200 with a non-zero code (authentication excepted)",
  "list-no-total":
    "the sub-account list answers without `total` and with `page_size` in place of `pageSize`, at most 7 sub-accounts an answer",
  "list-all-refused": "the sub-account list refuses page_size=-1 (400) and pages by 10, at most 100 a page",
  "alias-filter-prefix": "the sub-account list's alias filter matches every alias that begins with it",
  "short-aliases": "aliases are capped at 32 characters",
  "restricted-aliases": "aliases hold only letters, digits, -, _, . and spaces",
  "usage-cursor": "the usage summary reads its further-page token from the request field `cursor` (and ignores `page`)",
  "small-count-cap": "a sub-account create makes at most 20 (a larger `count` is refused with a 400 naming it)",
  "transient-200":
    "the first 2 requests of each operation are answered HTTP 200 {success: false, message} saying the system is busy, in English then in Chinese, and processed nothing; later ones as usual",
  "idempotent-deletes":
    "a delete of API keys or sub-accounts that do not exist succeeds ({deleted: 0}, {success: true}); those that exist among others are deleted",
  "envelope-no-data":
    "every answer is wrapped as {code: 0, message, data}; a refusal is HTTP 200 {code, message} with no `data` (authentication excepted)",
  "snowflake-ids":
    "sub-account ids are 19-digit snowflakes: `id` a JSON number beyond 2^53 (ids a few apart round to the same float), `user_id` a string of 19 digits",
  "total-unfiltered":
    "the sub-account list's `total` counts every sub-account of the account, whatever the `alias` and `sk` filters",
  "no-content":
    "writes with nothing to return (api-key status and delete, sub-account edit and delete) answer 204 No Content, without a body",
  "masked-tokens":
    "the sub-account list answers each token masked (`sk-...abcd`); the create's answer still holds them whole",
  redirects:
    "every request is answered 308 Permanent Redirect to the same path at another origin (an API that moved), nothing processed",
  "gone-400":
    "an unknown key or sub-account token is refused with 400 `invalid_key` / `invalid_token`, not 404: get, edit and status of a deleted key, a key or sub-account batch delete naming one (rejected as a whole), a sub-account edit naming one",
  "gateway-timeout-after-write":
    "the first write of each kind that succeeds (sub-account create, edit and delete; key edit, status and delete) is done, then a gateway answers 504 in HTML: the answer is lost, not the write",
  "sks-cap":
    "a sub-account edit or delete names at most 4 sub-account keys (more is refused with a 400 naming `sks` and the number)",
  "normalised-values":
    "a key's IP allow-list is kept and answered as ranges: an address as `1.2.3.4/32` (`/128` for IPv6)",
  "lowercase-aliases":
    "every alias written (key create and edit, sub-account create and edit) is kept and answered lower-cased (`Team-A` as `team-a`), without a refusal; the sub-account list's alias filter matches whatever the case",
  "cut-aliases":
    "every alias written longer than 32 characters is kept and answered cut to its first 32, without a refusal (short-aliases refuses it instead)",
  "rounded-factors":
    "every sub-account pricing_factor written (create and edit) is kept and answered rounded to 2 decimals (`1.2345` as `1.23`), without a refusal",
  "merged-pricing":
    "a sub-account edit merges the model_pricing it sends into what each sub-account holds: the models it lists are set, the others are kept, so no edit removes a model (a create sets exactly what it sends)",
  "unprefixed-keys":
    "API keys and sub-account tokens are issued as 48 letters and digits without `sk-` (one-api keeps them so)",
  "one-api":
    'one-api\'s envelope: every answer is {success: true, message: "", data}; a refusal is HTTP 200 {success: false, message} in Chinese, an authentication failure the same shape with HTTP 401; sub-account ids are 19-digit strings',
  "masked-forms":
    "the sub-account list answers each token masked in another form than the package's, in turn `sk-abcd****wxyz`, `****` and `sk-…wxyz`; the create's answer still holds them whole",
  "list-cursor":
    "the sub-account list pages by cursor: {items, has_more, next} without `total`, at most 7 sub-accounts an answer (page_size=-1 included), a further page asked for by sending `next` back as `cursor` (`page` ignored)",
  "unstable-ties":
    "the sub-account list refuses page_size=-1 (400) and answers at most 5 a page, by offset; sub-accounts of equal created_at (those of one create) come in another order at every request",
  "filters-ignored":
    "the sub-account list ignores its `alias` and `sk` filters: every answer lists the whole account (filter on the client's side)",
} as const;

/** Readings that are forms of one thing (an envelope, a mask): a platform plays at most one of each set. */
export const ONE_OF: readonly (readonly string[])[] = [
  ["envelope", "envelope-no-data", "one-api"],
  ["masked-tokens", "masked-forms"],
];

/** The name of a reading. */
export type Reading = keyof typeof READINGS;
/** Every reading's name. */
export const READING_NAMES = Object.keys(READINGS) as Reading[];

/** The cap of `short-aliases`. */
export const SHORT_ALIAS_MAX = 32;
/** The page size cap of `list-no-total`. */
export const NO_TOTAL_LIST_CAP = 7;
/** Where `redirects` sends every request. */
export const MOVED_ORIGIN = "https://moved.example.invalid";
/** The cap of `small-count-cap`. */
export const SMALL_COUNT_CAP = 20;
/** How many requests of each operation `transient-200` answers busy. */
export const TRANSIENT_200_COUNT = 2;
/** What `transient-200` says, in turn. */
export const BUSY_MESSAGES = ["system busy, try again", "系统繁忙，请稍后再试"];

/** Where `cut-aliases` cuts an alias. */
export const CUT_ALIAS_LENGTH = 32;
/** The decimals `rounded-factors` keeps of a pricing factor. */
export const ROUNDED_FACTOR_DECIMALS = 2;

/** The length of the keys and tokens `unprefixed-keys` issues (one-api's). */
export const UNPREFIXED_KEY_LENGTH = 48;
/** The page cap of `list-cursor`. */
export const CURSOR_LIST_CAP = 7;
/** The page cap of `unstable-ties`. */
export const TIES_LIST_CAP = 5;
/** What `one-api` answers an authentication failure (HTTP 401, in its envelope). */
export const ONE_API_UNAUTHORISED = "无权进行此操作，令牌无效";

/** The cap of `sks-cap`. */
export const SKS_CAP = 4;
/** The writes `gateway-timeout-after-write` answers 504 once (a key create is not among them: nothing could find the key it made). */
const GATEWAY_LOST_OPS = new Set([
  "sub-account/create",
  "sub-account/edit",
  "sub-account/delete",
  "api-key/edit",
  "api-key/status",
  "api-key/delete",
]);
/** What a gateway answers when the server behind it took too long: HTML, not the platform's JSON. */
export const GATEWAY_TIMEOUT_BODY =
  "<html><head><title>504 Gateway Time-out</title></head><body><center><h1>504 Gateway Time-out</h1></center></body></html>";
/** The request field `usage-cursor` reads. */
export const USAGE_CURSOR_FIELD = "cursor";

/** A request's answer before it is written: a status, a JSON body (or raw text), headers. */
export interface Outcome {
  status: number;
  body?: unknown;
  text?: string;
  headers?: Record<string, string>;
}

/** The list field of each delete, whose unknown entries `idempotent-deletes` ignores. */
const DELETES: Record<string, string> = { "api-key/delete": "keys", "sub-account/delete": "sks" };
/** The code of a delete of nothing under `idempotent-deletes` (before it is shaped as the delete's success). */
const NOTHING_TO_DELETE = "nothing_to_delete";

/** The code of the busy answer `transient-200` makes (before it is shaped as a 200 without a code). */
const BUSY_CODE = "system_busy";
const ALIAS_OPS = new Set(["api-key/create", "api-key/edit", "sub-account/create", "sub-account/edit"]);
const NO_CONTENT_OPS = new Set(["api-key/status", "api-key/delete", "sub-account/edit", "sub-account/delete"]);
const SUB_ACCOUNT_OPS = (op: string) => op.startsWith("sub-account/");
const RESTRICTED = /^[A-Za-z0-9 ._-]*$/;

/** What the emulator does differently under a set of readings: checks of requests, and the shape of answers. */
export class Readings {
  private readonly on: ReadonlySet<Reading>;
  /** Requests of each operation answered so far (`transient-200` answers the first ones busy). */
  private readonly seen = new Map<string, number>();
  /** The writes whose answer `gateway-timeout-after-write` already lost (once each). */
  private readonly lost = new Set<string>();

  constructor(
    readings: readonly Reading[] = [],
    /** Whether a key (api-key/delete) or token (sub-account/delete) exists: `idempotent-deletes` deletes only those. */
    private readonly exists: (op: string, item: string) => boolean = () => true,
  ) {
    for (const r of readings)
      if (!(r in READINGS)) throw new TypeError(`unknown reading "${r}" (${READING_NAMES.join(", ")})`);
    for (const forms of ONE_OF) {
      const played = readings.filter((r) => forms.includes(r));
      if (played.length > 1)
        throw new TypeError(
          `${played.join(" and ")} are forms of one ${forms === ONE_OF[0] ? "envelope" : "mask"}: play one of them`,
        );
    }
    this.on = new Set(readings);
  }

  /** Whether a reading is played. */
  has(reading: Reading): boolean {
    return this.on.has(reading);
  }

  /** The request's input as the handlers should see it (the usage cursor moved to the emulator's own paging field). */
  input(op: string, input: unknown): unknown {
    if ((op === "api-key/create" || op === "api-key/edit") && this.has("normalised-values") && isObject(input))
      input = withRanges(input);
    if (ALIAS_OPS.has(op) && isObject(input) && typeof input.alias === "string")
      input = { ...input, alias: this.keptAlias(input.alias) };
    if ((op === "sub-account/create" || op === "sub-account/edit") && this.has("rounded-factors") && isObject(input))
      input = withRoundedFactors(input);
    // The annotations extra-fields adds to a key's security config (at every depth, and `deny` beside `allow`), sent
    // back by a client, are ignored as input; a part left with nothing but them is no part.
    if (
      (op === "api-key/create" || op === "api-key/edit") &&
      this.has("extra-fields") &&
      isObject(input) &&
      isObject(input.security_config)
    ) {
      return { ...input, security_config: withoutAnnotations(input.security_config) };
    }
    const deleted = DELETES[op];
    if (deleted && this.has("idempotent-deletes") && isObject(input) && Array.isArray(input[deleted])) {
      const items = input[deleted] as unknown[];
      const known = items.filter((i) => typeof i !== "string" || this.exists(op, i));
      // None exists: the request stays as sent, and refusal() answers it done.
      return known.length > 0 ? { ...input, [deleted]: known } : input;
    }
    if (op === "sub-account/list" && isObject(input)) return this.listInput(input);
    if (op !== "usage/summary" || !this.has("usage-cursor") || !isObject(input)) return input;
    const { [USAGE_CURSOR_FIELD]: cursor, [USAGE_NEXT_PAGE_FIELD]: _ignored, ...rest } = input;
    return cursor === undefined ? rest : { ...rest, [USAGE_NEXT_PAGE_FIELD]: cursor };
  }

  /** A list request as the handlers should see it: filters dropped (`filters-ignored`), the cursor read as a page (`list-cursor`). */
  private listInput(input: Record<string, unknown>): Record<string, unknown> {
    let query = input;
    if (this.has("filters-ignored")) {
      const { alias: _alias, sk: _sk, ...rest } = query;
      query = rest;
    }
    if (!this.has("list-cursor")) return query;
    // The cursor alone says which page: `page` is ignored, page_size=-1 is capped as any size.
    const { cursor, page: _page, ...rest } = query;
    const page = cursor === undefined ? 1 : pageOfCursor(String(cursor));
    return { ...rest, page };
  }

  /** A refusal this platform makes of a request the default emulator accepts, or undefined. */
  refusal(op: string, request: unknown): ErrorAnswer | undefined {
    if (this.has("transient-200")) {
      const seen = this.seen.get(op) ?? 0;
      this.seen.set(op, seen + 1);
      if (seen < TRANSIENT_200_COUNT)
        return new ErrorAnswer(503, BUSY_CODE, BUSY_MESSAGES[seen % BUSY_MESSAGES.length]);
    }
    if (!isObject(request)) return undefined;
    const deleted = DELETES[op];
    if (
      deleted &&
      this.has("idempotent-deletes") &&
      Array.isArray(request[deleted]) &&
      !(request[deleted] as unknown[]).some((i) => typeof i === "string" && this.exists(op, i))
    ) {
      return new ErrorAnswer(200, NOTHING_TO_DELETE, "nothing to delete");
    }
    const pagesOnly = this.has("list-all-refused") || this.has("unstable-ties");
    if (
      op === "sub-account/list" &&
      pagesOnly &&
      (Number(request.page_size) === -1 || Number(request.page_size) > 100)
    ) {
      return new ErrorAnswer(400, "invalid_page_size", "page_size must be between 1 and 100");
    }
    if (
      (op === "sub-account/edit" || op === "sub-account/delete") &&
      this.has("sks-cap") &&
      Array.isArray(request.sks) &&
      request.sks.length > SKS_CAP
    ) {
      return new ErrorAnswer(400, "invalid_sks", `sks must name at most ${SKS_CAP} sub-accounts`);
    }
    if (op === "sub-account/create" && this.has("small-count-cap") && Number(request.count) > SMALL_COUNT_CAP) {
      return new ErrorAnswer(400, "invalid_count", `count must be at most ${SMALL_COUNT_CAP}`);
    }
    if (!ALIAS_OPS.has(op) || typeof request.alias !== "string") return undefined;
    if (this.has("short-aliases") && [...request.alias].length > SHORT_ALIAS_MAX) {
      return new ErrorAnswer(400, "invalid_alias", `alias must be at most ${SHORT_ALIAS_MAX} characters`);
    }
    if (this.has("restricted-aliases") && !RESTRICTED.test(request.alias)) {
      return new ErrorAnswer(400, "invalid_alias", "alias may hold only letters, digits, '-', '_', '.' and spaces");
    }
    return undefined;
  }

  /** The answer of `redirects` to a request for `path` (before anything is processed), or undefined. */
  redirect(path: string): Outcome | undefined {
    if (!this.has("redirects")) return undefined;
    return {
      status: 308,
      body: { error: { code: "moved", message: "moved permanently" } },
      headers: { location: `${MOVED_ORIGIN}${path}` },
    };
  }

  /**
   * The answer a write that was done gets instead of its own, or undefined: under `gateway-timeout-after-write`, the
   * first successful write of each kind (GATEWAY_LOST_OPS) is answered 504 by the gateway in front of the platform.
   */
  lostAnswer(op: string, outcome: Outcome): Outcome | undefined {
    if (
      !this.has("gateway-timeout-after-write") ||
      !GATEWAY_LOST_OPS.has(op) ||
      outcome.status !== 200 ||
      this.lost.has(op)
    )
      return undefined;
    this.lost.add(op);
    return { status: 504, text: GATEWAY_TIMEOUT_BODY, headers: { "content-type": "text/html" } };
  }

  /** How the sub-account list matches its alias filter. */
  aliasMatches(filter: string, alias: string): boolean {
    const [f, a] = this.has("lowercase-aliases") ? [filter.toLowerCase(), alias.toLowerCase()] : [filter, alias];
    return this.has("alias-filter-prefix") ? a.startsWith(f) : a === f;
  }

  /** An alias written as this platform keeps it (`lowercase-aliases`, `cut-aliases`). */
  private keptAlias(alias: string): string {
    let kept = this.has("lowercase-aliases") ? alias.toLowerCase() : alias;
    if (this.has("cut-aliases") && [...kept].length > CUT_ALIAS_LENGTH)
      kept = [...kept].slice(0, CUT_ALIAS_LENGTH).join("");
    return kept;
  }

  /** Whether a sub-account edit merges its pricing into the held one (`merged-pricing`). */
  get mergesPricing(): boolean {
    return this.has("merged-pricing");
  }

  /** The cap of one list answer these readings add (list-no-total, list-cursor, unstable-ties), if any. */
  get listCap(): number | undefined {
    const caps = [
      this.has("list-no-total") && NO_TOTAL_LIST_CAP,
      this.has("list-cursor") && CURSOR_LIST_CAP,
      this.has("unstable-ties") && TIES_LIST_CAP,
    ];
    const given = caps.filter((c): c is number => typeof c === "number");
    return given.length === 0 ? undefined : Math.min(...given);
  }

  /** The order of a list answer (`unstable-ties`: sub-accounts of equal created_at shuffled at every request), if these readings change it. */
  get listOrder(): (<T extends { created_at: string }>(items: T[]) => T[]) | undefined {
    return this.has("unstable-ties") ? shuffledTies : undefined;
  }

  /** A list answer's body as this platform writes it (list-no-total, list-cursor, masked-tokens, masked-forms). */
  private listShape(body: Record<string, unknown>): Record<string, unknown> {
    if (this.has("list-no-total")) {
      const { total: _total, pageSize, ...rest } = body;
      body = { ...rest, page_size: pageSize };
    }
    if (this.has("list-cursor")) {
      const { total, page, pageSize, page_size: _size, ...rest } = body;
      const more = Number(page) * Number(pageSize) < Number(total);
      body = { ...rest, has_more: more, next: more ? cursorOfPage(Number(page) + 1) : null };
    }
    const mask = this.has("masked-tokens")
      ? (t: string) => maskKey(t)
      : this.has("masked-forms")
        ? otherMask
        : undefined;
    if (mask && Array.isArray(body.items)) {
      body = {
        ...body,
        items: body.items.map((i: unknown, n: number) =>
          isObject(i) && typeof i.token === "string" ? { ...i, token: mask(i.token, n) } : i,
        ),
      };
    }
    return body;
  }

  /** The answer as this platform writes it. */
  shape(op: string, outcome: Outcome): Outcome {
    // A redirect comes from in front of the platform (redirects): no reading of the platform's own shapes it.
    if (outcome.text !== undefined || this.on.size === 0 || (outcome.status >= 300 && outcome.status < 400))
      return outcome;
    if (
      this.has("idempotent-deletes") &&
      isObject(outcome.body) &&
      isObject(outcome.body.error) &&
      outcome.body.error.code === NOTHING_TO_DELETE
    ) {
      outcome = { status: 200, body: op === "api-key/delete" ? { deleted: 0 } : { success: true } };
    }
    const ok = outcome.status >= 200 && outcome.status < 300;
    if (!ok) return this.refusalShape(op, outcome);
    if (this.has("no-content") && NO_CONTENT_OPS.has(op)) return { status: 204, text: "" };
    let body = outcome.body;
    if (this.has("terse-writes")) body = terse(op, body);
    if (op === "sub-account/list" && isObject(body)) body = this.listShape(body);
    if (this.has("other-forms")) body = otherForms(body);
    if (this.has("extra-fields")) body = withExtraFields(body);
    if (this.has("snowflake-ids")) body = snowflakes(body);
    else if (this.has("one-api")) body = stringIds(body);
    if (this.has("one-api")) body = { success: true, message: "", data: body };
    if (this.has("envelope")) body = { code: 0, message: "success", data: body };
    if (this.has("envelope-no-data")) body = { code: 0, message: "success", data: body };
    // A JSON number beyond 2^53 cannot come from JSON.stringify: its digits are written in place of a marked string.
    if (this.has("snowflake-ids")) return { ...outcome, text: JSON.stringify(body).replace(SNOWFLAKE_MARK, "$1") };
    return { ...outcome, body };
  }

  /** `gone-400`: a 404 for an unknown key or token becomes a 400 with another code (the masked key kept in the message). */
  private goneShape(outcome: Outcome): Outcome {
    if (!this.has("gone-400") || outcome.status !== 404 || !isObject(outcome.body) || !isObject(outcome.body.error))
      return outcome;
    const gone = GONE_CODES[String(outcome.body.error.code)];
    if (!gone) return outcome;
    const masked = /(?:sk-)?\.\.\.\w+/.exec(String(outcome.body.error.message))?.[0];
    return {
      ...outcome,
      status: 400,
      body: { error: { code: gone.code, message: masked ? `${gone.message}: ${masked}` : gone.message } },
    };
  }

  private refusalShape(op: string, given: Outcome): Outcome {
    const outcome = this.goneShape(given);
    const error = isObject(outcome.body) && isObject(outcome.body.error) ? outcome.body.error : undefined;
    if (!error) return outcome;
    const { code, message } = error;
    const auth = outcome.status === 401;
    if (this.has("transient-200") && code === BUSY_CODE) return { status: 200, body: { success: false, message } };
    if (this.has("one-api"))
      return {
        status: auth ? 401 : 200,
        body: {
          success: false,
          message: auth ? ONE_API_UNAUTHORISED : inChinese(outcome.status, String(code), String(message)),
        },
      };
    if (this.has("envelope") && !auth) return { status: 200, body: { code, message, data: null } };
    if (this.has("envelope-no-data") && !auth) return { status: 200, body: { code, message } };
    if (this.has("refusals-200") && SUB_ACCOUNT_OPS(op) && !auth)
      return { status: 200, body: { success: false, code, message } };
    if (this.has("bare-errors")) return { ...outcome, body: { code, message } };
    return outcome;
  }
}

/** The emulator's own codes of an unknown key or token (handlers.ts), and what `gone-400` answers in their place. */
const GONE_CODES: Record<string, { code: string; message: string }> = {
  key_not_found: { code: "invalid_key", message: "invalid key" },
  sub_account_not_found: { code: "invalid_token", message: "invalid sub-account token" },
};

/**
 * `one-api`: a refusal's message as one-api words it, in Chinese: an unknown key or token as "does not exist" (the
 * masked key kept), a rate limit and a busy server as such; any other refusal says "bad request" and keeps the
 * emulator's own words after it (a cap's field and number, which the client reads).
 */
function inChinese(status: number, code: string, message: string): string {
  const masked = /(?:sk-)?\.\.\.\w+/.exec(message)?.[0] ?? "";
  if (code in GONE_CODES || code.endsWith("not_found")) return `令牌 ${masked} 不存在`.replace("  ", " ");
  if (status === 429) return "请求过于频繁，请稍后再试";
  if (status >= 500) return "服务器繁忙，请稍后再试";
  return `请求参数错误：${message}`;
}

/** `one-api`: each sub-account's `id` and `user_id` as a string of 19 digits. */
function stringIds(value: unknown, field?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => stringIds(v));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stringIds(v, k)]));
  if (field === "id" && (typeof value === "number" || typeof value === "string"))
    return String(SNOWFLAKE_BASE + BigInt(value));
  if (field === "user_id" && (typeof value === "number" || typeof value === "string"))
    return String(SNOWFLAKE_BASE * 2n + BigInt(value));
  return value;
}

/** `list-cursor`: the opaque cursor of a page, and the page of a cursor (NaN for one this list never gave). */
function cursorOfPage(page: number): string {
  return Buffer.from(`page:${page}`).toString("base64url");
}
function pageOfCursor(cursor: string): number {
  const match = /^page:(\d+)$/.exec(Buffer.from(cursor, "base64url").toString());
  return match ? Number(match[1]) : NaN;
}

/** `masked-forms`: the n-th token masked in one of the forms other platforms use, in turn. */
function otherMask(token: string, n: number): string {
  const prefix = token.startsWith("sk-") ? "sk-" : "";
  const secret = token.slice(prefix.length);
  const forms = [`${prefix}${secret.slice(0, 4)}****${secret.slice(-4)}`, "****", `${prefix}\u2026${secret.slice(-4)}`];
  return forms[n % forms.length];
}

/** `unstable-ties`: the list in creation order, each run of equal created_at in a new random order. */
function shuffledTies<T extends { created_at: string }>(items: T[]): T[] {
  const out: T[] = [];
  for (let i = 0; i < items.length; ) {
    let j = i;
    while (j < items.length && items[j].created_at === items[i].created_at) j++;
    const run = items.slice(i, j);
    for (let k = run.length - 1; k > 0; k--) {
      const r = Math.floor(Math.random() * (k + 1));
      [run[k], run[r]] = [run[r], run[k]];
    }
    out.push(...run);
    i = j;
  }
  return out;
}

/** The first snowflake id of `snowflake-ids`: the emulator's id 1 is answered as this plus 1. */
export const SNOWFLAKE_BASE = 1_234_567_890_123_456_789n;
const SNOWFLAKE_MARK = /"snowflake:(\d+)"/g;

/** `snowflake-ids`: each sub-account's `id` (a number of digits past 2^53, marked) and `user_id` (19 digits as a string). */
function snowflakes(value: unknown, field?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => snowflakes(v));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, snowflakes(v, k)]));
  if (field === "id" && (typeof value === "number" || typeof value === "string"))
    return `snowflake:${SNOWFLAKE_BASE + BigInt(value)}`;
  if (field === "user_id" && (typeof value === "number" || typeof value === "string"))
    return String(SNOWFLAKE_BASE * 2n + BigInt(value));
  return value;
}

/** `normalised-values`: a create or edit's IP allow-list as the platform keeps it, each bare address as its range. */
function withRanges(input: Record<string, unknown>): Record<string, unknown> {
  const config = input.security_config;
  if (!isObject(config) || !isObject(config.ip) || !Array.isArray(config.ip.allow)) return input;
  const allow = config.ip.allow.map((e: unknown) =>
    typeof e === "string" && !e.includes("/") ? `${e}/${e.includes(":") ? 128 : 32}` : e,
  );
  return { ...input, security_config: { ...config, ip: { ...config.ip, allow } } };
}

/** `rounded-factors`: a create or edit's pricing factors as the platform keeps them, rounded to ROUNDED_FACTOR_DECIMALS. */
function withRoundedFactors(input: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(input.model_pricing)) return input;
  const scale = 10 ** ROUNDED_FACTOR_DECIMALS;
  const round = (n: number) => Math.max(1 / scale, Math.round(n * scale) / scale);
  const model_pricing = input.model_pricing.map((e: unknown) =>
    isObject(e) && typeof e.pricing_factor === "number" ? { ...e, pricing_factor: round(e.pricing_factor) } : e,
  );
  return { ...input, model_pricing };
}

/** `terse-writes`: confirmations without the fields the spec shows. */
function terse(op: string, body: unknown): unknown {
  if (op === "api-key/status" || op === "api-key/delete") return { success: true };
  if (op === "sub-account/edit" || op === "sub-account/delete") return {};
  if (op === "sub-account/create" && isObject(body)) {
    const { success: _success, ...rest } = body;
    return rest;
  }
  return body;
}

const DECIMAL_FIELDS = new Set(["balance", "monthly_cost", "cost", "text_input_price", "text_output_price"]);
const INTEGER_FIELDS = new Set(["id", "user_id", "total", "context_window", "max_output_tokens", "deleted"]);
const TIME_FIELDS = new Set(["created_at", "updated_at"]);

/** `other-forms`: the same values in other plausible forms. */
function otherForms(value: unknown, field?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => otherForms(v));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, otherForms(v, k)]));
  if (field && DECIMAL_FIELDS.has(field) && typeof value === "string") return Number(value);
  if (field && INTEGER_FIELDS.has(field) && typeof value === "number") return String(value);
  if (field && TIME_FIELDS.has(field) && typeof value === "string")
    return new Date(value)
      .toISOString()
      .replace("T", " ")
      .replace(/\.\d+Z$/, "");
  return value;
}

/** A security config sent back under `extra-fields`, without the annotations withExtraFields adds; parts left empty dropped. */
function withoutAnnotations(config: Record<string, unknown>): Record<string, unknown> {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (!isObject(value)) return value;
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !EXTRA_FIELDS.includes(k) && !(k === "deny" && Array.isArray(value.allow)))
        .map(([k, v]) => [k, strip(v)]),
    );
  };
  const parts = Object.entries(strip(config) as Record<string, unknown>).filter(
    ([, part]) => !isObject(part) || Object.keys(part).length > 0,
  );
  return Object.fromEntries(parts);
}

/** The fields `extra-fields` adds to every object. */
const EXTRA_FIELDS = ["x_meta", "x_flag"];

/** `extra-fields`: every object gains fields no spec lists (an object, a list and a flag), at every depth. */
function withExtraFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withExtraFields);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, withExtraFields(v)]),
  );
  out.x_meta = { source: "reading", tags: ["a"], revision: 2 };
  out.x_flag = true;
  // The ip part gains a sibling of `allow` (the example of issue 35): a list the package does not know.
  if (Array.isArray(out.allow)) out.deny = ["192.0.2.1"];
  return out;
}
