import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import {
  USAGE_HISTORY_DAYS,
  USAGE_MODEL_FIELD,
  USAGE_NEXT_PAGE_FIELD,
  USAGE_PAGE_SIZE,
} from "../../provider/api/assumptions.js";
import { fingerprint } from "../../provider/api/redact.js";
import { ModelsResponseSchema } from "../../provider/api/schemas/index.js";
import {
  MODEL_CATALOGUE,
  startEmulator,
  USAGE_STATS_DAYS,
  usageRows,
  type Emulator,
} from "../../provider/emulator/index.js";
import { call, micros, ok } from "../support/emulatorCalls.js";

const TODAY = "2026-06-15";
let now = Date.parse(`${TODAY}T12:00:00Z`);
let emu: Emulator;
let keyA: string;
let keyB: string;

function day(offset: number): string {
  return new Date(Date.parse(`${TODAY}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);
}

/** Every row of a query, following next_page. */
async function allPages(body: Record<string, unknown>): Promise<{ rows: any[]; pages: any[] }> {
  const pages: any[] = [];
  let token: string | undefined;
  for (;;) {
    const page = await ok(
      emu,
      "usageSummary",
      token === undefined ? body : { ...body, [USAGE_NEXT_PAGE_FIELD]: token },
    );
    pages.push(page);
    if (!page.has_more) return { rows: pages.flatMap((p) => p.items), pages };
    token = page.next_page;
  }
}

beforeAll(async () => {
  emu = await startEmulator({ rateLimits: false, clock: () => now });
  keyA = (await ok(emu, "createApiKey", { alias: "usage-a" })).key;
  keyB = (await ok(emu, "createApiKey", { alias: "usage-b" })).key;
});
afterAll(() => emu.close());

describe("account/balance", () => {
  it("answers the balance as a six-decimal string, 10000 by default", async () => {
    expect(await ok(emu, "balance")).toEqual({ balance: "10000.000000" });
  });

  it("answers what state.setBalance set", async () => {
    emu.state.setBalance(1234.5);
    expect(await ok(emu, "balance")).toEqual({ balance: "1234.500000" });
    emu.state.setBalance(10_000);
  });
});

describe("models", () => {
  it("answers the fixed catalogue, which matches the response schema", async () => {
    const answer = await ok(emu, "models");
    expect(answer).toEqual({ models: MODEL_CATALOGUE });
    expect(ModelsResponseSchema.safeParse(answer).success).toBe(true);
    expect(MODEL_CATALOGUE.length).toBeGreaterThanOrEqual(6);
    expect(new Set(MODEL_CATALOGUE.map((m) => m.category))).toEqual(
      new Set(["chat", "reasoning", "embedding", "multimodal"]),
    );
  });

  it("prices with six-decimal strings", () => {
    for (const m of MODEL_CATALOGUE) {
      expect(m.pricing.text_input_price).toMatch(/^\d+\.\d{6}$/);
      expect(m.pricing.text_output_price).toMatch(/^\d+\.\d{6}$/);
    }
  });
});

describe("usage/summary", () => {
  it("sums the keys' rows into the account-level rows, per date", async () => {
    const range = { start: day(-30), end: day(0) };
    const account = (await allPages(range)).rows;
    const a = (await allPages({ ...range, key: keyA })).rows;
    const b = (await allPages({ ...range, key: keyB })).rows;
    const sum = new Map<string, number>();
    for (const row of [...a, ...b]) sum.set(row.date, (sum.get(row.date) ?? 0) + micros(row.cost));
    expect(account.map((r) => [r.date, micros(r.cost)])).toEqual([...sum.entries()].sort());
  });

  it("answers one row per date, sorted, with six-decimal costs and no key in the row", async () => {
    const { rows } = await allPages({ start: day(-9), end: day(0) });
    expect(rows.map((r) => r.date)).toEqual([...new Set(rows.map((r) => r.date))].sort());
    for (const row of rows) {
      expect(Object.keys(row)).toEqual(["date", "cost"]);
      expect(row.cost).toMatch(/^\d+\.\d{6}$/);
    }
  });

  it("is deterministic: the same query answers the same rows, as usageRows computes them", async () => {
    const body = { start: day(-20), end: day(0), key: keyA, with_model: true, with_usage: true };
    const first = await ok(emu, "usageSummary", body);
    expect(await ok(emu, "usageSummary", body)).toEqual(first);
    const expected = usageRows({
      seeds: [fingerprint(keyA)],
      start: day(-20),
      end: day(0),
      today: TODAY,
      withModel: true,
      withUsage: true,
    });
    expect(first.items).toEqual(expected);
  });

  it("answers 404 key_not_found for an unknown key", async () => {
    const answer = await call(emu, "usageSummary", { start: day(-1), end: day(0), key: "sk-unknownunknown" });
    expect(answer.status).toBe(404);
    expect(answer.json.error.code).toBe("key_not_found");
  });

  it("accepts the oldest day of the last year and refuses the day before it, naming start", async () => {
    const oldest = day(-(USAGE_HISTORY_DAYS - 1));
    expect((await call(emu, "usageSummary", { start: oldest, end: oldest })).status).toBe(200);
    const answer = await call(emu, "usageSummary", { start: day(-USAGE_HISTORY_DAYS), end: day(0) });
    expect(answer.status).toBe(400);
    expect(answer.json.error.code).toBe("invalid_request");
    expect(answer.json.error.message).toMatch(/^start: /);
  });

  it("refuses an end after today, naming end", async () => {
    const answer = await call(emu, "usageSummary", { start: day(0), end: day(1) });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toMatch(/^end: /);
  });

  it("refuses an end before start, naming end", async () => {
    const answer = await call(emu, "usageSummary", { start: day(-1), end: day(-2) });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toBe("end: must be on or after start");
  });

  it("refuses a date that does not exist, naming it", async () => {
    const answer = await call(emu, "usageSummary", { start: "2026-02-30", end: day(0) });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toMatch(/^start: /);
  });

  it("with_model answers one row per date and model, sorted, that add up to the date's row", async () => {
    const range = { start: day(-14), end: day(0) };
    const perModel = (await allPages({ ...range, with_model: true })).rows;
    const perDate = (await allPages(range)).rows;
    expect(perModel.every((r) => typeof r[USAGE_MODEL_FIELD] === "string")).toBe(true);
    const order = perModel.map((r) => `${r.date} ${r[USAGE_MODEL_FIELD]}`);
    expect(order).toEqual([...order].sort());
    const sums = new Map<string, number>();
    for (const r of perModel) sums.set(r.date, (sums.get(r.date) ?? 0) + micros(r.cost));
    expect(perDate.map((r) => [r.date, micros(r.cost)])).toEqual([...sums.entries()]);
  });

  it("with_usage carries token statistics only for the last 90 days", async () => {
    const { rows } = await allPages({ start: day(-USAGE_STATS_DAYS - 5), end: day(0), with_usage: true });
    for (const row of rows) {
      const recent = row.date >= day(-(USAGE_STATS_DAYS - 1));
      expect(row.usage !== undefined).toBe(recent);
      if (recent) {
        expect(row.usage).toEqual({
          input_tokens: expect.any(Number),
          output_tokens: expect.any(Number),
          cache_read_tokens: expect.any(Number),
          total_tokens: row.usage.input_tokens + row.usage.output_tokens,
        });
      }
    }
    expect(rows.some((r) => r.usage === undefined)).toBe(true);
  });

  it("leaves usage out without with_usage", async () => {
    const { rows } = await allPages({ start: day(-3), end: day(0) });
    expect(rows.every((r) => r.usage === undefined)).toBe(true);
  });

  it("shows today incomplete (T+1): half of what the same day shows once it is over", async () => {
    const body = { start: day(0), end: day(0), key: keyA, with_model: true, with_usage: true };
    const today = (await ok(emu, "usageSummary", body)).items;
    now += 86_400_000;
    try {
      const complete = (await ok(emu, "usageSummary", body)).items;
      expect(today.map((r: any) => r.model)).toEqual(complete.map((r: any) => r.model));
      today.forEach((row: any, i: number) => {
        expect(Math.abs(row.usage.input_tokens * 2 - complete[i].usage.input_tokens)).toBeLessThanOrEqual(2);
        expect(micros(row.cost)).toBeLessThan(micros(complete[i].cost));
      });
    } finally {
      now -= 86_400_000;
    }
  });

  it("pages by USAGE_PAGE_SIZE rows with has_more and an opaque string next_page, null on the last page", async () => {
    const body = { start: day(-(USAGE_HISTORY_DAYS - 1)), end: day(0), with_model: true };
    const { rows, pages } = await allPages(body);
    expect(pages.length).toBeGreaterThan(2);
    pages.slice(0, -1).forEach((p) => {
      expect(p.items).toHaveLength(USAGE_PAGE_SIZE);
      expect(p.has_more).toBe(true);
      expect(typeof p.next_page).toBe("string");
    });
    const last = pages[pages.length - 1];
    expect(last.has_more).toBe(false);
    expect(last.next_page).toBeNull();
    const order = rows.map((r) => `${r.date} ${r[USAGE_MODEL_FIELD]}`);
    expect(new Set(order).size).toBe(rows.length);
    expect(order).toEqual([...order].sort());
    expect(rows[0].date >= body.start).toBe(true);
  });

  it("answers one page with has_more false and next_page null when everything fits", async () => {
    const page = await ok(emu, "usageSummary", { start: day(-2), end: day(0) });
    expect(page.has_more).toBe(false);
    expect(page.next_page).toBeNull();
  });

  it("refuses a page token it did not give, naming the page field", async () => {
    const answer = await call(emu, "usageSummary", { start: day(-2), end: day(0), [USAGE_NEXT_PAGE_FIELD]: "bogus" });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toMatch(new RegExp(`^${USAGE_NEXT_PAGE_FIELD}: `));
  });

  it("answers no rows for an account without keys", async () => {
    const empty = await startEmulator({ rateLimits: false });
    try {
      const today = new Date().toISOString().slice(0, 10);
      expect(await ok(empty, "usageSummary", { start: today, end: today })).toEqual({
        items: [],
        has_more: false,
        next_page: null,
      });
    } finally {
      await empty.close();
    }
  });
});
