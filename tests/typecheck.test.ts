import { afterAll, beforeAll, expect, test } from "@jest/globals";
import { execFile } from "node:child_process";
import { copyFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { programDir, REPO } from "./support/programDir.js";

let dir: string;
beforeAll(() => {
  dir = programDir("llm-typecheck-");
  copyFileSync(join(REPO, "tests/typecheck/program.ts"), join(dir, "index.ts"));
  // The tsconfig of `pulumi new typescript`: a CommonJS program. Its template pins TypeScript 5; checked here
  // with this repository's TypeScript 6, which must be told that the template's `moduleResolution: node` is fine.
  const compilerOptions = {
    strict: true,
    target: "es2020",
    module: "commonjs",
    moduleResolution: "node",
    esModuleInterop: true,
    skipLibCheck: true,
    noEmit: true,
  };
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { ...compilerOptions, ignoreDeprecations: "6.0" }, files: ["index.ts"] }),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A program misusing the package: each line from the second on is one misuse the compiler must refuse. */
const BAD = [
  'import * as llm from "pulumi-llm-accounts";',
  'new llm.ApiKey("x", { alias: 1 });',
  'llm.ApiKey.get("x", "id", { alias: "a", createdAt: "2026-01-01" });', // a get without the key its read looks up
  'llm.SubAccountBatch.get("x", "id", { alias: "a", balance: 1, count: 1 });', // nor the tokens
  'llm.getUsageOutput({ start: 1, end: "2026-01-02" });', // each field an Input of its own type
  'llm.getModelsOutput({}, { dependsOn: "not a resource" });', // Pulumi's invoke output options
  "llm.getModels({}, { dependsOn: [] });", // the plain form takes invoke options, which have no dependsOn
  "",
];

/** One compiler run for both tests (it is the slow part): the program, and beside it a file that misuses a name. */
let output: Promise<string>;
beforeAll(() => {
  writeFileSync(join(dir, "bad.ts"), BAD.join("\n"));
  writeFileSync(
    join(dir, "tsconfig.both.json"),
    JSON.stringify({ extends: "./tsconfig.json", files: ["index.ts", "bad.ts"] }),
  );
  const tsc = join(REPO, "node_modules/typescript/bin/tsc");
  output = promisify(execFile)(process.execPath, [tsc, "-p", "tsconfig.both.json"], { cwd: dir }).then(
    () => "",
    (e: { stdout: string }) => e.stdout,
  );
});

test("a program using every public name type-checks against the built package (CommonJS, as `pulumi new` makes it)", async () => {
  expect((await output).split("\n").filter((line) => line.startsWith("index.ts"))).toEqual([]);
}, 120_000);

test("the same program fails to type-check when it misuses a name (the check is real)", async () => {
  expect(await output).toMatch(/bad\.ts.*TS2322/);
}, 120_000);

test("each misuse of the conventions (get without what its read needs, an Input per field, invoke options) is refused", async () => {
  const lines = new Set([...(await output).matchAll(/^bad\.ts\((\d+),\d+\): error/gm)].map((m) => Number(m[1])));
  expect(
    BAD.slice(0, -1)
      .map((_, i) => i + 1)
      .filter((line) => line > 1 && !lines.has(line)),
  ).toEqual([]);
}, 120_000);
