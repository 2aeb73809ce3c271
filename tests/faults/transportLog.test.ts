import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { FAULT_KINDS, type Emulator, type FaultKind } from "../../provider/emulator/index.js";
import { clientOf } from "../support/emulator.js";
import { faultEmulator } from "../support/faults.js";
import type { SecretLedger } from "../support/secrets.js";

// The client's request log (the transport's `logger`) under every kind of fault: one line per attempt, with
// the operation, status or failure, and never a key, a token or a credential.

let emu: Emulator;
let ledger: SecretLedger;

beforeAll(async () => {
  ({ emu, ledger } = await faultEmulator());
});
afterAll(async () => emu.close());

describe("the client's log lines under faults", () => {
  test.each(FAULT_KINDS.map((k) => [k]) as [FaultKind][])(
    "%s on every operation: the log names operations and outcomes, never a secret",
    async (kind) => {
      const lines: string[] = [];
      const client = clientOf(emu, {
        rateLimits: false,
        logger: (line) => lines.push(line),
        retry: { baseDelayMs: 1, maxDelayMs: 5 },
      });
      // Made without faults, so that every later call carries a real key or token in its request.
      const key = emu.state.createKey(`log-${kind}`).key;
      const team = emu.state
        .createSubAccounts({ alias: `log-${kind}`, balance: 1, modelPricing: [], count: 2 })
        .map((s) => s.token);
      ledger.record();

      emu.setFaults([{ kind, rate: 0.5, ms: kind === "latency" ? 20 : 1 }]);
      const calls: Array<() => Promise<unknown>> = [
        () => client.apiKeys.create({ alias: `log-${kind}-new`, securityConfig: {} }),
        () => client.apiKeys.get(key),
        () => client.apiKeys.edit({ key, alias: `log-${kind}`, securityConfig: {} }),
        () => client.apiKeys.setStatus(key, false),
        () => client.subAccounts.list({ alias: `log-${kind}` }),
        () => client.subAccounts.create({ alias: `log-${kind}-new`, balance: 1, modelPricing: [], count: 1 }),
        () => client.subAccounts.edit({ sks: team, alias: `log-${kind}`, modelPricing: [] }),
        () => client.subAccounts.delete([team[1]]),
        () => client.apiKeys.delete([key]),
      ];
      for (const call of calls) {
        try {
          await call();
        } catch (err) {
          ledger.record();
          ledger.expectCleanError(err);
        }
      }
      emu.setFaults([]);

      expect(lines.length).toBeGreaterThanOrEqual(calls.length);
      ledger.expectAbsent(lines.join("\n"), `the client's log under ${kind}`);
      for (const line of lines) expect(line).toMatch(/^(GET|POST|DELETE) [a-z/-]+ /);

      // Leave nothing behind for the next kind.
      for (const k of emu.state.listKeys()) emu.state.deleteKey(k.key);
      emu.state.deleteSubAccounts(emu.state.listSubAccounts().map((s) => s.token));
    },
  );
});
