import { describe, expect, test } from "@jest/globals";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { LlmAccountsClient } from "../../provider/client/index.js";

const ADMIN = "sk-admin-" + "u".repeat(32);
const today = new Date().toISOString().slice(0, 10);
const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

/** A hostile usage server: every page says more follow, with a new token; `rowsPerPage` rows each. Stops after 500. */
async function endlessPages(
  rowsPerPage: number,
): Promise<{ url: string; pages: () => number; close: () => Promise<void> }> {
  let pages = 0;
  const server = createServer((req, res) => {
    pages += 1;
    req.resume();
    const items = Array.from({ length: rowsPerPage }, () => ({ date: today, cost: "0.000000" }));
    const body =
      pages > 500 ? { items: [], has_more: false, next_page: null } : { items, has_more: true, next_page: `t${pages}` };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, pages: () => pages, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Row 5 of issue 14: usage paging stops at the rows its range can hold, with a clear error. */
describe("usage paging cap", () => {
  test.each([
    [1, { start: yesterday, end: today }, 3],
    [0, { start: yesterday, end: today }, 1],
    [1, { start: today, end: today, withModel: true }, 201],
  ])("%i row(s) per page, endless: stops after at most the cap's pages", async (rowsPerPage, query, maxPages) => {
    const server = await endlessPages(rowsPerPage);
    try {
      const client = new LlmAccountsClient({ baseUrl: server.url, adminKey: ADMIN, rateLimits: false });
      await expect(client.account.usage(query)).rejects.toThrow(
        /^the usage summary does not end: .* holds at most \d+ \(one row per day.*\(POST usage\/summary\)$/,
      );
      expect(server.pages()).toBeLessThanOrEqual(maxPages);
    } finally {
      await server.close();
    }
  });
});

describe("usage paging with opaque cursors that change at every answer (the platform ignores the request field)", () => {
  test("stops at page 2, naming the request field and the setting that fixes it (it made 731 calls of page 1, then an error naming neither)", async () => {
    let pages = 0;
    const server = createServer((req, res) => {
      pages += 1;
      req.resume();
      // Page 1 every time, with a new cursor: what a platform that does not read `page` answers.
      const body = {
        items: [{ date: yesterday, cost: "1.000000" }],
        has_more: true,
        next_page: `cursor-${pages}-${Math.random()}`,
      };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const client = new LlmAccountsClient({ baseUrl: url, adminKey: ADMIN, rateLimits: false });
      const failure = client.account.usage({ start: "2025-12-01", end: today });
      await expect(failure).rejects.toThrow(
        /page 2 begins with page 1's first row though it was asked for in the request field "page"/,
      );
      await expect(failure).rejects.toThrow(
        /Set LLM_ACCOUNTS_USAGE_PAGE_FIELD or the stack config llm-accounts:usagePageField/,
      );
      expect(pages).toBe(2);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
