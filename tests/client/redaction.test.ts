import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { inspect } from "node:util";
import { looksLikeKey } from "../../provider/api/redact.js";
import { LlmAccountsClient, LlmAccountsError, maskKey, redact } from "../../provider/client/index.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { clientOf, emulator, expectNoSecret, secretsOf } from "../support/emulator.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await emulator({ rateLimits: false });
});
afterAll(async () => emu.close());

function everyFormOf(err: unknown): string[] {
  const e = err as Error;
  return [e.message, e.stack ?? "", String(e), JSON.stringify(e), inspect(e, { depth: 5 })];
}

describe("redaction", () => {
  test("maskKey shows the prefix and the last four characters only", () => {
    expect(maskKey("sk-abcdefghijklmnop1a2b")).toBe("sk-...1a2b");
    expect(maskKey("sk-admin-abcdefghijkl9z9z")).toBe("sk-admin-...9z9z");
    expect(redact("key sk-abcdefghijklmnop1a2b and sk-admin-abcdefghijkl9z9z")).toBe(
      "key sk-...1a2b and sk-admin-...9z9z",
    );
  });

  test("a key issued without sk- (48 letters and digits, one-api's) is masked as ...wxyz wherever it stands; words, numbers and fingerprints are not", () => {
    const bare = "dSv8XHRKxIFUVVWLhaGCe1UNjnVZzKntYTaEuFGnGGo9uGIi";
    expect(maskKey(bare)).toBe("...uGIi");
    expect(redact(`key ${bare}, ?sk=${bare}&x=1 /${bare}/ "${bare}"`)).toBe(
      'key ...uGIi, ?sk=...uGIi&x=1 /...uGIi/ "...uGIi"',
    );
    const kept = [
      "x".repeat(40),
      "1".repeat(40),
      "sab-0123456789abcdef01234567",
      "team-a~0123456789ab",
      "1234567890123456789",
    ];
    for (const text of kept) expect(redact(text)).toBe(text);
    expect(looksLikeKey(`alias ${bare}`)).toBe(true);
    // A long CamelCase alias is masked in a message, never refused as an input.
    expect(looksLikeKey("TeamAlphaProductionBackendServicesEast")).toBe(false);
    expect(looksLikeKey("x".repeat(40))).toBe(false);
  });

  test("no key appears in any error's message, stack, String(), JSON.stringify() or inspect(), nor in the client's log", async () => {
    const log: string[] = [];
    const client = clientOf(emu, {
      logger: (l) => log.push(l),
      retry: { maxAttempts: 1, maxRateLimitAttempts: 1 },
      timeouts: { requestMs: 200 },
    });
    const created = await client.apiKeys.create({ alias: "secret-test" });
    const [sub] = await client.subAccounts.create({ alias: "secret-sub", balance: 1, count: 1, modelPricing: [] });
    const gone = "sk-" + "g".repeat(44) + "0000";
    const errors: unknown[] = [];
    const collect = (p: Promise<unknown>) =>
      p.then(
        () => errors.push(new Error("expected a failure")),
        (e: unknown) => errors.push(e),
      );

    await collect(client.apiKeys.get(gone)); // 404
    await collect(client.apiKeys.delete([created.key, gone])); // 404 of a batch
    await collect(clientOf(emu, { adminKey: "sk-admin-" + "z".repeat(32) }).apiKeys.get(created.key)); // 401
    await collect(clientOf(emu, { accountKey: sub.token }).subAccounts.list({ sk: sub.token })); // 401 with a token
    await collect(clientOf(emu, { adminKey: emu.accountKey }).apiKeys.get(created.key)); // wrong kind, not sent
    await collect(clientOf(emu, { accountKey: emu.adminKey }).subAccounts.list()); // wrong kind, not sent
    await collect(client.apiKeys.create({ alias: "x", securityConfig: { geo: { countries: [created.key] } } })); // invalid input holding a key
    emu.setFaults([{ kind: "500", ops: ["api-key/status"] }]);
    await collect(client.apiKeys.setStatus(created.key, false));
    emu.setFaults([{ kind: "429", ops: ["api-key/edit"] }]);
    await collect(client.apiKeys.edit({ key: created.key, alias: "y" }));
    emu.setFaults([{ kind: "wrong-type", ops: ["api-key/get"] }]);
    await collect(client.apiKeys.get(created.key));
    emu.setFaults([{ kind: "drop-after", ops: ["api-key/create"] }]);
    await collect(client.apiKeys.create({ alias: "lost" }));
    emu.setFaults([{ kind: "latency", ms: 400, ops: ["sub-account/list"] }]);
    await collect(client.subAccounts.list({ sk: sub.token }));
    emu.setFaults([]);
    await collect(
      new LlmAccountsClient({ baseUrl: `http://127.0.0.1:1/${created.key}`, adminKey: emu.adminKey }).account.balance(),
    );

    expect(errors.length).toBe(13);
    const secrets = secretsOf(emu, [created.key, sub.token]);
    for (const err of errors) {
      expect(err).toBeInstanceOf(LlmAccountsError);
      for (const form of everyFormOf(err)) expectNoSecret(form, secrets);
    }
    expect(log.length).toBeGreaterThan(0);
    for (const line of log) expectNoSecret(line, secrets);
    expectNoSecret(inspect(client, { depth: 10 }), secrets);
    expectNoSecret(JSON.stringify(client), secrets);
  });
});
