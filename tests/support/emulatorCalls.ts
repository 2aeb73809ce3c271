// Raw HTTP calls to an emulator, for tests of the emulator itself: one operation as any client would send it.
import { OPERATIONS, type OperationId } from "../../provider/api/operations.js";
import type { Emulator } from "../../provider/emulator/index.js";

/** What a test sees of one answer. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body; undefined when it is not JSON. */
  json: any;
}

export interface CallOptions {
  /** The credential to send; default: the right one for the operation's group; null sends no header. */
  credential?: string | null;
  /** A raw body to send instead of JSON.stringify(body). */
  rawBody?: string;
}

/** The credential an operation's group needs. */
export function credentialFor(emu: Emulator, id: OperationId): string {
  return OPERATIONS[id].group === "management" ? emu.adminKey : emu.accountKey;
}

/** Calls one operation with node's fetch: a GET puts `body` in the query string. */
export async function call(
  emu: Emulator,
  id: OperationId,
  body?: Record<string, unknown>,
  options: CallOptions = {},
): Promise<Answer> {
  const op = OPERATIONS[id];
  const url = new URL(emu.baseUrl + op.path);
  const headers: Record<string, string> = {};
  const credential = options.credential === undefined ? credentialFor(emu, id) : options.credential;
  if (credential !== null) headers.authorization = `Bearer ${credential}`;
  let payload: string | undefined;
  if (op.method === "GET") {
    for (const [k, v] of Object.entries(body ?? {})) url.searchParams.set(k, String(v));
  } else {
    headers["content-type"] = "application/json";
    payload = options.rawBody ?? JSON.stringify(body ?? {});
  }
  const res = await fetch(url, { method: op.method, headers, body: payload });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Calls an operation that must succeed; checks the answer against the operation's response schema. */
export async function ok(emu: Emulator, id: OperationId, body?: Record<string, unknown>): Promise<any> {
  const answer = await call(emu, id, body);
  if (answer.status !== 200) throw new Error(`${OPERATIONS[id].name} answered ${answer.status}: ${answer.text}`);
  const parsed = OPERATIONS[id].response.safeParse(answer.json);
  if (!parsed.success) throw new Error(`${OPERATIONS[id].name} answered off-schema: ${parsed.error.message}`);
  return answer.json;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Six-decimal amount strings as whole millionths, to add them exactly. */
export function micros(amount: string): number {
  const [whole, fraction = ""] = amount.split(".");
  return Number(whole) * 1_000_000 + Number(fraction.padEnd(6, "0"));
}

/** The operations that change the platform: what "no write" means in the e2e suites. */
export const WRITE_OPERATIONS: readonly string[] = [
  "api-key/create",
  "api-key/edit",
  "api-key/status",
  "api-key/delete",
  "sub-account/create",
  "sub-account/edit",
  "sub-account/delete",
];

/** The write operations among `calls` (the emulator's calls by operation), with their counts. */
export function writeCalls(calls: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(calls).filter(([op]) => WRITE_OPERATIONS.includes(op)));
}
