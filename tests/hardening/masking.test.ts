import { describe, expect, test } from "@jest/globals";
import { inspect } from "node:util";
import { redact } from "../../provider/api/redact.js";
import { AdminKeySchema, KeySchema } from "../../provider/api/schemas/index.js";
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
    const forms = [
      inspect(holder, { depth: 10, showHidden: true }),
      JSON.stringify(holder),
      String(holder),
      inspect({ nested: holder }, { depth: 10 }),
    ];
    for (const text of forms) {
      for (const secret of [adminKey, accountKey, adminKey.slice(9, 30), accountKey.slice(3, 30)])
        expect(text).not.toContain(secret);
      expect(text).toContain("127.0.0.1:9");
    }
  });
});

/** Row 13 of issue 23: keys with `.`, `/`, `+` or `=`, which the key schema accepts, are masked whole. */
describe("keys of every accepted character", () => {
  test.each([
    ["sk-abc.def/ghi+jkl=", "sk-...jkl="],
    ["sk-abcdefgh.ijklmnop", "sk-...mnop"],
    ["sk-ab/cdefghijkl+mnopqr==", "sk-...qr=="],
    ["sk-admin-ab~cd.ef/gh+ij", "sk-admin-...h+ij"],
  ])("%s is masked as %s, in a sentence too", (key, masked) => {
    expect(KeySchema.safeParse(key).success || AdminKeySchema.safeParse(key).success).toBe(true);
    expect(redact(`key ${key} failed`)).toBe(`key ${masked} failed`);
    expect(redact(`(${key}).`)).toBe(`(${masked}).`);
    expect(redact(`the key was ${key}.`)).toBe(`the key was ${masked}.`);
  });

  test("a key of any other character is refused by the key schemas, naming the rule and not the key", () => {
    for (const key of [
      "sk-abcdef:ghijkl",
      "sk-abcdef ghijkl",
      "sk-abcdefghijkl\n",
      "sk-abcdéfghijkl",
      'sk-abc"defghijk',
    ]) {
      const parsed = KeySchema.safeParse(key);
      expect(parsed.success).toBe(false);
      expect(parsed.error!.issues[0].message).toBe(
        "must hold only letters, digits and - . _ ~ + / = (no space, line break or other character)",
      );
    }
    expect(AdminKeySchema.safeParse("sk-admin-abc,def").success).toBe(false);
  });
});
