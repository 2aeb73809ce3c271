import { expect } from "@jest/globals";
import { inspect } from "node:util";
import type { Emulator, FaultSpec } from "../../provider/emulator/index.js";
import { setStackConfig } from "../../provider/runtime/index.js";
import { emulator } from "../support/emulator.js";

/**
 * An emulator for fault tests, and the provider runtime pointed at it. Rate limits are off on both sides (the
 * faults are the subject); the "minute" is 600 ms so that an injected 429 hints a retry in 10 ms.
 */
export async function faultEmulator(): Promise<{ emu: Emulator; ledger: SecretLedger; logLines: string[] }> {
  const logLines: string[] = [];
  const emu = await emulator({ rateLimits: false, rateWindowMs: 600, log: (line) => logLines.push(line) });
  setStackConfig({ baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey, rateLimits: "off" });
  return { emu, ledger: new SecretLedger(emu), logLines };
}

/** Every secret an emulator ever held (its credentials, every key and token), deleted ones included. */
export class SecretLedger {
  private readonly seen = new Set<string>();
  constructor(private readonly emu: Emulator) {
    this.record();
  }

  /** Takes note of what the emulator holds now, and of any other secret seen. */
  record(...extra: (string | undefined)[]): void {
    this.seen.add(this.emu.adminKey);
    this.seen.add(this.emu.accountKey);
    for (const k of this.emu.state.listKeys()) this.seen.add(k.key);
    for (const s of this.emu.state.listSubAccounts()) this.seen.add(s.token);
    for (const e of extra) if (e) this.seen.add(e);
  }

  all(): string[] {
    this.record();
    return [...this.seen];
  }

  /** Fails, naming the secret masked, if any secret appears in the text. */
  expectAbsent(text: string, where: string): void {
    for (const s of this.all()) {
      if (text.includes(s)) throw new Error(`${where} holds a secret in plain text (sk-...${s.slice(-4)}): ${text.slice(0, 300)}`);
    }
  }

  /** The error in every form it can be shown in (message, stack, String, JSON, inspect) holds no secret. */
  expectCleanError(err: unknown): void {
    const e = err as Error;
    for (const [where, text] of [
      ["message", e.message],
      ["stack", e.stack ?? ""],
      ["String(err)", String(err)],
      ["JSON.stringify(err)", JSON.stringify(err) ?? ""],
      ["inspect(err)", inspect(err, { depth: 5 })],
    ] as const) {
      this.expectAbsent(text, `the error's ${where}`);
    }
  }

  /** Outputs hold secrets only where they are declared secret: `key`, `adoptKey`, `tokens`, `subAccounts`. */
  expectCleanOutputs(outs: object): void {
    const { key: _k, adoptKey: _a, tokens: _t, subAccounts: _s, ...rest } = outs as Record<string, unknown>;
    this.expectAbsent(JSON.stringify(rest), "the outputs (other than the secret ones)");
  }
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
