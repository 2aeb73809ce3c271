import { HOUR_MS, MINUTE_MS } from "../api/assumptions.js";
import { AccountKeySchema, AdminKeySchema } from "../api/schemas/index.js";
import { FaultInjector, type FaultSpec } from "./faults.js";
import { createHandlers, type ListBehaviour } from "./handlers.js";
import { effectiveLimits, RateLimiter, type RateLimitOverrides } from "./limits.js";
import { credentialClash, StateFile } from "./persistence.js";
import { newAdminKey, newKey, randomToken } from "./random.js";
import { Readings, UNPREFIXED_KEY_LENGTH, type Reading } from "./readings.js";
import { EmulatorServer } from "./server.js";
import type { RequestLogEntry } from "./requestLog.js";
import { EmulatorState } from "./state.js";

export { MODEL_CATALOGUE, USAGE_STATS_DAYS, usageRows, type UsageRowsQuery } from "./catalogue.js";
export { FAULT_KINDS, parseFaultSpec, checkFaultSpec, type FaultKind, type FaultSpec } from "./faults.js";
export { effectiveLimits, type RateLimitOverrides } from "./limits.js";
export { ONE_OF, READINGS, READING_NAMES, type Reading } from "./readings.js";
export { DEFAULT_REQUEST_LOG_SIZE } from "./requestLog.js";
export type { StateSnapshot } from "./persistence.js";
export type { RequestLogEntry } from "./requestLog.js";
export { DEFAULT_BALANCE, EmulatorState, type ApiKeyRecord, type SubAccountRecord } from "./state.js";

/** How to start an emulator; every field is optional. */
export interface EmulatorOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Address to bind; default 127.0.0.1. */
  host?: string;
  /** The management group's credential; generated (`sk-admin-...`) when not given nor in the state file. */
  adminKey?: string;
  /** The sub-account group's credential; generated (`sk-...`) when not given nor in the state file. */
  accountKey?: string;
  /** Length of a rate-limit "minute" (default 60000); every window scales with it, the daily one too. */
  rateWindowMs?: number;
  /** `false` turns rate limits off; an object replaces the limits of the operations it names. */
  rateLimits?: false | RateLimitOverrides;
  /** Load the state from this file at start (when present) and save it after every change. */
  stateFile?: string;
  /** Faults to inject from the start (see setFaults). */
  faults?: FaultSpec[];
  /** Seed of the fault generator (default 1), so that a run with faults is reproducible. */
  seed?: number;
  /** Receives one line per request (method, operation, status, ms): never a key or a body. */
  log?: (line: string) => void;
  /** The time API timestamps and the usage summary's "today" are taken from (default Date.now). */
  clock?: () => number;
  /** Entries the request log keeps, the newest (default 10000); older ones are dropped. */
  requestLogSize?: number;
  /** Milliseconds added to that clock: a negative offset issues keys with an older `created_at`. */
  clockOffsetMs?: number;
  /** Most sub-accounts one list answer holds, `page_size=-1` included (default: no cap): a platform that pages. */
  subAccountListCap?: number;
  /** Other readings of the spec's open points to play (readings.ts READINGS); none by default. */
  readings?: Reading[];
  /**
   * Late visibility (eventual consistency): a sub-account shows in the list, and a key answers its get (404 until
   * then), only this many milliseconds (of `clock`) after its create. Default 0: at once.
   */
  lateVisibilityMs?: number;
}

/** A running emulator. */
export interface Emulator {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  baseUrl: string;
  adminKey: string;
  accountKey: string;
  /** The request log so far, at most `requestLogSize` newest entries (copies). */
  requests(): RequestLogEntry[];
  /** Requests so far per operation name (`{"api-key/create": 3}`): what tests, the demo and the benchmark count. */
  calls(): Record<string, number>;
  clearRequests(): void;
  /** Replaces the injected faults (their counts and the generator start over). */
  setFaults(faults: FaultSpec[]): void;
  /**
   * For tests of paging: runs `hook` after each sub-account list answer is made, before it is sent (a console
   * delete between two pages); `undefined` removes it.
   */
  afterSubAccountList(hook: ((page: number) => void) | undefined): void;
  /** Moves the emulator's clock (not the caller's) to `ms` from its base clock: keys issued now get that age. */
  setClockOffset(ms: number): void;
  /** The data, for tests to inspect or change without HTTP. */
  state: EmulatorState;
  /** Closes every connection and the server; resolves once the last state write is done. */
  close(): Promise<void>;
}

/** Why a credential given to the emulator cannot be one (a key file's second line, a space), or undefined. */
export function credentialProblem(which: "adminKey" | "accountKey", value: string): string | undefined {
  const parsed = (which === "adminKey" ? AdminKeySchema : AccountKeySchema).safeParse(value);
  return parsed.success ? undefined : parsed.error.issues[0].message;
}

function checkOptions(options: EmulatorOptions): void {
  const { rateWindowMs } = options;
  for (const which of ["adminKey", "accountKey"] as const) {
    const value = options[which];
    const problem = value === undefined ? undefined : credentialProblem(which, value);
    if (problem) throw new TypeError(`${which} ${problem}`);
  }
  if (
    options.requestLogSize !== undefined &&
    !(Number.isInteger(options.requestLogSize) && options.requestLogSize > 0)
  ) {
    throw new TypeError("requestLogSize must be a whole number greater than 0");
  }
  if (rateWindowMs !== undefined && !(Number.isFinite(rateWindowMs) && rateWindowMs > 0)) {
    throw new TypeError("rateWindowMs must be a number greater than 0");
  }
  checkClockOffset(options.clockOffsetMs);
  if (
    options.lateVisibilityMs !== undefined &&
    !(Number.isFinite(options.lateVisibilityMs) && options.lateVisibilityMs >= 0)
  ) {
    throw new TypeError("lateVisibilityMs must be a number of milliseconds, 0 or more");
  }
}

/**
 * Largest move of the emulator's clock either way: ten years of 365 days. Enough for any key age a test wants;
 * far enough from the limits of a JavaScript date (about 275,000 years) that no timestamp it issues is invalid.
 */
export const MAX_CLOCK_OFFSET_HOURS = 10 * 365 * 24;

function checkClockOffset(ms: number | undefined): void {
  if (ms !== undefined && !(Number.isFinite(ms) && Math.abs(ms) <= MAX_CLOCK_OFFSET_HOURS * HOUR_MS)) {
    throw new TypeError(
      `clockOffsetMs must be a number of milliseconds between -${MAX_CLOCK_OFFSET_HOURS} and ${MAX_CLOCK_OFFSET_HOURS} hours`,
    );
  }
}

/** The late visibility of option `lateVisibilityMs`: what was created when, on the emulator's clock. */
function lateVisibility(ms: number | undefined, clock: () => number): ListBehaviour["lag"] {
  if (ms === undefined || ms <= 0) return undefined;
  const createdAt = new Map<string, number>();
  return {
    created: (id) => void createdAt.set(id, clock()),
    shows: (id) => {
      const at = createdAt.get(id);
      return at === undefined || clock() - at >= ms;
    },
  };
}

/** The emulator's state: kept in `options.stateFile` across restarts (its credentials checked against those given), else in memory. */
async function openState(options: EmulatorOptions, clock: () => number): Promise<EmulatorState> {
  const file = options.stateFile === undefined ? undefined : new StateFile(options.stateFile);
  const saved = await file?.load();
  const adminKey = options.adminKey ?? saved?.admin_key ?? newAdminKey();
  const accountKey = options.accountKey ?? saved?.account_key ?? newKey();
  const clash = saved && credentialClash(saved, adminKey, accountKey);
  if (clash) throw new Error(`the keys given do not go with state file ${options.stateFile}: ${clash}`);
  const state = new EmulatorState(adminKey, accountKey, clock, file, saved);
  if (file) {
    // Saved at once, so that generated credentials survive a restart even when nothing else changes.
    state.changed();
    await state.flush();
  }
  return state;
}

/** Starts an emulator of the account API on real HTTP. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  checkOptions(options);
  const faults = new FaultInjector(options.faults ?? [], options.seed ?? 1);
  const base = options.clock ?? Date.now;
  let offset = options.clockOffsetMs ?? 0;
  const clock = () => base() + offset;
  const rateWindowMs = options.rateWindowMs ?? MINUTE_MS;
  const state = await openState(options, clock);
  const readings = new Readings(options.readings, (op, item) =>
    op === "api-key/delete" ? state.hasKey(item) : state.hasSubAccount(item),
  );
  if (readings.has("unprefixed-keys")) state.issueKey = () => randomToken(UNPREFIXED_KEY_LENGTH);
  const listBehaviour: ListBehaviour = {
    subAccountListCap: options.subAccountListCap ?? readings.listCap,
    aliasMatches: (filter, alias) => readings.aliasMatches(filter, alias),
    totalIgnoresFilters: readings.has("total-unfiltered"),
    mergesPricing: readings.mergesPricing,
    order: readings.listOrder,
    lag: lateVisibility(options.lateVisibilityMs, clock),
  };
  const server = new EmulatorServer({
    state,
    handlers: createHandlers(state, clock, listBehaviour),
    limiter: new RateLimiter(effectiveLimits(options.rateLimits, rateWindowMs)),
    faults,
    faultRetryMs: Math.max(1, Math.round(rateWindowMs / 60)),
    log: options.log,
    requestLogSize: options.requestLogSize,
    readings,
  });
  const address = await server.listen(options.port ?? 0, options.host ?? "127.0.0.1");
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    baseUrl: `http://${host}:${address.port}`,
    adminKey: state.adminKey,
    accountKey: state.accountKey,
    requests: () => server.requests.entries().map((entry) => ({ ...entry })),
    calls: () => {
      const out: Record<string, number> = {};
      for (const r of server.requests.entries()) out[r.op] = (out[r.op] ?? 0) + 1;
      return out;
    },
    clearRequests: () => server.requests.clear(),
    setFaults: (specs) => faults.set(specs),
    afterSubAccountList: (hook) => (listBehaviour.afterSubAccountList = hook),
    setClockOffset: (ms) => {
      checkClockOffset(ms);
      offset = ms;
    },
    state,
    close: () => server.close(),
  };
}
