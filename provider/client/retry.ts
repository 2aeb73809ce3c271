import { MAX_RETRY_AFTER_MS } from "../api/assumptions.js";
import type { RetryClass } from "../api/operations.js";

/** How many times, and how fast, a request is tried again. */
export interface RetryOptions {
  /** Attempts in all for a 429 (the request was not processed, so even creates are retried). */
  maxRateLimitAttempts: number;
  /** Attempts in all for 5xx and network errors, on operations that may be retried. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** The defaults: a dozen 429s (a minute's window), four tries of anything else. */
export const DEFAULT_RETRY: RetryOptions = {
  maxRateLimitAttempts: 12,
  maxAttempts: 4,
  baseDelayMs: 200,
  maxDelayMs: 8_000,
};

/** Network error codes that prove the request never left this machine (nothing to doubt, safe to retry). */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
]);
/**
 * Errors Node raises while building the request, before a connection is used: a header or path it cannot send
 * (a credential with a line break or a character outside Latin-1). Nothing left; the same request fails the same way.
 */
const NOT_BUILT_CODES = new Set([
  "ERR_INVALID_CHAR",
  "ERR_INVALID_HTTP_TOKEN",
  "ERR_HTTP_INVALID_HEADER_VALUE",
  "ERR_UNESCAPED_CHARACTERS",
  "ERR_INVALID_URL",
]);
/** Timeouts of these phases end before a byte of the request was written. */
const NOT_SENT_TIMEOUT_EVENTS = new Set(["lookup", "connect", "secureConnect"]);
/**
 * Certificate checks fail during the TLS handshake, before any request byte is sent; retrying cannot help,
 * the certificate will be the same.
 */
const CERTIFICATE_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_UNTRUSTED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** What a network failure tells about the request: whether it may have reached the server, whether to try again. */
export interface NetworkFailure {
  /** The error's code (`ECONNRESET`, `DEPTH_ZERO_SELF_SIGNED_CERT`...). */
  code?: string;
  /** The timed-out phase, for timeouts. */
  timeoutEvent?: string;
  /** True for an https request whose TLS handshake never completed: nothing was sent. */
  handshakeIncomplete: boolean;
}

/** How one failure is classed: sent (the server may have acted) and worth another try. */
export function classify(failure: NetworkFailure): { sent: boolean; transient: boolean; tls: boolean } {
  const tls = CERTIFICATE_CODES.has(failure.code ?? "") || (failure.code ?? "").startsWith("ERR_SSL_");
  if (tls) return { sent: false, transient: false, tls };
  if (NOT_BUILT_CODES.has(failure.code ?? "")) return { sent: false, transient: false, tls };
  if (failure.timeoutEvent !== undefined)
    return { sent: !NOT_SENT_TIMEOUT_EVENTS.has(failure.timeoutEvent), transient: true, tls };
  const sent = !NOT_SENT_CODES.has(failure.code ?? "") && !failure.handshakeIncomplete;
  return { sent, transient: true, tls };
}

/** The wait a 429 asks for: `Retry-After-Ms`, else `Retry-After` in seconds or as an HTTP date. */
export function retryAfterMs(headers: Record<string, string | string[] | undefined>, now: number): number | undefined {
  const ms = Number(headers["retry-after-ms"]);
  if (headers["retry-after-ms"] !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  const header = headers["retry-after"];
  if (header === undefined) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(String(header));
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Which errors are tried again and how long to wait first; the transport asks, and does the waiting. */
export class RetryPolicy {
  readonly options: RetryOptions;

  constructor(
    options: Partial<RetryOptions> = {},
    private readonly random: () => number = Math.random,
  ) {
    this.options = { ...DEFAULT_RETRY, ...options };
  }

  /** Exponential backoff with jitter (half fixed, half random), capped at `maxDelayMs`. */
  backoff(attempt: number): number {
    const cap = Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** (attempt - 1));
    return cap / 2 + this.random() * (cap / 2);
  }

  /** The wait before another try after a network failure or a 5xx, or undefined to give up. */
  afterFailure(retry: RetryClass, attempt: number, outcome: { sent: boolean; transient: boolean }): number | undefined {
    if (!outcome.transient || attempt >= this.options.maxAttempts) return undefined;
    // A create that may have reached the server is never sent blindly again: it could create twice.
    if (retry === "create" && outcome.sent) return undefined;
    return this.backoff(attempt);
  }

  /**
   * After the `count`th 429 in a row: the wait before another try, or why not. The server's wait is honoured
   * but never below `baseDelayMs` (no burst, even for `Retry-After: 0`), and a wait above the cap is refused,
   * with the time to come back, rather than slept through.
   */
  afterRateLimit(count: number, askedMs: number | undefined): { waitMs: number } | { giveUp: "attempts" | "too-long" } {
    if (askedMs !== undefined && askedMs > MAX_RETRY_AFTER_MS) return { giveUp: "too-long" };
    if (count >= this.options.maxRateLimitAttempts) return { giveUp: "attempts" };
    return { waitMs: askedMs === undefined ? this.backoff(count) : Math.max(askedMs, this.options.baseDelayMs) };
  }
}
