import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmulator, type Emulator } from "../../provider/emulator/index.js";
import { call, ok } from "../support/emulatorCalls.js";

let dir: string;
let file: string;
const running: Emulator[] = [];

async function start(options: Parameters<typeof startEmulator>[0] = {}): Promise<Emulator> {
  const emu = await startEmulator({ rateLimits: false, stateFile: file, ...options });
  running.push(emu);
  return emu;
}

async function saved(): Promise<any> {
  return JSON.parse(await readFile(file, "utf8"));
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "llm-emulator-"));
  file = join(dir, "state.json");
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
  await rm(dir, { recursive: true, force: true });
});

describe("state file", () => {
  it("keeps keys, sub-accounts, id counters, balance and generated credentials across a restart", async () => {
    const first = await start();
    const { key } = await ok(first, "createApiKey", {
      alias: "durable",
      security_config: { geo: { countries: ["DE"] } },
    });
    await ok(first, "setApiKeyStatus", { key, enabled: false });
    const subs = (await ok(first, "createSubAccounts", { alias: "team", balance: 5, count: 2 })).items;
    first.state.setBalance(42.25);
    await first.close();

    const second = await start();
    expect(second.adminKey).toBe(first.adminKey);
    expect(second.accountKey).toBe(first.accountKey);
    expect(await ok(second, "getApiKey", { key })).toMatchObject({
      alias: "durable",
      enabled: false,
      security_config: { geo: { countries: ["DE"] } },
    });
    expect((await ok(second, "listSubAccounts", { page_size: -1 })).items).toEqual(subs);
    expect((await ok(second, "createSubAccounts", { alias: "more", balance: 0, count: 1 })).items[0].id).toBe(3);
    expect(await ok(second, "balance")).toEqual({ balance: "42.250000" });
  });

  it("keeps a key's restrictions the spec does not show across a restart, and reads null as none", async () => {
    const first = await start();
    const { key } = await ok(first, "createApiKey", {
      alias: "hours",
      security_config: { hours: { from: "08:00", to: "18:00" } },
    });
    const { key: bare } = await ok(first, "createApiKey", { alias: "bare" });
    await first.close();
    const written = await saved();
    written.api_keys.find((k: { key: string }) => k.key === bare).security_config = null;
    await writeFile(file, JSON.stringify(written));
    const second = await start();
    expect((await ok(second, "getApiKey", { key })).security_config).toEqual({ hours: { from: "08:00", to: "18:00" } });
    expect((await ok(second, "getApiKey", { key: bare })).security_config).toEqual({});
  });

  it("has the change on disk before the answer is sent", async () => {
    const emu = await start();
    const { key } = await ok(emu, "createApiKey", { alias: "written" });
    expect((await saved()).api_keys.map((k: any) => k.key)).toEqual([key]);
    await ok(emu, "deleteApiKeys", { keys: [key] });
    expect((await saved()).api_keys).toEqual([]);
  });

  it("holds every change of many concurrent requests", async () => {
    const emu = await start();
    const created = await Promise.all(
      Array.from({ length: 25 }, (_, i) => ok(emu, "createApiKey", { alias: `k${i}` })),
    );
    expect(new Set((await saved()).api_keys.map((k: any) => k.key))).toEqual(new Set(created.map((c) => c.key)));
  });

  it("writes the file with mode 0600 and leaves no temporary file behind", async () => {
    const emu = await start();
    await ok(emu, "createApiKey", { alias: "x" });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(["state.json"]);
  });

  it("saves the generated credentials at start, before any change", async () => {
    const emu = await start();
    expect(await saved()).toMatchObject({ admin_key: emu.adminKey, account_key: emu.accountKey });
  });

  it("uses credentials given as options over those in the file", async () => {
    await (await start()).close();
    const adminKey = "sk-admin-GivenGivenGivenGivenGivenGivenGi";
    const emu = await start({ adminKey });
    expect(emu.adminKey).toBe(adminKey);
    expect((await call(emu, "balance")).status).toBe(200);
  });

  it("saves out-of-band changes made through state", async () => {
    const emu = await start();
    const record = emu.state.createKey("oob");
    emu.state.disableKey(record.key);
    await emu.state.flush();
    expect((await saved()).api_keys).toEqual([expect.objectContaining({ key: record.key, enabled: false })]);
  });

  it("keeps a change whose answer was lost (drop-after)", async () => {
    const emu = await start({ faults: [{ kind: "drop-after" }] });
    await expect(call(emu, "createApiKey", { alias: "lost-answer" })).rejects.toThrow();
    await emu.close();
    const again = await start();
    expect(again.state.listKeys().map((k) => k.alias)).toEqual(["lost-answer"]);
  });

  // Issue 23 row 12: the file was checked for its shape only.
  describe("refuses a state file whose parts contradict each other, naming the field and never a key", () => {
    async function savedState(): Promise<any> {
      const emu = await start();
      const { key } = await ok(emu, "createApiKey", { alias: "kept" });
      await ok(emu, "createSubAccounts", { alias: "team", balance: 1, count: 2 });
      await emu.close();
      running.splice(running.indexOf(emu), 1);
      return { ...(await saved()), key };
    }

    async function refused(
      state: any,
      field: string,
      options: Parameters<typeof startEmulator>[0] = {},
    ): Promise<void> {
      const { key: _key, ...snapshot } = state;
      await writeFile(file, JSON.stringify(snapshot));
      const before = await readFile(file, "utf8");
      const err = await startEmulator({ stateFile: file, ...options }).then(
        (emu) => {
          running.push(emu);
          return undefined;
        },
        (e: Error) => e,
      );
      expect(err?.message).toContain(field);
      for (const secret of [state.admin_key, state.account_key, state.key])
        expect(err?.message).not.toContain(secret.slice(3));
      expect(await readFile(file, "utf8")).toBe(before);
    }

    it("an admin key equal to the account key (it opened the management group with the account key)", async () => {
      const state = await savedState();
      await refused({ ...state, admin_key: state.account_key }, "admin_key: must be an admin key");
    });

    it("a secret used twice: an API key that is the account key, a token that is an API key", async () => {
      const state = await savedState();
      await refused(
        { ...state, api_keys: [{ ...state.api_keys[0], key: state.account_key }] },
        "api_keys.0.key: is the same key as account_key",
      );
      const [first, second] = state.sub_accounts;
      await refused(
        { ...state, sub_accounts: [first, { ...second, token: state.key }] },
        "sub_accounts.1.token: is the same key as api_keys.0.key",
      );
    });

    it("ids reused: two sub-accounts with one id or user id, and counters not past the ids in use", async () => {
      const state = await savedState();
      const [first, second] = state.sub_accounts;
      await refused(
        { ...state, sub_accounts: [first, { ...second, id: first.id }] },
        "sub_accounts.1.id: is the same id as sub_accounts.0.id",
      );
      await refused(
        { ...state, sub_accounts: [first, { ...second, user_id: first.user_id }] },
        "sub_accounts.1.user_id: is the same user id as sub_accounts.0.user_id",
      );
      await refused(
        { ...state, next_sub_account_id: 2 },
        "next_sub_account_id: must be above the highest id in use (2)",
      );
      await refused(
        { ...state, next_user_id: first.user_id },
        "next_user_id: must be above the highest user id in use",
      );
    });

    it("a key given as an option that is already a key of the file", async () => {
      const state = await savedState();
      await refused(state, "the keys given do not go with state file", { accountKey: state.key });
      await refused(state, "api_keys.0.key: is the same key as account_key", { accountKey: state.key });
    });

    it("a consistent file still loads, and its next sub-account gets a new id", async () => {
      const state = await savedState();
      const { key: _key, ...snapshot } = state;
      await writeFile(file, JSON.stringify(snapshot));
      const emu = await start();
      expect((await ok(emu, "createSubAccounts", { alias: "more", balance: 0, count: 1 })).items[0].id).toBe(3);
    });
  });

  it("refuses to start from a file that is not an emulator state", async () => {
    await writeFile(file, JSON.stringify({ hello: "world" }));
    await expect(startEmulator({ stateFile: file })).rejects.toThrow(/is not an emulator state/);
    await writeFile(file, "{not json");
    await expect(startEmulator({ stateFile: file })).rejects.toThrow(/is not JSON/);
  });
});
