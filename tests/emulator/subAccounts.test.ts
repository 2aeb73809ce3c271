import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { startEmulator, type Emulator } from "../../provider/emulator/index.js";
import { call, ok } from "../support/emulatorCalls.js";

let emu: Emulator;
let now = Date.now();

beforeEach(async () => {
  emu = await startEmulator({ rateLimits: false, clock: () => now });
});
afterEach(() => emu.close());

const pricing = [
  { model: "model-a", pricing_factor: 1.5 },
  { model: "model-b", pricing_factor: 1 },
];

async function create(alias: string, count: number, extra: Record<string, unknown> = {}): Promise<any[]> {
  return (await ok(emu, "createSubAccounts", { alias, balance: 12.5, count, model_pricing: pricing, ...extra })).items;
}

describe("sub-account/create", () => {
  it("creates count sub-accounts with incrementing ids, new tokens and the fields of spec 2.5", async () => {
    const answer = await ok(emu, "createSubAccounts", {
      alias: "team",
      balance: 12.5,
      count: 3,
      model_pricing: pricing,
    });
    expect(answer.success).toBe(true);
    expect(answer.items.map((s: any) => s.id)).toEqual([1, 2, 3]);
    for (const sub of answer.items) {
      expect(sub).toEqual({
        id: expect.any(Number),
        user_id: expect.any(Number),
        token: expect.stringMatching(/^sk-[A-Za-z0-9]{48}$/),
        token_type: "slave",
        alias: "team",
        enabled: true,
        model_pricing: pricing,
        balance: "12.500000",
        monthly_cost: "0.000000",
        created_at: expect.stringMatching(/\+00:00$/),
        updated_at: sub.created_at,
      });
    }
    expect(new Set(answer.items.map((s: any) => s.token)).size).toBe(3);
    expect(new Set(answer.items.map((s: any) => s.user_id)).size).toBe(3);
  });

  it("continues the ids after earlier batches", async () => {
    await create("a", 2);
    expect((await create("b", 1))[0].id).toBe(3);
  });

  it("converts deprecated auto_following: true to pricing_factor 1", async () => {
    const [sub] = await create("legacy", 1, {
      model_pricing: [{ model: "model-a", auto_following: true, prompt_price: 2 }],
    });
    expect(sub.model_pricing).toEqual([{ model: "model-a", pricing_factor: 1 }]);
  });

  it("refuses a deprecated price without pricing_factor, naming the entry's field", async () => {
    const answer = await call(emu, "createSubAccounts", {
      alias: "legacy",
      balance: 1,
      count: 1,
      model_pricing: [
        { model: "model-a", pricing_factor: 1 },
        { model: "model-b", prompt_price: 2, completion_price: 3 },
      ],
    });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toMatch(/^model_pricing\[1\]\.pricing_factor: /);
    expect(emu.state.listSubAccounts()).toEqual([]);
  });

  it("gives no model permission when model_pricing is omitted", async () => {
    const answer = await ok(emu, "createSubAccounts", { alias: "none", balance: 0, count: 1 });
    expect(answer.items[0].model_pricing).toEqual([]);
  });

  it("refuses count 0, naming count", async () => {
    const answer = await call(emu, "createSubAccounts", { alias: "x", balance: 0, count: 0 });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toMatch(/^count: /);
  });
});

describe("sub-account/list", () => {
  it("pages 10 by default and reports total, page and pageSize", async () => {
    await create("many", 12);
    const first = await ok(emu, "listSubAccounts");
    expect(first.items).toHaveLength(10);
    expect(first).toMatchObject({ total: 12, page: 1, pageSize: 10 });
    const second = await ok(emu, "listSubAccounts", { page: 2 });
    expect(second.items.map((s: any) => s.id)).toEqual([11, 12]);
    expect(second.page).toBe(2);
  });

  it("answers every item with page_size -1", async () => {
    await create("many", 12);
    const all = await ok(emu, "listSubAccounts", { page_size: -1 });
    expect(all.items).toHaveLength(12);
    expect(all).toMatchObject({ total: 12, pageSize: -1 });
  });

  it("filters by exact alias and by exact token", async () => {
    const team = await create("team", 2);
    await create("team-2", 1);
    const byAlias = await ok(emu, "listSubAccounts", { alias: "team" });
    expect(byAlias.items.map((s: any) => s.token)).toEqual(team.map((s) => s.token));
    expect(byAlias.total).toBe(2);
    const bySk = await ok(emu, "listSubAccounts", { sk: team[1].token });
    expect(bySk.items).toEqual([team[1]]);
    expect((await ok(emu, "listSubAccounts", { sk: "sk-nothing" })).total).toBe(0);
  });
});

describe("sub-account/edit", () => {
  it("sets alias and model_pricing on every sub-account listed and moves updated_at", async () => {
    const subs = await create("old", 3);
    now += 5_000;
    const newPricing = [{ model: "deepseek-chat", auto_following: true }];
    expect(
      await ok(emu, "editSubAccounts", {
        sks: [subs[0].token, subs[1].token],
        alias: "new",
        model_pricing: newPricing,
      }),
    ).toEqual({
      success: true,
    });
    const [a, b, c] = emu.state.listSubAccounts();
    for (const edited of [a, b]) {
      expect(edited.alias).toBe("new");
      expect(edited.model_pricing).toEqual([{ model: "deepseek-chat", pricing_factor: 1 }]);
      expect(edited.updated_at > edited.created_at).toBe(true);
      expect(edited.balance).toBe("12.500000");
    }
    expect(c).toEqual(subs[2]);
  });

  it("changes nothing and answers 404 when one token is unknown", async () => {
    const subs = await create("keep", 2);
    const unknown = "sk-unknownunknownunknownunknownunknownunknown77aa";
    const answer = await call(emu, "editSubAccounts", {
      sks: [subs[0].token, unknown],
      alias: "changed",
      model_pricing: [],
    });
    expect(answer.status).toBe(404);
    expect(answer.json.error.message).toContain("sk-...77aa");
    expect(answer.text).not.toContain(unknown);
    expect(emu.state.listSubAccounts()).toEqual(subs);
  });

  it("requires model_pricing explicitly, naming it", async () => {
    const [sub] = await create("x", 1);
    const answer = await call(emu, "editSubAccounts", { sks: [sub.token], alias: "y" });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toMatch(/^model_pricing: /);
  });
});

describe("sub-account/delete", () => {
  it("deletes every sub-account listed and answers success", async () => {
    const subs = await create("gone", 3);
    expect(await ok(emu, "deleteSubAccounts", { sks: [subs[0].token, subs[2].token] })).toEqual({ success: true });
    expect(emu.state.listSubAccounts().map((s) => s.token)).toEqual([subs[1].token]);
  });

  it("is all-or-nothing: one unknown token rejects the batch with 404 and deletes nothing", async () => {
    const subs = await create("stay", 2);
    const answer = await call(emu, "deleteSubAccounts", { sks: [subs[0].token, "sk-notasubaccount", subs[1].token] });
    expect(answer.status).toBe(404);
    expect(answer.json.error.code).toBe("sub_account_not_found");
    expect(emu.state.listSubAccounts()).toHaveLength(2);
  });

  it("rejects a batch that lists a token twice, deleting nothing", async () => {
    const [sub] = await create("twice", 1);
    const answer = await call(emu, "deleteSubAccounts", { sks: [sub.token, sub.token] });
    expect(answer.status).toBe(404);
    expect(emu.state.hasSubAccount(sub.token)).toBe(true);
  });

  it("does not take API keys as sub-account tokens", async () => {
    const { key } = await ok(emu, "createApiKey", { alias: "not-a-sub" });
    expect((await call(emu, "deleteSubAccounts", { sks: [key] })).status).toBe(404);
    expect(emu.state.hasKey(key)).toBe(true);
  });
});

describe("state, out of band", () => {
  it("a sub-account deleted through state is gone from the list", async () => {
    const [a, b] = await create("oob", 2);
    expect(emu.state.deleteSubAccount(a.token)).toBe(true);
    expect((await ok(emu, "listSubAccounts", { alias: "oob" })).items).toEqual([b]);
  });

  it("a sub-account disabled through state lists as disabled", async () => {
    const [a] = await create("oob", 1);
    emu.state.setSubAccountEnabled(a.token, false);
    expect((await ok(emu, "listSubAccounts", { sk: a.token })).items[0].enabled).toBe(false);
  });
});
