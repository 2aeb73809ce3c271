import { afterAll, afterEach, beforeAll, beforeEach, expect } from "@jest/globals";
import type { Emulator, FaultSpec } from "../../provider/emulator/index.js";
import { startFresh } from "../../provider/runtime/index.js";
import { emulator } from "./emulator.js";
import { SecretLedger } from "./secrets.js";

/** The waits the runtime's retries asked for since the fault emulator started, in order. */
export const retryWaits: number[] = [];

/**
 * An emulator for fault tests, and the provider runtime pointed at it. Rate limits are off on both sides (the
 * faults are the subject); the "minute" is 600 ms so that an injected 429 hints a retry in 10 ms.
 */
export async function faultEmulator(): Promise<{ emu: Emulator; ledger: SecretLedger; logLines: string[] }> {
  const logLines: string[] = [];
  const emu = await emulator({ rateLimits: false, rateWindowMs: 600, log: (line) => logLines.push(line) });
  // Retries wait on a clock that records the waits and returns at once: their timing is asserted, not slept.
  retryWaits.splice(0);
  startFresh({
    stackConfig: { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey, rateLimits: "off" },
    clientOverrides: { clock: { now: () => Date.now(), sleep: async (ms) => void retryWaits.push(ms) } },
  });
  return { emu, ledger: new SecretLedger(emu), logLines };
}

/**
 * The fault emulator for a test file, with its hooks: faults and log reset around each test, and at the end
 * nothing left behind (`leftovers` lists what remains, by alias: a failure message must not print a secret)
 * and no secret in the emulator's log.
 */
export function useFaultEmulator(
  set: (ctx: { emu: Emulator; ledger: SecretLedger; logLines: string[] }) => void,
  leftovers: (emu: Emulator) => string[],
): void {
  let ctx: { emu: Emulator; ledger: SecretLedger; logLines: string[] };
  beforeAll(async () => {
    ctx = await faultEmulator();
    set(ctx);
  });
  afterAll(async () => {
    try {
      expect(leftovers(ctx.emu)).toEqual([]);
      expectCleanLog(ctx.ledger, ctx.logLines);
    } finally {
      await ctx.emu.close();
    }
  });
  // Each test plays commands of its own: it starts as a new plugin process would, with nothing kept.
  beforeEach(() => {
    startFresh();
    ctx.emu.setFaults([]);
    ctx.emu.clearRequests();
  });
  afterEach(() => ctx.emu.setFaults([]));
}

/** Runs an operation and returns its error, failing if it succeeds. */
export async function failure(op: () => Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await op();
  } catch (err) {
    return err as Error & Record<string, unknown>;
  }
  throw new Error("the operation succeeded, but a failure was expected");
}

/** Runs an operation and returns its error, checked to hold no secret in any form; fails if it succeeds. */
export async function cleanFailure(
  ledger: SecretLedger,
  op: () => Promise<unknown>,
): Promise<Error & Record<string, unknown>> {
  const err = await failure(op);
  ledger.record();
  ledger.expectCleanError(err);
  return err;
}

/** Count of requests per `op status` in the emulator's log, e.g. `{"api-key/create 429": 3, "api-key/create 200": 1}`. */
export function statuses(emu: Emulator): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of emu.requests()) {
    const k = `${r.op} ${r.status}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/** Injects faults only into the given operations. */
export function only(ops: string[], spec: Omit<FaultSpec, "ops">): FaultSpec {
  return { ...spec, ops };
}

/** The emulator's log lines hold no secret (it logs method, operation, status and time only). */
export function expectCleanLog(ledger: SecretLedger, lines: string[]): void {
  ledger.expectAbsent(lines.join("\n"), "the emulator's log");
  expect(lines.length).toBeGreaterThan(0);
}
