import { afterAll, expect, test } from "@jest/globals";
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "./support/programDir.js";

// The check `npm test` runs first (scripts/test.mjs): `biome ci` with the repository's biome.json, on a folder of
// its own, so that the check is shown to fail on what it must refuse and to pass what `npm run format` writes.
const BIOME = createRequire(import.meta.url).resolve("@biomejs/biome/bin/biome");
const dir = mkdtempSync(join(tmpdir(), "llm-style-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
copyFileSync(join(REPO, "biome.json"), join(dir, "biome.json"));
writeFileSync(
  join(dir, "biome.json"),
  readFileSync(join(dir, "biome.json"), "utf8").replace('"useIgnoreFile": true', '"useIgnoreFile": false'),
);

/** `biome <args>` in the scratch folder: its exit code and output. */
function biome(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIOME, ...args], { cwd: dir }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, output: stdout + stderr });
    });
  });
}

test("npm test runs the check before the type check and jest, and its failure fails the run", () => {
  const script = readFileSync(join(REPO, "scripts/test.mjs"), "utf8");
  expect(script.indexOf('"ci", "--error-on-warnings"')).toBeGreaterThan(0);
  expect(script.indexOf('"ci", "--error-on-warnings"')).toBeLessThan(script.indexOf("runJest(["));
  expect(script).toMatch(/process\.exit\(style \|\| /);
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { scripts: Record<string, string> };
  expect(pkg.scripts).toMatchObject({ format: "biome check --write .", lint: "biome lint --error-on-warnings ." });
});

test("biome ci refuses an unformatted file and a linter finding; what npm run format writes passes", async () => {
  writeFileSync(join(dir, "a.ts"), "export const a = {b:1,  c: 'two'}\n");
  expect((await biome(["ci", "--error-on-warnings", "."])).code).not.toBe(0);
  expect((await biome(["check", "--write", "."])).code).toBe(0);
  expect(readFileSync(join(dir, "a.ts"), "utf8")).toBe('export const a = { b: 1, c: "two" };\n');
  expect(await biome(["ci", "--error-on-warnings", "."])).toMatchObject({ code: 0 });
  writeFileSync(join(dir, "b.ts"), "export function f(x: number): boolean {\n  return x == 1;\n}\n");
  const linted = await biome(["ci", "--error-on-warnings", "."]);
  expect(linted.code).not.toBe(0);
  expect(linted.output).toMatch(/noDoubleEquals/);
}, 60_000);
