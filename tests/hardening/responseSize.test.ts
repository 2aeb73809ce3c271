import { describe, expect, test } from "@jest/globals";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import {
  LlmAccountsClient,
  LlmAccountsError,
  MAX_RESPONSE_BYTES,
  ResponseTooLargeError,
} from "../../provider/client/index.js";
import * as entry from "../../provider/index.js";

const ADMIN = "sk-admin-" + "r".repeat(32);
const MB = 1024 * 1024;

/**
 * A hostile server: a 200 whose body is `total` bytes (after decompression), written chunk by chunk as the
 * client reads, so it never holds more than one chunk; it stops when the client goes, or after 20 s.
 */
async function hugeAnswer(total: number, gzip: boolean) {
  let requests = 0;
  const raw = Buffer.alloc(MB, 0x20); // a megabyte of spaces: valid JSON whitespace, if anyone parsed it
  const chunk = gzip ? gzipSync(raw) : raw; // gzip members may follow each other in one body
  const server = createServer((req, res: ServerResponse) => {
    requests += 1;
    req.resume();
    res.writeHead(200, {
      "content-type": "application/json",
      ...(gzip ? { "content-encoding": "gzip" } : { "content-length": String(total) }),
    });
    const deadline = Date.now() + 20_000;
    let sent = 0;
    const pump = () => {
      while (sent < total && !res.destroyed && Date.now() < deadline) {
        sent += raw.length;
        if (!res.write(chunk)) return void res.once("drain", pump);
      }
      res.end();
    };
    res.on("close", () => (sent = total));
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Row 2 of issue 14: a maximum response size, counted inflated; a clear error; no retry of an oversized answer. */
describe("maximum response size", () => {
  test.each([
    ["a 400 MB body", false],
    ["a gzip of about 400 KB that inflates to 400 MB", true],
  ])(
    "%s: cut off at the cap, one request, resident size bounded",
    async (_name, gzip) => {
      const server = await hugeAnswer(400 * MB, gzip);
      try {
        const client = new LlmAccountsClient({
          baseUrl: server.url,
          adminKey: ADMIN,
          rateLimits: false,
          retry: { baseDelayMs: 1, maxDelayMs: 1 },
        });
        const before = process.memoryUsage().rss;
        let peak = before;
        const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
        const err = await client.account.balance().catch((e: Error) => e);
        clearInterval(timer);
        expect(err).toBeInstanceOf(ResponseTooLargeError);
        // One of the package's errors, exported with the others from its entry point.
        expect(err).toBeInstanceOf(LlmAccountsError);
        expect(err).toBeInstanceOf(entry.ResponseTooLargeError);
        expect((err as Error).message).toBe(
          `the answer is larger than ${MAX_RESPONSE_BYTES} bytes (after decompression) and was not read (POST account/balance)`,
        );
        expect(server.requests()).toBe(1);
        // The cap is 32 MiB; reading the whole answer would take 400 MB and more.
        expect(peak - before).toBeLessThan(160 * MB);
      } finally {
        await server.close();
      }
    },
    30_000,
  );

  test("an oversized answer to a create says the key may exist", async () => {
    const server = await hugeAnswer(2 * MB, false);
    try {
      const client = new LlmAccountsClient({
        baseUrl: server.url,
        adminKey: ADMIN,
        rateLimits: false,
        maxResponseBytes: MB,
      });
      const err = (await client.apiKeys.create({ alias: "big" }).catch((e: unknown) => e)) as ResponseTooLargeError;
      expect(err).toBeInstanceOf(ResponseTooLargeError);
      expect(err.mayHaveSucceeded).toBe(true);
      expect(err.message).toContain("may have been created although no answer came back");
      expect(server.requests()).toBe(1);
    } finally {
      await server.close();
    }
  });
});
