import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { BudgetCounter } from "../../provider/client/limiter.js";
import {
  LlmAccountsError,
  USAGE_MODEL_FIELD,
  USAGE_PAGE_SIZE,
  validateUsageQuery,
} from "../../provider/client/index.js";
import { fingerprint } from "../../provider/api/redact.js";
import { MODEL_CATALOGUE, usageRows, type Emulator } from "../../provider/emulator/index.js";
import { calls, clientOf, emulator } from "../support/emulator.js";
import { day } from "../support/days.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await emulator({ rateLimits: false });
  // The emulator's account-level usage is the sum over the keys that exist.
  emu.state.createKey("usage-a");
  emu.state.createKey("usage-b");
});
afterAll(async () => emu.close());

describe("account: balance, models, usage", () => {
  test("balance is the decimal string the API gives", async () => {
    expect(await clientOf(emu).account.balance()).toMatch(/^\d+\.\d{6}$/);
  });

  test("models lists the catalogue with prices in camelCase", async () => {
    const models = await clientOf(emu).account.models();
    expect(models).toHaveLength(MODEL_CATALOGUE.length);
    expect(models[0]).toMatchObject({
      model: expect.any(String),
      contextWindow: expect.any(Number),
      pricing: { textInputPrice: expect.stringMatching(/^\d+\.\d+$/) },
    });
  });

  test("usage follows every page to the end of a year", async () => {
    emu.clearRequests();
    const rows = await clientOf(emu).account.usage({ start: day(364), end: day(0) });
    const pages = calls(emu)["usage/summary"];
    expect(pages).toBeGreaterThan(1);
    expect(rows.length).toBeGreaterThan(USAGE_PAGE_SIZE * (pages - 1));
    const dates = rows.map((r) => r.date);
    expect(new Set(dates).size).toBe(dates.length);
    expect([...dates].sort()).toEqual(dates);
    expect(dates[0] >= day(364) && dates[dates.length - 1] <= day(0)).toBe(true);
  });

  test("with_model names the model in each row; with_usage gives a usage block only for dates with statistics", async () => {
    const rows = await clientOf(emu).account.usage({ start: day(200), end: day(1), withModel: true, withUsage: true });
    expect(rows.every((r) => typeof (r as Record<string, unknown>)[USAGE_MODEL_FIELD] === "string")).toBe(true);
    const oldest = rows.filter((r) => r.date === day(200));
    const recent = rows.filter((r) => r.date === day(1));
    expect(oldest.every((r) => r.usage === undefined)).toBe(true);
    expect(recent.some((r) => r.usage !== undefined)).toBe(true);
  });

  test("usage for one key returns that key's rows; an unknown key is a 404", async () => {
    const client = clientOf(emu);
    const { key } = await client.apiKeys.create({ alias: "usage" });
    const rows = await client.account.usage({ start: day(3), end: day(0), key });
    // A day on which the key spent nothing has no row (the generated data leaves some), so the rows are
    // compared with what the emulator generates for this key alone, which differs from the account's.
    const own = usageRows({
      seeds: [fingerprint(key)],
      start: day(3),
      end: day(0),
      today: day(0),
      withModel: false,
      withUsage: false,
    });
    expect(rows.map((r) => r.date)).toEqual(own.map((r) => r.date));
    expect(rows.map((r) => r.cost)).toEqual(own.map((r) => r.cost));
    const account = await client.account.usage({ start: day(3), end: day(0) });
    expect(rows.map((r) => r.cost)).not.toEqual(account.map((r) => r.cost));
    await client.apiKeys.delete([key]);
    await expect(client.account.usage({ start: day(3), end: day(0), key })).rejects.toMatchObject({ status: 404 });
  });

  test("bad dates are refused before any call, naming the field", async () => {
    emu.clearRequests();
    const client = clientOf(emu);
    await expect(client.account.usage({ start: "2024-13-01", end: day(0) })).rejects.toThrow(/start/);
    await expect(client.account.usage({ start: day(1), end: day(2) })).rejects.toThrow(/end: .* is before start/);
    await expect(client.account.usage({ start: day(400), end: day(0) })).rejects.toThrow(
      /start: .*older than the last year/,
    );
    await expect(client.account.usage({ start: day(0), end: day(-1) })).rejects.toThrow(/end: .*future/);
    expect(emu.requests()).toHaveLength(0);
  });

  test("validateUsageQuery accepts the last day of the year window and today", () => {
    expect(() => validateUsageQuery({ start: day(364), end: day(0) })).not.toThrow();
    expect(() => validateUsageQuery({ start: day(365), end: day(0) })).toThrow(LlmAccountsError);
  });

  test("the daily budget refuses once used up and says when a slot frees", () => {
    let now = 0;
    const budget = new BudgetCounter({ limit: 2, windowMs: 1000 }, () => now);
    expect(budget.take().ok).toBe(true);
    expect(budget.take().ok).toBe(true);
    now = 400;
    expect(budget.take()).toEqual({ ok: false, retryAfterMs: 600 });
    now = 1000;
    expect(budget.take().ok).toBe(true);
  });

  test("the client counts the usage budget and refuses past it without calling", async () => {
    const client = clientOf(emu, {
      rateLimits: {
        perOperation: {
          "usage/summary": [
            { limit: 60, windowMs: 60_000 },
            { limit: 1, windowMs: 86_400_000 },
          ],
        },
      },
    });
    await client.account.usage({ start: day(2), end: day(0) });
    emu.clearRequests();
    await expect(client.account.usage({ start: day(2), end: day(0) })).rejects.toMatchObject({
      status: 429,
      code: "client_budget_exhausted",
    });
    expect(emu.requests()).toHaveLength(0);
  });
});
