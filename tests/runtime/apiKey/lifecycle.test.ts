import { describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../../provider/emulator/index.js";
import { apiKey, type ApiKeyInputs, type ApiKeyOutputs } from "../../../provider/runtime/index.js";
import { calls, useRuntimeEmulator, expectNoSecret, secretsOf } from "../../support/emulator.js";
import { found, inputsAfterRefresh } from "../../support/readOutcome.js";
import { checkedInputs } from "../../support/check.js";

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

type Props = Record<string, unknown>;

const checked = (news: Props) => checkedInputs(apiKey, news);

async function created(news: Props): Promise<{ id: string; outs: ApiKeyOutputs; inputs: ApiKeyInputs }> {
  const inputs = await checked(news);
  const { id, outs } = await apiKey.create(inputs);
  return { id, outs, inputs };
}

describe("ApiKey provider", () => {
  test("create: one api-key/create; the id is a fingerprint, never the key; the hint is masked", async () => {
    const { id, outs } = await created({ alias: "ci" });
    expect(calls(emu)).toEqual({ "api-key/create": 1 });
    expect(outs.key).toMatch(/^sk-/);
    expect(id).not.toContain(outs.key);
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    expect(outs.keyHint).toBe(`sk-...${outs.key.slice(-4)}`);
    expect(outs).toMatchObject({ alias: "ci", enabled: true, securityConfig: {} });
  });

  test("create disabled: create then one status call", async () => {
    const { outs } = await created({ alias: "off", enabled: false });
    expect(emu.requests().map((r) => r.op)).toEqual(["api-key/create", "api-key/status"]);
    expect(outs.enabled).toBe(false);
    expect(emu.state.getKey(outs.key)?.enabled).toBe(false);
  });

  test("no change: diff reports none and no call is made, whether securityConfig is omitted, null or {}", async () => {
    const { id, outs } = await created({ alias: "same" });
    emu.clearRequests();
    for (const securityConfig of [undefined, null, {}]) {
      const news = await checked({ alias: "same", securityConfig });
      expect(await apiKey.diff(id, outs, news)).toMatchObject({ changes: false, replaces: [] });
    }
    expect(emu.requests()).toHaveLength(0);
  });

  test("a state as an earlier version may have written it (no enabled, security config null or wire-spelled) is read once: no diff, no call", async () => {
    const securityConfig = { spendLimit: { monthly: 5 } };
    const { id, outs: current } = await created({ alias: "older", securityConfig });
    // Earlier versions recorded no state version: that is what tells their shape apart (engine/stateVersions.ts).
    const { stateVersion: _v, ...outs } = current;
    const news = await checked({ alias: "older", securityConfig });
    for (const written of [{ securityConfig: { spend_limit: { monthly: 5 } } }, { enabled: undefined }]) {
      const old = { ...outs, ...written } as ApiKeyOutputs;
      emu.clearRequests();
      expect(await apiKey.diff(id, old, news)).toMatchObject({ changes: false, replaces: [] });
      expect((await apiKey.update(id, old, news)).outs).toMatchObject({ enabled: true, securityConfig });
      expect(emu.requests()).toHaveLength(0);
    }
    const bare = await created({ alias: "older-bare" });
    const old = { ...bare.outs, stateVersion: undefined, securityConfig: null } as unknown as ApiKeyOutputs;
    expect(await apiKey.diff(bare.id, old, await checked({ alias: "older-bare" }))).toMatchObject({ changes: false });
    expect((await apiKey.read(bare.id, old)).props).toMatchObject({ securityConfig: {} });
  });

  test("only enabled changed: exactly one status call", async () => {
    const { id, outs } = await created({ alias: "toggle" });
    emu.clearRequests();
    const news = await checked({ alias: "toggle", enabled: false });
    expect((await apiKey.diff(id, outs, news)).changes).toBe(true);
    const { outs: after } = await apiKey.update(id, outs, news);
    expect(calls(emu)).toEqual({ "api-key/status": 1 });
    expect(after.enabled).toBe(false);
    expect(after.key).toBe(outs.key);
  });

  test("alias or securityConfig changed: exactly one edit with the whole configuration", async () => {
    const { id, outs } = await created({ alias: "edit", securityConfig: { geo: { countries: ["CN"] } } });
    emu.clearRequests();
    const news = await checked({ alias: "edit2", securityConfig: { geo: { countries: ["CN"] } } });
    const { outs: after } = await apiKey.update(id, outs, news);
    // One get first (spec 4.3: get, change, post back): what the console set since the state was written is kept.
    expect(calls(emu)).toEqual({ "api-key/get": 1, "api-key/edit": 1 });
    expect(emu.state.getKey(outs.key)).toMatchObject({
      alias: "edit2",
      security_config: { geo: { countries: ["CN"] } },
    });
    expect(after.alias).toBe("edit2");
  });

  test("both changed: edit then status", async () => {
    const { id, outs } = await created({ alias: "both" });
    emu.clearRequests();
    await apiKey.update(
      id,
      outs,
      await checked({ alias: "both2", enabled: false, securityConfig: { spendLimit: { monthly: 3 } } }),
    );
    expect(emu.requests().map((r) => r.op)).toEqual(["api-key/get", "api-key/edit", "api-key/status"]);
  });

  test("another base URL: replacement; a new adoptKey is never one: the diff (preview) fails naming adoptKey, masked", async () => {
    const { id, outs } = await created({ alias: "r" });
    const other = emu.state.createKey("console").key;
    const err = (await apiKey
      .diff(id, outs, await checked({ alias: "r", adoptKey: other }))
      .catch((e: Error) => e)) as Error;
    expect(err.message).toBe(
      `adoptKey: sk-...${other.slice(-4)} is neither this resource's key, its previous key, nor the key it adopted; ` +
        "adoptKey takes over a key only when the resource is created: to manage another key, declare another resource",
    );
    expectNoSecret(String(err) + err.stack, [other, outs.key]);
    expect(
      (await apiKey.diff(id, outs, await checked({ alias: "r", connection: { baseUrl: "https://other.example.com" } })))
        .replaces,
    ).toEqual(["connection"]);
  });

  test("adoptKey after adoption: removed, or given as the key itself, changes nothing (no diff, no call); the state keeps it", async () => {
    const console = emu.state.createKey("kept").key;
    const { id, outs } = await created({ alias: "kept", adoptKey: console });
    emu.clearRequests();
    for (const adoptKey of [undefined, console]) {
      expect(await apiKey.diff(id, outs, await checked({ alias: "kept", adoptKey }))).toEqual({
        changes: false,
        replaces: [],
        deleteBeforeReplace: false,
      });
    }
    // An update for another reason keeps the adopted key in the state, whatever the input says.
    const { outs: renamed } = await apiKey.update(id, outs, await checked({ alias: "kept-2" }));
    expect(renamed.adoptKey).toBe(console);
    expect(calls(emu)).toEqual({ "api-key/get": 1, "api-key/edit": 1 });
  });

  test("a created key given its own value as adoptKey later: no change", async () => {
    const { id, outs } = await created({ alias: "own" });
    expect((await apiKey.diff(id, outs, await checked({ alias: "own", adoptKey: outs.key }))).changes).toBe(false);
  });

  test("read: one get; drift shows in the outputs; the key is carried forward", async () => {
    const { id, outs } = await created({ alias: "drift" });
    emu.state.disableKey(outs.key);
    emu.state.editKey(outs.key, "renamed", { geo: { countries: ["SG"] } });
    emu.clearRequests();
    const read = await apiKey.read(id, outs);
    expect(calls(emu)).toEqual({ "api-key/get": 1 });
    if (!("inputs" in read)) throw new Error("the key read as gone");
    expect(read.id).toBe(id);
    expect(read.props).toMatchObject({
      alias: "renamed",
      enabled: false,
      securityConfig: { geo: { countries: ["SG"] } },
      key: outs.key,
    });
    // The inputs are the platform's values too (so previews show old => new), and never hold the key.
    expect(read.inputs).toEqual({ alias: "renamed", enabled: false, securityConfig: { geo: { countries: ["SG"] } } });
    const news = await checked({ alias: "drift" });
    expect((await apiKey.diff(id, read.props, news)).changes).toBe(true);
  });

  test("read: nothing drifted, no inputs: the engine keeps those check stored (a gate shows nothing)", async () => {
    const { id, outs, inputs } = await created({ alias: "calm", securityConfig: { spendLimit: { monthly: 4 } } });
    expect(inputsAfterRefresh(found(await apiKey.read(id, outs)), inputs)).toEqual(inputs);
  });

  test("read with drift never returns adoptKey among the inputs: the engine would store it in plain text when the program no longer gives it", async () => {
    const console = emu.state.createKey("adopted-drift").key;
    const { id, outs } = await created({ alias: "adopted-drift", adoptKey: console });
    emu.state.disableKey(console);
    const read = found(await apiKey.read(id, outs));
    expect(read.inputs).toEqual({ alias: "adopted-drift", enabled: false, securityConfig: {} });
    expect(read.props.adoptKey).toBe(console);
  });

  test("read of a key deleted elsewhere: an empty id", async () => {
    const { id, outs } = await created({ alias: "gone" });
    emu.state.deleteKey(outs.key);
    expect(await apiKey.read(id, outs)).toEqual({ id: "", props: {} });
  });

  test("N concurrent deletes go out in one api-key/delete call", async () => {
    const keys = await Promise.all(Array.from({ length: 40 }, (_, i) => created({ alias: `bulk-${i}` })));
    emu.clearRequests();
    await Promise.all(keys.map((k) => apiKey.delete(k.id, k.outs)));
    expect(calls(emu)).toEqual({ "api-key/delete": 1 });
    for (const k of keys) expect(emu.state.hasKey(k.outs.key)).toBe(false);
  });

  test("a key already gone counts as deleted; the rejected batch is split to isolate it", async () => {
    const keys = await Promise.all(Array.from({ length: 8 }, (_, i) => created({ alias: `split-${i}` })));
    emu.state.deleteKey(keys[5].outs.key);
    emu.clearRequests();
    await Promise.all(keys.map((k) => apiKey.delete(k.id, k.outs)));
    for (const k of keys) expect(emu.state.hasKey(k.outs.key)).toBe(false);
    // 1 rejected batch of 8, then halves: 4 ok + 4 rejected, 2 ok + 2 rejected, 1 ok + 1 gone.
    expect(calls(emu)["api-key/delete"]).toBe(7);
  });

  test("a delete fails when the platform does not confirm it, and the key stays", async () => {
    const { id, outs } = await created({ alias: "keep" });
    emu.setFaults([{ kind: "500", ops: ["api-key/delete"] }]);
    await expect(apiKey.delete(id, outs)).rejects.toMatchObject({ status: 500 });
    expect(emu.state.hasKey(outs.key)).toBe(true);
  });

  test("adoptKey: one get, then only what differs (edit, status)", async () => {
    const console = emu.state.createKey("console-made", { geo: { countries: ["CN"] } }).key;
    emu.clearRequests();
    const { id, outs } = await created({
      alias: "console-made",
      adoptKey: console,
      securityConfig: { geo: { countries: ["CN"] } },
    });
    expect(calls(emu)).toEqual({ "api-key/get": 1 });
    expect(outs.key).toBe(console);
    expect(id).not.toContain(console);
    emu.clearRequests();
    const other = emu.state.createKey("other").key;
    await created({ alias: "adopted", adoptKey: other, enabled: false });
    expect(emu.requests().map((r) => r.op)).toEqual(["api-key/get", "api-key/edit", "api-key/status"]);
  });

  test("adoptKey of a key that does not exist fails without changing anything, and without the key in the message", async () => {
    const missing = "sk-" + "m".repeat(44) + "abcd";
    const err = await created({ alias: "x", adoptKey: missing }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/adoptKey: the key sk-\.\.\.abcd does not exist/);
    expect((err as Error).message).toContain("remove adoptKey: the next up creates a new key");
    expectNoSecret(String(err), [missing]);
  });

  test("create disabled whose status call fails removes the key again: nothing is left behind", async () => {
    emu.setFaults([{ kind: "500", ops: ["api-key/status"] }]);
    const before = emu.state.listKeys().length;
    await expect(created({ alias: "half", enabled: false })).rejects.toThrow(/deleted again.*re-run/);
    expect(emu.state.listKeys().length).toBe(before);
  });

  test("create disabled whose status and clean-up both fail: recorded as created-but-failed, the key only in non-enumerable properties", async () => {
    emu.setFaults([{ kind: "500", ops: ["api-key/status", "api-key/delete"] }]);
    const err = (await created({ alias: "stuck", enabled: false }).catch((e: unknown) => e)) as Error & {
      id?: string;
      properties?: ApiKeyOutputs;
      reasons?: string[];
    };
    const stuck = emu.state.listKeys().find((k) => k.alias === "stuck")!;
    expect(err.id).toMatch(/^[0-9a-f]{24}$/);
    expect(err.properties?.key).toBe(stuck.key);
    expect(err.properties?.enabled).toBe(true);
    expect(err.reasons?.[0]).toMatch(/created but could not be disabled/);
    expectNoSecret(JSON.stringify(err) + String(err) + err.stack, [stuck.key]);
    emu.setFaults([]);
    // The next update brings it to the declared state.
    await apiKey.update(err.id!, err.properties!, await checked({ alias: "stuck", enabled: false }));
    expect(emu.state.getKey(stuck.key)?.enabled).toBe(false);
  });

  test("outputs hold the key only in `key` (the secret output)", async () => {
    const { id, outs } = await created({ alias: "where" });
    const { key, ...rest } = outs;
    expectNoSecret(JSON.stringify(rest) + id, [key, ...secretsOf(emu)]);
  });
});
