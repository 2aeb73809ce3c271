import got, { RequestError, type Response } from "got";
import { ZodError, type z } from "zod";
import { ADMIN_KEY_PREFIX, DEFAULT_RATE_LIMITS, HOUR_MS, KEY_PREFIX, MAX_RESPONSE_BYTES, MAX_RETRY_AFTER_MS, MINUTE_MS, RATE_LIMIT_STATUS, type RateLimit } from "../api/assumptions.js";
import { wirePath } from "../api/casing.js";
import {
  ApiError,
  ConfigurationError,
  ConnectionError,
  LlmAccountsError,
  RateLimitError,
  ResponseTooLargeError,
  ResponseValidationError,
  TimeoutError,
} from "./errors.js";
import { BudgetCounter, SlidingWindowLimiter } from "./limiter.js";
import { ShowsOriginOnly } from "./masked.js";
import { readAtMost } from "./responseSize.js";
import { describeOperation, type Call, type Group, type Operation } from "../api/operations.js";
import { fingerprint, redact } from "../api/redact.js";
import { SYSTEM_CLOCK, type Clock } from "./clock.js";
import { classify, retryAfterMs, RetryPolicy, type RetryOptions } from "./retry.js";
import { ErrorBodySchema } from "../api/schemas/common.js";
import { missingSetting, noBaseUrl, SETTINGS, validateRateLimitOptions, type RateLimitOptions } from "./settings.js";
import { USER_AGENT } from "../version.js";

export interface TransportOptions {
  baseUrl: string;
  adminKey?: string;
  accountKey?: string;
  /** Why a credential is absent, when its source was named (an unset variable): said when an operation needs it. */
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
}

/** The one got instance: no retries of its own (the RetryPolicy decides), no redirects, text bodies, our errors. */
const http = got.extend({
  responseType: "text",
  throwHttpErrors: false,
  followRedirect: false,
  retry: { limit: 0 },
  headers: { accept: "application/json", "user-agent": USER_AGENT },
});

/** Limiters shared by every client of the process that uses the same origin, credential and operation. */
const sharedLimiters = new Map<string, { windows: SlidingWindowLimiter[]; budgets: BudgetCounter[] }>();

function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * The text of a URL without its user info (`https://user:pass@host` → `https://host`), for messages. Up to the
 * last `@`: in a text that is not a URL, a password may hold any character.
 */
export function withoutUserInfo(raw: string): string {
  return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)?.*@/is, "$1");
}

/** Parses and checks the base URL: https, or http on a loopback host only. */
export function parseBaseUrl(raw: string | undefined): URL {
  if (!raw) throw noBaseUrl();
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigurationError(`base URL "${redact(withoutUserInfo(raw))}" is not a URL`);
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopback(url.hostname))) {
    throw new ConfigurationError(`base URL must use https (plain http is allowed on a loopback host only): ${url.origin}`);
  }
  if (url.username || url.password) throw new ConfigurationError("base URL must not carry credentials");
  return url;
}

function limitsFor(op: Operation, options: TransportOptions["rateLimits"]): RateLimit[] {
  if (options === false) return [];
  const scale = (options?.windowMs ?? MINUTE_MS) / MINUTE_MS;
  const override = options?.perOperation?.[op.name];
  const base: RateLimit[] =
    override === undefined
      ? (DEFAULT_RATE_LIMITS[op.name] ?? [])
      : typeof override === "number"
        ? [{ limit: override, windowMs: MINUTE_MS }, ...(DEFAULT_RATE_LIMITS[op.name] ?? []).slice(1)]
        : override;
  return base.map((l) => ({ limit: l.limit, windowMs: l.windowMs * scale }));
}

/** The API's code and message from an error body: the shape of spec 7, else a bare `{code, message}`. */
function errorDetailsOf(body: string): { code?: string; apiMessage?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { apiMessage: body.trim() ? `(not JSON) ${body.trim().slice(0, 200)}` : undefined };
  }
  const standard = ErrorBodySchema.safeParse(parsed);
  if (standard.success) return { code: standard.data.error.code, apiMessage: standard.data.error.message };
  const bare = (parsed ?? {}) as { code?: unknown; message?: unknown };
  return {
    code: typeof bare.code === "string" ? bare.code : undefined,
    apiMessage: typeof bare.message === "string" ? bare.message : undefined,
  };
}

/** What one request carries: the operation, and its body (or query, for GETs) typed by the operation's schema. */
/**
 * The only place that talks HTTP: credentials per group, timeouts, the shared rate limiter, retries, response
 * validation and redaction. It never rethrows or logs a raw got error, whose options hold the Authorization header.
 */
export class HttpTransport extends ShowsOriginOnly {
  private readonly base: URL;
  private readonly retry: RetryPolicy;
  private readonly clock: Pick<Clock, "now" | "sleep">;

  constructor(private readonly options: TransportOptions) {
    super();
    this.base = parseBaseUrl(options.baseUrl);
    validateRateLimitOptions(options.rateLimits);
    this.retry = new RetryPolicy(options.retry);
    this.clock = options.clock ?? SYSTEM_CLOCK;
  }

  /** The origin requests go to (no credentials in it). */
  get origin(): string {
    return this.base.origin;
  }

  /** Sends one operation, with limiter and retries; returns the response as the operation's schema parsed it. */
  async send<O extends Operation>(call: Call<O>): Promise<z.output<O["response"]>> {
    const { op } = call;
    const credential = this.credentialFor(op.group);
    const requestBody = this.validateRequest(call);
    const limiter = this.limiterFor(op, credential);
    let attempt = 0;
    let rateLimited = 0;
    for (;;) {
      attempt += 1;
      for (const budget of limiter.budgets) {
        const taken = budget.take();
        if (!taken.ok) {
          throw new RateLimitError(
            `429 client_budget_exhausted: the budget of ${budget.limit.limit} ${op.name} calls per ${Math.round(budget.limit.windowMs / HOUR_MS)}h is used up (${describeOperation(op)})`,
            { operation: describeOperation(op), status: 429, code: "client_budget_exhausted" },
            taken.retryAfterMs,
          );
        }
      }
      const releases = await Promise.all(limiter.windows.map((w) => w.acquire()));
      const started = Date.now();
      let outcome: { res: Response<string> } | { error: LlmAccountsError; sent: boolean; transient: boolean };
      try {
        outcome = { res: await this.request(op, credential, requestBody) };
      } catch (err) {
        if (err instanceof ResponseTooLargeError) throw err; // the same request would bring the same answer
        outcome = this.networkError(op, err, requestBody);
      } finally {
        for (const release of releases) release();
      }
      const elapsed = Date.now() - started;

      if ("error" in outcome) {
        this.log(`${describeOperation(op)} failed after ${elapsed}ms (attempt ${attempt}): ${outcome.error.message}`);
        const wait = this.retry.afterFailure(op.retry, attempt, outcome);
        if (wait === undefined) throw outcome.error;
        await this.clock.sleep(wait);
        continue;
      }

      const { res } = outcome;
      this.log(`${describeOperation(op)} ${res.statusCode} ${elapsed}ms (attempt ${attempt})`);
      if (res.statusCode >= 200 && res.statusCode < 300) return this.parseResponse(op, res.body, requestBody);

      const details = { operation: describeOperation(op), ...errorDetailsOf(res.body), requestId: res.headers["x-request-id"] as string | undefined };
      if (res.statusCode === RATE_LIMIT_STATUS) {
        rateLimited += 1;
        const asked = retryAfterMs(res.headers, this.clock.now());
        const next = this.retry.afterRateLimit(rateLimited, asked);
        if ("waitMs" in next) {
          await this.clock.sleep(next.waitMs);
          attempt -= 1; // a 429 was not processed: it does not use up an attempt of the other kinds
          continue;
        }
        if (next.giveUp === "too-long" && asked !== undefined) {
          throw ApiError.fromResponse(429, { ...details, apiMessage: tooLong(details.apiMessage, asked, this.clock.now()) }, { retryAfterMs: asked });
        }
        throw ApiError.fromResponse(429, details, { retryAfterMs: asked });
      }
      if (res.statusCode >= 300 && res.statusCode < 400) {
        throw ApiError.fromResponse(res.statusCode, {
          ...details,
          code: "redirect_refused",
          apiMessage: `the server redirected to another address; redirects are not followed so that the credential is never sent elsewhere`,
        });
      }
      if (res.statusCode >= 500) {
        const wait = this.retry.afterFailure(op.retry, attempt, { sent: true, transient: true });
        if (wait !== undefined) {
          await this.clock.sleep(wait);
          continue;
        }
        if (op.retry === "create") {
          throw ApiError.fromResponse(res.statusCode, { ...details, mayHaveSucceeded: true, apiMessage: `${details.apiMessage ?? "server error"}; ${createDoubt(op)}` });
        }
      }
      throw ApiError.fromResponse(res.statusCode, details);
    }
  }

  private credentialFor(group: Group): string {
    if (group === "management") {
      const key = this.options.adminKey;
      if (!key && this.options.missingKeys?.adminKey) throw new ConfigurationError(this.options.missingKeys.adminKey);
      if (!key) {
        throw missingSetting("adminKey", "no admin key for the management group", " (--secret)");
      }
      if (!key.startsWith(ADMIN_KEY_PREFIX)) {
        throw new ConfigurationError(
          `the management group needs an admin key (one that begins with "${ADMIN_KEY_PREFIX}"); the key given is not one: check ${SETTINGS.adminKey.env} / ${SETTINGS.adminKey.config}`,
        );
      }
      return key;
    }
    const key = this.options.accountKey;
    if (!key && this.options.missingKeys?.accountKey) throw new ConfigurationError(this.options.missingKeys.accountKey);
    if (!key) {
      throw missingSetting("accountKey", "no main account key for the sub-account group", " (--secret)");
    }
    if (key.startsWith(ADMIN_KEY_PREFIX) || !key.startsWith(KEY_PREFIX)) {
      throw new ConfigurationError(
        `the sub-account group needs the main account key (${KEY_PREFIX}..., not an admin key); check ${SETTINGS.accountKey.env} / ${SETTINGS.accountKey.config}`,
      );
    }
    return key;
  }

  private validateRequest(call: Call): unknown {
    const parsed = call.op.request.safeParse(call.body ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new LlmAccountsError(`invalid request: ${wirePath(issue.path)}: ${issue.message} (${describeOperation(call.op)})`, {
        operation: describeOperation(call.op),
      });
    }
    // Send what the caller gave (minus nothing): the schema checks it, the wire gets the caller's exact values.
    return call.body ?? {};
  }

  private limiterFor(op: Operation, credential: string): { windows: SlidingWindowLimiter[]; budgets: BudgetCounter[] } {
    const limits = limitsFor(op, this.options.rateLimits);
    const id = `${this.base.origin}|${fingerprint(credential)}|${op.name}|${JSON.stringify(limits)}`;
    let entry = sharedLimiters.get(id);
    if (!entry) {
      // Long windows (a day) are budgets that refuse; waiting a day inside a deployment helps nobody.
      entry = {
        windows: limits.filter((l) => l.windowMs <= 10 * MINUTE_MS).map((l) => new SlidingWindowLimiter(l)),
        budgets: limits.filter((l) => l.windowMs > 10 * MINUTE_MS).map((l) => new BudgetCounter(l)),
      };
      sharedLimiters.set(id, entry);
    }
    return entry;
  }

  private async request(op: Operation, credential: string, body: unknown): Promise<Response<string>> {
    const url = new URL(this.base.pathname.replace(/\/$/, "") + op.path, this.base);
    const query = op.method === "GET" && op.group === "sub-account" ? (body as Record<string, unknown>) : undefined;
    if (query) {
      for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const pending = http(url, {
      method: op.method,
      body: op.method === "GET" ? undefined : JSON.stringify(body),
      headers: {
        authorization: `Bearer ${credential}`,
        "content-type": op.method === "GET" ? undefined : "application/json",
      },
      timeout: {
        connect: this.options.timeouts?.connectMs ?? 10_000,
        request: this.options.timeouts?.requestMs ?? 60_000,
      },
    });
    const doubt = op.retry === "create" ? `; ${createDoubt(op)}` : "";
    return readAtMost(pending, this.options.maxResponseBytes ?? MAX_RESPONSE_BYTES, { operation: describeOperation(op), doubt, mayHaveSucceeded: op.retry === "create" || undefined });
  }

  /** Turns a got failure into our error, keeping only codes: never the got error itself. */
  private networkError(op: Operation, err: unknown, body: unknown): { error: LlmAccountsError; sent: boolean; transient: boolean } {
    const operation = describeOperation(op);
    const code = err instanceof RequestError ? err.code : undefined;
    const event = (err as { event?: string }).event;
    const isTimeout = err instanceof RequestError && err.name === "TimeoutError";
    // TLS sends no request byte before the handshake completes: an https request without `secureConnect` was not sent.
    const timings = err instanceof RequestError ? err.timings : undefined;
    const handshakeIncomplete = this.base.protocol === "https:" && timings !== undefined && timings.secureConnect === undefined;
    const { sent, transient, tls } = classify({ code, timeoutEvent: isTimeout ? (event ?? "request") : undefined, handshakeIncomplete });
    const doubt = sent && op.retry === "create" ? `; ${createDoubt(op)}` : tls ? "; the TLS handshake failed, so nothing was sent" : "";
    if (isTimeout) {
      return { sent, transient, error: new TimeoutError(`timed out (${event ?? "request"}) talking to ${this.base.origin}${doubt} (${operation})`, { operation, code, mayHaveSucceeded: sent && op.retry === "create" }) };
    }
    return {
      sent,
      transient,
      error: new ConnectionError(`connection to ${this.base.origin} failed: ${code ?? "network error"}${doubt} (${operation})`, {
        operation,
        code,
        mayHaveSucceeded: sent && op.retry === "create",
      }),
    };
  }

  private parseResponse<O extends Operation>(op: O, body: string, requestBody: unknown): z.output<O["response"]> {
    const doubt = op.retry === "create" ? `; ${createDoubt(op)}` : "";
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw new ResponseValidationError(`the response is not JSON${doubt} (${describeOperation(op)})`, {
        operation: describeOperation(op),
        mayHaveSucceeded: op.retry === "create" || undefined,
      });
    }
    try {
      // The table pairs each operation with its response schema; a generic O loses that pairing in zod 4's types.
      return op.response.parse(json) as z.output<O["response"]>;
    } catch (err) {
      const issue = err instanceof ZodError ? err.issues[0] : undefined;
      const field = issue ? wirePath(issue.path) || "(body)" : "(body)";
      throw new ResponseValidationError(
        `the response field ${field} is invalid: ${issue?.message ?? "unexpected shape"}${doubt} (${describeOperation(op)})`,
        { operation: describeOperation(op), mayHaveSucceeded: op.retry === "create" || undefined },
      );
    }
  }

  private log(line: string): void {
    this.options.logger?.(redact(line));
  }
}

/** The message of a 429 whose wait is longer than the client waits: how long, and when to come back. */
function tooLong(apiMessage: string | undefined, askedMs: number, now: number): string {
  const seconds = Math.ceil(askedMs / 1000);
  const until = now + askedMs;
  const when = Number.isFinite(until) && until < 8.64e15 ? ` (at ${new Date(until).toISOString()})` : "";
  return `${apiMessage ?? "rate limited"}; the server asks to wait ${seconds} s, more than the ${MAX_RETRY_AFTER_MS / 1000} s this client waits: retry after that time${when}`;
}

/** What the transport knows of a failed create: it may have happened. What to do about it is the runtime's to say. */
export function createDoubt(op: Operation): string {
  const what = op.name === "api-key/create" ? "the key" : "the sub-accounts";
  return `${what} may have been created although no answer came back`;
}
