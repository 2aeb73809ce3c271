import { describe, expect, test } from "@jest/globals";
import { startEmulator, type Emulator } from "../../provider/emulator/index.js";
import { MOVED_ORIGIN } from "../../provider/emulator/readings.js";
import { clientOf, expectNoSecret, secretsOf } from "../support/emulator.js";

/**
 * A redirect (issue 43, the reading redirects): never followed (the credential would go elsewhere), and the error
 * names it: the status, where it points, and what to set.
 */
describe("a platform that redirects every request", () => {
  test("the first call stops naming the redirect, its target and baseUrl; no credential in the message", async () => {
    const emu: Emulator = await startEmulator({
      port: 0,
      host: "127.0.0.1",
      rateLimits: false,
      readings: ["redirects"],
    });
    try {
      const err = (await clientOf(emu, { rateLimits: false })
        .account.balance()
        .then(
          () => new Error("answered"),
          (e: unknown) => e,
        )) as Error & { status?: number };
      expect(err.status).toBe(308);
      expect(err.message).toContain(`redirected (308) to ${MOVED_ORIGIN}/api/v1/management/account/balance`);
      expect(err.message).toMatch(/not followed.*baseUrl/);
      expect(emu.calls()).toEqual({ "account/balance": 1 });
      expectNoSecret(err.message, secretsOf(emu));
    } finally {
      await emu.close();
    }
  });
});
