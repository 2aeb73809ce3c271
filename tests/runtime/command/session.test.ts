import { describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../../provider/emulator/index.js";
import { currentSession, startFresh, stackConfig, subAccountBatch } from "../../../provider/runtime/index.js";
import { calls, clientOf, useRuntimeEmulator } from "../../support/emulator.js";
import { checkedInputs } from "../../support/check.js";

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

const pricing = [{ model: "model-a", pricingFactor: 1 }];

const checked = (alias: string) =>
  checkedInputs(subAccountBatch, { alias, balance: 1, count: 1, modelPricing: pricing });

describe("the runtime's session (runtime/command/session.ts)", () => {
  test("one session, made at first use and given to every runtime call: it keeps what the calls held, its client is shared", async () => {
    const session = currentSession();
    expect(currentSession()).toBe(session);
    const { outs } = await subAccountBatch.create(await checked("held"));
    const own = session.client(undefined);
    expect([...session.custody.subAccounts.notToTake([])]).toEqual(outs.tokens);
    expect(session.client(undefined)).toBe(own);
    await subAccountBatch.delete("sab-held", outs);
  });

  test("startFresh: a new session with new clients and companions; the limiters and the client overrides stay", async () => {
    const before = currentSession();
    const { outs } = await subAccountBatch.create(await checked("fresh"));
    const old = before.client(undefined);
    const after = startFresh();
    expect(currentSession()).toBe(after);
    expect(after).not.toBe(before);
    const own = after.client(undefined);
    expect(own).not.toBe(old);
    expect(own.client).not.toBe(old.client);
    expect(own.deletes).not.toBe(old.deletes);
    expect(own.subAccounts).not.toBe(old.subAccounts);
    expect(after.custody.subAccounts.notToTake([]).size).toBe(0);
    expect(after.custody).not.toBe(before.custody);
    expect(after.writes).not.toBe(before.writes);
    expect(after.limiters).toBe(before.limiters);
    expect(after.overrides).toBe(before.overrides);
    await subAccountBatch.delete("sab-fresh", outs);
  });

  test("startFresh({ stackConfig, clientOverrides }): the one call that points the runtime somewhere", async () => {
    const waits: number[] = [];
    const clientOverrides = { clock: { now: () => Date.now(), sleep: async (ms: number) => void waits.push(ms) } };
    const config = { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey, rateLimits: "off" };
    const session = startFresh({ stackConfig: { ...config, baseUrl: "http://127.0.0.1:1" }, clientOverrides });
    expect(stackConfig().baseUrl).toBe("http://127.0.0.1:1");
    expect(session.overrides).toBe(clientOverrides);
    expect(session.client(undefined).client.origin).toBe("http://127.0.0.1:1");
    // Back to the emulator, keeping the overrides: the runtime reads the slot at each call.
    startFresh({ stackConfig: config });
    expect(currentSession().overrides).toBe(clientOverrides);
    expect(currentSession().client(undefined).client.origin).toBe(new URL(emu.baseUrl).origin);
  });

  test("the clients of a session count sub-account writes on one counter: a write through one stales the list another kept", async () => {
    const session = currentSession();
    const accountOnly = session.client(undefined, {
      baseUrl: emu.baseUrl,
      accountKey: emu.accountKey,
      rateLimits: "off",
    });
    const both = session.client(undefined, {
      baseUrl: emu.baseUrl,
      adminKey: emu.adminKey,
      accountKey: emu.accountKey,
      rateLimits: "off",
    });
    expect(both).not.toBe(accountOnly);
    await accountOnly.subAccounts.snapshot();
    await accountOnly.subAccounts.snapshot();
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    const [made] = await both.client.subAccounts.create({ alias: "counted", balance: 1, modelPricing: [], count: 1 });
    expect((await accountOnly.subAccounts.list({ alias: "counted" })).map((s) => s.token)).toEqual([made.token]);
    expect(calls(emu)).toEqual({ "sub-account/list": 2, "sub-account/create": 1 });

    // A client made alone is not the session's: it counts on its own counter, as another process would.
    emu.clearRequests();
    const alone = clientOf(emu, { rateLimits: false });
    await alone.subAccounts.delete([made.token]);
    await accountOnly.subAccounts.snapshot();
    expect(calls(emu)).toEqual({ "sub-account/delete": 1 });
  });
});
