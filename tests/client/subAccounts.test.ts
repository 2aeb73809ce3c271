import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { NotFoundError, pricingRule, SUB_ACCOUNT_MAX_COUNT } from "../../provider/client/index.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { calls, clientOf, emulator } from "../support/emulator.js";

let emu: Emulator;
beforeAll(async () => {
  emu = await emulator({ rateLimits: false });
});
afterAll(async () => emu.close());

describe("sub-accounts", () => {
  test("batch create returns count sub-accounts with tokens, the balance and converted pricing", async () => {
    const items = await clientOf(emu).subAccounts.create({
      alias: "team-a",
      balance: 50,
      count: 3,
      modelPricing: [
        { model: "model-a", pricingFactor: 1.2 },
        { model: "model-b", autoFollowing: true },
      ],
    });
    expect(items).toHaveLength(3);
    for (const s of items) {
      expect(s.token).toMatch(/^sk-/);
      expect(s.alias).toBe("team-a");
      expect(Number(s.balance)).toBe(50);
      expect(s.modelPricing).toEqual([
        { model: "model-a", pricingFactor: 1.2 },
        { model: "model-b", pricingFactor: 1 },
      ]);
    }
  });

  test("deprecated prices without a factor are refused, naming the entry", async () => {
    await expect(
      clientOf(emu).subAccounts.create({
        alias: "old",
        balance: 1,
        count: 1,
        modelPricing: [{ model: "m", promptPrice: 1 }],
      }),
    ).rejects.toThrow(/model_pricing\[0\]\.pricing_factor/);
  });

  test(`count is limited to ${SUB_ACCOUNT_MAX_COUNT}`, async () => {
    await expect(
      clientOf(emu).subAccounts.create({ alias: "big", balance: 1, count: SUB_ACCOUNT_MAX_COUNT + 1 }),
    ).rejects.toThrow(/count/);
  });

  test("list filters by alias and by key, in one call", async () => {
    const client = clientOf(emu);
    const [one] = await client.subAccounts.create({ alias: "team-b", balance: 5, count: 2, modelPricing: [] });
    emu.clearRequests();
    expect(await client.subAccounts.list({ alias: "team-b" })).toHaveLength(2);
    const bySk = await client.subAccounts.list({ sk: one.token });
    expect(bySk.map((s) => s.id)).toEqual([one.id]);
    expect(calls(emu)["sub-account/list"]).toBe(2);
  });

  test("a platform that caps the page_size=-1 answer: the rest is fetched page by page, nothing twice", async () => {
    const capped = await emulator({ rateLimits: false, subAccountListCap: 4 });
    try {
      const made = capped.state
        .createSubAccounts({ alias: "paged", balance: 1, modelPricing: [], count: 10 })
        .map((s) => s.token);
      capped.state.createSubAccounts({ alias: "other", balance: 1, modelPricing: [], count: 2 });
      const listed = await clientOf(capped).subAccounts.list({ alias: "paged" });
      expect(listed.map((s) => s.token).sort()).toEqual([...made].sort());
      expect(calls(capped)).toEqual({ "sub-account/list": 3 });
      capped.clearRequests();
      expect(await clientOf(capped).subAccounts.list()).toHaveLength(12);
      expect(calls(capped)).toEqual({ "sub-account/list": 3 });
    } finally {
      await capped.close();
    }
  });

  test("edit sets alias and pricing on every listed sub-account", async () => {
    const client = clientOf(emu);
    const items = await client.subAccounts.create({ alias: "team-c", balance: 5, count: 2, modelPricing: [] });
    await client.subAccounts.edit({
      sks: items.map((s) => s.token),
      alias: "team-c2",
      modelPricing: [{ model: "model-a", pricingFactor: 2 }],
    });
    const after = await client.subAccounts.list({ alias: "team-c2" });
    expect(after.map((s) => s.modelPricing)).toEqual([
      [{ model: "model-a", pricingFactor: 2 }],
      [{ model: "model-a", pricingFactor: 2 }],
    ]);
  });

  test("delete is all-or-nothing", async () => {
    const client = clientOf(emu);
    const items = await client.subAccounts.create({ alias: "team-d", balance: 5, count: 2, modelPricing: [] });
    await client.subAccounts.delete([items[0].token]);
    await expect(client.subAccounts.delete(items.map((s) => s.token))).rejects.toBeInstanceOf(NotFoundError);
    expect(emu.state.hasSubAccount(items[1].token)).toBe(true);
    await client.subAccounts.delete([items[1].token]);
    expect(await client.subAccounts.list({ alias: "team-d" })).toHaveLength(0);
  });

  test("a sub-account token authenticates nowhere", async () => {
    const client = clientOf(emu);
    const [s] = await client.subAccounts.create({ alias: "tok", balance: 1, count: 1, modelPricing: [] });
    await expect(clientOf(emu, { accountKey: s.token }).subAccounts.list()).rejects.toMatchObject({ status: 401 });
  });

  test("a batch create that gets a lost response is not retried and says how to check", async () => {
    emu.clearRequests();
    emu.setFaults([{ kind: "drop-after", ops: ["sub-account/create"], count: 1 }]);
    const err = await clientOf(emu)
      .subAccounts.create({ alias: "lost", balance: 1, count: 2, modelPricing: [] })
      .catch((e: unknown) => e);
    emu.setFaults([]);
    expect((err as { mayHaveSucceeded?: boolean }).mayHaveSucceeded).toBe(true);
    expect((err as Error).message).toMatch(
      /the sub-accounts may have been created although no answer came back \(POST sub-account\/create\)$/,
    );
    expect(calls(emu)["sub-account/create"]).toBe(1);
    expect(await clientOf(emu).subAccounts.list({ alias: "lost" })).toHaveLength(2);
  });
});

describe("spec 2.5's pricing rule, the one place schema, conversion and warnings read", () => {
  test.each([
    [{ pricing_factor: 2 }, { factor: 2, deprecated: undefined }],
    [
      { pricing_factor: 2, auto_following: true, prompt_price: 1 },
      { factor: 2, deprecated: "they are ignored because pricing_factor is set" },
    ],
    [{ auto_following: true }, { factor: 1, deprecated: "auto_following: true is converted to pricing_factor 1" }],
    [
      { prompt_price: 1, completion_price: 2 },
      { refused: "prompt_price/completion_price are deprecated and not converted: set pricing_factor" },
    ],
    [
      { auto_following: false },
      { refused: "prompt_price/completion_price are deprecated and not converted: set pricing_factor" },
    ],
    [{}, { refused: "is required" }],
  ])("%j -> %j", (entry, expected) => {
    expect(pricingRule(entry)).toEqual(expected);
  });
});
