import { OPERATIONS } from "../api/operations.js";
import { seededRandom } from "./random.js";

/** Every kind of fault the emulator can inject. */
export const FAULT_KINDS = [
  "400",
  "429",
  "500",
  "503",
  "latency",
  "drop-before",
  "drop-after",
  "malformed",
  "wrong-type",
  "maintenance",
  "gateway-404",
  "empty-200",
  "null-200",
  "credential-400",
] as const;
/** One kind of injected fault (see FaultSpec). */
export type FaultKind = (typeof FAULT_KINDS)[number];

/**
 * A fault to inject into authenticated requests.
 *
 * - `400`: a refusal of the request's parameters that names no key (`invalid_request`), nothing processed.
 * - `429`: answered as rate limited, nothing processed; `Retry-After(-Ms)` headers unless `retryAfter: false`.
 * - `500` / `503`: a server error, nothing processed.
 * - `latency`: `ms` (default 100) added before processing; combines with one other fault.
 * - `drop-before`: the connection is closed before processing: nothing committed, no answer.
 * - `drop-after`: the request is processed and committed, then the connection is closed without an answer.
 * - `malformed`: processed and committed; a successful answer is replaced by a 200 whose body is not JSON.
 * - `wrong-type`: processed and committed; a successful answer is replaced by JSON whose fields have wrong types.
 * - `maintenance`: nothing processed; answered HTTP 200 `text/html` with a maintenance page (a CDN's or a WAF's).
 * - `gateway-404`: nothing processed; answered HTTP 404 `text/html` with a gateway's page (a base URL missing the API's path).
 * - `empty-200`: nothing processed; answered HTTP 200 with an empty body.
 * - `null-200`: processed; an answer of 404 (no such key or sub-account) is replaced by HTTP 200 with the body `null`
 *   (a Go service's nil lookup); other answers as usual.
 * - `credential-400`: nothing processed; answered 400 `ip_not_allowed` naming the credential (masked), as an IP
 *   allow-list refuses an admin key from an address outside it.
 */
export interface FaultSpec {
  kind: FaultKind;
  /** Share of the matching requests that get the fault, 0 to 1 (default 1). */
  rate?: number;
  /** Operation names (`api-key/create`, ...) it applies to (default: all). */
  ops?: string[];
  /** Inject at most this many times, then stop (default: no limit). */
  count?: number;
  /** Spare the first this many matching requests (default 0): a fault halfway through a command's calls. */
  after?: number;
  /** `latency`: the delay; `429`: the retry hint (default: one second, scaled by rateWindowMs). */
  ms?: number;
  /** `429`: send Retry-After and Retry-After-Ms (default true). */
  retryAfter?: boolean;
}

const OPERATION_NAMES = new Set<string>(Object.values(OPERATIONS).map((o) => o.name));

/** Checks a fault spec and returns a copy; throws a TypeError that names the bad field. */
export function checkFaultSpec(spec: FaultSpec): FaultSpec {
  const fail = (message: string): never => {
    throw new TypeError(`fault ${JSON.stringify(spec.kind)}: ${message}`);
  };
  if (!FAULT_KINDS.includes(String(spec.kind) as FaultKind)) fail(`kind must be one of ${FAULT_KINDS.join(", ")}`);
  if (spec.rate !== undefined && !(spec.rate >= 0 && spec.rate <= 1)) fail("rate must be between 0 and 1");
  if (spec.count !== undefined && !(Number.isInteger(spec.count) && spec.count >= 0))
    fail("count must be a whole number, 0 or more");
  if (spec.after !== undefined && !(Number.isInteger(spec.after) && spec.after >= 0))
    fail("after must be a whole number, 0 or more");
  if (spec.ms !== undefined && !(Number.isFinite(spec.ms) && spec.ms >= 0)) fail("ms must be 0 or more");
  for (const op of spec.ops ?? []) if (!OPERATION_NAMES.has(op)) fail(`ops: unknown operation "${op}"`);
  return { ...spec, kind: String(spec.kind) as FaultKind, ops: spec.ops && [...spec.ops] };
}

function parseBoolean(value: string, field: string): boolean {
  if (["on", "true", "yes", "1"].includes(value)) return true;
  if (["off", "false", "no", "0"].includes(value)) return false;
  throw new TypeError(`fault option ${field}: "${value}" is not on/off`);
}

function parseNumber(value: string, field: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n))
    throw new TypeError(`fault option ${field}: "${value}" is not a number`);
  return n;
}

/**
 * Parses the command-line form `kind[:key=value,...]`, e.g. `429:rate=0.2,ops=api-key/create` or
 * `latency:ms=50`. Several operations: `ops=api-key/create+api-key/edit` or `ops` repeated.
 */
export function parseFaultSpec(text: string): FaultSpec {
  const colon = text.indexOf(":");
  const kind = (colon < 0 ? text : text.slice(0, colon)).trim();
  const spec: FaultSpec = { kind: kind as FaultKind };
  const options = colon < 0 ? "" : text.slice(colon + 1);
  for (const pair of options.split(",").filter((p) => p.trim() !== "")) {
    const eq = pair.indexOf("=");
    if (eq < 0) throw new TypeError(`fault option "${pair}" is not key=value`);
    const key = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    switch (key) {
      case "rate":
      case "count":
      case "after":
      case "ms":
        spec[key] = parseNumber(value, key);
        break;
      case "retryAfter":
      case "retry-after":
        spec.retryAfter = parseBoolean(value, key);
        break;
      case "ops":
        spec.ops = [...(spec.ops ?? []), ...value.split(/[+|]/).filter(Boolean)];
        break;
      default:
        throw new TypeError(`unknown fault option "${key}" (rate, ops, count, after, ms, retryAfter)`);
    }
  }
  return checkFaultSpec(spec);
}

/** What the injector decided for one request: added latency, and at most one other fault. */
export interface FaultDecision {
  latencyMs: number;
  fault?: FaultSpec;
  /** For the request log: the kinds injected, e.g. `latency+500`. */
  label?: string;
}

/** Decides, with a seeded generator, which faults hit each request. */
export class FaultInjector {
  private specs: { spec: FaultSpec; used: number; seen: number }[] = [];
  private random: () => number;

  constructor(
    specs: readonly FaultSpec[],
    private readonly seed: number,
  ) {
    this.random = seededRandom(seed);
    this.set(specs);
  }

  /** Replaces the faults, restarting their counts and the generator (so a run is reproducible). */
  set(specs: readonly FaultSpec[]): void {
    this.specs = specs.map((spec) => ({ spec: checkFaultSpec(spec), used: 0, seen: 0 }));
    this.random = seededRandom(this.seed);
  }

  /** Draws the faults of one request to `op`. */
  decide(op: string): FaultDecision {
    let latencyMs = 0;
    let fault: FaultSpec | undefined;
    const kinds: string[] = [];
    for (const entry of this.specs) {
      const { spec } = entry;
      if (spec.ops && !spec.ops.includes(op)) continue;
      if (entry.seen++ < (spec.after ?? 0)) continue;
      if (spec.count !== undefined && entry.used >= spec.count) continue;
      if (spec.kind !== "latency" && fault) continue;
      if (this.random() >= (spec.rate ?? 1)) continue;
      entry.used++;
      kinds.push(spec.kind);
      if (spec.kind === "latency") latencyMs += spec.ms ?? 100;
      else fault = spec;
    }
    return { latencyMs, fault, label: kinds.length ? kinds.join("+") : undefined };
  }
}

/** A value of a type no reading of the field takes (a decimal may come as a number, a number as its text: not these). */
function wrongType(value: unknown): unknown {
  if (typeof value === "string") return { unexpected: 12345 };
  if (typeof value === "number") return "n/a";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return "x";
  if (value === null) return false;
  return "x";
}

/** The body a `wrong-type` fault sends: every top-level field of the real answer with a value of another type. */
export function withWrongTypes(body: unknown): unknown {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return { result: wrongType(body) };
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, wrongType(v)]));
}

/** The page a `maintenance` fault sends, as HTTP 200 `text/html`. */
export const MAINTENANCE_PAGE =
  "<!DOCTYPE html><html><head><title>Down for maintenance</title></head><body><h1>We'll be back soon</h1></body></html>";
/** The page a `gateway-404` fault sends, as HTTP 404 `text/html`. */
export const GATEWAY_404_PAGE =
  "<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center><hr><center>nginx</center></body></html>";

/** The body a `malformed` fault sends: looks like the start of JSON, is not JSON. */
export const MALFORMED_BODY = '{"error": <html>Bad Gateway</html>';
