import { describe, expect, test } from "@jest/globals";
import { inspect } from "node:util";
import { LlmAccountsClient } from "../../provider/client/index.js";

/** Row 4 of issue 14: every client object that holds a credential masks it in inspect, JSON and String(). */
describe("credential-holding client objects", () => {
  const adminKey = "sk-admin-" + "a".repeat(40) + "AD01";
  const accountKey = "sk-" + "b".repeat(44) + "AC02";
  const client = new LlmAccountsClient({ baseUrl: "http://127.0.0.1:9", adminKey, accountKey });
  const holders: Record<string, object> = {
    client,
    "client.apiKeys": client.apiKeys,
    "client.subAccounts": client.subAccounts,
    "client.account": client.account,
    transport: (client as unknown as { http: object }).http,
  };

  test.each(Object.keys(holders))("%s shows no key in inspect, JSON.stringify or String()", (name) => {
    const holder = holders[name];
    const forms = [inspect(holder, { depth: 10, showHidden: true }), JSON.stringify(holder), String(holder), inspect({ nested: holder }, { depth: 10 })];
    for (const text of forms) {
      for (const secret of [adminKey, accountKey, adminKey.slice(9, 30), accountKey.slice(3, 30)]) expect(text).not.toContain(secret);
      expect(text).toContain("127.0.0.1:9");
    }
  });
});
