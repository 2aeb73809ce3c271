import { describe, expect, test } from "@jest/globals";
import { LlmAccountsClient, RateLimiters, SlidingWindowLimiter, windowMarginMs } from "../../provider/client/index.js";
import { clientOf, emulator } from "../support/emulator.js";

// The limiters (provider/client/limiter.ts): one per credential and operation, shared by every client of the
// credential, each slot held a window and its margin after its answer.

describe("rate limits", () => {
  test("a burst of 100 creates under a 1 s window gets no 429: the 61st waits a window after the first answers", async () => {
    const windowMs = 1000;
    const emu = await emulator({ rateWindowMs: windowMs });
    try {
      const client = clientOf(emu, { rateLimits: { windowMs } });
      await Promise.all(Array.from({ length: 100 }, (_, i) => client.apiKeys.create({ alias: `burst-${i}` })));
      expect(emu.requests().filter((r) => r.status === 429)).toHaveLength(0);
      expect(emu.state.listKeys()).toHaveLength(100);
      // How fast the burst ends is the benchmark's to measure; here: the limit holds in every window.
      const at = emu.requests().map((r) => r.at);
      expect(at[60] - at[0]).toBeGreaterThanOrEqual(windowMs);
    } finally {
      await emu.close();
    }
  });

  test("clients of the same credential share one limiter", async () => {
    const emu = await emulator({ rateWindowMs: 1000 });
    try {
      const a = clientOf(emu, { rateLimits: { windowMs: 1000 } });
      const b = clientOf(emu, { rateLimits: { windowMs: 1000 } });
      await Promise.all(Array.from({ length: 70 }, (_, i) => (i % 2 ? a : b).apiKeys.create({ alias: `s-${i}` })));
      expect(emu.requests().filter((r) => r.status === 429)).toHaveLength(0);
    } finally {
      await emu.close();
    }
  });

  test("a transport asks the registry for an operation's limiters once per credential, not at each request", async () => {
    const emu = await emulator();
    const asked: string[] = [];
    class Counting extends RateLimiters {
      override for(...args: Parameters<RateLimiters["for"]>) {
        asked.push(args[0].name);
        return super.for(...args);
      }
    }
    try {
      const keys = Array.from({ length: 6 }, (_, i) => emu.state.createKey(`s-${i}`).key);
      const client = new LlmAccountsClient(
        { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey },
        { limiters: new Counting() },
      );
      for (const key of keys) await client.apiKeys.get(key);
      await client.subAccounts.list();
      await client.subAccounts.list();
      expect(emu.requests().map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(asked).toEqual(["api-key/get", "sub-account/list"]);
    } finally {
      await emu.close();
    }
  });

  test("the limiter holds a slot a full window and its margin after its response", async () => {
    let now = 0;
    const limiter = new SlidingWindowLimiter({ limit: 1, windowMs: 100 }, () => now);
    const release = await limiter.acquire();
    now = 50;
    release();
    let second = false;
    const next = limiter.acquire().then((r) => {
      second = true;
      return r;
    });
    now = 120;
    await new Promise((r) => setTimeout(r, 10));
    expect(second).toBe(false);
    // A window after the response is not enough: the server's clock may run faster than ours.
    now = 150;
    await new Promise((r) => setTimeout(r, 120));
    expect(second).toBe(false);
    now = 150 + windowMarginMs(100);
    await new Promise((r) => setTimeout(r, 20));
    expect(second).toBe(true);
    (await next)();
  });

  test("the margin is a thousandth of the window and a millisecond: a minute's slot is held 61 ms past its window", () => {
    expect(windowMarginMs(60_000)).toBe(61);
    expect(windowMarginMs(1000)).toBe(2);
  });
});
