import { afterAll, beforeAll, beforeEach, describe, expect, test } from "@jest/globals";
import type { SubAccount } from "../../../provider/api/schemas/index.js";
import type { Emulator } from "../../../provider/emulator/index.js";
import { ALIAS_MAX_LENGTH, LATE_WRITES, lookWaits } from "../../../provider/api/assumptions.js";
import {
  createBatch,
  leftUnderMark,
  markedAlias,
  unconfirmedAmong,
  UnconfirmedCreateError,
} from "../../../provider/runtime/subAccountBatch/recovery.js";
import { snapshotOf } from "../../../provider/runtime/command/sharedList.js";
import { calls, clientOf, emulator } from "../../support/emulator.js";

let emu: Emulator;
const api = () => clientOf(emu, { rateLimits: false, retry: { maxAttempts: 1 } }).subAccounts;
const pricing = [{ model: "model-a", pricingFactor: 1 }];

beforeAll(async () => {
  emu = await emulator({ rateLimits: false });
});
afterAll(async () => emu.close());
beforeEach(() => {
  emu.clearRequests();
  emu.setFaults([]);
});

describe("createBatch: a create whose answer was lost", () => {
  test("answered: one create, the sub-accounts it made", async () => {
    const made = await createBatch(api(), { alias: "rec-ok", balance: 5, modelPricing: pricing, count: 2 });
    expect(made).toHaveLength(2);
    expect(calls(emu)).toEqual({ "sub-account/create": 1 });
    // Under the create's own marked alias, until the caller's edit gives them the declared one.
    expect(new Set(made.map((s) => s.alias)).size).toBe(1);
    expect(made[0].alias).toMatch(/^rec-ok~[0-9a-f]{12}$/);
  });

  test("lost before it was processed while another stack's create of the same alias and balance went through: theirs is not taken", async () => {
    // Another plugin process (another stack on the account) created the same batch a moment ago.
    const theirs = emu.state
      .createSubAccounts({ alias: "rec-shared", balance: 5, modelPricing: [], count: 2 })
      .map((s) => s.token);
    emu.setFaults([{ kind: "drop-before", ops: ["sub-account/create"], count: 1 }]);
    const made = await createBatch(api(), { alias: "rec-shared", balance: 5, modelPricing: pricing, count: 2 });
    // A list that finds nothing is asked again after each wait (a platform may show a create late), then the create is sent again.
    expect(calls(emu)).toEqual({
      "sub-account/create": 2,
      "sub-account/list": 1 + lookWaits(LATE_WRITES.boundMs).length,
    });
    expect(made.map((s) => s.token).filter((t) => theirs.includes(t))).toEqual([]);
    expect(made).toHaveLength(2);
  });

  test("lost after it was processed: one list finds what it made, by alias and balance; a twin of another balance is left alone", async () => {
    const [twin] = emu.state.createSubAccounts({ alias: "rec-lost", balance: 9, modelPricing: [], count: 1 });
    emu.setFaults([{ kind: "drop-after", ops: ["sub-account/create"], count: 1 }]);
    const made = await createBatch(api(), { alias: "rec-lost", balance: 5, modelPricing: pricing, count: 2 });
    expect(calls(emu)).toEqual({ "sub-account/create": 1, "sub-account/list": 1 });
    expect(made.map((s) => s.token)).not.toContain(twin.token);
    expect(made.map((s) => s.token).sort()).toEqual(
      emu.state
        .listSubAccounts()
        .filter((s) => s.alias.startsWith("rec-lost~") && s.balance.startsWith("5"))
        .map((s) => s.token)
        .sort(),
    );
  });

  test('lost after it was processed, with a balance the platform keeps rounded (1.1 + 2.2, stored "3.300000"): found in millionths, not created again', async () => {
    emu.setFaults([{ kind: "drop-after", ops: ["sub-account/create"], count: 1 }]);
    const made = await createBatch(api(), {
      alias: "rec-rounded",
      balance: 1.1 + 2.2,
      modelPricing: pricing,
      count: 2,
    });
    expect(calls(emu)).toEqual({ "sub-account/create": 1, "sub-account/list": 1 });
    expect(made).toHaveLength(2);
    // Under the create's marked alias (createBatch alone: the caller's edit sets the declared one); found by it.
    expect(
      emu.state
        .listSubAccounts()
        .filter((s) => s.alias.startsWith("rec-rounded~"))
        .map((s) => s.balance),
    ).toEqual(["3.300000", "3.300000"]);
  });

  test("lost before it was processed: the list shows nothing, so it is sent once more", async () => {
    emu.setFaults([{ kind: "drop-before", ops: ["sub-account/create"], count: 1 }]);
    const made = await createBatch(api(), { alias: "rec-again", balance: 5, modelPricing: pricing, count: 1 });
    // A list that finds nothing is asked again after each wait (a platform may show a create late), then the create is sent again.
    expect(calls(emu)).toEqual({
      "sub-account/create": 2,
      "sub-account/list": 1 + lookWaits(LATE_WRITES.boundMs).length,
    });
    expect(made).toHaveLength(1);
  });

  test("the list fails too: an UnconfirmedCreateError that says since when sub-accounts may exist", async () => {
    emu.setFaults([
      { kind: "drop-after", ops: ["sub-account/create"], count: 1 },
      { kind: "500", ops: ["sub-account/list"] },
    ]);
    const before = Date.now();
    const err = await createBatch(api(), { alias: "rec-unknown", balance: 5, modelPricing: pricing, count: 1 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnconfirmedCreateError);
    const unconfirmed = err as UnconfirmedCreateError;
    expect(unconfirmed.mayHaveSucceeded).toBe(true);
    expect(unconfirmed.since).toBeGreaterThanOrEqual(before);
    expect(unconfirmed.marked).toMatch(/^rec-unknown~[0-9a-f]{12}$/);
    expect(unconfirmed.message).toContain(`looking for sub-accounts with alias "${unconfirmed.marked}" failed too`);
    expect(emu.state.listSubAccounts().filter((s) => s.alias === unconfirmed.marked)).toHaveLength(1);
  });
});

describe("markedAlias", () => {
  test("the alias and a marker of its own, cut to fit the platform's alias length, never half a character", () => {
    expect(markedAlias("team-a", "0123456789ab")).toBe("team-a~0123456789ab");
    expect(markedAlias("team-a")).not.toBe(markedAlias("team-a"));
    const long = markedAlias("x".repeat(ALIAS_MAX_LENGTH), "0123456789ab");
    expect(long).toHaveLength(ALIAS_MAX_LENGTH);
    expect(long.endsWith("~0123456789ab")).toBe(true);
    // A surrogate pair that straddles the cut is dropped whole.
    const emoji = markedAlias(`${"x".repeat(ALIAS_MAX_LENGTH - 14)}\u{1F600}yy`, "0123456789ab");
    expect(emoji).toBe(`${"x".repeat(ALIAS_MAX_LENGTH - 14)}~0123456789ab`);
  });
});

describe("unconfirmedAmong", () => {
  const at = (iso: string, over: Partial<SubAccount>): SubAccount =>
    ({ id: 1, token: "sk-x", alias: "u", balance: "5.000000", createdAt: iso, ...over }) as SubAccount;

  test("what a lost create may have made: the alias and balance, created since, not known yet", () => {
    const since = "2026-11-23T12:00:00.000Z";
    const listed = [
      at("2026-11-23T12:00:01+00:00", { token: "sk-made" }),
      at("2026-11-23T12:00:01+00:00", { token: "sk-known" }),
      at("2026-11-23T12:00:01+00:00", { token: "sk-other-balance", balance: "9.000000" }),
      at("2026-11-23T12:00:01+00:00", { token: "sk-other-alias", alias: "v" }),
      at("2026-11-23T11:00:00+00:00", { token: "sk-older" }),
    ];
    const found = unconfirmedAmong({ alias: "u", balance: 5, unconfirmedSince: since }, listed, new Set(["sk-known"]));
    expect(found.map((s) => s.token)).toEqual(["sk-made"]);
    expect(unconfirmedAmong({ alias: "u", balance: 5 }, listed, new Set())).toEqual([]);
  });
});

describe("leftUnderMark", () => {
  const sub = (i: number, alias: string, balance = "5.000000"): SubAccount =>
    ({ id: i, token: `sk-left-${i}`, alias, balance, createdAt: "2026-11-23T12:00:00+00:00" }) as SubAccount;
  const marks = ["0123456789ab", "ba9876543210", "00aa11bb22cc"];

  test("what a killed run left under the batch's mark, in any form, with its balance, not known", () => {
    const listed = [
      sub(1, markedAlias("team", marks[0])),
      sub(2, markedAlias("a-much-longer-alias", marks[0], "fit")),
      sub(3, markedAlias("team", marks[0])),
      sub(4, markedAlias("team", marks[0]), "9.000000"),
      sub(5, markedAlias("team", marks[1])),
      sub(6, "team"),
    ];
    const found = leftUnderMark({ balance: 5, mark: marks[0] }, snapshotOf(listed), new Set(["sk-left-3"]));
    expect(found.map((s) => s.id)).toEqual([1, 2]);
    expect(leftUnderMark({ balance: 5 }, snapshotOf(listed), new Set())).toEqual([]);
    expect(leftUnderMark({ balance: 5, mark: "" }, snapshotOf(listed), new Set()).map((s) => s.id)).toEqual([
      1, 2, 3, 5, 6,
    ]);
  });

  test("one list shared by every read of a refresh is gone through once for all their marks, not once a read", () => {
    const all = Array.from({ length: 300 }, (_, i) => sub(i, markedAlias(`team-${i}`, marks[i % 3])));
    let reads = 0;
    const listed = new Proxy(all, {
      get(target, p, receiver) {
        if (typeof p === "string" && /^\d+$/.test(p)) reads++;
        return Reflect.get(target, p, receiver);
      },
    });
    // A read of each batch of the account, each looking for its own mark in the same list (the command's snapshot).
    const shared = snapshotOf(listed);
    reads = 0; // its index by token aside
    for (let read = 0; read < 100; read++)
      expect(leftUnderMark({ balance: 5, mark: marks[read % 3] }, shared, new Set())).toHaveLength(100);
    expect(reads).toBeLessThanOrEqual(all.length);
  });
});
