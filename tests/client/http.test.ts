import { describe, expect, test } from "@jest/globals";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  ConfigurationError,
  ConnectionError,
  LlmAccountsClient,
  parseBaseUrl,
  RateLimitError,
  ResponseValidationError,
  UnknownAnswerError,
  TimeoutError,
} from "../../provider/client/index.js";
import { PACKAGE } from "../../provider/version.js";
import { calls, clientOf, emulator } from "../support/emulator.js";

const ADMIN = "sk-admin-" + "h".repeat(32);

/** A bare server that records what reaches it and answers with `respond`. */
async function recorder(
  respond: (path: string) => { status: number; headers?: Record<string, string>; body?: string },
) {
  const seen: { path: string; headers: IncomingHttpHeaders }[] = [];
  const server: Server = createServer((req, res) => {
    seen.push({ path: req.url ?? "", headers: req.headers });
    const r = respond(req.url ?? "");
    res.writeHead(r.status, r.headers).end(r.body ?? "");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("transport", () => {
  test("base URL: https, or http on loopback only; a missing one says what to set", () => {
    expect(parseBaseUrl("https://api.example.com").origin).toBe("https://api.example.com");
    expect(parseBaseUrl("http://127.0.0.1:8787").origin).toBe("http://127.0.0.1:8787");
    expect(parseBaseUrl("http://localhost:1").hostname).toBe("localhost");
    expect(() => parseBaseUrl("http://api.example.com")).toThrow(ConfigurationError);
    expect(() => parseBaseUrl(undefined)).toThrow(/LLM_ACCOUNTS_BASE_URL.*llm-accounts:baseUrl/);
    expect(() => parseBaseUrl("https://user:pw@api.example.com")).toThrow(/credentials/);
  });

  test("redirects are not followed, so the bearer token never reaches another origin", async () => {
    const target = await recorder(() => ({ status: 200, body: "{}" }));
    const redirector = await recorder(() => ({ status: 307, headers: { location: `${target.url}/steal` } }));
    try {
      const client = new LlmAccountsClient({ baseUrl: redirector.url, adminKey: ADMIN });
      await expect(client.account.balance()).rejects.toMatchObject({ code: "redirect_refused", status: 307 });
      expect(target.seen).toHaveLength(0);
    } finally {
      await target.close();
      await redirector.close();
    }
  });

  test("every request carries a User-Agent naming the package and version, and the bearer credential", async () => {
    const server = await recorder(() => ({ status: 200, body: JSON.stringify({ balance: "1.000000" }) }));
    try {
      await new LlmAccountsClient({ baseUrl: server.url, adminKey: ADMIN }).account.balance();
      expect(server.seen[0].headers["user-agent"]).toContain(`pulumi-llm-accounts/${PACKAGE.version}`);
      expect(server.seen[0].headers.authorization).toBe(`Bearer ${ADMIN}`);
      expect(server.seen[0].path).toBe("/api/v1/management/account/balance");
    } finally {
      await server.close();
    }
  });

  test("a base URL with a path prefix keeps it", async () => {
    const server = await recorder(() => ({ status: 200, body: JSON.stringify({ balance: "1.000000" }) }));
    try {
      await new LlmAccountsClient({ baseUrl: `${server.url}/gateway/`, adminKey: ADMIN }).account.balance();
      expect(server.seen[0].path).toBe("/gateway/api/v1/management/account/balance");
    } finally {
      await server.close();
    }
  });

  test("a refused connection is a ConnectionError; a create is retried there, since nothing was sent", async () => {
    const server = await recorder(() => ({ status: 200 }));
    const url = server.url;
    await server.close();
    const client = new LlmAccountsClient({
      baseUrl: url,
      adminKey: ADMIN,
      retry: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 2 },
    });
    const err = await client.apiKeys.create({ alias: "x" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as ConnectionError).code).toBe("ECONNREFUSED");
    expect((err as ConnectionError).mayHaveSucceeded).toBeFalsy();
  });

  test("a slow answer is a TimeoutError; for a create it says the key may exist", async () => {
    const emu = await emulator({ rateLimits: false, faults: [{ kind: "latency", ms: 500 }] });
    try {
      const client = clientOf(emu, { timeouts: { requestMs: 100 } });
      const err = await client.apiKeys.create({ alias: "slow" }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TimeoutError);
      expect((err as TimeoutError).mayHaveSucceeded).toBe(true);
      expect((err as Error).message).toMatch(/may have been created/);
      expect(calls(emu)["api-key/create"]).toBe(1);
    } finally {
      await emu.close();
    }
  });

  test("a malformed body is an UnknownAnswerError naming its address; a wrongly typed one a ResponseValidationError naming the field", async () => {
    const emu = await emulator({ rateLimits: false });
    try {
      const client = clientOf(emu, { retry: { maxAttempts: 1 } });
      emu.setFaults([{ kind: "malformed", ops: ["account/balance"] }]);
      const malformed = await client.account.balance().catch((e: unknown) => e);
      expect(malformed).toBeInstanceOf(UnknownAnswerError);
      expect((malformed as Error).message).toContain(
        `is not the platform's (HTTP 200, application/json "{\\"error\\": <html>Bad Gateway</html>") from ${emu.baseUrl}/api/v1/management/account/balance`,
      );
      emu.setFaults([{ kind: "wrong-type", ops: ["account/balance"] }]);
      const err = await client.account.balance().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ResponseValidationError);
      expect((err as Error).message).toMatch(/response field balance/);
    } finally {
      await emu.close();
    }
  });
});

describe("rate limits", () => {
  test("429s are waited out and retried, creates included (a 429 was not processed)", async () => {
    const emu = await emulator({ rateLimits: false });
    try {
      emu.setFaults([{ kind: "429", ops: ["api-key/create"], count: 2, ms: 20 }]);
      const client = clientOf(emu, { rateLimits: false });
      await expect(client.apiKeys.create({ alias: "after-429" })).resolves.toMatchObject({ alias: "after-429" });
      expect(calls(emu)["api-key/create"]).toBe(3);
      expect(emu.state.listKeys().filter((k) => k.alias === "after-429")).toHaveLength(1);
    } finally {
      await emu.close();
    }
  });

  test("a 429 without Retry-After backs off and retries; past the attempts it is a RateLimitError", async () => {
    const emu = await emulator({ rateLimits: false });
    try {
      emu.setFaults([{ kind: "429", ops: ["account/balance"], retryAfter: false }]);
      const client = clientOf(emu, {
        rateLimits: false,
        retry: { maxRateLimitAttempts: 3, baseDelayMs: 1, maxDelayMs: 4 },
      });
      await expect(client.account.balance()).rejects.toBeInstanceOf(RateLimitError);
      expect(calls(emu)["account/balance"]).toBe(3);
    } finally {
      await emu.close();
    }
  });

  test("requests of both groups through one client, interleaved, each carry their own credential; a body only with its content type", async () => {
    const emu = await emulator();
    const server = await recorder(() => ({ status: 200, body: JSON.stringify({ balance: "1.000000", data: [] }) }));
    try {
      const key = emu.state.createKey("s").key;
      const client = clientOf(emu);
      for (let i = 0; i < 3; i++) {
        await client.apiKeys.get(key);
        await client.subAccounts.list();
      }
      expect(emu.requests().map((r) => r.status)).toEqual(Array(6).fill(200));
      const bare = new LlmAccountsClient({ baseUrl: server.url, adminKey: ADMIN });
      await bare.account.balance();
      await bare.account.models().catch(() => undefined);
      await bare.account.balance();
      expect(server.seen.map((r) => [r.headers.authorization, r.headers["content-type"]])).toEqual([
        [`Bearer ${ADMIN}`, "application/json"],
        [`Bearer ${ADMIN}`, undefined],
        [`Bearer ${ADMIN}`, "application/json"],
      ]);
    } finally {
      await server.close();
      await emu.close();
    }
  });
});

describe("may have succeeded: one rule where an error leaves send", () => {
  test("only a create the platform may have processed says so: a 5xx or an unreadable 2xx, not a 4xx, 429 or a read", async () => {
    const answers: Record<string, { status: number; body?: string }> = {
      "/api-key/create": { status: 500, body: '{"error":{"code":"internal_error","message":"boom"}}' },
      "/api-key/edit": { status: 500, body: '{"error":{"code":"internal_error","message":"boom"}}' },
      "/api-key/get": { status: 200, body: "not json" },
      "/api-key/status": { status: 400, body: '{"error":{"code":"invalid_key","message":"no"}}' },
    };
    const server = await recorder(
      (path) =>
        answers[path.replace(/\?.*$/, "").replace(/^.*(?=\/api-key\/)/, "")] ?? { status: 200, body: "not json" },
    );
    try {
      const client = new LlmAccountsClient({
        baseUrl: server.url,
        adminKey: ADMIN,
        accountKey: "sk-" + "a".repeat(32),
        retry: { maxAttempts: 1 },
      });
      const create = (await client.apiKeys.create({ alias: "a" }).catch((e: unknown) => e)) as ConnectionError;
      expect(create.message).toBe(
        "500 internal_error: boom; the key may have been created although no answer came back (POST api-key/create)",
      );
      expect(create.mayHaveSucceeded).toBe(true);
      const unread = (await client.subAccounts
        .create({ alias: "a", balance: 1, count: 1 })
        .catch((e: unknown) => e)) as ResponseValidationError;
      expect(unread.message).toBe(
        `the response is not the platform's (HTTP 200, no content type "not json") from ${server.url}/api/v1/account/sub-account/token: nothing is concluded from it; ` +
          "the sub-accounts may have been created although no answer came back (POST sub-account/create)",
      );
      expect(unread.mayHaveSucceeded).toBe(true);
      for (const other of [
        client.apiKeys.edit({ key: "sk-" + "e".repeat(20), alias: "a" }),
        client.apiKeys.get("sk-" + "g".repeat(20)),
        client.apiKeys.setStatus("sk-" + "s".repeat(20), true),
      ]) {
        const err = (await other.catch((e: unknown) => e)) as ConnectionError;
        expect(err.message).not.toContain("may have been created");
        expect(err.mayHaveSucceeded).toBeUndefined();
      }
    } finally {
      await server.close();
    }
  });
});
