import { afterEach, describe, expect, test } from "@jest/globals";
import { BadRequestError, LlmAccountsClient, NotFoundError } from "../../provider/client/index.js";
import { startEmulator, type Emulator, type Reading } from "../../provider/emulator/index.js";
import { apiKey, startFresh, subAccountBatch } from "../../provider/runtime/index.js";
import { checkedInputs } from "../support/check.js";

/**
 * Each reading the emulator plays is really played (the wire shows it), and the package handles it as
 * docs/decisions.md says: without a setting, or with the one the error names. Issue 35.
 */

let emu: Emulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function platform(
  readings: Reading[],
  settings: Record<string, string> = {},
): Promise<{ emu: Emulator; client: LlmAccountsClient }> {
  await emu?.close(); // a test's earlier platform, so that none is left open
  emu = await startEmulator({ port: 0, host: "127.0.0.1", rateLimits: false, readings });
  startFresh({
    stackConfig: {
      baseUrl: emu.baseUrl,
      adminKey: emu.adminKey,
      accountKey: emu.accountKey,
      rateLimits: "off",
      ...settings,
    },
    clientOverrides: { clock: { now: () => Date.now(), sleep: async () => undefined } },
  });
  const client = new LlmAccountsClient({
    baseUrl: emu.baseUrl,
    adminKey: emu.adminKey,
    accountKey: emu.accountKey,
    rateLimits: false,
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
  });
  return { emu, client };
}

/** The raw answer of one request, as the wire carries it. */
async function raw(
  e: Emulator,
  path: string,
  init: { method?: string; body?: unknown; account?: boolean } = {},
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${e.baseUrl}${path}`, {
    method: init.method ?? "POST",
    headers: {
      authorization: `Bearer ${init.account ? e.accountKey : e.adminKey}`,
      "content-type": "application/json",
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: res.status, body: await res.json() };
}

const batch = (alias: string, count = 2) =>
  checkedInputs(subAccountBatch, { alias, balance: 5, count, modelPricing: [{ model: "model-a", pricingFactor: 1 }] });

describe("each reading is played, and handled", () => {
  test("extra-fields: a create answer with an unknown entry inside security_config.ip still records the key, and delete removes it", async () => {
    const { emu: e, client } = await platform(["extra-fields"]);
    const answer = await raw(e, "/api/v1/management/api-key/create", {
      body: { alias: "x", security_config: { ip: { allow: ["10.0.0.1"] } } },
    });
    expect(answer.body).toMatchObject({ x_flag: true, security_config: { ip: { deny: ["192.0.2.1"] } } });
    const created = await client.apiKeys.create({ alias: "y", securityConfig: { ip: { allow: ["10.0.0.2"] } } });
    expect(created.securityConfig).toEqual({ ip: { allow: ["10.0.0.2"] } });
    await client.apiKeys.delete([created.key, (answer.body as { key: string }).key]);
    expect(e.state.listKeys()).toEqual([]);
  });

  test("refusals-200: a refused sub-account edit (HTTP 200, success: false) is an error, never recorded as done: the platform and the next read keep the old alias", async () => {
    const { emu: e, client } = await platform(["refusals-200", "short-aliases"]);
    expect(
      (
        await raw(e, "/api/v1/account/sub-account/token", {
          method: "DELETE",
          body: { sks: ["sk-gone"] },
          account: true,
        })
      ).body,
    ).toMatchObject({ success: false });
    await expect(client.subAccounts.delete(["sk-gone"])).rejects.toBeInstanceOf(NotFoundError);
    const made = await subAccountBatch.create(await batch("team-a"));
    // An alias the package accepts (128) and this platform refuses (32): the edit's refusal stops the update.
    const longer = await batch("a-team-alias-of-forty-characters-exactly");
    startFresh();
    await expect(subAccountBatch.update(made.id, made.outs, longer)).rejects.toThrow(
      /alias must be at most 32 characters \(answered HTTP 200 with success: false\)/,
    );
    expect(e.state.listSubAccounts().map((s) => s.alias)).toEqual(["team-a", "team-a"]);
    startFresh();
    const read = await subAccountBatch.read(made.id, made.outs);
    expect((read.props as { alias: string }).alias).toBe("team-a");
    await subAccountBatch.delete(made.id, made.outs);
    expect(e.state.listSubAccounts()).toEqual([]);
  });

  test("envelope-no-data: a destroy whose deletes are refused in a 200 {code, message} (a rate limit that lasts) fails, and the key and sub-accounts stay live; once the refusal ends, the destroy removes them", async () => {
    const { emu: e } = await platform(["envelope-no-data"]);
    const key = await apiKey.create(await checkedInputs(apiKey, { alias: "kept" }));
    const made = await subAccountBatch.create(await batch("team-a"));
    e.setFaults([{ kind: "429", ops: ["api-key/delete", "sub-account/delete"] }]);
    startFresh();
    await expect(apiKey.delete(key.id, key.outs)).rejects.toThrow(/rate_limited/);
    await expect(subAccountBatch.delete(made.id, made.outs)).rejects.toThrow(/rate_limited/);
    expect(e.state.listKeys()).toHaveLength(1);
    expect(e.state.listSubAccounts()).toHaveLength(2);
    e.setFaults([]);
    startFresh();
    await apiKey.delete(key.id, key.outs);
    await subAccountBatch.delete(made.id, made.outs);
    expect(e.state.listKeys()).toEqual([]);
    expect(e.state.listSubAccounts()).toEqual([]);
  });

  test("restricted-aliases: the tilde mark is refused, the create is sent once more under the fit mark, and the client keeps it (one create after that); createMark=fit saves the call", async () => {
    const { emu: e } = await platform(["restricted-aliases"]);
    const first = await subAccountBatch.create(await batch("team-a"));
    expect(e.calls()["sub-account/create"]).toBe(2);
    e.clearRequests();
    const second = await subAccountBatch.create(await batch("team-b"));
    expect(e.calls()["sub-account/create"]).toBe(1);
    expect(
      e.state
        .listSubAccounts()
        .map((s) => s.alias)
        .sort(),
    ).toEqual(["team-a", "team-a", "team-b", "team-b"]);
    await subAccountBatch.delete(first.id, first.outs);
    await subAccountBatch.delete(second.id, second.outs);

    const pinned = await platform(["restricted-aliases"], { createMark: "fit" });
    const third = await subAccountBatch.create(await batch("team-c"));
    expect(pinned.emu.calls()["sub-account/create"]).toBe(1);
    await subAccountBatch.delete(third.id, third.outs);
  });

  test("short-aliases: a 30-character alias, too long for the tilde mark (43), is created under the fit mark; an alias the platform refuses itself is named with the marker", async () => {
    const { emu: e } = await platform(["short-aliases"]);
    const alias = "a-thirty-character-team-alias!";
    expect(alias).toHaveLength(30);
    const made = await subAccountBatch.create(await batch(alias));
    expect(e.state.listSubAccounts().map((s) => s.alias)).toEqual([alias, alias]);
    await subAccountBatch.delete(made.id, made.outs);
    const err = await subAccountBatch.create(await batch("x".repeat(40))).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as Error).message).toMatch(
      /alias must be at most 32 characters .*the package's marked alias, not "x{40}" itself.*LLM_ACCOUNTS_CREATE_MARK or the stack config llm-accounts:createMark/,
    );
    expect(e.state.listSubAccounts()).toEqual([]);
  });

  test("small-count-cap: a batch of 50 is made in creates of 20 under one mark after one refusal, then aligned by one edit; the cap is kept; a 400 naming count is never blamed on the marker", async () => {
    const { emu: e } = await platform(["small-count-cap"]);
    const made = await subAccountBatch.create(await batch("team-big", 50));
    const creates = e.requests().filter((r) => r.op === "sub-account/create");
    expect(creates.map((r) => r.status)).toEqual([400, 200, 200, 200]);
    expect(e.calls()["sub-account/edit"]).toBe(1);
    expect(made.outs.tokens).toHaveLength(50);
    expect(e.state.listSubAccounts().filter((s) => s.alias === "team-big")).toHaveLength(50);
    e.clearRequests();
    const more = await subAccountBatch.create(await batch("team-more", 30));
    expect(
      e
        .requests()
        .filter((r) => r.op === "sub-account/create")
        .map((r) => r.status),
    ).toEqual([200, 200]);
    await subAccountBatch.delete(made.id, made.outs);
    await subAccountBatch.delete(more.id, more.outs);
    expect(e.state.listSubAccounts()).toEqual([]);

    // A count the platform refuses even alone is the platform's 400, as it came: one create, no `fit` retry, no advice about the marker.
    const direct = await platform(["small-count-cap"]);
    const err = await new LlmAccountsClient({
      baseUrl: direct.emu.baseUrl,
      adminKey: direct.emu.adminKey,
      accountKey: direct.emu.accountKey,
      rateLimits: false,
    }).subAccounts
      .create({ alias: "x", balance: 0, modelPricing: [], count: 21 })
      .catch((x: unknown) => x);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as Error).message).toMatch(/count must be at most 20/);
  });

  test("list-no-total and list-all-refused: every sub-account is read, page by page; alias-filter-prefix: the filter matches exactly all the same", async () => {
    for (const reading of ["list-no-total", "list-all-refused"] as const) {
      const { emu: e, client } = await platform([reading]);
      const made = await client.subAccounts.create({ alias: "many", balance: 1, count: 23 });
      e.clearRequests();
      expect(await client.subAccounts.list()).toHaveLength(23);
      // Pages of 7 (list-no-total: 4, and the short one ends it) or of 100 after the refusal of -1 (2 calls).
      expect(e.calls()["sub-account/list"]).toBe(reading === "list-no-total" ? 4 : 2);
      e.clearRequests();
      await client.subAccounts.list();
      // The refusal of -1 is remembered: one page of 100.
      if (reading === "list-all-refused") expect(e.calls()["sub-account/list"]).toBe(1);
      await client.subAccounts.delete(made.map((s) => s.token));
      await e.close();
    }
    const { emu: e, client } = await platform(["alias-filter-prefix"]);
    await client.subAccounts.create({ alias: "team", balance: 1, count: 1 });
    await client.subAccounts.create({ alias: "team-a", balance: 1, count: 2 });
    const answer = await raw(e, "/api/v1/account/sub-account/list?alias=team&page_size=-1", {
      method: "GET",
      account: true,
    });
    expect((answer.body as { items: unknown[] }).items).toHaveLength(3);
    expect((await client.subAccounts.list({ alias: "team" })).map((s) => s.alias)).toEqual(["team"]);
  });

  test("list-no-total with list-all-refused: an answer capped below the page asked for, without total, is read on (every sub-account, never a partial list)", async () => {
    const { emu: e, client } = await platform(["list-no-total", "list-all-refused"]);
    const made = await client.subAccounts.create({ alias: "many", balance: 1, count: 23 });
    e.clearRequests();
    expect(await client.subAccounts.list()).toHaveLength(23);
    // The refused -1, a first page of 100 capped at 7, then pages of 7 until the short one: 1 + 4.
    expect(e.calls()["sub-account/list"]).toBe(5);
    await client.subAccounts.delete(made.map((s) => s.token));
    await e.close();
  });

  test("usage-cursor: without the setting, the second page's request fails at once naming the setting; with it, every row is read", async () => {
    const { client, emu: e } = await platform(["usage-cursor"]);
    await client.apiKeys.create({ alias: "usage" });
    const end = new Date().toISOString().slice(0, 10);
    const start = new Date(Date.now() - 200 * 86_400_000).toISOString().slice(0, 10);
    e.clearRequests();
    await expect(client.account.usage({ start, end, withModel: true })).rejects.toThrow(
      /request field "page".*Set LLM_ACCOUNTS_USAGE_PAGE_FIELD or the stack config llm-accounts:usagePageField/,
    );
    expect(e.calls()["usage/summary"]).toBe(2);
    const set = new LlmAccountsClient({
      baseUrl: e.baseUrl,
      adminKey: e.adminKey,
      rateLimits: false,
      platform: { usagePageField: "cursor" },
    });
    expect((await set.account.usage({ start, end, withModel: true })).length).toBeGreaterThan(100);
  });

  test("envelope, bare-errors, terse-writes, other-forms: the wire shows each; answers are unwrapped and read, refusals are errors of their meaning", async () => {
    const { emu: e, client } = await platform(["envelope", "other-forms"]);
    expect((await raw(e, "/api/v1/management/account/balance", { body: {} })).body).toMatchObject({
      code: 0,
      data: { balance: expect.any(Number) },
    });
    const refusal = await raw(e, "/api/v1/management/api-key/get", { body: { key: "sk-nothing" } });
    expect(refusal).toMatchObject({ status: 200, body: { code: "key_not_found" } });
    await expect(client.apiKeys.get("sk-nothing")).rejects.toBeInstanceOf(NotFoundError);
    const key = await client.apiKeys.create({ alias: "env" });
    expect(key.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);
    const subs = await client.subAccounts.create({ alias: "env", balance: 2.5, count: 1 });
    expect(subs[0]).toMatchObject({ balance: "2.500000", alias: "env" });
    expect(typeof subs[0].id).toBe("number");
    await e.close();

    const bare = await platform(["bare-errors", "terse-writes"]);
    expect((await raw(bare.emu, "/api/v1/management/api-key/get", { body: { key: "sk-nothing" } })).body).toEqual({
      code: "key_not_found",
      message: expect.any(String),
    });
    await expect(bare.client.apiKeys.get("sk-nothing")).rejects.toThrow(
      /^404 key_not_found: key sk-\.\.\.\w+ does not exist/,
    );
    const k = await bare.client.apiKeys.create({ alias: "terse" });
    expect(
      (await raw(bare.emu, "/api/v1/management/api-key/status", { body: { key: k.key, enabled: true } })).body,
    ).toEqual({ success: true });
    expect(await bare.client.apiKeys.setStatus(k.key, false)).toBe(false);
    expect(bare.emu.state.getKey(k.key)?.enabled).toBe(false);
    expect(await bare.client.apiKeys.delete([k.key])).toBe(1);
    expect(bare.emu.state.listKeys()).toEqual([]);
  });
});
