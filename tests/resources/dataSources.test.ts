import { afterAll, beforeAll, beforeEach, describe, expect, test } from "@jest/globals";
import * as pulumi from "@pulumi/pulumi";
import type { Emulator } from "../../provider/emulator/index.js";
import {
  getBalance,
  getBalanceOutput,
  getModels,
  getModelsOutput,
  getSubAccounts,
  getUsage,
  getUsageOutput,
} from "../../provider/resources/dataSources.js";
import { calls, emulator } from "../support/emulator.js";
import { day } from "../support/days.js";

let emu: Emulator;
const saved = { ...process.env };
beforeAll(async () => {
  emu = await emulator({ rateLimits: false });
  process.env.LLM_ACCOUNTS_BASE_URL = emu.baseUrl;
  process.env.LLM_ACCOUNTS_ADMIN_KEY = emu.adminKey;
  process.env.LLM_ACCOUNTS_ACCOUNT_KEY = emu.accountKey;
  emu.state.createKey("usage");
});
afterAll(async () => {
  process.env = saved;
  await emu.close();
});
beforeEach(() => emu.clearRequests());

describe("data sources", () => {
  test("getModels filters by category and vendor, and calls the API once however many filters are asked for", async () => {
    const chat = await getModels({ category: "chat" });
    const all = await getModels();
    const acme = await getModels({ vendor: "acme", category: "chat" });
    expect(chat.models.length).toBeGreaterThan(0);
    expect(chat.models.every((m) => m.category === "chat")).toBe(true);
    expect(all.models.length).toBeGreaterThan(chat.models.length);
    expect(acme.models.every((m) => m.vendor === "acme" && m.category === "chat")).toBe(true);
    expect(calls(emu)).toEqual({ models: 1 });
  });

  test("getBalance: one call for any number of uses", async () => {
    const [a, b] = await Promise.all([getBalance(), getBalance()]);
    expect(a.balance).toMatch(/^\d+\.\d{6}$/);
    expect(b).toEqual(a);
    expect(calls(emu)).toEqual({ "account/balance": 1 });
  });

  test("getUsage sums the rows exactly; the same arguments are not fetched twice, other arguments are", async () => {
    const args = { start: day(30), end: day(1) };
    const first = await getUsage(args);
    const firstCalls = calls(emu)["usage/summary"];
    const again = await getUsage({ ...args });
    expect(again).toEqual(first);
    expect(calls(emu)["usage/summary"]).toBe(firstCalls);
    const micros = first.items.reduce((sum, r) => sum + Math.round(Number(r.cost) * 1e6), 0);
    expect(first.totalCost).toBe((micros / 1e6).toFixed(6));
    const perModel = await getUsage({ ...args, withModel: true });
    expect(perModel.totalCost).toBe(first.totalCost);
    const pages = calls(emu)["usage/summary"];
    await getUsage({ ...args, withModel: true });
    expect(calls(emu)["usage/summary"]).toBe(pages);
  });

  test("getUsage validates its arguments before calling", async () => {
    await expect(getUsage({ start: day(1), end: day(3) })).rejects.toThrow(/end: .* is before start/);
    await expect(getUsage({ start: "yesterday", end: day(0) })).rejects.toThrow(/start/);
    expect(emu.requests()).toHaveLength(0);
  });

  test("getSubAccounts by alias; a failure is not remembered", async () => {
    emu.state.createSubAccounts({ alias: "ds-team", balance: 1, modelPricing: [], count: 2 });
    emu.setFaults([{ kind: "500", ops: ["sub-account/list"], count: 10 }]);
    await expect(getSubAccounts({ alias: "ds-team" })).rejects.toMatchObject({ status: 500 });
    emu.setFaults([]);
    expect((await getSubAccounts({ alias: "ds-team" })).subAccounts).toHaveLength(2);
  });

  test("a connection naming an unset variable fails clearly", async () => {
    await expect(getBalance({ connection: { adminKeyEnv: "NO_SUCH_VARIABLE_FOR_TEST" } })).rejects.toThrow(
      /NO_SUCH_VARIABLE_FOR_TEST \(named by connection.adminKeyEnv\) is not set/,
    );
  });
});

describe("a program run again in the same process (an Automation API program run inline)", () => {
  const newRun = () =>
    pulumi.runtime.setMocks(
      { newResource: (a) => ({ id: a.name, state: a.inputs }), call: () => ({}) },
      "project",
      "stack",
      false,
    );

  test("each run asks the platform afresh; within a run, every use shares one answer", async () => {
    const before = emu.state.balance();
    try {
      await newRun();
      const first = await getBalance();
      emu.state.setBalance(1234.5);
      expect(await getBalance()).toEqual(first);
      expect(calls(emu)).toEqual({ "account/balance": 1 });
      await newRun();
      expect((await getBalance()).balance).toBe("1234.500000");
      expect(calls(emu)).toEqual({ "account/balance": 2 });
    } finally {
      emu.state.setBalance(Number(before));
    }
  });
});

describe("the Output forms take Pulumi's invoke output options and an Input per field", () => {
  /** A run whose resources are created only once `open()` is called (their ids resolve then). */
  async function gatedRun(): Promise<() => void> {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    await pulumi.runtime.setMocks(
      { newResource: async (a) => (await gate, { id: `${a.name}-id`, state: a.inputs }), call: () => ({}) },
      "project",
      "stack",
      false,
    );
    return open;
  }
  class Thing extends pulumi.CustomResource {
    constructor(name: string) {
      super("test:index:Thing", name, {});
    }
  }
  const resolvedValue = <T>(o: pulumi.Output<T>): Promise<T> => new Promise((resolve) => o.apply((v) => resolve(v)));
  const secretOf = <T>(o: pulumi.Output<T>): Promise<boolean> =>
    (o as unknown as { isSecret: Promise<boolean> }).isSecret;

  test("dependsOn: the call waits until those resources are created, then is made once", async () => {
    await getBalance(); // the client loaded (got is loaded at the first request), so that a call not held back shows at once
    const open = await gatedRun();
    emu.clearRequests();
    const dependency = new Thing("thing");
    const balance = getBalanceOutput({ dependsOn: [dependency], parent: dependency });
    const models = getModelsOutput({ category: pulumi.output("chat") }, { dependsOn: dependency });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(calls(emu)).toEqual({});
    open();
    expect((await resolvedValue(balance)).balance).toMatch(/^\d+\.\d{6}$/);
    expect((await resolvedValue(models)).models.every((m) => m.category === "chat")).toBe(true);
    expect(calls(emu)).toEqual({ "account/balance": 1, models: 1 });
  });

  test("each field of getUsageOutput's arguments is an Input; a secret key keeps the result secret; the connection option is kept", async () => {
    (await gatedRun())();
    const key = emu.state.listKeys()[0].key;
    const usage = getUsageOutput({
      start: pulumi.output(day(30)),
      end: day(1),
      key: pulumi.secret(key),
      withModel: pulumi.output(true),
    });
    expect((await resolvedValue(usage)).totalCost).toMatch(/^\d+\.\d{6}$/);
    expect(await secretOf(usage)).toBe(true);
    // Another account (an emulator of its own, with its own keys), named by the connection option beside dependsOn.
    const other = await emulator({ rateLimits: false });
    try {
      process.env.OTHER_ACCOUNT_ADMIN_KEY = other.adminKey;
      other.state.setBalance(77);
      const elsewhere = getBalanceOutput({
        connection: { baseUrl: other.baseUrl, adminKeyEnv: "OTHER_ACCOUNT_ADMIN_KEY" },
        dependsOn: [],
      });
      expect((await resolvedValue(elsewhere)).balance).toBe("77.000000");
    } finally {
      delete process.env.OTHER_ACCOUNT_ADMIN_KEY;
      await other.close();
    }
  });
});
