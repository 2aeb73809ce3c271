import { randomBytes } from "node:crypto";
import { redact } from "../../api/redact.js";
import { parseAnswerJson } from "../../api/schemas/index.js";
import { isObject } from "../../api/canonical.js";
import { printable } from "../kit.js";
import type { Signature } from "../../api/profile.js";
import type { Clock } from "../../client/clock.js";
import { classify, RetryPolicy, retryAfterMs, type NetworkFailure } from "../../client/retry.js";
import { codeOf, judge, type Judgement, type Meaning } from "../../client/refusals.js";
import type { Operation } from "../../api/operations.js";
import { refusalNamesKey } from "../../client/apiKeys.js";
import { wirePath } from "../../api/casing.js";
import { snowflakeIn } from "./checks/answers.js";

/** An answer as the doctor keeps it: status, the body as the wire carried it, the answer (unwrapped) or refusal, and the client's judgement. */
export interface Raw {
  status: number;
  /** The answer unwrapped from its envelope when the client reads it as done, else the body as it came. */
  body: unknown;
  /** The body as the wire carried it (undefined when not JSON). */
  wire: unknown;
  /** What the client makes of it (client/refusals.ts judge, by the package's defaults). */
  judged: Judgement;
  /** Why no answer came (status 0): a timeout, a connection closed. */
  lost?: string;
  /** Tried again after a try that may have been processed (a 5xx or no answer): Probe.send. */
  retriedAfterDoubt?: boolean;
}

/** What a fetch failure tells about the request, for the retry policy (client/retry.ts classify). */
function failureOf(err: unknown, timedOut: boolean): NetworkFailure {
  if (timedOut) return { timeoutEvent: "request", handshakeIncomplete: false };
  const cause = (err as { cause?: { code?: string } }).cause;
  return { code: cause?.code ?? (err as { code?: string }).code, handshakeIncomplete: false };
}

/** A try that brought no answer: transient, the request perhaps processed. */
function lostAnswer(failure: NetworkFailure): Raw {
  const why =
    failure.timeoutEvent !== undefined
      ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`
      : `the connection failed (${failure.code ?? "no answer"})`;
  return {
    status: 0,
    body: undefined,
    wire: undefined,
    lost: why,
    judged: { refusal: { meaning: "transient", meansStatus: 503, form: why } },
  };
}

/** Whether the client takes an answer for a refusal (of any meaning). */
export const refused = (a: Raw): boolean => !("answer" in a.judged);

/** What a refusal means to the client, or undefined for an answer. */
export const meaningOf = (a: Raw): Meaning | undefined =>
  "refusal" in a.judged ? a.judged.refusal.meaning : undefined;

/** The time the doctor waits on (a test gives a fake one, shared with an emulator's clock). */
export type DoctorClock = Pick<Clock, "now" | "sleep">;

/** How long one request may take before it counts as a lost answer (a gateway's cap is 30 s). */
const REQUEST_TIMEOUT_MS = 30_000;

/** Why the doctor stopped, and the emulator reading that answers the way that stopped it, when one does (redirects). */
export class Stopped extends Error {
  constructor(
    message: string,
    readonly reading?: string,
  ) {
    super(message);
  }
}

/** Whether an answer is transient by its status or its reading (429, 5xx, no answer, "busy" in a 2xx): never a meaning. */
export const transient = (a: Raw): boolean =>
  a.status === 0 || a.status === 429 || a.status >= 500 || meaningOf(a) === "transient";

/** One answer as the wire gave it, or the failure that gave none. */
type Sent = { status: number; text: string; headers: Headers } | { failure: NetworkFailure };

/** An answer read twice (Probe.twice): the first, and whether the second agreed. */
export interface Reading {
  raw: Raw;
  steady: boolean;
  /** Why the answer is no measure: transient after the runtime's retries, or two readings that differ. */
  why?: string;
}

/** Whether two readings of one request agree, the second undefined when the first was transient (Probe.twice). */
export function steadiness(first: Raw, second: Raw | undefined): Reading {
  if (transient(first))
    return { raw: first, steady: false, why: `answered ${describeShape(first)} after the runtime's retries` };
  if (second === undefined) return { raw: first, steady: true };
  if (transient(second))
    return {
      raw: first,
      steady: false,
      why: `a second reading answered ${describeShape(second)} after the runtime's retries`,
    };
  const same =
    first.status === second.status &&
    codeOf(first.wire) === codeOf(second.wire) &&
    meaningOf(first) === meaningOf(second) &&
    refused(first) === refused(second);
  return same
    ? { raw: first, steady: true }
    : { raw: first, steady: false, why: `two readings differ: ${describeShape(first)}, then ${describeShape(second)}` };
}

/** The doctor's probes of one account. */
export class Probe {
  readonly envelope = { seen: false, withoutData: false, doneCode: undefined as string | undefined };
  readonly answers: unknown[] = [];
  /** The first answer the client's own schema could not read: the operation and field, which the client would fail on. */
  unreadable?: string;
  /** The first transient answer in a 2xx, tried again as the client does. */
  transient?: { text: string; status: number; code?: string };
  /** The first snowflake id seen (snowflakeIn). */
  snowflake?: string;
  /** Writes answered 5xx although they were done (found by looking, or the same write sent again answered so). */
  readonly lost: string[] = [];
  /** Whether a write was answered in a 2xx without a body (a 204 No Content). */
  noBody = false;
  /** Set while the doctor deletes what it made: its requests go on after `stop` (a signal). */
  cleaning = false;
  /** The runtime's own retry policy (client/retry.ts): what is tried again, how often and how long after. */
  private readonly retry = new RetryPolicy();

  constructor(
    private readonly base: URL,
    private readonly keys: { admin?: string; account?: string },
    readonly clock: DoctorClock,
    /** Aborted on a signal: every request but the cleanup's stops. */
    private readonly stop: AbortSignal,
    /** Where the doctor says what it waits for. */
    readonly stderr: { write(text: string): unknown } = { write: () => true },
  ) {}

  /** The platform's origin (no credentials in it), for messages. */
  get origin(): string {
    return this.base.origin;
  }

  /**
   * One operation (its path and method from api/operations.ts), tried again as the runtime tries it (client/http.ts
   * with client/retry.ts): a 429 or a transient refusal in a 2xx as a rate limit, a 5xx or a lost answer where the
   * operation may be sent again (never a create). The last answer; `status` 0 when none came. `retriedAfterDoubt`
   * when it was tried again after a try that may have been processed (a 5xx or no answer).
   */
  async send(op: Operation, body?: unknown, credential?: string): Promise<Raw> {
    let failed = 0;
    let rateLimited = 0;
    let doubt = false;
    for (;;) {
      const sent = await this.sendOnce(op, body, credential);
      const raw = "failure" in sent ? lostAnswer(sent.failure) : this.judged(op, sent.status, sent.text);
      let wait: number | undefined;
      if (!transient(raw)) return doubt ? { ...raw, retriedAfterDoubt: true } : raw;
      if (raw.status === 429 || (raw.status < 300 && raw.status > 0)) {
        if (raw.status < 300)
          this.transient ??= {
            text: `HTTP ${raw.status} ${describeRefusal(raw).slice(0, 60)}`,
            status: raw.status,
            code: codeOf(raw.wire),
          };
        const next = this.retry.afterRateLimit(
          ++rateLimited,
          "headers" in sent ? retryAfterMs(Object.fromEntries(sent.headers), this.clock.now()) : undefined,
        );
        wait = "waitMs" in next ? next.waitMs : undefined;
      } else {
        wait = this.retry.afterFailure(
          op.retry,
          ++failed,
          "failure" in sent ? classify(sent.failure) : { sent: true, transient: true },
        );
      }
      if (wait === undefined) return doubt ? { ...raw, retriedAfterDoubt: true } : raw;
      doubt ||= raw.status === 0 || raw.status >= 500;
      if (wait >= 2_000)
        this.stderr.write(
          `llm-accounts doctor: ${op.name} answered ${describeShape(raw)}; trying again in ${Math.ceil(wait / 1000)} s\n`,
        );
      await this.clock.sleep(wait);
    }
  }

  /**
   * Two readings of one request: `steady` when both came, neither transient, and they agree (status, code or shape,
   * meaning); else `why` not. A meaning is measured only so (a transient or a one-off answer is never saved).
   */
  async twice(op: Operation, body?: unknown, credential?: string): Promise<Reading> {
    const first = await this.send(op, body, credential);
    if (transient(first)) return steadiness(first, undefined);
    return steadiness(first, await this.send(op, body, credential));
  }

  /** One request: its status, body and headers, or the network failure (a timeout included) that brought none. */
  private async sendOnce(op: Operation, body: unknown, credential?: string): Promise<Sent> {
    if (this.stop.aborted && !this.cleaning) throw this.stopped();
    const key = credential ?? (op.group === "management" ? this.keys.admin : this.keys.account);
    const url = new URL(this.base.pathname.replace(/\/$/, "") + op.path, this.base);
    const query = op.method === "GET" ? (body as Record<string, unknown> | undefined) : undefined;
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, String(v));
    const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    try {
      const res = await fetch(url, {
        method: op.method,
        redirect: "manual",
        signal: this.cleaning ? timeout : AbortSignal.any([timeout, this.stop]),
        headers: {
          authorization: `Bearer ${key ?? ""}`,
          accept: "application/json",
          ...(op.method === "GET" ? {} : { "content-type": "application/json" }),
        },
        body: op.method === "GET" ? undefined : JSON.stringify(body ?? {}),
      });
      return { status: res.status, text: await res.text(), headers: res.headers };
    } catch (err) {
      if (this.stop.aborted && !this.cleaning) throw this.stopped();
      return { failure: failureOf(err, timeout.aborted) };
    }
  }

  /** The error a signal stops the probes with (index.ts aborts `stop` with it). */
  private stopped(): Stopped {
    return this.stop.reason instanceof Stopped ? this.stop.reason : new Stopped("interrupted");
  }

  /** An answer as the client reads it (http.ts: no body in a 2xx is `{}`; an id beyond 2^53 kept as its digits), judged. */
  private judged(op: Operation, status: number, text: string): Raw {
    const ok = status >= 200 && status < 300;
    let wire: unknown;
    try {
      wire = text.trim() === "" ? (ok ? {} : undefined) : parseAnswerJson(text);
    } catch {
      wire = undefined;
    }
    const judged = judge(op.group, status, wire);
    if (ok && text.trim() === "" && op.retry !== "read") this.noBody = true;
    if (isObject(wire) && ok && "code" in wire) {
      if ("data" in wire) this.envelope.seen = true;
      if ("answer" in judged && "data" in wire) this.envelope.doneCode ??= String(wire.code);
      if ("refusal" in judged && !("data" in wire)) this.envelope.withoutData = true;
    }
    if (!("answer" in judged)) return { status, body: wire, wire, judged };
    // Answers only (a refusal is no answer): what the checks of fields and forms read, and the client's schema.
    this.answers.push(judged.answer);
    this.snowflake ??= snowflakeIn(judged.answer);
    const parsed = op.response.safeParse(judged.answer);
    if (!parsed.success && this.unreadable === undefined) {
      const issue = parsed.error.issues[0];
      this.unreadable = `${op.name}: ${wirePath(issue.path) || "(body)"} ${issue.message}`;
    }
    return { status, body: judged.answer, wire, judged };
  }
}

/** Text from the platform as the doctor prints it: keys masked, control characters escaped. */
export const clean = (text: string): string => printable(redact(text));

/**
 * A write that sets a target state (status, delete, edit), tried again by the runtime's policy after a 5xx or a lost
 * answer (Probe.send): where that first try was done all the same (the second answers done, or a delete's gone), the
 * write is one whose answer is lost although done (gateway-timeout-after-write). `retried` says it was tried again.
 */
export async function idempotent(probe: Probe, op: Operation, body: unknown): Promise<Raw & { retried: boolean }> {
  const answer = await probe.send(op, body);
  const retried = answer.retriedAfterDoubt === true;
  if (retried && (!refused(answer) || (op.name.endsWith("delete") && isGone(answer)))) probe.lost.push(op.name);
  return { ...answer, retried };
}

/** A random key or token that no platform holds, for the probes of refusals. */
export const unknownKey = () => `sk-doctor${randomBytes(12).toString("hex")}`;

/** The signature of an answer for the profile: its status, and its code or shape marker. */
export function signatureOf(a: Raw): Signature {
  const code = codeOf(a.wire);
  return code === undefined ? { status: a.status } : { status: a.status, code };
}

/** Whether the client takes a key's refusal for an unknown key (client/apiKeys.ts keyUnknown: a refusal naming the key). */
export function namesKey(a: Raw): boolean {
  return (
    "refusal" in a.judged &&
    a.judged.refusal.meaning === "refused" &&
    refusalNamesKey(a.judged.refusal.code, a.judged.refusal.apiMessage)
  );
}

/** How an answer looks: status and code or shape marker. */
export function describeShape(a: Raw): string {
  if (a.lost !== undefined) return a.lost;
  const code = codeOf(a.wire);
  return `HTTP ${a.status}${code ? ` ${code}` : ""}`;
}

/** The items of a list or create answer (the objects only). */
export function itemsOf(body: unknown): Record<string, unknown>[] {
  return isObject(body) && Array.isArray(body.items) ? body.items.filter(isObject) : [];
}

/** Whether an answer says the object named does not exist, as the package reads it (gone, or a key's refusal naming the key). */
export const isGone = (a: Raw) => meaningOf(a) === "gone" || namesKey(a);

/** The words of a refusal in any of its shapes, short, masked and printable. */
export function describeRefusal(answer: Raw): string {
  const said =
    "refusal" in answer.judged
      ? (answer.judged.refusal.apiMessage ?? answer.judged.refusal.code)
      : "unclassified" in answer.judged
        ? answer.judged.unclassified
        : undefined;
  return clean(said ?? `status ${answer.status}`).slice(0, 80);
}
