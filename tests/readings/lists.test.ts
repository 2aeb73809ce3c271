import { describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../provider/emulator/index.js";
import { calls, clientOf, useRuntimeEmulator } from "../support/emulator.js";

/**
 * A `total` that ignores the list's filters (issue 43, the reading total-unfiltered): a filtered list is read from
 * its items, never concluded "changed while read" from a `total` that counts the whole account.
 */
let emu: Emulator;
useRuntimeEmulator((e) => (emu = e), { readings: ["total-unfiltered"] });

describe("a sub-account list whose total ignores its filters", () => {
  test("filtered by alias and by sk: the matching items, two calls at most; unfiltered: one", async () => {
    emu.state.createSubAccounts({ alias: "many", balance: 1, modelPricing: [], count: 5 });
    const few = emu.state.createSubAccounts({ alias: "few", balance: 1, modelPricing: [], count: 2 });
    const api = clientOf(emu, { rateLimits: false }).subAccounts;
    emu.clearRequests();
    expect((await api.list({ alias: "few" })).map((s) => s.token)).toEqual(few.map((s) => s.token));
    expect(calls(emu)).toEqual({ "sub-account/list": 2 });
    emu.clearRequests();
    expect((await api.list({ sk: few[1].token })).map((s) => s.token)).toEqual([few[1].token]);
    expect((await api.list({ alias: "none" })).map((s) => s.token)).toEqual([]);
    expect(calls(emu)).toEqual({ "sub-account/list": 3 });
    emu.clearRequests();
    expect(await api.list()).toHaveLength(7);
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
  });
});
