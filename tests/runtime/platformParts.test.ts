import { describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../provider/emulator/index.js";
import { apiKey, type ApiKeyOutputs } from "../../provider/runtime/index.js";
import { checkedInputs } from "../support/check.js";
import { calls, useRuntimeEmulator } from "../support/emulator.js";
import { found } from "../support/readOutcome.js";

// A restriction the platform has and the spec does not show (the emulator's `hours`, set in its web console): the
// package cannot declare it, and an edit replaces the whole security config (spec 4.3), so every write of the key
// sends it back as the platform showed it. Before, an alias change removed it without a word.

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

const HOURS = { from: "08:00", to: "18:00", zone: "Asia/Shanghai" };
const checked = (news: Record<string, unknown>) => checkedInputs(apiKey, news);

/** A key as the console leaves it: geo declared by the program, office hours set by hand. */
function consoleKey(alias: string): string {
  const { key } = emu.state.createKey(alias, { geo: { countries: ["SG"] } });
  emu.state.editKey(key, alias, { geo: { countries: ["SG"] }, hours: HOURS });
  return key;
}

describe("restrictions the package does not know are kept", () => {
  test("adoption that renames the key: one edit, the console's hours still on the key; the state records them", async () => {
    const key = consoleKey("console");
    emu.clearRequests();
    const { outs } = await apiKey.create(
      await checked({ alias: "ci", securityConfig: { geo: { countries: ["SG"] } }, adoptKey: key }),
    );
    expect(calls(emu)).toEqual({ "api-key/get": 1, "api-key/edit": 1 });
    expect(emu.state.getKey(key)?.security_config).toEqual({ geo: { countries: ["SG"] }, hours: HOURS });
    expect(emu.state.getKey(key)?.alias).toBe("ci");
    expect(JSON.parse(outs.platformParts!)).toEqual({ hours: HOURS });
  });

  test("an update of alias and security config keeps them; a declared part changes as declared", async () => {
    const key = consoleKey("a");
    const { id, outs } = await apiKey.create(
      await checked({ alias: "a", securityConfig: { geo: { countries: ["SG"] } }, adoptKey: key }),
    );
    emu.clearRequests();
    const news = await checked({
      alias: "b",
      securityConfig: { geo: { countries: ["DE"] }, spendLimit: { monthly: 5 } },
    });
    const { outs: after } = await apiKey.update(id, outs, news);
    // One get first: an edit replaces the whole config, and the console may have changed it since the state was written.
    expect(calls(emu)).toEqual({ "api-key/get": 1, "api-key/edit": 1 });
    expect(emu.state.getKey(key)?.security_config).toEqual({
      geo: { countries: ["DE"] },
      spend_limit: { monthly: 5 },
      hours: HOURS,
    });
    expect(after.platformParts).toBe(outs.platformParts);
  });

  test("a refresh takes them as the console changed them (no drift shown: nothing declares them); the next edit sends those", async () => {
    const { id, outs } = await apiKey.create(await checked({ alias: "r" }));
    expect(outs.platformParts).toBeUndefined();
    const later = { from: "00:00", to: "06:00" };
    emu.state.editKey(outs.key, "r", { hours: later });
    const read = found(await apiKey.read(id, outs));
    expect(read.inputs).toBeUndefined();
    expect(JSON.parse(read.props.platformParts!)).toEqual({ hours: later });
    await apiKey.update(id, read.props, await checked({ alias: "r2" }));
    expect(emu.state.getKey(outs.key)?.security_config).toEqual({ hours: later });
  });

  test("the same restrictions answered with their fields in another order read the same (canonical JSON): a refresh changes nothing", async () => {
    const key = consoleKey("order");
    const { id, outs } = await apiKey.create(
      await checked({ alias: "order", securityConfig: { geo: { countries: ["SG"] } }, adoptKey: key }),
    );
    emu.state.editKey(key, "order", {
      hours: { zone: HOURS.zone, to: HOURS.to, from: HOURS.from },
      geo: { countries: ["SG"] },
    });
    const read = found(await apiKey.read(id, outs));
    expect(read.props.platformParts).toBe(outs.platformParts);
    expect(read.inputs).toBeUndefined();
  });

  test("a rotation gives the new key the old key's hours", async () => {
    const key = consoleKey("rot");
    const declared = { alias: "rot", securityConfig: { geo: { countries: ["SG"] } }, rotation: { triggers: ["t1"] } };
    const first = await checked({ ...declared, adoptKey: key });
    const { id, outs } = await apiKey.create(first);
    emu.clearRequests();
    const rotated = await apiKey.update(
      id,
      outs,
      await checkedInputs(apiKey, { ...declared, rotation: { triggers: ["t2"] } }, first),
    );
    expect(rotated.outs.key === key).toBe(false);
    expect(emu.requests().filter((r) => r.op === "api-key/create")).toHaveLength(1);
    expect(emu.state.getKey(rotated.outs.key)?.security_config).toEqual({ geo: { countries: ["SG"] }, hours: HOURS });
  });

  test("a whole part the platform shows but refuses as input (400 naming it): never sent without it (that would remove it); the update stops naming it, the key unchanged", async () => {
    const { id, outs } = await apiKey.create(await checked({ alias: "n" }));
    // The console (the emulator's state, under its own validation) holds a part the create and edit endpoints refuse.
    emu.state.editKey(outs.key, "n", { hours: HOURS, note: "set by support" });
    const read = found(await apiKey.read(id, outs));
    emu.clearRequests();
    const err = (await apiKey.update(id, read.props, await checked({ alias: "n2" })).then(
      () => new Error("updated"),
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toMatch(
      /400.*security_config\.note.*would remove it from the key, so nothing was changed.*web console/s,
    );
    expect(emu.requests().map((r) => [r.op, r.status])).toEqual([
      ["api-key/get", 200],
      ["api-key/edit", 400],
    ]);
    expect(emu.state.getKey(outs.key)).toMatchObject({
      alias: "n",
      security_config: { hours: HOURS, note: "set by support" },
    });
    expect(err.message).not.toContain(outs.key);
  });

  test("hours set in the console since the last refresh: a rename reads the key first (an edit replaces the whole config) and keeps them", async () => {
    const { id, outs } = await apiKey.create(
      await checked({ alias: "late", securityConfig: { geo: { countries: ["SG"] } } }),
    );
    emu.state.editKey(outs.key, "late", { geo: { countries: ["SG"] }, hours: HOURS });
    emu.clearRequests();
    const { outs: after } = await apiKey.update(
      id,
      outs,
      await checked({ alias: "late2", securityConfig: { geo: { countries: ["SG"] } } }),
    );
    expect(calls(emu)).toEqual({ "api-key/get": 1, "api-key/edit": 1 });
    expect(emu.state.getKey(outs.key)).toMatchObject({
      alias: "late2",
      security_config: { geo: { countries: ["SG"] }, hours: HOURS },
    });
    expect(JSON.parse(after.platformParts!)).toEqual({ hours: HOURS });
  });

  test("hours set in the console since the last refresh: a rotation reads the old key first and gives the successor them", async () => {
    const declared = { alias: "rot-late", rotation: { triggers: ["t1"] } };
    const first = await checked(declared);
    const { id, outs } = await apiKey.create(first);
    emu.state.editKey(outs.key, "rot-late", { hours: HOURS });
    const rotated = await apiKey.update(
      id,
      outs,
      await checkedInputs(apiKey, { ...declared, rotation: { triggers: ["t2"] } }, first),
    );
    expect(rotated.outs.key === outs.key).toBe(false);
    expect(emu.state.getKey(rotated.outs.key)?.security_config).toEqual({ hours: HOURS });
    expect(JSON.parse(rotated.outs.platformParts!)).toEqual({ hours: HOURS });
  });

  test("a field the console set inside a known part (spend_limit.daily beside monthly) is the platform's: kept in the state, sent back beside the declared monthly", async () => {
    const { id, outs } = await apiKey.create(
      await checked({ alias: "daily", securityConfig: { spendLimit: { monthly: 100 } } }),
    );
    emu.state.editKey(outs.key, "daily", { spend_limit: { monthly: 100, daily: 5 } });
    const read = found(await apiKey.read(id, outs));
    expect(read.inputs).toBeUndefined();
    expect(JSON.parse(read.props.platformParts!)).toEqual({ spend_limit: { daily: 5 } });
    await apiKey.update(
      id,
      read.props,
      await checked({ alias: "daily2", securityConfig: { spendLimit: { monthly: 50 } } }),
    );
    expect(emu.state.getKey(outs.key)).toMatchObject({
      alias: "daily2",
      security_config: { spend_limit: { monthly: 50, daily: 5 } },
    });
    // Leaving the part out is no spend limit (the part is the user's to declare): the console's daily goes with it.
    await apiKey.update(id, read.props, await checked({ alias: "daily3" }));
    expect(emu.state.getKey(outs.key)?.security_config).toEqual({});
  });

  test("a 400 naming a field inside a restriction sent back (hours.updated_at: read-only): the edit is sent again without that field only, the restriction kept", async () => {
    const { id, outs } = await apiKey.create(await checked({ alias: "ro" }));
    emu.state.editKey(outs.key, "ro", { hours: { ...HOURS, updated_at: "2026-11-27T10:00:00Z" } });
    const read = found(await apiKey.read(id, outs));
    emu.clearRequests();
    await apiKey.update(id, read.props, await checked({ alias: "ro2" }));
    expect(emu.requests().map((r) => [r.op, r.status])).toEqual([
      ["api-key/get", 200],
      ["api-key/edit", 400],
      ["api-key/edit", 200],
    ]);
    expect(emu.state.getKey(outs.key)).toMatchObject({ alias: "ro2", security_config: { hours: HOURS } });
  });

  test("a state written before 2026-11-26 (no platformParts) reads as none: no diff, no call", async () => {
    const { id, outs } = await apiKey.create(await checked({ alias: "old" }));
    const { platformParts: _none, ...old } = outs;
    emu.clearRequests();
    expect(await apiKey.diff(id, old as ApiKeyOutputs, await checked({ alias: "old" }))).toMatchObject({
      changes: false,
    });
    expect(emu.requests()).toHaveLength(0);
  });
});
