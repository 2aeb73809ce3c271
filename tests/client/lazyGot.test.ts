import { describe, expect, test } from "@jest/globals";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO } from "../support/programDir.js";

/**
 * Runs `body` (an ES module's text) in a new Node.js process of the built package whose module loader refuses
 * to load got: what a program, a preview's plugin or a CLI command that sends nothing must never need.
 */
function withoutGot(body: string): Promise<{ code: number; stdout: string; stderr: string }> {
  // registerHooks (in-thread, Node.js 22.15+): module.register() is deprecated from Node.js 26 and warns on stderr.
  const refuse =
    'registerHooks({ resolve(s, c, next) { if (s === "got") throw new Error("got was loaded"); return next(s, c); } });';
  const script = `import { registerHooks } from "node:module";\n${refuse}\n${body}`;
  return new Promise((resolve) => {
    execFile(process.execPath, ["--input-type=module", "-e", script], { cwd: REPO }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const dist = (path: string) => JSON.stringify(pathToFileURL(join(REPO, "dist/provider", path)).href);

describe("got is loaded at the first request, not at import", () => {
  test("the package, its runtime and a check load no got; a request does, and fails here only because it is refused", async () => {
    const run = await withoutGot(`
      const pkg = await import(${dist("index.js")});
      const runtime = await import(${dist("runtime/index.js")});
      const checked = await runtime.apiKey.check({}, { alias: "ci", enabled: true });
      console.log(typeof pkg.ApiKey, checked.failures.length);
      // The hook works: got itself is refused, and so is the first request, which loads it.
      await import("got").catch((err) => console.log(err.message));
      const client = new pkg.LlmAccountsClient({ baseUrl: "http://127.0.0.1:9", adminKey: "sk-admin-" + "h".repeat(32), retry: { maxAttempts: 1 } });
      await client.apiKeys.get("sk-" + "k".repeat(40)).catch((err) => console.log(err.constructor.name, err.message));
    `);
    expect(run.stderr).toBe("");
    expect(run.stdout.trim().split("\n")).toEqual([
      "function 0",
      "got was loaded",
      "ConnectionError connection to http://127.0.0.1:9 failed: network error (POST api-key/get)",
    ]);
    expect(run.code).toBe(0);
  }, 60_000);
});
