/**
 * The shapes in which a platform says "no" or wraps its answers, beyond the spec's non-2xx `{error: {code, message}}`:
 * the one rule that decides, for every 2xx answer, whether it is an answer or a refusal (docs/decisions.md, "error
 * shapes"). A refusal in any shape is never taken for a success.
 */

/** What a refusal says: the platform's code and message, and the status it stands for (which error class, which retry). */
export interface Refusal {
  code?: string;
  apiMessage?: string;
  /** 400, 401, 404 or 429, read from the code and message: what the refusal means for the caller. */
  meansStatus: number;
  /** How the platform answered, for the message: `HTTP 200 with success: false`. */
  form: string;
}

/** A 2xx body read: the answer to parse (unwrapped from an envelope), or a refusal. */
export type Read = { answer: unknown } | { refusal: Refusal };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === "string" && v.trim() !== "" ? v : typeof v === "number" ? String(v) : undefined);

/** Codes an envelope uses for "done" (`{code: 0, data}` and its kin). */
const DONE_CODES = new Set(["0", "200", "ok", "success", "succeeded"]);

/** The fields of an envelope itself (its code, message and request ids): a body of these alone carries no answer. */
const ENVELOPE_FIELDS = new Set(["code", "message", "msg", "request_id", "requestId", "trace_id", "traceId", "timestamp"]);

/** The status a refusal stands for, by its code and message (the platform's codes are not shown: read by their words). */
export function meansStatus(code: string | undefined, message: string | undefined): number {
  const words = `${code ?? ""} ${message ?? ""}`.toLowerCase();
  if (/rate.?limit|too.?many|throttl|429/.test(words)) return 429;
  if (/not.?found|not.?exist|no.?such|unknown (key|token|sub.?account)|404/.test(words)) return 404;
  if (/unauthori[sz]ed|unauthenticated|forbidden|permission|invalid (token|credential|api key)|401|403/.test(words)) return 401;
  return 400;
}

/** The code and message of an error body or part: `{error: {code, message}}`, `{code, message}`, `{msg}`, `{error: "text"}` and their kin. */
export function detailsOf(body: Record<string, unknown>): { code?: string; apiMessage?: string } {
  const inner = isObject(body.error) ? body.error : undefined;
  const code = text(inner?.code) ?? text(body.code) ?? text(body.error_code) ?? text(body.errcode);
  const apiMessage =
    text(inner?.message) ?? text(inner?.msg) ?? text(body.message) ?? text(body.msg) ?? text(body.errmsg) ?? (typeof body.error === "string" ? body.error : undefined);
  return { code, apiMessage };
}

function refusal(body: Record<string, unknown>, form: string): { refusal: Refusal } {
  const details = detailsOf(body);
  return { refusal: { ...details, meansStatus: meansStatus(details.code, details.apiMessage), form } };
}

/**
 * Reads a 2xx body. A refusal: `success: false` (the spec's own shape of the sub-account group), an `error` object or
 * text, or an envelope (`{code, message, data}`) whose code is not one of "done". An envelope whose code is "done" is
 * unwrapped to its `data`. Anything else is the answer itself.
 */
export function readBody(json: unknown): Read {
  if (!isObject(json)) return { answer: json };
  if (json.success === false || json.success === "false" || json.success === 0) return refusal(json, "HTTP 2xx with success: false");
  if (isObject(json.error) || (typeof json.error === "string" && json.error.trim() !== "")) return refusal(json, "HTTP 2xx with an error");
  if (typeof json.code === "number" || typeof json.code === "string") {
    const done = DONE_CODES.has(String(json.code).toLowerCase());
    if ("data" in json) return done ? { answer: json.data ?? {} } : refusal(json, `HTTP 2xx with code ${JSON.stringify(json.code)}`);
    // No `data`: a code that is not "done" with a message and nothing else is a refusal (issue 43); a done one, an empty answer.
    const onlyEnvelope = Object.keys(json).every((k) => ENVELOPE_FIELDS.has(k));
    if (onlyEnvelope && !done && (text(json.message) ?? text(json.msg)) !== undefined) return refusal(json, `HTTP 2xx with code ${JSON.stringify(json.code)}`);
    if (onlyEnvelope && done) return { answer: {} };
  }
  return { answer: json };
}
