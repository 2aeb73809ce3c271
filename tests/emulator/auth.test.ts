import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { OPERATIONS, type OperationId } from "../../provider/api/operations.js";
import { startEmulator, type Emulator } from "../../provider/emulator/index.js";
import { call, ok } from "../support/emulatorCalls.js";

let emu: Emulator;
let apiKey: string;
let subAccountToken: string;

beforeAll(async () => {
  emu = await startEmulator({ rateLimits: false });
  apiKey = (await ok(emu, "createApiKey", { alias: "auth" })).key;
  subAccountToken = (await ok(emu, "createSubAccounts", { alias: "auth", balance: 1, count: 1 })).items[0].token;
});
afterAll(() => emu.close());

const ids = Object.keys(OPERATIONS) as OperationId[];
const named = (group: string) =>
  ids.filter((id) => OPERATIONS[id].group === group).map((id) => [OPERATIONS[id].name, id] as const);
const management = named("management");
const subAccount = named("sub-account");

function wrongCredentials(): [string, string | null][] {
  return [
    ["no Authorization header", null],
    ["an unknown admin key", "sk-admin-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"],
    ["an API key", apiKey],
    ["a sub-account token", subAccountToken],
  ];
}

describe("management group", () => {
  it.each(management)("%s answers 401 unauthorized to every credential but the admin key", async (_name, id) => {
    for (const [, credential] of [...wrongCredentials(), ["the account key", emu.accountKey] as [string, string]]) {
      const answer = await call(emu, id, {}, { credential });
      expect(answer.status).toBe(401);
      expect(answer.json.error.code).toBe("unauthorized");
      expect(typeof answer.json.error.message).toBe("string");
    }
  });

  it("accepts the admin key with any case of the Bearer scheme", async () => {
    const res = await fetch(emu.baseUrl + OPERATIONS.balance.path, {
      method: "POST",
      headers: { authorization: `bearer ${emu.adminKey}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(200);
  });

  it("refuses a Basic scheme carrying the admin key", async () => {
    const res = await fetch(emu.baseUrl + OPERATIONS.balance.path, {
      method: "POST",
      headers: { authorization: `Basic ${emu.adminKey}` },
      body: "{}",
    });
    expect(res.status).toBe(401);
  });
});

describe("sub-account group", () => {
  it.each(subAccount)("%s answers 401 unauthorized to every credential but the main account key", async (_name, id) => {
    for (const [, credential] of [...wrongCredentials(), ["the admin key", emu.adminKey] as [string, string]]) {
      const answer = await call(emu, id, {}, { credential });
      expect(answer.status).toBe(401);
      expect(answer.json.error.code).toBe("unauthorized");
    }
  });
});

describe("order of checks", () => {
  it("checks auth before validation: an invalid body without credentials is a 401, not a 400", async () => {
    const answer = await call(emu, "createApiKey", {}, { credential: null, rawBody: "not json" });
    expect(answer.status).toBe(401);
  });

  it("never puts a key into a 401 message", async () => {
    const answer = await call(emu, "getApiKey", { key: apiKey }, { credential: apiKey });
    expect(answer.text).not.toContain(apiKey);
    expect(answer.text).not.toContain(emu.adminKey);
  });

  it("logs rejected requests with their operation and status 401", async () => {
    emu.clearRequests();
    await call(emu, "deleteSubAccounts", { sks: [subAccountToken] }, { credential: emu.adminKey });
    expect(emu.requests()).toEqual([
      expect.objectContaining({
        op: "sub-account/delete",
        method: "DELETE",
        status: 401,
        path: OPERATIONS.deleteSubAccounts.path,
      }),
    ]);
    expect(emu.state.hasSubAccount(subAccountToken)).toBe(true);
  });
});
