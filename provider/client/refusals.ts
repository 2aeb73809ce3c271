/**
 * The shapes in which a platform says "no" or wraps its answers, beyond the spec's non-2xx `{error: {code, message}}`:
 * the one rule that decides, for every 2xx answer, whether it is an answer or a refusal (docs/decisions.md, "error
 * shapes"). A refusal in any shape is never taken for a success.
 */
import { PROFILE_MARKERS, PROFILE_MEANINGS, type Profile, type ProfileMeaning } from "../api/profile.js";
import type { Group } from "../api/operations.js";
import { isObject } from "../api/canonical.js";
import { redact } from "../api/redact.js";
import { ApiError, type LlmAccountsError, UnknownAnswerError } from "./errors.js";

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

const text = (v: unknown): string | undefined =>
  typeof v === "string" && v.trim() !== "" ? v : typeof v === "number" ? String(v) : undefined;

/** Codes an envelope uses for "done" (`{code: 0, data}` and its kin). */
const DONE_CODES = new Set(["0", "200", "ok", "success", "succeeded"]);

/** The fields of an envelope itself (its code, message and request ids): a body of these alone carries no answer. */
const ENVELOPE_FIELDS = new Set([
  "code",
  "message",
  "msg",
  "request_id",
  "requestId",
  "trace_id",
  "traceId",
  "timestamp",
]);

/**
 * Without a profile, the words of a refusal that say what it means, in English and in Chinese (the platform's kin
 * answer in Chinese: docs/decisions.md, "classification"). A rate limit and "busy, try again" are transient; each
 * rule can only make a refusal an error of another class, never a success, and "gone" needs words that say so.
 */
const WORDS: { meaning: Meaning; status: number; words: RegExp }[] = [
  { meaning: "transient", status: 429, words: /rate.?limit|too.?many|throttl|429|请求过于频繁|请求过多|频率|限流/ },
  { meaning: "transient", status: 503, words: /\bbusy\b|try again|temporar(il)?y|overload|繁忙|稍后再试|稍后重试/ },
  { meaning: "gone", status: 404, words: /not.?found|not.?exist|no.?such|unknown (key|token|sub.?account)|404|不存在/ },
  {
    meaning: "unauthorised",
    status: 401,
    words:
      /unauthori[sz]ed|unauthenticated|forbidden|permission|invalid (token|credential|api key)|401|403|未授权|无权/,
  },
];

/** What a refusal means, by its code and message, when no profile says (the platform's codes are not shown: read by their words). */
export function meaningOf(code: string | undefined, message: string | undefined): { meaning: Meaning; status: number } {
  // Without the keys the message names (whole or masked, with the prefix or without): their characters are no words (`sk-...a429` is no 429).
  const words = redact(`${code ?? ""} ${message ?? ""}`)
    .replace(/\bsk-\S*|\.\.\.\S*/gi, " ")
    .toLowerCase();
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
    text(inner?.message) ??
    text(inner?.msg) ??
    text(body.message) ??
    text(body.msg) ??
    text(body.errmsg) ??
    (typeof body.error === "string" ? body.error : undefined);
  return { code, apiMessage };
}

function refusal(body: Record<string, unknown>, form: string): { refusal: Refusal } {
  const details = detailsOf(body);
  const { meaning, status } = meaningOf(details.code, details.apiMessage);
  return { refusal: { ...details, meaning, meansStatus: status, form } };
}

/**
 * Reads a 2xx body. A refusal: `success: false` (the spec's own shape of the sub-account group, and one-api's), an
 * `error` object or text, or an envelope (`{code, message, data}`) whose code is not one of "done". An envelope whose
 * code is "done", or one-api's `{success: true, message, data}`, is unwrapped to its `data`. Anything else is the
 * answer itself.
 */
export function readBody(json: unknown): Read {
  if (!isObject(json)) return { answer: json };
  if (json.success === false || json.success === "false" || json.success === 0)
    return refusal(json, "HTTP 2xx with success: false");
  // one-api's envelope, `{success: true, message, data}`: its answer is `data` (a spec answer carrying `success`, as a
  // create's `{items, success}`, has fields of its own besides it and is the answer itself).
  if (
    (json.success === true || json.success === "true" || json.success === 1) &&
    "data" in json &&
    Object.keys(json).every((k) => k === "success" || k === "data" || ENVELOPE_FIELDS.has(k))
  ) {
    return { answer: json.data ?? {} };
  }
  if (isObject(json.error) || (typeof json.error === "string" && json.error.trim() !== ""))
    return refusal(json, "HTTP 2xx with an error");
  if (typeof json.code === "number" || typeof json.code === "string") {
    const done = DONE_CODES.has(String(json.code).toLowerCase());
    if ("data" in json)
      return done ? { answer: json.data ?? {} } : refusal(json, `HTTP 2xx with code ${JSON.stringify(json.code)}`);
    // No `data`: a code that is not "done" with a message and nothing else is a refusal (issue 43); a done one, an empty answer.
    const onlyEnvelope = Object.keys(json).every((k) => ENVELOPE_FIELDS.has(k));
    if (onlyEnvelope && !done && (text(json.message) ?? text(json.msg)) !== undefined)
      return refusal(json, `HTTP 2xx with code ${JSON.stringify(json.code)}`);
    if (onlyEnvelope && done) return { answer: {} };
  }
  return { answer: json };
}

/**
 * What an answer means, the one judge the transport and `llm-accounts doctor` both call: the answer (unwrapped),
 * a refusal with its meaning, or, with a profile, an answer that matches none of its signatures (shown, masked).
 */
export type Judgement = { answer: unknown } | { refusal: Refusal } | { unclassified: string; ambiguous?: Meaning[] };

/**
 * The meanings an unclassified judgement hesitates between (two or more: the profile gives its signature each of
 * them), or undefined when it matches none. What the doctor reports as "decided by looking", and what the runtime
 * decides by a get or a list (AmbiguousAnswerError).
 */
export function ambiguousMeanings(judged: Judgement): Meaning[] | undefined {
  return "unclassified" in judged ? judged.ambiguous : undefined;
}

/** The code a profile's signature is matched with: the platform's own, else the marker of the body's shape. */
export function codeOf(json: unknown): string | undefined {
  if (json === undefined) return PROFILE_MARKERS.noBody;
  if (!isObject(json)) return undefined;
  const { code } = detailsOf(json);
  if (code !== undefined) return code;
  if (json.success === false || json.success === "false" || json.success === 0) return PROFILE_MARKERS.successFalse;
  if (typeof json.error === "string" && json.error.trim() !== "") return PROFILE_MARKERS.errorText;
  return undefined;
}

/** The status and meaning a profile's meaning stands for. */
const PROFILE_STATUS: Record<ProfileMeaning, { meaning: Meaning; status: (answered: number) => number }> = {
  transient: { meaning: "transient", status: (s) => (s === 429 || s >= 500 ? s : 503) },
  unauthorised: { meaning: "unauthorised", status: () => 401 },
  goneKey: { meaning: "gone", status: () => 404 },
  goneSubAccount: { meaning: "gone", status: () => 404 },
  refused: { meaning: "refused", status: (s) => (s >= 400 && s < 500 ? s : 400) },
};

/** Whether a 2xx body is done in the shape the profile says, and the answer it carries. */
function doneAnswer(json: unknown, done: Profile["done"]): { answer: unknown } | undefined {
  if (done.shape === "envelope") {
    if (
      !isObject(json) ||
      (typeof json.code !== "number" && typeof json.code !== "string") ||
      String(json.code) !== done.code
    )
      return undefined;
    return { answer: json.data ?? {} };
  }
  // plain and success-flag: a body that carries no refusal of a shape the package knows (readBody).
  const read = readBody(json);
  return "answer" in read ? read : undefined;
}

/** An answer as it is shown in an error: JSON, masked by the error's redaction, control characters escaped, cut short. */
function shown(status: number, json: unknown): string {
  const text = json === undefined ? "(no JSON body)" : JSON.stringify(json);
  const safe = text.replace(
    /[\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return `HTTP ${status} ${safe.length > 300 ? `${safe.slice(0, 300)}...` : safe}`;
}

/**
 * Judges one answer of an operation of `group`: `status` and its parsed body (undefined when not JSON).
 * With a profile, by the profile's signatures only: an exact code first, then a signature of the status alone; an
 * answer that is not done and matches no signature, or matches two meanings, is unclassified. Without one, by
 * the package's defaults: a 2xx by readBody, any other status by what the spec's statuses mean.
 */
export function judge(group: Group, status: number, json: unknown, profile?: Profile): Judgement {
  const ok = status >= 200 && status < 300;
  if (!profile) {
    if (ok) return readBody(json);
    const details = isObject(json) ? detailsOf(json) : {};
    const form = `HTTP ${status}`;
    if (status === 429 || status >= 500)
      return { refusal: { ...details, meaning: "transient", meansStatus: status, form } };
    if (status === 401 || status === 403)
      return { refusal: { ...details, meaning: "unauthorised", meansStatus: status, form } };
    if (status === 404) return { refusal: { ...details, meaning: "gone", meansStatus: 404, form } };
    return { refusal: { ...details, meaning: "refused", meansStatus: status, form } };
  }
  // A 204 has no body (RFC 9110): no envelope and no refusal can be in it, whatever shape the profile's done answers take.
  if (status === 204) return { answer: {} };
  if (ok) {
    const done = doneAnswer(json, profile.done);
    if (done) return done;
  }
  const code = codeOf(json);
  const meanings = PROFILE_MEANINGS.filter((m) => (group === "management" ? m !== "goneSubAccount" : m !== "goneKey"));
  const exact = meanings.filter((m) =>
    profile[m].some((s) => s.status === status && s.code !== undefined && s.code === code),
  );
  const byStatus = meanings.filter((m) => profile[m].some((s) => s.status === status && s.code === undefined));
  const found = [...new Set((exact.length > 0 ? exact : byStatus).map((m) => PROFILE_STATUS[m].meaning))];
  const answer = shown(status, json);
  // The spec's own statuses that no profile needs to list: a 429 or 5xx is tried again, a 401 is the credential.
  if (found.length === 0 && !ok && (status === 429 || status >= 500 || status === 401)) {
    const details = isObject(json) ? detailsOf(json) : {};
    return {
      refusal: {
        ...details,
        meaning: status === 401 ? "unauthorised" : "transient",
        meansStatus: status,
        form: `HTTP ${status}`,
      },
    };
  }
  if (found.length !== 1) {
    const why =
      found.length === 0 ? "matches no signature of" : `matches more than one meaning (${found.join(", ")}) of`;
    const unclassified = `the answer ${answer} ${why} the platform profile (${"llm-accounts:profile"}); run \`llm-accounts doctor --write --save\` to measure this platform again`;
    return found.length === 0 ? { unclassified } : { unclassified, ambiguous: found };
  }
  const meaning = meanings.find((m) => (exact.length > 0 ? exact : byStatus).includes(m))!;
  const details = isObject(json) ? detailsOf(json) : {};
  return {
    refusal: {
      ...details,
      code: details.code ?? code,
      meaning: found[0],
      meansStatus: PROFILE_STATUS[meaning].status(status),
      form: `HTTP ${ok ? "2xx" : status}${code ? ` with code ${code}` : ""}`,
    },
  };
}

/** An answer the profile cannot classify: shown (masked), with the doctor named. Never taken for done, so a delete it answers is not done. */
export class UnclassifiedAnswerError extends ApiError {}

/** An answer the profile gives more than one meaning (`meanings`): decided by looking where a get or a list can tell (answerUnknown). */
export class AmbiguousAnswerError extends UnclassifiedAnswerError {
  constructor(
    message: string,
    details: ConstructorParameters<typeof ApiError>[1],
    readonly meanings: Meaning[],
  ) {
    super(message, details);
  }
}

/**
 * True when what `err` says of its request is unknown and a look (a get, the list) must tell: an answer that is not
 * the platform's (UnknownAnswerError), or one the platform profile gives more than one meaning (AmbiguousAnswerError).
 * The one rule for "look before concluding" every caller follows.
 */
export function answerUnknown(err: unknown): err is LlmAccountsError {
  return err instanceof UnknownAnswerError || err instanceof AmbiguousAnswerError;
}

/**
 * Whether a non-2xx body is the platform's: a JSON object that carries a code or a message in a shape the package
 * knows (detailsOf). HTML, text, an empty body or any other JSON is a gateway's or a proxy's, not the platform's.
 */
export function platformError(body: string): boolean {
  try {
    const json: unknown = JSON.parse(body);
    if (!isObject(json)) return false;
    const { code, apiMessage } = detailsOf(json);
    return code !== undefined || apiMessage !== undefined;
  } catch {
    return false;
  }
}
