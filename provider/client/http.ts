import type { Got, RequestError, Response } from "got";
import { ZodError, type z } from "zod";
import { HOUR_MS, MAX_RESPONSE_BYTES, MAX_RETRY_AFTER_MS, RATE_LIMIT_STATUS } from "../api/assumptions.js";
import { wirePath } from "../api/casing.js";
import { isObject } from "../api/canonical.js";
import { parseAnswerJson } from "../api/schemas/answers.js";
import {
  ApiError,
  ConnectionError,
  LlmAccountsError,
  RateLimitError,
  ResponseTooLargeError,
  ResponseValidationError,
  TimeoutError,
  UnknownAnswerError,
} from "./errors.js";
import { credentialFor, parseBaseUrl, type PlatformReadings, type TransportOptions } from "./config.js";
import { PROCESS_LIMITERS, type OperationLimiters, type RateLimiters } from "./limiter.js";
import { ShowsOriginOnly } from "./apiGroup.js";
import { readAtMost } from "./responseSize.js";
import {
  AmbiguousAnswerError,
  detailsOf as refusalDetails,
  judge,
  platformError,
  UnclassifiedAnswerError,
  type Judgement,
  type Refusal,
} from "./refusals.js";
import { describeOperation, type Call, type Operation } from "../api/operations.js";
import { redact } from "../api/redact.js";
import { SYSTEM_CLOCK, type Clock } from "./clock.js";
import { classify, retryAfterMs, RetryPolicy } from "./retry.js";
import { validateRateLimitOptions } from "./settings.js";
import { USER_AGENT } from "../version.js";

/** got, once loaded, and its one instance: no retries of its own (the RetryPolicy decides), no redirects, text bodies. */
let loaded: { http: Got; RequestError: typeof RequestError } | undefined;

/**
 * got is loaded at the first request, not with this module: a program imports the package (and with it the
 * client, for its data sources and exports) but sends nothing itself, nor does a preview's plugin (check and
 * diff call no API). got and its dependencies cost a process about 14 MiB and a few hundred milliseconds.
 */
async function loadGot(): Promise<NonNullable<typeof loaded>> {
  if (loaded) return loaded;
  const got = await import("got");
  return (loaded ??= {
    RequestError: got.RequestError,
    http: got.default.extend({
      responseType: "text",
      throwHttpErrors: false,
      followRedirect: false,
      retry: { limit: 0 },
      headers: { accept: "application/json", "user-agent": USER_AGENT },
    }),
  });
}

/** The API's code and message from an error body: the shape of spec 7, a bare `{code, message}` and their kin (refusals.ts). */
function errorDetailsOf(body: string): { code?: string; apiMessage?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { apiMessage: body.trim() ? `(not JSON) ${body.trim().slice(0, 200)}` : undefined };
  }
  return isObject(parsed) ? refusalDetails(parsed) : {};
}

/** A network failure as our error, with what it tells: whether the request may have been sent, whether to try again. */
type NetworkFailureOutcome = { error: LlmAccountsError; sent: boolean; transient: boolean };
/** What one try brought: an answer of any status, or a network failure. */
type Attempt = { res: Response<string> } | { failure: NetworkFailureOutcome };

/** The details every error of an answer carries: the operation, the API's code and message, the request id. */
function detailsOf(op: Operation, res: Response<string>) {
  return {
    operation: describeOperation(op),
    ...errorDetailsOf(res.body),
    requestId: res.headers["x-request-id"] as string | undefined,
  };
}

/**
 * The only place that talks HTTP: it sends one operation with the credential of its group, within the shared
 * rate limits, retries what is safe to retry, and parses the answer. It never rethrows or logs a raw got error,
 * whose options hold the Authorization header.
 */
export class HttpTransport extends ShowsOriginOnly {
  private readonly base: URL;
  private readonly retry: RetryPolicy;
  /**
   * The limiters of each operation and credential, looked up in the registry at their first request: the lookup
   * hashes the credential, and a large refresh sends thousands of requests through one transport.
   */
  private readonly limitersOf = new Map<string, OperationLimiters>();
  /** got with this transport's timeouts and one credential's Authorization, made at its first request: got merges fewer options per request. */
  private readonly gotFor = new Map<string, Got>();
  /** The clock retries wait on; the API groups wait on it too (a read that looks again for what was just written). */
  readonly clock: Pick<Clock, "now" | "sleep">;

  constructor(
    private readonly options: TransportOptions,
    /** Where its limiters come from: shared with every transport given the same registry. */
    private readonly limiters: RateLimiters = PROCESS_LIMITERS,
  ) {
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

  /** The readings of the spec's open points that settings chose. */
  get platform(): PlatformReadings | undefined {
    return this.options.platform;
  }

  /**
   * Sends one operation, with limiter and retries; returns the response as the operation's schema parsed it.
   * Each try is one `attempt`; what follows a failed try is decided by the rule of its kind (rate limit, server
   * error, network failure), which gives the wait before the next try or throws the error that ends the call.
   */
  async send<O extends Operation>(call: Call<O>): Promise<z.output<O["response"]>> {
    const { op } = call;
    const credential = credentialFor(op.group, this.options);
    const requestBody = this.validateRequest(call);
    const limiters = this.limitersFor(op, credential);
    // Attempts that failed, and 429s: a 429 was not processed, so it does not use up an attempt of the other kinds.
    let failed = 0;
    let rateLimited = 0;
    // Whether a try before this one may have done the write without its answer coming back (errors say so: afterLostAnswer).
    let lostBefore = false;
    for (;;) {
      const attempt = failed + 1;
      const outcome = await this.attempt(op, credential, requestBody, limiters, attempt);
      let waitMs: number;
      try {
        const next = this.next(op, outcome, attempt, rateLimited);
        if ("answer" in next) return next.answer;
        waitMs = next.waitMs;
      } catch (err) {
        throw lostBefore ? afterLostAnswer(err) : err;
      }
      if ("failure" in outcome || outcome.res.statusCode >= 500) failed += 1;
      else rateLimited += 1;
      lostBefore ||= "failure" in outcome ? outcome.failure.sent : outcome.res.statusCode >= 500;
      await this.clock.sleep(waitMs);
    }
  }

  /**
   * What one try's outcome leads to: the answer, or the wait before the next try; or the error that ends the call.
   * Each kind (rate limit, server error, network failure, an answer that is not the platform's) has its rule.
   */
  private next<O extends Operation>(
    op: O,
    outcome: Attempt,
    attempt: number,
    rateLimited: number,
  ): { answer: z.output<O["response"]> } | { waitMs: number } {
    if ("failure" in outcome) return { waitMs: this.waitAfterNetworkFailure(op, attempt, outcome.failure) };
    const { res } = outcome;
    if (res.statusCode >= 200 && res.statusCode < 300) {
      const read = this.readAnswer(op, res);
      if ("answer" in read) return read;
      // A refusal in a 2xx (client/refusals.ts): never a success. A transient one (a rate limit, "busy, try
      // again") was not processed: it waits as a 429 does, for writes too.
      if (read.refusal.meaning !== "transient") throw refused(op, res, read.refusal);
      return { waitMs: this.waitAfterRateLimit(op, rateLimited + 1, res, read.refusal) };
    }
    // A 4xx (but a 401 or a 429) whose body is not the platform's error JSON is a gateway's or a proxy's page: it
    // says nothing of the request (a 404 page is no "gone"). With a profile, an empty body is judged by it (no-body).
    const clientError =
      res.statusCode >= 400 && res.statusCode < 500 && res.statusCode !== 401 && res.statusCode !== RATE_LIMIT_STATUS;
    const profile = this.options.platform?.profile;
    if (clientError && !platformError(res.body) && !(profile && res.body.trim() === "")) throw this.foreign(op, res);
    if (profile && res.statusCode >= 400 && res.statusCode < 500) {
      // With a profile, a 4xx means what the profile's signatures say (a 400 `invalid_key` may be gone), never a guess.
      const judged = judge(op.group, res.statusCode, parsedJson(res.body), profile);
      if ("unclassified" in judged) throw unclassified(op, res, judged);
      if (!("refusal" in judged) || judged.refusal.meaning !== "transient")
        throw refused(op, res, "refusal" in judged ? judged.refusal : undefined);
      return {
        waitMs: this.waitAfterRateLimit(
          op,
          rateLimited + 1,
          res,
          res.statusCode === RATE_LIMIT_STATUS ? undefined : judged.refusal,
        ),
      };
    }
    if (res.statusCode === RATE_LIMIT_STATUS) return { waitMs: this.waitAfterRateLimit(op, rateLimited + 1, res) };
    return { waitMs: this.waitAfterErrorStatus(op, attempt, res) };
  }

  /**
   * The error of an answer that is not the platform's (UnknownAnswerError): what came (status, content type, the
   * page's title or first words) and the address it came from (origin and path: never a query, which may name a
   * token), so that a base URL missing the API's path, a maintenance page or a proxy is seen for what it is.
   */
  private foreign(op: Operation, res: Response<string>): UnknownAnswerError {
    const operation = describeOperation(op);
    const type = String(res.headers["content-type"] ?? "no content type")
      .split(";")[0]
      .trim();
    const text = res.body.trim();
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1];
    const words = (title ?? text)
      .replace(/\s+/g, " ")
      .replace(/[^\x20-\x7e\u00a0-\uffff]/g, "?")
      .slice(0, 80);
    const json = parsedJson(text);
    const what =
      text === ""
        ? "an empty body"
        : json === undefined
          ? `${type} ${JSON.stringify(words)}`
          : `JSON that is not its: ${JSON.stringify(words)}`;
    const from = `${this.base.origin}${this.base.pathname.replace(/\/$/, "")}${op.path}`;
    return new UnknownAnswerError(
      `the response is not the platform's (HTTP ${res.statusCode}, ${what}) from ${from}: nothing is concluded from it (${operation})`,
      { operation, status: res.statusCode, requestId: res.headers["x-request-id"] as string | undefined },
    );
  }

  /**
   * One try: the call's long-window budgets, its window limiters held for the request only, and the request.
   * Returns the answer or the network failure (never a got error); an answer too large to read is thrown, as
   * the same request would bring the same answer.
   */
  private async attempt(
    op: Operation,
    credential: string,
    body: unknown,
    limiters: OperationLimiters,
    attempt: number,
  ): Promise<Attempt> {
    this.takeBudgets(op, limiters);
    const releases = await Promise.all(limiters.windows.map((w) => w.acquire()));
    const started = Date.now();
    try {
      const res = await this.request(op, credential, body);
      this.log(`${describeOperation(op)} ${res.statusCode} ${Date.now() - started}ms (attempt ${attempt})`);
      return { res };
    } catch (err) {
      // An answer came: the request was processed.
      if (err instanceof ResponseTooLargeError) throw mayHaveSucceeded(op, err);
      const failure = this.networkError(op, err);
      this.log(
        `${describeOperation(op)} failed after ${Date.now() - started}ms (attempt ${attempt}): ${failure.error.message}`,
      );
      return { failure };
    } finally {
      for (const release of releases) release();
    }
  }

  /** After a network failure: the wait before another try, or its error (in doubt when the request was sent). */
  private waitAfterNetworkFailure(op: Operation, attempt: number, failure: NetworkFailureOutcome): number {
    const wait = this.retry.afterFailure(op.retry, attempt, failure);
    if (wait !== undefined) return wait;
    throw failure.sent ? mayHaveSucceeded(op, failure.error) : failure.error;
  }

  /** After the `count`th 429 in a row (or a refusal that says rate limit): the wait the server asks for (within the policy's bounds), or the 429. */
  private waitAfterRateLimit(op: Operation, count: number, res: Response<string>, said?: Refusal): number {
    const details = said
      ? {
          ...detailsOf(op, res),
          code: said.code,
          apiMessage: `${said.apiMessage ?? "refused without a message"} (answered ${said.form.replace("2xx", String(res.statusCode))})`,
        }
      : detailsOf(op, res);
    const status = said?.meansStatus ?? RATE_LIMIT_STATUS;
    const asked = retryAfterMs(res.headers, this.clock.now());
    const next = this.retry.afterRateLimit(count, asked);
    if ("waitMs" in next) return next.waitMs;
    if (next.giveUp === "too-long" && asked !== undefined) {
      throw ApiError.fromResponse(
        status,
        { ...details, apiMessage: tooLong(details.apiMessage, asked, this.clock.now()) },
        { retryAfterMs: asked },
      );
    }
    throw ApiError.fromResponse(status, details, { retryAfterMs: asked });
  }

  /**
   * After any other error status: a 5xx (processed, perhaps) is tried again when the operation allows it, else
   * thrown in doubt; a redirect is refused (the credential is never sent elsewhere); any other status is thrown.
   */
  private waitAfterErrorStatus(op: Operation, attempt: number, res: Response<string>): number {
    const details = detailsOf(op, res);
    if (res.statusCode >= 300 && res.statusCode < 400) {
      throw ApiError.fromResponse(res.statusCode, {
        ...details,
        code: "redirect_refused",
        apiMessage:
          `the server redirected (${res.statusCode}) to ${redirectTarget(res.headers.location)}; redirects are not followed so that the credential is ` +
          "never sent elsewhere: if the API moved, set baseUrl (LLM_ACCOUNTS_BASE_URL) to its new address",
      });
    }
    if (res.statusCode < 500) throw ApiError.fromResponse(res.statusCode, details);
    const wait = this.retry.afterFailure(op.retry, attempt, { sent: true, transient: true });
    if (wait !== undefined) return wait;
    throw mayHaveSucceeded(op, ApiError.fromResponse(res.statusCode, details));
  }

  /** The registry's limiters of an operation sent with `credential` (RateLimiters.for), kept after the first lookup. */
  private limitersFor(op: Operation, credential: string): OperationLimiters {
    const id = `${op.name}|${credential}`;
    let entry = this.limitersOf.get(id);
    if (!entry) {
      entry = this.limiters.for(op, this.base.origin, credential, this.options.rateLimits);
      this.limitersOf.set(id, entry);
    }
    return entry;
  }

  /** Takes one call from each long-window budget of the operation, or refuses with a 429 of the client's own. */
  private takeBudgets(op: Operation, limiters: OperationLimiters): void {
    for (const budget of limiters.budgets) {
      const taken = budget.take();
      if (!taken.ok) {
        throw new RateLimitError(
          `429 client_budget_exhausted: the budget of ${budget.limit.limit} ${op.name} calls per ${Math.round(budget.limit.windowMs / HOUR_MS)}h is used up (${describeOperation(op)})`,
          { operation: describeOperation(op), status: 429, code: "client_budget_exhausted" },
          taken.retryAfterMs,
        );
      }
    }
  }

  private validateRequest(call: Call): unknown {
    const parsed = call.op.request.safeParse(call.body ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new LlmAccountsError(
        `invalid request: ${wirePath(issue.path)}: ${issue.message} (${describeOperation(call.op)})`,
        {
          operation: describeOperation(call.op),
        },
      );
    }
    // Send what the caller gave (minus nothing): the schema checks it, the wire gets the caller's exact values.
    return call.body ?? {};
  }

  private async request(op: Operation, credential: string, body: unknown): Promise<Response<string>> {
    const url = new URL(this.base.pathname.replace(/\/$/, "") + op.path, this.base);
    const query = op.method === "GET" && op.group === "sub-account" ? (body as Record<string, unknown>) : undefined;
    if (query) {
      for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const http = await this.gotWith(credential);
    const request = (signal: AbortSignal) =>
      http(url, {
        signal,
        method: op.method,
        body: op.method === "GET" ? undefined : JSON.stringify(body),
        headers: op.method === "GET" ? undefined : { "content-type": "application/json" },
      });
    return readAtMost(request, this.options.maxResponseBytes ?? MAX_RESPONSE_BYTES, {
      operation: describeOperation(op),
    });
  }

  /** got with this transport's timeouts and `credential` sent as the Bearer token: one instance per credential. */
  private async gotWith(credential: string): Promise<Got> {
    const { http } = await loadGot();
    let instance = this.gotFor.get(credential);
    if (!instance) {
      instance = http.extend({
        headers: { authorization: `Bearer ${credential}` },
        timeout: {
          connect: this.options.timeouts?.connectMs ?? 10_000,
          request: this.options.timeouts?.requestMs ?? 60_000,
        },
      });
      this.gotFor.set(credential, instance);
    }
    return instance;
  }

  /** Turns a got failure into our error, keeping only codes: never the got error itself. */
  private networkError(op: Operation, err: unknown): NetworkFailureOutcome {
    const operation = describeOperation(op);
    // A got failure comes from a request, so got is loaded by then.
    const RequestError = loaded?.RequestError;
    const gotError = RequestError !== undefined && err instanceof RequestError ? err : undefined;
    const code = gotError?.code;
    const event = (err as { event?: string }).event;
    const isTimeout = gotError?.name === "TimeoutError";
    // TLS sends no request byte before the handshake completes: an https request without `secureConnect` was not sent.
    const timings = gotError?.timings;
    const handshakeIncomplete =
      this.base.protocol === "https:" && timings !== undefined && timings.secureConnect === undefined;
    const { sent, transient, tls } = classify({
      code,
      timeoutEvent: isTimeout ? (event ?? "request") : undefined,
      handshakeIncomplete,
    });
    const tlsFailed = tls ? "; the TLS handshake failed, so nothing was sent" : "";
    if (isTimeout) {
      return {
        sent,
        transient,
        error: new TimeoutError(
          `timed out (${event ?? "request"}) talking to ${this.base.origin}${tlsFailed} (${operation})`,
          { operation, code },
        ),
      };
    }
    return {
      sent,
      transient,
      error: new ConnectionError(
        `connection to ${this.base.origin} failed: ${code ?? "network error"}${tlsFailed} (${operation})`,
        { operation, code },
      ),
    };
  }

  /**
   * A 2xx answer: a refusal in one of the shapes client/refusals.ts knows, or the answer (unwrapped from its
   * envelope) parsed by the operation's schema. One that cannot be read leaves a create in doubt (it was processed).
   */
  private readAnswer<O extends Operation>(
    op: O,
    res: Response<string>,
  ): { answer: z.output<O["response"]> } | { refusal: Refusal } {
    const body = res.body;
    try {
      let json: unknown;
      // A 204 has no body (RFC 9110): `{}`, which the operation's schema takes only where no field is needed (a
      // delete, a status, a sub-account edit: done); a get, a list or a create then fails. Any other 2xx must
      // carry a JSON object: an empty 200, `null`, a page or text is not the platform's answer (foreign).
      if (res.statusCode === 204) json = {};
      else {
        try {
          // An integer beyond 2^53 (a snowflake id) kept as its digits, never rounded (api/schemas/answers.ts).
          json = body.trim() === "" ? undefined : parseAnswerJson(body);
        } catch {
          json = undefined;
        }
        if (!isObject(json)) throw this.foreign(op, res);
      }
      const read = judge(op.group, res.statusCode, json, this.options.platform?.profile);
      if ("unclassified" in read) throw unclassified(op, res, read);
      if ("refusal" in read) return read;
      return { answer: this.parseResponse(op, read.answer) };
    } catch (err) {
      throw mayHaveSucceeded(op, err);
    }
  }

  private parseResponse<O extends Operation>(op: O, json: unknown): z.output<O["response"]> {
    try {
      // The table pairs each operation with its response schema; a generic O loses that pairing in zod 4's types.
      return op.response.parse(json) as z.output<O["response"]>;
    } catch (err) {
      const issue = err instanceof ZodError ? err.issues[0] : undefined;
      const field = issue ? wirePath(issue.path) || "(body)" : "(body)";
      throw new ResponseValidationError(
        `the response field ${field} is invalid: ${issue?.message ?? "unexpected shape"} (${describeOperation(op)})`,
        { operation: describeOperation(op) },
      );
    }
  }

  private log(line: string): void {
    this.options.logger?.(redact(line));
  }
}

/**
 * The error of a refusal answered with a 2xx: of the class its meaning picks (a "not found" is a NotFoundError, as a
 * 404 would be), its message saying how the platform answered. A create refused with what it made all the same (its
 * new sub-accounts or key in the answer) is in doubt, so that what it made is looked for, never lost.
 */
function refused(op: Operation, res: Response<string>, refusal: Refusal | undefined): unknown {
  if (!refusal) return ApiError.fromResponse(res.statusCode, detailsOf(op, res));
  const err = ApiError.fromResponse(refusal.meansStatus, {
    ...detailsOf(op, res),
    code: refusal.code,
    apiMessage: `${refusal.apiMessage ?? "refused without a message"} (answered ${refusal.form.replace("2xx", String(res.statusCode))})`,
  });
  return madeSomething(res.body) ? mayHaveSucceeded(op, err) : err;
}

/**
 * The error of an answer the platform profile cannot classify: never done; the answer shown masked, the doctor
 * named. One the profile gives two meanings is an AmbiguousAnswerError, which a caller decides by looking.
 */
function unclassified(
  op: Operation,
  res: Response<string> | undefined,
  judged: Extract<Judgement, { unclassified: string }>,
): UnclassifiedAnswerError {
  const operation = describeOperation(op);
  const details = { operation, status: res?.statusCode, requestId: res?.headers["x-request-id"] as string | undefined };
  const message = `${judged.unclassified} (${operation})`;
  return judged.ambiguous
    ? new AmbiguousAnswerError(message, details, judged.ambiguous)
    : new UnclassifiedAnswerError(message, details);
}

/** `err` marked as the answer to a request sent again after a try whose answer was lost (ErrorDetails.afterLostAnswer). */
function afterLostAnswer(err: unknown): unknown {
  if (err instanceof LlmAccountsError && !err.afterLostAnswer)
    Object.defineProperty(err, "afterLostAnswer", { value: true, enumerable: true });
  return err;
}

/** A body parsed as JSON, or undefined when it is not JSON. */
function parsedJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** Whether a refusal's body still carries what a create makes: a key, or sub-accounts. */
function madeSomething(body: string): boolean {
  try {
    const json = JSON.parse(body) as { key?: unknown; items?: unknown; data?: { key?: unknown; items?: unknown } };
    const part = json.data ?? json;
    return typeof part.key === "string" || (Array.isArray(part.items) && part.items.length > 0);
  } catch {
    return false;
  }
}

/** Where a redirect points, for a message: its origin and path only (a query may carry a token), or "another address". */
function redirectTarget(location: string | string[] | undefined): string {
  const text = Array.isArray(location) ? location[0] : location;
  if (text === undefined || !URL.canParse(text)) return "another address";
  const url = new URL(text);
  return redact(`${url.origin}${url.pathname}`);
}

/** The message of a 429 whose wait is longer than the client waits: how long, and when to come back. */
function tooLong(apiMessage: string | undefined, askedMs: number, now: number): string {
  const seconds = Math.ceil(askedMs / 1000);
  const until = now + askedMs;
  const when = Number.isFinite(until) && until < 8.64e15 ? ` (at ${new Date(until).toISOString()})` : "";
  return `${apiMessage ?? "rate limited"}; the server asks to wait ${seconds} s, more than the ${MAX_RETRY_AFTER_MS / 1000} s this client waits: retry after that time${when}`;
}

/**
 * The one rule for "may have succeeded": a create whose request the platform may have processed (a network
 * failure after it was sent, a 5xx, an answer that could not be read) may have made the key or sub-accounts
 * although it failed. Applied where such an error leaves `send`. What to do about it is the runtime's to say.
 */
function mayHaveSucceeded(op: Operation, err: unknown): unknown {
  if (op.retry !== "create" || !(err instanceof LlmAccountsError)) return err;
  const what = op.name === "api-key/create" ? "the key" : "the sub-accounts";
  return err.withDoubt(`${what} may have been created although no answer came back`);
}
