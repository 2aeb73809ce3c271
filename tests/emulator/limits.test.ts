import { afterEach, describe, expect, it } from "@jest/globals";
import { DEFAULT_RATE_LIMITS } from "../../provider/api/assumptions.js";
import { effectiveLimits, startEmulator, type Emulator, type EmulatorOptions } from "../../provider/emulator/index.js";
import { call, sleep } from "../support/emulatorCalls.js";

let emu: Emulator | undefined;

async function start(options: EmulatorOptions): Promise<Emulator> {
  emu = await startEmulator(options);
  return emu;
}
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function statuses(e: Emulator, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call(e, "balance")).status);
  return out;
}

describe("rate limits", () => {
  it("answers 429 rate_limited with Retry-After (whole seconds) and Retry-After-Ms once the window is full", async () => {
    const e = await start({ rateWindowMs: 1_000, rateLimits: { "account/balance": [{ limit: 3, windowMs: 60_000 }] } });
    expect(await statuses(e, 3)).toEqual([200, 200, 200]);
    const limited = await call(e, "balance");
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe("rate_limited");
    expect(limited.headers.get("retry-after")).toBe("1");
    const ms = Number(limited.headers.get("retry-after-ms"));
    expect(ms).toBeGreaterThan(0);
    expect(ms).toBeLessThanOrEqual(1_000);
  });

  it("does not count a 429 against the limit: after Retry-After-Ms a request goes through", async () => {
    const e = await start({ rateWindowMs: 500, rateLimits: { "account/balance": [{ limit: 2, windowMs: 60_000 }] } });
    await statuses(e, 2);
    expect(await statuses(e, 5)).toEqual([429, 429, 429, 429, 429]);
    const wait = Number((await call(e, "balance")).headers.get("retry-after-ms"));
    await sleep(wait + 30);
    expect((await call(e, "balance")).status).toBe(200);
  });

  it("slides the window: a request counts for exactly windowMs after its arrival", async () => {
    const e = await start({ rateWindowMs: 1_000, rateLimits: { "account/balance": [{ limit: 2, windowMs: 60_000 }] } });
    expect((await call(e, "balance")).status).toBe(200); // t0
    await sleep(500);
    expect((await call(e, "balance")).status).toBe(200); // t0 + 500
    const third = await call(e, "balance");
    expect(third.status).toBe(429);
    const wait = Number(third.headers.get("retry-after-ms"));
    expect(wait).toBeLessThanOrEqual(500);
    await sleep(wait + 30);
    // The first request has left the window, the second has not: one slot, not a fresh window of two.
    expect(await statuses(e, 2)).toEqual([200, 429]);
  });

  it("keeps a separate budget per operation", async () => {
    const e = await start({ rateWindowMs: 5_000, rateLimits: { "account/balance": [{ limit: 1, windowMs: 60_000 }] } });
    expect(await statuses(e, 2)).toEqual([200, 429]);
    expect((await call(e, "models")).status).toBe(200);
  });

  it("counts only authenticated requests: 401s use up no slot", async () => {
    const e = await start({ rateWindowMs: 5_000, rateLimits: { "account/balance": [{ limit: 2, windowMs: 60_000 }] } });
    for (let i = 0; i < 5; i++)
      expect((await call(e, "balance", {}, { credential: "sk-admin-wrongwrongwrong" })).status).toBe(401);
    expect(await statuses(e, 3)).toEqual([200, 200, 429]);
  });

  it("enforces the default limits of spec 8 (60 a minute for balance), scaled by rateWindowMs", async () => {
    const e = await start({ rateWindowMs: 10_000 });
    const answers = await statuses(e, 61);
    expect(answers.slice(0, 60).every((s) => s === 200)).toBe(true);
    expect(answers[60]).toBe(429);
  });

  it("turns every limit off with rateLimits: false", async () => {
    const e = await start({ rateWindowMs: 10_000, rateLimits: false });
    expect((await statuses(e, 80)).every((s) => s === 200)).toBe(true);
  });

  it("logs a 429 with its operation", async () => {
    const e = await start({ rateLimits: { "account/balance": [{ limit: 1, windowMs: 60_000 }] } });
    await statuses(e, 2);
    expect(e.requests().map((r) => [r.op, r.status])).toEqual([
      ["account/balance", 200],
      ["account/balance", 429],
    ]);
  });
});

describe("effectiveLimits", () => {
  it("scales every window by rateWindowMs / 60000, the daily usage window to 1440 x rateWindowMs", () => {
    const limits = effectiveLimits(undefined, 100);
    expect(limits["usage/summary"]).toEqual([
      { limit: 60, windowMs: 100 },
      { limit: 2000, windowMs: 144_000 },
    ]);
    expect(limits["api-key/get"]).toEqual([{ limit: 600, windowMs: 100 }]);
    expect(Object.keys(limits).sort()).toEqual(Object.keys(DEFAULT_RATE_LIMITS).sort());
  });

  it("replaces only the operations an override names", () => {
    const limits = effectiveLimits({ models: [{ limit: 5, windowMs: 60_000 }] }, 60_000);
    expect(limits.models).toEqual([{ limit: 5, windowMs: 60_000 }]);
    expect(limits["api-key/create"]).toEqual(DEFAULT_RATE_LIMITS["api-key/create"]);
  });

  it("is empty when limits are off", () => {
    expect(effectiveLimits(false, 60_000)).toEqual({});
  });
});
