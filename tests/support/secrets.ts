import { inspect } from "node:util";
import type { Emulator } from "../../provider/emulator/index.js";

/** Every secret an emulator ever held (its credentials, every key and token), deleted ones included. */
export class SecretLedger {
  private readonly seen = new Set<string>();
  private readonly keys = new Set<string>();
  constructor(private readonly emu: Emulator) {
    this.record();
  }

  /** Takes note of what the emulator holds now, and of any other secret seen. */
  record(...extra: (string | undefined)[]): void {
    this.seen.add(this.emu.adminKey);
    this.seen.add(this.emu.accountKey);
    for (const k of this.emu.state.listKeys()) {
      this.seen.add(k.key);
      this.keys.add(k.key);
    }
    for (const s of this.emu.state.listSubAccounts()) this.seen.add(s.token);
    for (const e of extra) if (e) this.seen.add(e);
  }

  /** Every API key the emulator held when recorded (deleted ones included): what a sweep is given to look at. */
  apiKeys(): string[] {
    this.record();
    return [...this.keys];
  }

  all(): string[] {
    this.record();
    return [...this.seen];
  }

  /** Fails, naming the secret masked, if any secret appears in the text. */
  expectAbsent(text: string, where: string): void {
    for (const s of this.all()) {
      if (text.includes(s)) throw new Error(`${where} holds a secret in plain text (sk-...${s.slice(-4)})`);
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

  /** Outputs hold secrets only where they are declared secret (the resource classes' additionalSecretOutputs). */
  expectCleanOutputs(outs: object): void {
    const {
      key: _k,
      adoptKey: _a,
      previousKey: _p,
      tokens: _t,
      subAccounts: _s,
      adoptTokens: _at,
      ...rest
    } = outs as Record<string, unknown>;
    this.expectAbsent(JSON.stringify(rest), "the outputs (other than the secret ones)");
  }
}
