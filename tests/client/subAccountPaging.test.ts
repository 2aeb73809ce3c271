import { afterAll, beforeAll, beforeEach, describe, expect, test } from "@jest/globals";
import { LIST_READS } from "../../provider/client/subAccounts.js";
import { LlmAccountsError } from "../../provider/client/index.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { calls, clientOf, emulator } from "../support/emulator.js";

// Issue 28: a list that misses an object is not proof that it is gone. The platform pages by offset when it caps
// page_size=-1; a console delete between two pages shifts the offsets, and the first item of the next page would
// be skipped. The client reads again until a read is consistent, or fails: it never answers a partial list.

let emu: Emulator;
beforeAll(async () => {
  emu = await emulator({ rateLimits: false, subAccountListCap: 4 });
});
afterAll(async () => emu.close());
beforeEach(() => {
  emu.state.deleteSubAccounts(emu.state.listSubAccounts().map((s) => s.token));
  emu.afterSubAccountList(undefined);
  emu.clearRequests();
});

const make = (count: number) =>
  emu.state.createSubAccounts({ alias: "paged", balance: 1, modelPricing: [], count }).map((s) => s.token);

describe("the paged sub-account list under concurrent changes", () => {
  test("a console delete of an item of page 1 after page 1 was sent: read again, every live sub-account listed", async () => {
    const made = make(10);
    let deleted = false;
    emu.afterSubAccountList((page) => {
      if (page !== 1 || deleted) return;
      deleted = true;
      emu.state.deleteSubAccounts([made[0]]); // page 2 now starts one later: made[4] would be skipped
    });
    const listed = (await clientOf(emu).subAccounts.list()).map((s) => s.token).sort();
    expect(listed).toEqual(made.slice(1).sort());
    // The torn read (page 1, then page 2 with a new total), then a whole read of 9 at 4 a page.
    expect(calls(emu)).toEqual({ "sub-account/list": 2 + 3 });
  });

  test("an account that keeps changing between pages: after LIST_READS reads the list fails, naming why, never partial", async () => {
    make(10);
    emu.afterSubAccountList((page) => {
      if (page === 1) make(1);
    });
    const err = await clientOf(emu)
      .subAccounts.list()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(LlmAccountsError);
    expect((err as Error).message).toContain(`changed while its 2 pages were read, ${LIST_READS} times in a row`);
    expect(calls(emu)).toEqual({ "sub-account/list": 2 * LIST_READS });
  });

  test("no change between pages: one read, ceil(total / cap) calls", async () => {
    make(10);
    expect(await clientOf(emu).subAccounts.list()).toHaveLength(10);
    expect(calls(emu)).toEqual({ "sub-account/list": 3 });
  });
});
