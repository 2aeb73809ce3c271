import { LlmAccountsClient, type ClientOptions } from "../../provider/client/index.js";
import { startEmulator, type Emulator, type EmulatorOptions } from "../../provider/emulator/index.js";

/** Starts an emulator on 127.0.0.1 (free port) for a test file. */
export async function emulator(options: EmulatorOptions = {}): Promise<Emulator> {
  return startEmulator({ port: 0, host: "127.0.0.1", ...options });
}

/** A client for an emulator, with fast retries so that tests do not wait on backoff. */
export function clientOf(emu: Emulator, options: Partial<ClientOptions> = {}): LlmAccountsClient {
  return new LlmAccountsClient({
    baseUrl: emu.baseUrl,
    adminKey: emu.adminKey,
    accountKey: emu.accountKey,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
    ...options,
  });
}

/** Calls per operation name in the emulator's request log. */
export function calls(emu: Emulator): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of emu.requests()) out[r.op] = (out[r.op] ?? 0) + 1;
  return out;
}

/** Every secret the emulator issued or holds: its two credentials, every key and sub-account token. */
export function secretsOf(emu: Emulator, extra: string[] = []): string[] {
  return [
    emu.adminKey,
    emu.accountKey,
    ...emu.state.listKeys().map((k) => k.key),
    ...emu.state.listSubAccounts().map((s) => s.token),
    ...extra,
  ];
}

/** Fails if any of the secrets appears in the text. */
export function expectNoSecret(text: string, secrets: string[]): void {
  for (const s of secrets) {
    if (text.includes(s)) throw new Error(`a secret (${s.slice(0, 7)}...) appears in: ${text.slice(0, 300)}`);
  }
}
