import { afterEach, describe, expect, test } from "@jest/globals";
import { LATE_WRITES, lookWaits } from "../../../provider/api/assumptions.js";
import type { Emulator } from "../../../provider/emulator/index.js";
import { apiKey, startFresh, UNKNOWN, type ApiKeyInputs, type ApiKeyOutputs } from "../../../provider/runtime/index.js";
import { calls, expectNoSecret, secretsOf, useRuntimeEmulator } from "../../support/emulator.js";
import { found, inputsAfterRefresh } from "../../support/readOutcome.js";
import { checkedInputs } from "../../support/check.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));
afterEach(() => emu.setClockOffset(0));

type Props = Record<string, unknown>;
type Failed = Error & { id?: string; properties?: ApiKeyOutputs; reasons?: string[] };

const checked = (news: Props, olds: Props = {}) => checkedInputs(apiKey, news, olds);

/** A key as `pulumi up` leaves it: checked inputs and the create's outputs. */
async function created(news: Props): Promise<{ id: string; outs: ApiKeyOutputs; inputs: ApiKeyInputs }> {
  const inputs = await checked(news);
  const { id, outs } = await apiKey.create(inputs);
  emu.clearRequests();
  return { id, outs, inputs };
}

/** One `pulumi up` of new inputs over a key: check against the old inputs, diff, and update when it says so. */
async function up(
  id: string,
  olds: { outs: ApiKeyOutputs; inputs: ApiKeyInputs },
  news: Props,
): Promise<{ outs: ApiKeyOutputs; inputs: ApiKeyInputs; changed: boolean }> {
  const inputs = await checked(news, olds.inputs);
  const { changes, replaces } = await apiKey.diff(id, olds.outs, inputs);
  expect(replaces).toEqual([]);
  if (!changes) return { outs: olds.outs, inputs, changed: false };
  const { outs } = await apiKey.update(id, olds.outs, inputs);
  return { outs, inputs, changed: true };
}

describe("check: rotation settings by property path", () => {
  test.each([
    [{ everyDays: 0 }, "rotation.everyDays", /0 is not a positive whole number of days/],
    [{ everyDays: 1.5 }, "rotation.everyDays", /1.5 is not a positive whole number/],
    [{ everyDays: "90" }, "rotation.everyDays", /"90" is not a positive whole number/],
    [{ overlapHours: -1 }, "rotation.overlapHours", /-1 is not a number of hours >= 0/],
    [
      { everyDays: 1, overlapHours: 24 },
      "rotation.overlapHours",
      /24 hours is not shorter than the rotation period \(1 days = 24 hours\)/,
    ],
    [{ triggers: [Number.NaN] }, "rotation.triggers", /must be JSON values/],
    [{ everyDay: 90 }, "rotation.everyDay", /is not a rotation setting \(everyDays, triggers, overlapHours\)/],
    // Issue 23 row 4: no date could hold the expiry, found only after the new key was created.
    [
      { overlapHours: 1e12 },
      "rotation.overlapHours",
      /1000000000000 is more than 8760 hours \(one year\), the longest overlap/,
    ],
    [{ triggers: ["a"], overlapHours: 8760.5 }, "rotation.overlapHours", /8760.5 is more than 8760 hours/],
    [
      { everyDays: 1e300 },
      "rotation.everyDays",
      /1e\+300 is more than 3650 days \(ten years\), the longest rotation period/,
    ],
    [{ everyDays: 3651 }, "rotation.everyDays", /3651 is more than 3650 days/],
    [[90], "rotation", /must be an object/],
  ])("%j fails at %s", async (rotation, property, reason) => {
    const { failures } = await apiKey.check({}, { alias: "v", rotation });
    expect(failures).toEqual([{ property, reason: expect.stringMatching(reason) }]);
    expect(emu.requests()).toHaveLength(0);
  });

  test("valid settings, any JSON triggers and values not known yet pass", async () => {
    for (const rotation of [
      { everyDays: 90, overlapHours: 24, triggers: ["INC-1", { n: 2, ok: true, none: null }] },
      { overlapHours: 0.5 },
      { everyDays: UNKNOWN, overlapHours: 8760 },
      { everyDays: 3650, overlapHours: 8760 },
      { triggers: UNKNOWN },
      UNKNOWN,
    ]) {
      await checked({ alias: "v", rotation });
    }
  });
});

describe("rotation by trigger", () => {
  test("a changed trigger: one create with the alias and security config, one delete; the same id; preview names the reason", async () => {
    const securityConfig = { geo: { countries: ["SG"] }, spendLimit: { monthly: 5 } };
    const first = await created({ alias: "ci", securityConfig, rotation: { triggers: ["INC-1"] } });
    const news = { alias: "ci", securityConfig, rotation: { triggers: ["INC-2"] } };
    expect((await checked(news, first.inputs)).rotationDue).toBe("rotation triggered");
    expect(await apiKey.diff(first.id, first.outs, await checked(news, first.inputs))).toMatchObject({
      changes: true,
      replaces: [],
    });

    const after = await up(first.id, first, news);
    // One get first: the successor takes the restrictions the old key holds now, the console's included (issue 43).
    expect(emu.requests().map((r) => r.op)).toEqual(["api-key/get", "api-key/create", "api-key/delete"]);
    const fresh = emu.state.getKey(after.outs.key)!;
    expect(fresh).toMatchObject({
      alias: "ci",
      enabled: true,
      security_config: { geo: { countries: ["SG"] }, spend_limit: { monthly: 5 } },
    });
    expect(after.outs.key).not.toBe(first.outs.key);
    expect(emu.state.hasKey(first.outs.key)).toBe(false);
    expect(after.outs).toMatchObject({
      rotatedAt: fresh.created_at,
      createdAt: fresh.created_at,
      keyHint: `sk-...${fresh.key.slice(-4)}`,
    });
    expect(after.outs.previousKey).toBeUndefined();

    // Converged: the next run changes nothing and calls nothing.
    emu.clearRequests();
    expect((await up(first.id, after, news)).changed).toBe(false);
    expect(emu.requests()).toHaveLength(0);
  });

  test("declared disabled: create, status, delete", async () => {
    const first = await created({ alias: "off", enabled: false, rotation: { triggers: 1 } });
    const after = await up(first.id, first, { alias: "off", enabled: false, rotation: { triggers: 2 } });
    expect(emu.requests().map((r) => r.op)).toEqual([
      "api-key/get",
      "api-key/create",
      "api-key/status",
      "api-key/delete",
    ]);
    expect(emu.state.getKey(after.outs.key)?.enabled).toBe(false);
  });

  test("adding or removing triggers does not rotate; a trigger not known yet may", async () => {
    const first = await created({ alias: "t" });
    const added = await up(first.id, first, { alias: "t", rotation: { triggers: ["a"] } });
    expect(added.outs.key).toBe(first.outs.key);
    const removed = await up(first.id, added, { alias: "t" });
    expect(removed.outs.key).toBe(first.outs.key);
    expect(emu.requests()).toHaveLength(0);
    const unknown = await checked({ alias: "t", rotation: { triggers: [UNKNOWN] } }, added.inputs);
    expect((await apiKey.diff(first.id, added.outs, unknown)).changes).toBe(true);
  });

  test("an adopted key rotates too: the first rotation replaces it with a created key and deletes it", async () => {
    const console = emu.state.createKey("console").key;
    const first = await created({ alias: "console", adoptKey: console, rotation: { triggers: ["x"] } });
    const after = await up(first.id, first, { alias: "console", adoptKey: console, rotation: { triggers: ["y"] } });
    expect(calls(emu)).toEqual({ "api-key/get": 1, "api-key/create": 1, "api-key/delete": 1 });
    expect(emu.state.hasKey(console)).toBe(false);
    expect(emu.state.hasKey(after.outs.key)).toBe(true);
    // No replacement later either: the adopted key stays the declared input.
    emu.clearRequests();
    expect(
      (await up(first.id, after, { alias: "console", adoptKey: console, rotation: { triggers: ["y"] } })).changed,
    ).toBe(false);
  });

  test("after an adopted key rotated, adoptKey kept (the deleted original), removed, or the current or previous key: no change, no call", async () => {
    const console = emu.state.createKey("adopted").key;
    const rotation = (t: string) => ({ overlapHours: 24, triggers: [t] });
    const first = await created({ alias: "adopted", adoptKey: console, rotation: rotation("x") });
    const once = await up(first.id, first, { alias: "adopted", adoptKey: console, rotation: rotation("y") });
    // Rotated again: the original is neither the current key nor the previous one any more.
    const twice = await up(first.id, once, { alias: "adopted", adoptKey: console, rotation: rotation("z") });
    expect(twice.outs.previousKey).toBe(once.outs.key);
    expect(emu.state.hasKey(console)).toBe(false);
    emu.clearRequests();
    for (const adoptKey of [console, undefined, twice.outs.key, once.outs.key]) {
      const after = await up(first.id, twice, { alias: "adopted", adoptKey, rotation: rotation("z") });
      expect(after.changed).toBe(false);
      expect(after.outs.adoptKey).toBe(console);
    }
    expect(emu.requests()).toHaveLength(0);
    const stranger = emu.state.createKey("stranger").key;
    const inputs = await checked({ alias: "adopted", adoptKey: stranger, rotation: rotation("z") }, twice.inputs);
    await expect(apiKey.diff(first.id, twice.outs, inputs)).rejects.toThrow(
      /^adoptKey: sk-\.\.\.\w{4} is neither this resource's key, its previous key, nor the key it adopted;/,
    );
  });

  test("after a rotation by trigger, a refresh that finds nothing drifted keeps the stored inputs: the gate shows no `- rotationDue`", async () => {
    const first = await created({ alias: "calm", rotation: { triggers: ["a"] } });
    const after = await up(first.id, first, { alias: "calm", rotation: { triggers: ["b"] } });
    // What check stored for the rotating update: the reason, shown by its preview.
    expect(after.inputs.rotationDue).toBe("rotation triggered");
    const read = found(await apiKey.read(first.id, after.outs));
    expect(read.props.rotationDue).toBeUndefined();
    expect(inputsAfterRefresh(read, after.inputs)).toEqual(after.inputs);
  });
});

describe("rotation by age (the platform's created_at)", () => {
  test("a key older than everyDays: refresh shows why and rotates nothing; the next update rotates once", async () => {
    emu.setClockOffset(-91 * DAY);
    const first = await created({ alias: "old", rotation: { everyDays: 90 } });
    emu.setClockOffset(0);
    const issued = first.outs.createdAt.slice(0, 10);

    const refreshed = found(await apiKey.read(first.id, first.outs));
    expect(calls(emu)).toEqual({ "api-key/get": 1 });
    expect(refreshed.props.rotationDue).toBe(`rotation due: key issued ${issued}, every 90 days`);
    expect(refreshed.props.key).toBe(first.outs.key);
    expect(refreshed.inputs).toEqual({
      alias: "old",
      enabled: true,
      securityConfig: {},
      rotation: { everyDays: 90 },
      rotationDue: refreshed.props.rotationDue,
    });

    emu.clearRequests();
    const after = await up(
      first.id,
      { outs: refreshed.props, inputs: inputsAfterRefresh(refreshed, first.inputs) },
      { alias: "old", rotation: { everyDays: 90 } },
    );
    expect(calls(emu)).toEqual({ "api-key/get": 1, "api-key/create": 1, "api-key/delete": 1 });
    expect(after.outs.rotationDue).toBeUndefined();
    expect(Date.now() - Date.parse(after.outs.createdAt)).toBeLessThan(DAY);
  });

  test("a key younger than everyDays: no change, no call", async () => {
    emu.setClockOffset(-89 * DAY);
    const first = await created({ alias: "young", rotation: { everyDays: 90 } });
    emu.setClockOffset(0);
    expect((await up(first.id, first, { alias: "young", rotation: { everyDays: 90 } })).changed).toBe(false);
    expect((await apiKey.read(first.id, first.outs)).props.rotationDue).toBeUndefined();
    expect(calls(emu)).toEqual({ "api-key/get": 1 });
  });
});

describe("overlap", () => {
  test("rotation creates only; the previous key stays enabled and unchanged; nothing is deleted before the overlap ends", async () => {
    const rotation = (t: string) => ({ everyDays: 30, overlapHours: 24, triggers: [t] });
    const first = await created({ alias: "ov", rotation: rotation("a") });
    const before = emu.state.getKey(first.outs.key);
    const after = await up(first.id, first, { alias: "ov", rotation: rotation("b") });
    expect(calls(emu)).toEqual({ "api-key/get": 1, "api-key/create": 1 });
    expect(after.outs.previousKey).toBe(first.outs.key);
    expect(Date.parse(after.outs.previousKeyExpiresAt!)).toBe(Date.parse(after.outs.rotatedAt!) + 24 * HOUR);

    emu.clearRequests();
    expect((await up(first.id, after, { alias: "ov", rotation: rotation("b") })).changed).toBe(false);
    const refreshed = await apiKey.read(first.id, after.outs);
    expect(calls(emu)).toEqual({ "api-key/get": 2 });
    expect(refreshed.props).toMatchObject({ key: after.outs.key, previousKey: first.outs.key });
    expect(refreshed.props.rotationDue).toBeUndefined();
    // Another change during the overlap touches the current key only.
    emu.clearRequests();
    const renamed = await up(first.id, after, { alias: "ov2", rotation: rotation("b") });
    expect(calls(emu)).toEqual({ "api-key/get": 1, "api-key/edit": 1 });
    expect(renamed.outs.previousKey).toBe(first.outs.key);
    expect(emu.state.getKey(first.outs.key)).toEqual(before);
  });

  test("the first update after the overlap deletes the previous key: one delete", async () => {
    const rotation = (t: string) => ({ overlapHours: 24, triggers: [t] });
    const first = await created({ alias: "ex", rotation: rotation("a") });
    // The new key is issued 25 hours "ago": its overlap has already passed when this update ends.
    emu.setClockOffset(-25 * HOUR);
    const rotated = await up(first.id, first, { alias: "ex", rotation: rotation("b") });
    emu.setClockOffset(0);
    expect(calls(emu)).toEqual({ "api-key/get": 1, "api-key/create": 1 });
    expect(rotated.outs.previousKey).toBe(first.outs.key);

    emu.clearRequests();
    const refreshed = await apiKey.read(first.id, rotated.outs);
    expect(refreshed.props.rotationDue).toMatch(/^previous key expires: overlap ended \d{4}-\d\d-\d\dT/);
    emu.clearRequests();
    const after = await up(first.id, rotated, { alias: "ex", rotation: rotation("b") });
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
    expect(after.outs.previousKey).toBeUndefined();
    expect(emu.state.hasKey(first.outs.key)).toBe(false);
    expect(emu.state.hasKey(rotated.outs.key)).toBe(true);
  });

  test("a rotation during an overlap deletes the older previous key first: one previous key at most", async () => {
    const rotation = (t: string) => ({ overlapHours: 24, triggers: [t] });
    const first = await created({ alias: "twice", rotation: rotation("a") });
    const second = await up(first.id, first, { alias: "twice", rotation: rotation("b") });
    emu.clearRequests();
    const third = await up(first.id, second, { alias: "twice", rotation: rotation("c") });
    expect(emu.requests().map((r) => r.op)).toEqual(["api-key/delete", "api-key/get", "api-key/create"]);
    expect(emu.state.hasKey(first.outs.key)).toBe(false);
    expect(third.outs.previousKey).toBe(second.outs.key);
  });

  test("refresh: a previous key deleted elsewhere drops out; destroy deletes both keys in one call", async () => {
    const rotation = (t: string) => ({ overlapHours: 24, triggers: [t] });
    const first = await created({ alias: "rd", rotation: rotation("a") });
    const rotated = await up(first.id, first, { alias: "rd", rotation: rotation("b") });
    emu.state.deleteKey(first.outs.key);
    const refreshed = await apiKey.read(first.id, rotated.outs);
    expect(refreshed.props.previousKey).toBeUndefined();
    expect(refreshed.props.previousKeyExpiresAt).toBeUndefined();

    const other = await created({ alias: "rd2", rotation: rotation("a") });
    const both = await up(other.id, other, { alias: "rd2", rotation: rotation("b") });
    // The destroy: a command of its own (the engine deletes what it diffed or updated in the same command only to replace it).
    startFresh();
    emu.clearRequests();
    await apiKey.delete(other.id, both.outs);
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
    expect(emu.state.hasKey(other.outs.key)).toBe(false);
    expect(emu.state.hasKey(both.outs.key)).toBe(false);
  });
});

describe("the current key deleted elsewhere during the overlap", () => {
  const rotation = (t: string) => ({ overlapHours: 24, triggers: [t] });
  const KEY_DELETED = "key deleted elsewhere: the next up issues a new one";

  /** A key rotated with an overlap (past already when `expired`), then its current key deleted in the console. */
  async function currentDeleted(alias: string, expired = false) {
    const first = await created({ alias, rotation: rotation("a") });
    if (expired) emu.setClockOffset(-25 * HOUR);
    const rotated = await up(first.id, first, { alias, rotation: rotation("b") });
    emu.setClockOffset(0);
    emu.state.deleteKey(rotated.outs.key);
    emu.clearRequests();
    return { first, rotated };
  }

  test("refresh keeps the resource for its previous key (2 gets); the next up issues a new key (1 create) and the previous key lives out its overlap", async () => {
    const { first, rotated } = await currentDeleted("cd");
    const refreshed = found(await apiKey.read(first.id, rotated.outs));
    // The current key, issued this minute, is asked again after each wait before it counts as gone (a platform may lag).
    expect(calls(emu)).toEqual({ "api-key/get": 2 + lookWaits(LATE_WRITES.boundMs).length });
    expect(refreshed.props).toMatchObject({
      previousKey: first.outs.key,
      previousKeyExpiresAt: rotated.outs.previousKeyExpiresAt,
      rotationDue: KEY_DELETED,
    });
    // A preview after the refresh shows why the resource changes; a second refresh finds nothing new.
    expect(refreshed.inputs?.rotationDue).toBe(KEY_DELETED);
    expect(found(await apiKey.read(first.id, refreshed.props)).inputs).toBeUndefined();

    emu.clearRequests();
    const stored = { outs: refreshed.props, inputs: inputsAfterRefresh(refreshed, rotated.inputs) };
    const after = await up(first.id, stored, { alias: "cd", rotation: rotation("b") });
    expect(calls(emu)).toEqual({ "api-key/create": 1 });
    expect(emu.state.getKey(after.outs.key)).toMatchObject({ alias: "cd", enabled: true });
    expect(after.outs).toMatchObject({
      previousKey: first.outs.key,
      previousKeyExpiresAt: rotated.outs.previousKeyExpiresAt,
      rotatedAt: rotated.outs.rotatedAt,
    });
    expect(after.outs.rotationDue).toBeUndefined();
    expect(emu.state.hasKey(first.outs.key)).toBe(true);

    // Converged: no change, and a refresh sees both keys.
    emu.clearRequests();
    expect((await up(first.id, after, { alias: "cd", rotation: rotation("b") })).changed).toBe(false);
    expect(found(await apiKey.read(first.id, after.outs)).props).toMatchObject({
      key: after.outs.key,
      previousKey: first.outs.key,
    });
    expect(calls(emu)).toEqual({ "api-key/get": 2 });
  });

  test("past the overlap, the up that issues the new key deletes the previous one (1 create, 1 delete)", async () => {
    const { first, rotated } = await currentDeleted("cx", true);
    const refreshed = found(await apiKey.read(first.id, rotated.outs));
    expect(refreshed.props.rotationDue).toBe(KEY_DELETED);
    emu.clearRequests();
    const after = await up(
      first.id,
      { outs: refreshed.props, inputs: inputsAfterRefresh(refreshed, rotated.inputs) },
      { alias: "cx", rotation: rotation("b") },
    );
    expect(calls(emu)).toEqual({ "api-key/create": 1, "api-key/delete": 1 });
    expect(emu.state.hasKey(first.outs.key)).toBe(false);
    expect(emu.state.hasKey(after.outs.key)).toBe(true);
    expect(after.outs.previousKey).toBeUndefined();
  });

  test("destroyed after the refresh: the previous key is deleted, the gone key is not sent (1 call)", async () => {
    const { first, rotated } = await currentDeleted("cy");
    const refreshed = found(await apiKey.read(first.id, rotated.outs));
    startFresh();
    emu.clearRequests();
    await apiKey.delete(first.id, refreshed.props);
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
    expect(emu.state.hasKey(first.outs.key)).toBe(false);
  });

  test("a trigger changed as well: a rotation, so the previous key is deleted first (one previous key at most)", async () => {
    const { first, rotated } = await currentDeleted("ct");
    const refreshed = found(await apiKey.read(first.id, rotated.outs));
    emu.clearRequests();
    const after = await up(
      first.id,
      { outs: refreshed.props, inputs: inputsAfterRefresh(refreshed, rotated.inputs) },
      { alias: "ct", rotation: rotation("c") },
    );
    expect(emu.requests().map((r) => r.op)).toEqual(["api-key/delete", "api-key/create"]);
    expect(emu.state.hasKey(first.outs.key)).toBe(false);
    expect(after.outs.previousKey).toBeUndefined();
    expect(after.outs.rotatedAt).toBe(after.outs.createdAt);
  });

  test("both keys deleted elsewhere: the resource is gone (2 gets)", async () => {
    const { first, rotated } = await currentDeleted("cb");
    emu.state.deleteKey(first.outs.key);
    expect((await apiKey.read(first.id, rotated.outs)).id).toBe("");
    // The current key, issued this minute, is asked again after each wait before it counts as gone (a platform may lag).
    expect(calls(emu)).toEqual({ "api-key/get": 2 + lookWaits(LATE_WRITES.boundMs).length });
  });
});

describe("failures at each step, and convergence on re-run", () => {
  // Issue 23 row 4: the expiry was computed after the create and threw RangeError, orphaning the new key on every up.
  test("an overlap past the last date (settings that skipped check) still records the new key; the expiry is the last date", async () => {
    const first = await created({ alias: "far", rotation: { triggers: ["a"] } });
    const inputs = { ...first.inputs, rotation: { triggers: ["b"], overlapHours: 1e12 } };
    const { outs } = await apiKey.update(first.id, first.outs, inputs);
    expect(emu.requests().map((r) => r.op)).toEqual(["api-key/get", "api-key/create"]);
    expect(outs.key).not.toBe(first.outs.key);
    expect(outs.previousKey).toBe(first.outs.key);
    expect(outs.previousKeyExpiresAt).toBe(new Date(8.64e15).toISOString());
    expect([emu.state.hasKey(first.outs.key), emu.state.hasKey(outs.key)]).toEqual([true, true]);
  });

  const news = (t: string) => ({ alias: "f", rotation: { triggers: [t] } });

  test("the new key cannot be created: nothing changes; the re-run rotates", async () => {
    const first = await created(news("a"));
    const keysBefore = emu.state.listKeys().length;
    emu.setFaults([{ kind: "500", ops: ["api-key/create"] }]);
    const inputs = await checked(news("b"), first.inputs);
    const err = (await apiKey.update(first.id, first.outs, inputs).catch((e: unknown) => e)) as Failed;
    expect(err).toBeInstanceOf(Error);
    expect(err.id).toBeUndefined();
    expect(emu.state.listKeys()).toHaveLength(keysBefore);
    expect(emu.state.hasKey(first.outs.key)).toBe(true);
    expect(calls(emu)["api-key/delete"]).toBeUndefined();
    expectNoSecret(String(err) + JSON.stringify(err), secretsOf(emu));

    emu.setFaults([]);
    emu.clearRequests();
    await up(first.id, first, news("b"));
    expect(calls(emu)).toEqual({ "api-key/get": 1, "api-key/create": 1, "api-key/delete": 1 });
  });

  test("a lost create answer: the error says the key may exist and how to find it", async () => {
    const first = await created(news("a"));
    emu.setFaults([{ kind: "drop-after", ops: ["api-key/create"], count: 1 }]);
    const inputs = await checked(news("b"), first.inputs);
    const err = (await apiKey.update(first.id, first.outs, inputs).catch((e: unknown) => e)) as Failed;
    expect(err.message).toMatch(/the key may have been created.*alias "f".*adoptKey/);
    expect(err.id).toBeUndefined();
    expect(emu.state.hasKey(first.outs.key)).toBe(true);
    expectNoSecret(String(err) + JSON.stringify(err), secretsOf(emu));
  });

  test("created but the old key not deleted: the outputs keep both (as a failed update), the next update deletes it", async () => {
    const first = await created(news("a"));
    emu.setFaults([{ kind: "500", ops: ["api-key/delete"] }]);
    const inputs = await checked(news("b"), first.inputs);
    const err = (await apiKey.update(first.id, first.outs, inputs).catch((e: unknown) => e)) as Failed;
    expect(err.message).toMatch(
      /rotated, but the previous key sk-\.\.\.\w{4} could not be deleted.*next update deletes it/,
    );
    expect(err.id).toBe(first.id);
    const kept = err.properties!;
    expect(kept.previousKey).toBe(first.outs.key);
    expect(emu.state.hasKey(kept.key)).toBe(true);
    expect(emu.state.hasKey(first.outs.key)).toBe(true);
    expectNoSecret(String(err) + JSON.stringify(err) + err.stack, secretsOf(emu));

    emu.setFaults([]);
    emu.clearRequests();
    const after = await up(first.id, { outs: kept, inputs }, news("b"));
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
    expect(after.outs.key).toBe(kept.key);
    expect(after.outs.previousKey).toBeUndefined();
    expect(emu.state.hasKey(first.outs.key)).toBe(false);
  });

  test("declared disabled, the status call fails: the new key is deleted again and nothing changes", async () => {
    const first = await created({ ...news("a"), enabled: false });
    emu.setFaults([{ kind: "500", ops: ["api-key/status"] }]);
    const before = emu.state.listKeys().length;
    const inputs = await checked({ ...news("b"), enabled: false }, first.inputs);
    await expect(apiKey.update(first.id, first.outs, inputs)).rejects.toThrow(/deleted again.*re-run/);
    expect(emu.state.listKeys()).toHaveLength(before);
    expect(emu.state.hasKey(first.outs.key)).toBe(true);
  });

  test("an expired previous key whose delete fails stays in the outputs; the next update retries", async () => {
    const rotation = (t: string) => ({ overlapHours: 1, triggers: [t] });
    const first = await created({ alias: "r", rotation: rotation("a") });
    emu.setClockOffset(-2 * HOUR);
    const rotated = await up(first.id, first, { alias: "r", rotation: rotation("b") });
    emu.setClockOffset(0);
    emu.setFaults([{ kind: "500", ops: ["api-key/delete"] }]);
    const inputs = await checked({ alias: "r", rotation: rotation("b") }, rotated.inputs);
    const err = (await apiKey.update(first.id, rotated.outs, inputs).catch((e: unknown) => e)) as Failed;
    expect(err.message).toMatch(/previous key sk-\.\.\.\w{4} could not be deleted.*next update retries/);
    expect(err.properties?.previousKey).toBe(first.outs.key);
    emu.setFaults([]);
    emu.clearRequests();
    const after = await up(first.id, { outs: err.properties!, inputs }, { alias: "r", rotation: rotation("b") });
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
    expect(after.outs.previousKey).toBeUndefined();
  });
});

/**
 * An old state: the outputs ApiKey 0.1.0 wrote, before rotation (no rotation, rotationDue, previousKey,
 * previousKeyExpiresAt or rotatedAt). Typed as a subset of today's outputs, so it stays checked that such a state
 * is still valid ApiKeyOutputs (every field added since is optional).
 */
type OutputsOf010 = Pick<ApiKeyOutputs, "alias" | "enabled" | "securityConfig" | "key" | "keyHint" | "createdAt">;
/** The inputs 0.1.0 checked: the same, without the platform's fields. */
type InputsOf010 = Pick<ApiKeyInputs, "alias" | "enabled" | "securityConfig">;

describe("states written by 0.1.0 (no rotation fields)", () => {
  test("read, diff, update and delete work unchanged, with the same calls", async () => {
    const record = emu.state.createKey("legacy", { geo: { countries: ["SG"] } });
    // Exactly the outputs 0.1.0 wrote.
    const old: OutputsOf010 = {
      alias: "legacy",
      enabled: true,
      securityConfig: { geo: { countries: ["SG"] } },
      key: record.key,
      keyHint: `sk-...${record.key.slice(-4)}`,
      createdAt: record.created_at,
    };
    const oldInputs: InputsOf010 = { alias: "legacy", enabled: true, securityConfig: { geo: { countries: ["SG"] } } };
    emu.clearRequests();
    const refreshed = found(await apiKey.read("legacy-id", old));
    expect(calls(emu)).toEqual({ "api-key/get": 1 });
    // The refresh records the state's shape version (engine/stateVersions.ts): the one field 0.1.0 did not write.
    expect(refreshed.props).toEqual({ ...old, stateVersion: 1 });
    expect(inputsAfterRefresh(refreshed, oldInputs)).toEqual(oldInputs);

    const same = await checked({ alias: "legacy", securityConfig: { geo: { countries: ["SG"] } } }, oldInputs);
    expect(same.rotationDue).toBeUndefined();
    expect((await apiKey.diff("legacy-id", old, same)).changes).toBe(false);

    emu.clearRequests();
    const renamed = await checked({ alias: "legacy2", securityConfig: { geo: { countries: ["SG"] } } }, oldInputs);
    const { outs } = await apiKey.update("legacy-id", old, renamed);
    expect(calls(emu)).toEqual({ "api-key/get": 1, "api-key/edit": 1 });
    expect(outs).toEqual({ ...old, alias: "legacy2", stateVersion: 1 });

    startFresh();
    emu.clearRequests();
    await apiKey.delete("legacy-id", old);
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
    expect(emu.state.hasKey(record.key)).toBe(false);
  });

  test("adding everyDays to an old key that is already older rotates it at the next update", async () => {
    emu.setClockOffset(-200 * DAY);
    const record = emu.state.createKey("aged");
    emu.setClockOffset(0);
    const old: OutputsOf010 = {
      alias: "aged",
      enabled: true,
      securityConfig: {},
      key: record.key,
      keyHint: "sk-...",
      createdAt: record.created_at,
    };
    emu.clearRequests();
    const after = await up(
      "aged-id",
      { outs: old, inputs: { alias: "aged", enabled: true, securityConfig: {} } },
      { alias: "aged", rotation: { everyDays: 90 } },
    );
    expect(calls(emu)).toEqual({ "api-key/get": 1, "api-key/create": 1, "api-key/delete": 1 });
    expect(after.outs.rotation).toEqual({ everyDays: 90 });
  });
});

test("no key in an id or any output but key and previousKey", async () => {
  const first = await created({ alias: "leak", rotation: { overlapHours: 2, triggers: ["a"] } });
  const after = await up(first.id, first, { alias: "leak", rotation: { overlapHours: 2, triggers: ["b"] } });
  const { key, previousKey, ...rest } = after.outs;
  expect(previousKey).toBe(first.outs.key);
  expectNoSecret(JSON.stringify(rest) + first.id, [key, previousKey!, ...secretsOf(emu)]);
});
