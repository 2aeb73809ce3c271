import { describe, expect, test } from "@jest/globals";
import { LlmAccountsClient, redact } from "../../provider/client/index.js";
import { apiKey } from "../../provider/runtime/index.js";

/** Rows 8, 9 and 14 of issue 14: credentials of any shape stay out of messages, and prefixes stay readable. */
describe("messages", () => {
  const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";

  test("a non-sk admin key (a JWT) is never echoed in the ConfigurationError", async () => {
    const client = new LlmAccountsClient({ baseUrl: "http://127.0.0.1:9", adminKey: jwt });
    const err = (await client.account.balance().catch((e: unknown) => e)) as Error;
    expect(err.name).toBe("ConfigurationError");
    for (const part of [jwt, jwt.slice(0, 20), jwt.slice(-20)]) expect(err.message).not.toContain(part);
    expect(err.message).toContain('begins with "sk-admin-"');
  });

  test("a base URL with user info is echoed without it, by the client and by check", async () => {
    for (const raw of [
      "https://user:hunter2pass@exa mple.com",
      "ftp://user:hunter2pass@example.com",
      "https://user:hunter2pass@example.com",
    ]) {
      let message = "";
      try {
        new LlmAccountsClient({ baseUrl: raw });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).not.toBe("");
      expect(message).not.toContain("hunter2pass");
      const { failures } = await apiKey.check({}, { alias: "a", connection: { baseUrl: raw } });
      expect(failures).toHaveLength(1);
      expect(JSON.stringify(failures)).not.toContain("hunter2pass");
    }
  });

  test("redaction keeps the words that describe keys readable, and masks keys", () => {
    expect(redact('must begin with "sk-admin-"')).toBe('must begin with "sk-admin-"');
    expect(redact("needs an admin key (sk-admin-...)")).toBe("needs an admin key (sk-admin-...)");
    expect(redact("the task-runner alias")).toBe("the task-runner alias");
    expect(redact("key sk-admin-abcdefgh1234 here")).toBe("key sk-admin-...1234 here");
    expect(redact("key sk-abcdefgh1234.")).toBe("key sk-...1234.");
  });
});
