import { createHash, timingSafeEqual } from "node:crypto";
import { setMaxListeners } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { RATE_LIMIT_STATUS } from "../api/assumptions.js";
import { OPERATIONS, type Operation, type OperationId } from "../api/operations.js";
import { fingerprint, maskKey, redact } from "../api/redact.js";
import { ErrorAnswer, invalidField } from "./errors.js";
import {
  GATEWAY_404_PAGE,
  MAINTENANCE_PAGE,
  MALFORMED_BODY,
  withWrongTypes,
  type FaultInjector,
  type FaultSpec,
} from "./faults.js";
import type { Handlers } from "./handlers.js";
import type { RateLimiter } from "./limits.js";
import type { Outcome, Readings } from "./readings.js";
import { loggedPath, RequestLog, type RequestLogEntry } from "./requestLog.js";
import type { EmulatorState } from "./state.js";

/** What the server needs besides the HTTP plumbing. */
export interface ServerParts {
  state: EmulatorState;
  handlers: Handlers;
  limiter: RateLimiter;
  faults: FaultInjector;
  /** The retry hint of an injected 429 that names none: one second, scaled like the rate windows. */
  faultRetryMs: number;
  log?: (line: string) => void;
  /** Entries the request log keeps (the oldest go first). */
  requestLogSize?: number;
  /** Other readings of the spec's open points this emulator plays (readings.ts). */
  readings: Readings;
}

type Route = { id: OperationId; op: Operation } | { error: ErrorAnswer };

const MAX_BODY_BYTES = 1024 * 1024;

const ROUTES = new Map<string, Map<string, OperationId>>();
for (const [id, op] of Object.entries(OPERATIONS) as [OperationId, Operation][]) {
  const methods = ROUTES.get(op.path) ?? new Map<string, OperationId>();
  methods.set(op.method, id);
  ROUTES.set(op.path, methods);
}

function route(method: string, path: string): Route {
  const methods = ROUTES.get(path);
  if (!methods) return { error: new ErrorAnswer(404, "not_found", `no operation at ${redact(path)}`) };
  const id = methods.get(method);
  if (!id) {
    const allowed = [...methods.keys()].join(", ");
    return {
      error: new ErrorAnswer(405, "method_not_allowed", `${method} is not allowed on ${path} (allowed: ${allowed})`, {
        allow: allowed,
      }),
    };
  }
  return { id, op: OPERATIONS[id] };
}

function bearer(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? "")?.[1];
}

function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function retryHeaders(ms: number): Record<string, string> {
  return { "retry-after": String(Math.max(1, Math.ceil(ms / 1000))), "retry-after-ms": String(Math.ceil(ms)) };
}

/** The answer of a fault that processes nothing and answers in place of the platform (a page, an empty body, a refused credential). */
function answeredInstead(fault: FaultSpec, credential: string): Outcome | undefined {
  const html = { "content-type": "text/html; charset=utf-8" };
  if (fault.kind === "maintenance") return { status: 200, text: MAINTENANCE_PAGE, headers: html };
  if (fault.kind === "gateway-404") return { status: 404, text: GATEWAY_404_PAGE, headers: html };
  if (fault.kind === "empty-200") return { status: 200, text: "" };
  if (fault.kind === "credential-400") {
    return errorOutcome(
      new ErrorAnswer(
        400,
        "ip_not_allowed",
        `the key ${maskKey(credential)} is not allowed from this address (IP allow-list)`,
      ),
    );
  }
  return undefined;
}

function injected(fault: FaultSpec, retryMs: number): Outcome {
  if (fault.kind === "429") {
    const ms = fault.ms ?? retryMs;
    const headers = fault.retryAfter === false ? {} : retryHeaders(ms);
    return errorOutcome(
      new ErrorAnswer(RATE_LIMIT_STATUS, "rate_limited", "too many requests (injected fault)", headers),
    );
  }
  if (fault.kind === "400")
    return errorOutcome(new ErrorAnswer(400, "invalid_request", "the request was refused (injected fault)"));
  if (fault.kind === "503")
    return errorOutcome(new ErrorAnswer(503, "service_unavailable", "the service is unavailable (injected fault)"));
  return errorOutcome(new ErrorAnswer(500, "internal_error", "internal server error (injected fault)"));
}

function errorOutcome(err: ErrorAnswer): Outcome {
  return { status: err.status, body: err.body(), headers: err.headers };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new ErrorAnswer(413, "payload_too_large", `the body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function isJsonType(type: string | undefined): boolean {
  return /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type ?? "");
}

/** The request's input: the query of a GET, else the JSON body (an empty body counts as `{}`). */
async function readInput(op: Operation, req: IncomingMessage, url: URL): Promise<unknown> {
  if (op.method === "GET") return Object.fromEntries(url.searchParams);
  const text = await readBody(req);
  const type = req.headers["content-type"];
  // The spec's bodies are JSON (section 3); an empty body without a type is the one exception (a `{}` request).
  if ((type !== undefined || text.trim() !== "") && !isJsonType(type)) {
    throw new ErrorAnswer(
      415,
      "unsupported_media_type",
      `the body must be JSON (Content-Type: application/json), not ${JSON.stringify(type ?? "none").slice(0, 100)}`,
    );
  }
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new ErrorAnswer(400, "invalid_json", "the body is not valid JSON");
  }
}

/**
 * The target of a request as a URL, or undefined when it is not one: a client may send any text there
 * (`GET http://a:99999/`), and that is a 400 for this request, not the end of the server.
 */
function requestUrl(target: string | undefined): URL | undefined {
  return URL.canParse(target ?? "/", "http://emulator") ? new URL(target ?? "/", "http://emulator") : undefined;
}

/** `controller`, its signal without Node's limit of 10 listeners (which warns of a leak that is not one). */
function unlimited(controller: AbortController): AbortController {
  setMaxListeners(0, controller.signal);
  return controller;
}

/** The emulator's HTTP server: routing from OPERATIONS, auth, rate limits, faults, validation, the request log. */
export class EmulatorServer {
  /** The last requests received, in order of arrival (a ring buffer: a long run does not grow without end). */
  readonly requests: RequestLog;
  private readonly server: Server;
  /** Aborted by close(): every request waiting out a latency fault listens to it, so it has no listener limit. */
  private readonly closing = unlimited(new AbortController());
  private requestCount = 0;

  constructor(private readonly parts: ServerParts) {
    this.requests = new RequestLog(parts.requestLogSize);
    this.server = createServer((req, res) => this.receive(req, res));
  }

  /** Starts listening; resolves with the bound address. */
  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => {
        this.server.off("error", reject);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  /** Stops listening, cuts every open connection (idle keep-alive ones too) and waits for the last state write. */
  async close(): Promise<void> {
    if (!this.closing.signal.aborted) {
      this.closing.abort();
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      this.server.closeAllConnections();
      await closed;
    }
    await this.parts.state.flush().catch(() => undefined);
  }

  private receive(req: IncomingMessage, res: ServerResponse): void {
    const started = performance.now();
    const url = requestUrl(req.url);
    const entry: RequestLogEntry = {
      op: "unknown",
      method: req.method ?? "",
      path: redact(loggedPath(url?.pathname ?? req.url ?? "")),
      status: 0,
      at: Date.now(),
    };
    this.requests.push(entry);
    const requestId = `req_${++this.requestCount}`;
    (url
      ? this.handle(req, url, entry)
      : Promise.resolve(errorOutcome(new ErrorAnswer(400, "invalid_request", "the request target is not a valid URL")))
    )
      .then((outcome) => {
        if (outcome) this.respond(res, entry, requestId, this.parts.readings.shape(entry.op, outcome));
        else req.socket.destroy();
      })
      .catch((err: unknown) => {
        // The request stream ends (and counts as destroyed) once its body is read; only a gone socket means
        // nobody is left to answer. Anyone else gets a 500 and the log says why.
        if (this.closing.signal.aborted || req.socket.destroyed) return void req.socket.destroy();
        this.parts.log?.(`internal error in ${entry.method} ${entry.op}: ${redact(String(err))}`);
        this.respond(
          res,
          entry,
          requestId,
          errorOutcome(new ErrorAnswer(500, "internal_error", "internal error of the emulator")),
        );
      })
      .finally(() => {
        const fault = entry.fault ? ` fault=${entry.fault}` : "";
        this.parts.log?.(
          `${entry.method} ${entry.op} ${entry.status} ${Math.round(performance.now() - started)}ms${fault}`,
        );
      });
  }

  /** The answer to one request, or undefined to drop the connection without one. */
  private async handle(req: IncomingMessage, url: URL, entry: RequestLogEntry): Promise<Outcome | undefined> {
    const found = route(entry.method, url.pathname);
    if ("error" in found) return errorOutcome(found.error);
    const { id, op } = found;
    entry.op = op.name;
    const moved = this.parts.readings.redirect(url.pathname);
    if (moved) return moved;

    const credential = bearer(req.headers.authorization);
    const authError = this.authenticate(op, credential);
    if (authError) return errorOutcome(authError);

    const { limiter, faults } = this.parts;
    const bucket = fingerprint(credential!);
    const waitMs = limiter.waitMs(bucket, op.name);
    if (waitMs > 0) {
      return errorOutcome(
        new ErrorAnswer(
          RATE_LIMIT_STATUS,
          "rate_limited",
          `rate limit of ${op.name} exceeded; retry in ${waitMs} ms`,
          retryHeaders(waitMs),
        ),
      );
    }
    const decision = faults.decide(op.name);
    entry.fault = decision.label;
    const fault = decision.fault;
    // A 429 means "not processed", so neither kind of 429 uses up a slot of the limit.
    if (fault?.kind === "429") return injected(fault, this.parts.faultRetryMs);
    limiter.record(bucket, op.name);

    if (decision.latencyMs > 0) await this.sleep(decision.latencyMs);
    if (fault?.kind === "drop-before") return undefined;
    if (fault?.kind === "400" || fault?.kind === "500" || fault?.kind === "503")
      return injected(fault, this.parts.faultRetryMs);
    const instead = fault && answeredInstead(fault, credential!);
    if (instead) return instead;

    const outcome = await this.process(id, op, req, url);
    if (fault?.kind === "drop-after") return undefined;
    const lost = this.parts.readings.lostAnswer(op.name, outcome);
    if (lost) return lost;
    if (outcome.status === 200 && fault?.kind === "malformed") return { status: 200, text: MALFORMED_BODY };
    if (outcome.status === 200 && fault?.kind === "wrong-type")
      return { status: 200, body: withWrongTypes(outcome.body) };
    if (outcome.status === 404 && fault?.kind === "null-200") return { status: 200, text: "null" };
    return outcome;
  }

  private authenticate(op: Operation, credential: string | undefined): ErrorAnswer | undefined {
    const expected = op.group === "management" ? this.parts.state.adminKey : this.parts.state.accountKey;
    const needs = op.group === "management" ? "the admin key" : "the main account key";
    if (credential === undefined) {
      return new ErrorAnswer(
        401,
        "unauthorized",
        `missing or malformed Authorization header: ${op.name} needs "Bearer <${needs}>"`,
        {
          "www-authenticate": "Bearer",
        },
      );
    }
    if (!sameSecret(credential, expected)) {
      return new ErrorAnswer(401, "unauthorized", `the credential is not valid for ${op.name}: it needs ${needs}`, {
        "www-authenticate": "Bearer",
      });
    }
    return undefined;
  }

  /** Validates and runs the operation; a committed change is in the state file before this resolves. */
  private async process(id: OperationId, op: Operation, req: IncomingMessage, url: URL): Promise<Outcome> {
    const { state, handlers } = this.parts;
    try {
      const { readings } = this.parts;
      const parsed = op.request.safeParse(readings.input(op.name, await readInput(op, req, url)));
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw invalidField(issue.path, issue.message);
      }
      const refused = readings.refusal(op.name, parsed.data);
      if (refused) throw refused;
      const revision = state.revision;
      // The table pairs each id with its schema, so the parsed data has the type the handler of that id expects.
      const body = (handlers[id] as (request: unknown) => unknown)(parsed.data);
      if (state.revision !== revision) {
        await state.flush().catch(() => {
          throw new ErrorAnswer(
            500,
            "state_write_failed",
            "the change was made but the state file could not be written",
          );
        });
      }
      return { status: 200, body };
    } catch (err) {
      if (err instanceof ErrorAnswer) return errorOutcome(err);
      throw err;
    }
  }

  private respond(res: ServerResponse, entry: RequestLogEntry, requestId: string, outcome: Outcome): void {
    if (res.headersSent || res.destroyed) return;
    const text = outcome.text ?? JSON.stringify(outcome.body);
    entry.status = outcome.status;
    res.writeHead(outcome.status, {
      // Even the malformed fault claims JSON, as a broken proxy or server would.
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(text),
      "x-request-id": requestId,
      ...outcome.headers,
    });
    res.end(text);
  }

  private sleep(ms: number): Promise<void> {
    const signal = this.closing.signal;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(new Error("emulator closed"));
      };
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}
