import { redact } from "../api/redact.js";

/** What every error of this package carries; keys appear only masked. */
export interface ErrorDetails {
  /** `POST api-key/edit`: which operation failed. */
  operation?: string;
  /** HTTP status, when the server answered. */
  status?: number;
  /** The API's error code, when the server sent one. */
  code?: string;
  /** The API's readable message, when the server sent one. */
  apiMessage?: string;
  requestId?: string;
  /** True when a create may have taken effect although it failed (the response was lost). */
  mayHaveSucceeded?: boolean;
  /**
   * True when this answer came to a request sent again after a try whose answer was lost (a network failure after
   * it was sent, a 5xx): that try may have done the write, so a "gone" here may be its work (a delete then is done).
   */
  afterLostAnswer?: boolean;
}

/** Base of every error this package throws. Its text, fields and stack never hold a key in plain text. */
export class LlmAccountsError extends Error {
  readonly operation?: string;
  readonly status?: number;
  readonly code?: string;
  readonly apiMessage?: string;
  readonly requestId?: string;
  readonly mayHaveSucceeded?: boolean;
  readonly afterLostAnswer?: boolean;

  constructor(message: string, details: ErrorDetails = {}) {
    super(redact(message));
    this.name = new.target.name;
    for (const [k, v] of Object.entries(details)) {
      if (v !== undefined)
        Object.defineProperty(this, k, { value: typeof v === "string" ? redact(v) : v, enumerable: true });
    }
  }

  /**
   * Adds what to do about the failure, which only a higher layer knows (the runtime knows about resources and
   * their inputs; the client does not). Redacted like the message; returns the same error.
   */
  withAdvice(advice: string): this {
    return this.rewritten(`${this.message}. ${advice}`);
  }

  /**
   * Marks the error as one whose operation may have taken effect although it failed (`mayHaveSucceeded`), and
   * says so before the operation the message ends with. Returns the same error.
   */
  withDoubt(doubt: string): this {
    const suffix = this.operation ? ` (${this.operation})` : "";
    const base = suffix && this.message.endsWith(suffix) ? this.message.slice(0, -suffix.length) : this.message;
    Object.defineProperty(this, "mayHaveSucceeded", { value: true, enumerable: true, configurable: true });
    return this.rewritten(`${base}; ${doubt}${base === this.message ? "" : suffix}`);
  }

  private rewritten(text: string): this {
    const before = this.message;
    const message = redact(text);
    Object.defineProperty(this, "message", { value: message, writable: true, configurable: true, enumerable: false });
    if (this.stack) this.stack = this.stack.replace(before, message);
    return this;
  }

  toJSON(): Record<string, unknown> {
    return { ...Object.fromEntries(Object.entries(this)), name: this.name, message: this.message };
  }
}

/** The server answered with a non-2xx status. */
export class ApiError extends LlmAccountsError {
  /** Picks the subclass for a status, as the API's status table (spec 7) and section 8 suggest. */
  static fromResponse(status: number, details: ErrorDetails, headers: { retryAfterMs?: number } = {}): ApiError {
    const d = { ...details, status };
    const text = `${status}${d.code ? ` ${d.code}` : ""}: ${d.apiMessage ?? "no message"} (${d.operation})`;
    if (status === 400) return new BadRequestError(text, d);
    if (status === 401) return new AuthenticationError(text, d);
    if (status === 404) return new NotFoundError(text, d);
    if (status === 429) return new RateLimitError(text, d, headers.retryAfterMs);
    if (status >= 500) return new ServerError(text, d);
    return new ApiError(text, d);
  }
}

/** 400: the request's parameters were refused; the message names the field. */
export class BadRequestError extends ApiError {}
/** 401: the credential is missing, wrong, or of the wrong group. */
export class AuthenticationError extends ApiError {}
/** 404: the key or sub-account does not exist. */
export class NotFoundError extends ApiError {}
/** 429: a rate limit was exceeded (by the server, or by the client's own daily budget). */
export class RateLimitError extends ApiError {
  constructor(
    message: string,
    details: ErrorDetails,
    readonly retryAfterMs?: number,
  ) {
    super(message, details);
  }
}
/** 5xx: the server failed. */
export class ServerError extends ApiError {}

/** No connection could be made, or it broke before an answer came. */
export class ConnectionError extends LlmAccountsError {}
/** The connect or request timeout passed. */
export class TimeoutError extends LlmAccountsError {}

/** An answer larger than the transport reads (measured inflated, so a gzip bomb counts at its real size); not retried. */
export class ResponseTooLargeError extends LlmAccountsError {}

/**
 * A 2xx body in the platform's JSON (an object, unwrapped from an envelope the package knows) that does not match
 * the schema of the operation; names the field. The platform answered, and said done: a delete answered so is done.
 */
export class ResponseValidationError extends LlmAccountsError {}

/**
 * An answer that is not the platform's, at any status and whatever its content type: HTML (a maintenance page, a
 * gateway's 404 or 502 page), a body that is not a JSON object, `null`, an empty 200 (a 204 is the platform's
 * "done, nothing to say"), or a 4xx without the platform's error JSON. What it says of the request is unknown: never
 * done, never gone; the package looks (a get, the list) before it concludes. Its message names the address it came from.
 */
export class UnknownAnswerError extends LlmAccountsError {}

/**
 * True when a delete that failed with `err` took effect all the same: the platform answered 2xx in its own JSON, and
 * only a field of it could not be read. An answer that is not the platform's (UnknownAnswerError) is not one: it is
 * looked at. The one rule every delete of the package follows.
 */
export function deleteTookEffect(err: unknown): boolean {
  return err instanceof ResponseValidationError;
}

/** The package is not set up to make the call (missing base URL, a key of the wrong kind...). Nothing was sent. */
export class ConfigurationError extends LlmAccountsError {}
