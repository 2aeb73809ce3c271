import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ConnectionError,
  LlmAccountsClient,
  MAX_RETRY_AFTER_MS,
  RateLimitError,
  RetryPolicy,
  type Clock,
} from "../../provider/client/index.js";

const ADMIN = "sk-admin-" + "h".repeat(32);

/** A clock whose sleeps return at once and are recorded: retry timing is asserted, never waited out. */
function fakeClock(start = Date.UTC(2026, 0, 1)): Pick<Clock, "now" | "sleep"> & { slept: number[] } {
  let now = start;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A hostile server that answers every request with a 429 and the given Retry-After; it stops itself after 50 requests. */
async function rateLimiter(retryAfter: string) {
  let requests = 0;
  const server = createHttpServer((req, res) => {
    requests += 1;
    if (requests > 50) server.close();
    req.resume();
    res.writeHead(429, { "content-type": "application/json", "retry-after": retryAfter });
    res.end(JSON.stringify({ error: { code: "rate_limited", message: "slow down" } }));
  });
  const url = `http://${await listen(server)}`;
  return { url, requests: () => requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("retry policy", () => {
  const policy = new RetryPolicy(
    { baseDelayMs: 100, maxDelayMs: 1_000, maxAttempts: 3, maxRateLimitAttempts: 4 },
    () => 0.5,
  );

  test("backoff doubles from baseDelayMs and stops at maxDelayMs (jitter: half fixed, half random)", () => {
    expect([1, 2, 3, 4, 5, 9].map((n) => policy.backoff(n))).toEqual([75, 150, 300, 600, 750, 750]);
  });

  test("a create that may have been sent is not retried; one that was not, and reads, are, up to maxAttempts", () => {
    expect(policy.afterFailure("create", 1, { sent: true, transient: true })).toBeUndefined();
    expect(policy.afterFailure("create", 1, { sent: false, transient: true })).toBe(75);
    expect(policy.afterFailure("read", 2, { sent: true, transient: true })).toBe(150);
    expect(policy.afterFailure("read", 3, { sent: true, transient: true })).toBeUndefined();
    expect(policy.afterFailure("read", 1, { sent: false, transient: false })).toBeUndefined();
  });

  test("a 429's wait is honoured up to the cap, never below baseDelayMs; past the cap or the attempts it gives up", () => {
    expect(policy.afterRateLimit(1, 30_000)).toEqual({ waitMs: 30_000 });
    expect(policy.afterRateLimit(1, 0)).toEqual({ waitMs: 100 });
    expect(policy.afterRateLimit(2, undefined)).toEqual({ waitMs: 150 });
    expect(policy.afterRateLimit(1, MAX_RETRY_AFTER_MS + 1)).toEqual({ giveUp: "too-long" });
    expect(policy.afterRateLimit(1, 1e12)).toEqual({ giveUp: "too-long" });
    expect(policy.afterRateLimit(4, 10)).toEqual({ giveUp: "attempts" });
  });
});

describe("Retry-After from a hostile server", () => {
  test.each([
    ["86400", 86_400],
    ["1000000000", 1_000_000_000],
  ])(
    "Retry-After: %s fails at once with when to retry: one request, no sleep",
    async (header, seconds) => {
      const server = await rateLimiter(header);
      const clock = fakeClock();
      try {
        const client = new LlmAccountsClient({ baseUrl: server.url, adminKey: ADMIN, rateLimits: false, clock });
        const err = await client.account.balance().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(RateLimitError);
        expect((err as Error).message).toContain(
          `the server asks to wait ${seconds} s, more than the ${MAX_RETRY_AFTER_MS / 1000} s this client waits: retry after that time`,
        );
        expect((err as RateLimitError).retryAfterMs).toBe(seconds * 1000);
        expect(server.requests()).toBe(1);
        expect(clock.slept).toEqual([]);
      } finally {
        await server.close();
      }
    },
    10_000,
  );

  test("a day's wait names the time to come back", async () => {
    const server = await rateLimiter("86400");
    try {
      const client = new LlmAccountsClient({
        baseUrl: server.url,
        adminKey: ADMIN,
        rateLimits: false,
        clock: fakeClock(Date.UTC(2026, 0, 1)),
      });
      await expect(client.account.balance()).rejects.toThrow(/\(at 2026-01-02T00:00:00\.000Z\)/);
    } finally {
      await server.close();
    }
  }, 10_000);

  test("Retry-After: 0 is never a burst: every retry waits at least baseDelayMs", async () => {
    const server = await rateLimiter("0");
    const clock = fakeClock();
    try {
      const client = new LlmAccountsClient({
        baseUrl: server.url,
        adminKey: ADMIN,
        rateLimits: false,
        clock,
        retry: { maxRateLimitAttempts: 5, baseDelayMs: 250 },
      });
      await expect(client.account.balance()).rejects.toBeInstanceOf(RateLimitError);
      expect(server.requests()).toBe(5);
      expect(clock.slept).toEqual([250, 250, 250, 250]);
    } finally {
      await server.close();
    }
  }, 10_000);
});

describe("TLS handshake failures", () => {
  let dir: string;
  let server: Server;
  let url: string;
  let requests = 0;
  let connections = 0;
  beforeAll(async () => {
    // A throwaway self-signed certificate, made for this run: nothing secret is kept.
    dir = mkdtempSync(join(tmpdir(), "llm-tls-"));
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
      ],
      { stdio: "ignore" },
    );
    server = createHttpsServer(
      { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
      (_req, res) => {
        requests += 1;
        res.writeHead(500).end();
      },
    );
    server.on("connection", () => (connections += 1));
    url = `https://${await listen(server)}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  test("a self-signed certificate on create: nothing was sent, so no 'may have been created', and no retry", async () => {
    const client = new LlmAccountsClient({ baseUrl: url, adminKey: ADMIN, rateLimits: false, clock: fakeClock() });
    const err = await client.apiKeys.create({ alias: "tls" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as ConnectionError).code).toBe("DEPTH_ZERO_SELF_SIGNED_CERT");
    expect((err as ConnectionError).mayHaveSucceeded).toBeFalsy();
    expect((err as Error).message).toMatch(
      /^connection to https:\/\/127\.0\.0\.1:\d+ failed: DEPTH_ZERO_SELF_SIGNED_CERT; the TLS handshake failed, so nothing was sent \(POST api-key\/create\)$/,
    );
    expect((err as Error).message).not.toMatch(/may have been created/);
    expect(requests).toBe(0);
    expect(connections).toBe(1);
  });
});
