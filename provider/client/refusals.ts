/**
 * The shapes in which a platform says "no" or wraps its answers, beyond the spec's non-2xx `{error: {code, message}}`:
 * the one rule that decides, for every 2xx answer, whether it is an answer or a refusal (docs/decisions.md, "error
 * shapes"). A refusal in any shape is never taken for a success.
 */

/** What an answer that is not "done" means for the caller: not made, no such object, try again later, wrong credential. */
export type Meaning = "refused" | "gone" | "transient" | "unauthorised";

/** What a refusal says: the platform's code and message, and the status it stands for (which error class, which retry). */
export interface Refusal {
  code?: string;
  apiMessage?: string;
  /** What it means: a transient refusal was not processed and is tried again, as a 429 is. */
  meaning: Meaning;
  /** 400, 401, 404, 429 or 503: the status of the error it becomes (its class) when it is not tried again. */
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

/**
 * Without a profile, the words of a refusal that say what it means, in English and in Chinese (the platform's kin
 * answer in Chinese: docs/decisions.md, "classification"). A rate limit and "busy, try again" are transient; each
 * rule can only make a refusal an error of another class, never a success, and "gone" needs words that say so.
 */
const WORDS: { meaning: Meaning; status: number; words: RegExp }[] = [
  { meaning: "transient", status: 429, words: /rate.?limit|too.?many|throttl|429|请求过于频繁|请求过多|频率|限流/ },
  { meaning: "transient", status: 503, words: /\bbusy\b|try again|temporar(il)?y|overload|繁忙|稍后再试|稍后重试/ },
  { meaning: "gone", status: 404, words: /not.?found|not.?exist|no.?such|unknown (key|token|sub.?account)|404|不存在/ },
  { meaning: "unauthorised", status: 401, words: /unauthori[sz]ed|unauthenticated|forbidden|permission|invalid (token|credential|api key)|401|403|未授权|无权/ },
];

/** What a refusal means, by its code and message, when no profile says (the platform's codes are not shown: read by their words). */
export function meaningOf(code: string | undefined, message: string | undefined): { meaning: Meaning; status: number } {
  const words = `${code ?? ""} ${message ?? ""}`.toLowerCase();
  const rule = WORDS.find((r) => r.words.test(words));
  return rule ? { meaning: rule.meaning, status: rule.status } : { meaning: "refused", status: 400 };
}

/** The status a refusal stands for, by its code and message (meaningOf). */
export function meansStatus(code: string | undefined, message: string | undefined): number {
  return meaningOf(code, message).status;
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
  const { meaning, status } = meaningOf(details.code, details.apiMessage);
  return { refusal: { ...details, meaning, meansStatus: status, form } };
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
