import { afterEach, describe, expect, test } from "@jest/globals";
import { startEmulator, type Emulator, type Reading } from "../../provider/emulator/index.js";
import { startFresh, subAccountBatch, type Props } from "../../provider/runtime/index.js";
import { UnconfirmedCreateError } from "../../provider/runtime/subAccountBatch/recovery.js";
import { checkedInputs } from "../support/check.js";
import { calls } from "../support/emulator.js";

/**
 * Issue 43, nothing lost on any platform: a batch create whose answer is lost (`gateway-timeout-after-write`) on a
 * platform that keeps aliases lower-cased or cut is recovered by its mark as the platform kept it, never sent again;
 * where a cut took the mark and no profile places it within the cut, nothing is claimed or created again. In
 * process, through the runtime's provider methods; the emulator's clock and the client's waits are one fake clock.
 */

let emu: Emulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

/** An emulator playing `readings` and the runtime pointed at it, with `settings` in the stack config. */
async function platform(readings: Reading[], settings: Record<string, string> = {}): Promise<Emulator> {
  let now = Date.now();
  const e = await startEmulator({ port: 0, host: "127.0.0.1", rateLimits: false, readings, clock: () => now });
  startFresh({
    stackConfig: { baseUrl: e.baseUrl, adminKey: e.adminKey, accountKey: e.accountKey, rateLimits: "off", ...settings },
    clientOverrides: { clock: { now: () => now, sleep: async (ms) => void (now += ms) } },
  });
  return (emu = e);
}

/** A platform profile as `llm-accounts doctor --write` writes it (the spec's statuses), with `limits`. */
const profile = (limits: object) =>
  JSON.stringify({
    version: 1,
    done: { shape: "plain" },
    refused: [{ status: 400 }],
    goneKey: [{ status: 404 }],
    goneSubAccount: [{ status: 404 }],
    transient: [{ status: 429 }],
    unauthorised: [{ status: 401 }],
    limits,
  });

/** 33 characters: cut at 32 by `cut-aliases`, so that `<alias>~<mark>` loses its mark there. */
const LONG = "Team-Alpha-Production-Europe-West";

const batch = (alias: string, count: number, mark?: string) =>
  checkedInputs(subAccountBatch, {
    alias,
    balance: 5,
    count,
    modelPricing: [{ model: "model-a", pricingFactor: 1 }],
    ...(mark && { mark }),
  });

describe("a lost batch create on a platform that normalises aliases", () => {
  test("lowercase-aliases: found under its mark lower-cased and adopted, one create, another batch's sub-accounts untouched", async () => {
    const e = await platform(["gateway-timeout-after-write", "lowercase-aliases"]);
    // Another stack's batch of the same alias, its own mark.
    const theirs = e.state
      .createSubAccounts({ alias: "team-a~0123456789ab", balance: 5, modelPricing: [], count: 2 })
      .map((s) => s.token);
    const { outs } = await subAccountBatch.create(await batch("Team-A", 3));
    expect(calls(e)["sub-account/create"]).toBe(1);
    expect(outs.tokens).toHaveLength(3);
    expect(outs.tokens.filter((t) => theirs.includes(t))).toEqual([]);
    expect(e.state.listSubAccounts()).toHaveLength(5);
    expect(
      e.state
        .listSubAccounts()
        .filter((s) => outs.tokens.includes(s.token))
        .map((s) => s.alias),
    ).toEqual(Array(3).fill("team-a"));
  });

  // aliasMax (longer is refused: check refuses LONG, so the alias is as long as it allows, and `<alias>~<mark>` would
  // still be cut into the mark) or aliasCut (what the doctor measures where longer is kept cut: LONG passes check).
  test.each([
    ["aliasMax", { aliasMax: 32 }, LONG.slice(0, 32)],
    ["aliasCut", { aliasCut: 32 }, LONG],
  ])(
    "cut-aliases with the profile's %s: the mark placed within the cut, found and adopted, one create",
    async (_, limits, alias) => {
      const e = await platform(["gateway-timeout-after-write", "cut-aliases"], { profile: profile(limits) });
      const theirs = e.state.createSubAccounts({ alias, balance: 5, modelPricing: [], count: 2 }).map((s) => s.token);
      const { outs } = await subAccountBatch.create(await batch(alias, 3));
      expect(calls(e)["sub-account/create"]).toBe(1);
      expect(outs.tokens).toHaveLength(3);
      expect(outs.tokens.filter((t) => theirs.includes(t))).toEqual([]);
      expect(e.state.listSubAccounts()).toHaveLength(5);
    },
  );

  test("cut-aliases without a profile: the cut took the mark, so nothing is claimed and nothing created again; the state keeps the lost create", async () => {
    const e = await platform(["gateway-timeout-after-write", "cut-aliases"]);
    const theirs = e.state
      .createSubAccounts({ alias: LONG, balance: 5, modelPricing: [], count: 2 })
      .map((s) => s.token);
    const err = (await subAccountBatch.create(await batch(LONG, 3)).then(
      () => new Error("created"),
      (x: unknown) => x,
    )) as UnconfirmedCreateError & { properties?: { tokens: string[]; unconfirmedAlias?: string } };
    expect(err.message).toMatch(
      /cut took the create's mark.*None was taken and the create was not sent again.*llm-accounts doctor.*aliasCut/s,
    );
    expect(calls(e)["sub-account/create"]).toBe(1);
    // The lost create's 3 and the other stack's 2, none taken; shown masked only.
    expect(e.state.listSubAccounts()).toHaveLength(5);
    expect(err.properties?.tokens).toEqual([]);
    expect(err.properties?.unconfirmedAlias).toMatch(/~[0-9a-f]{12}$/);
    for (const s of e.state.listSubAccounts()) expect(err.message).not.toContain(s.token);
    expect(theirs.every((t) => e.state.listSubAccounts().some((s) => s.token === t))).toBe(true);
  });

  test("lowercase-aliases, the list failing too: the state keeps the marked alias, and the next refresh finds what the create made under it lower-cased", async () => {
    const e = await platform(["gateway-timeout-after-write", "lowercase-aliases"]);
    e.setFaults([{ kind: "500", ops: ["sub-account/list"] }]);
    const err = (await subAccountBatch.create(await batch("Team-B", 2)).then(
      () => new Error("created"),
      (x: unknown) => x,
    )) as Error & { id?: string; properties?: Props };
    expect(err).toBeInstanceOf(UnconfirmedCreateError);
    expect(String(err.properties?.unconfirmedAlias)).toMatch(/^Team-B~[0-9a-f]{12}$/);
    e.setFaults([]);
    startFresh();
    const read = await subAccountBatch.read(err.id!, err.properties!);
    expect((read.props as { tokens?: string[] }).tokens?.sort()).toEqual(
      e.state
        .listSubAccounts()
        .map((s) => s.token)
        .sort(),
    );
    expect(e.state.listSubAccounts()).toHaveLength(2);
  });
});

describe("the platform profile's aliasMax", () => {
  test("check refuses a batch alias longer than aliasMax, naming the field and the limit; one that fits passes", async () => {
    await platform([], { profile: profile({ aliasMax: 20 }) });
    const { failures } = await subAccountBatch.check({}, { alias: "a".repeat(21), balance: 5, count: 1 });
    expect(failures).toEqual([
      { property: "alias", reason: expect.stringMatching(/21 characters.*at most 20.*limits\.aliasMax/) },
    ]);
    expect((await subAccountBatch.check({}, { alias: "a".repeat(20), balance: 5, count: 1 })).failures).toEqual([]);
  });

  test("short-aliases (32): the marked alias is made to fit aliasMax, so the first create is taken (no refusal, no second form)", async () => {
    const e = await platform(["short-aliases"], { profile: profile({ aliasMax: 32 }) });
    const alias = "Team-Gamma-Production-Asia-East";
    const { outs } = await subAccountBatch.create(await batch(alias, 2));
    expect(calls(e)["sub-account/create"]).toBe(1);
    expect(
      e.state
        .listSubAccounts()
        .filter((s) => outs.tokens.includes(s.token))
        .map((s) => s.alias),
    ).toEqual([alias, alias]);
  });
});
