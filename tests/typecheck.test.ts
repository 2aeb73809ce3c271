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
  const compilerOptions = { strict: true, target: "es2020", module: "commonjs", moduleResolution: "node", esModuleInterop: true, skipLibCheck: true, noEmit: true };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { ...compilerOptions, ignoreDeprecations: "6.0" }, files: ["index.ts"] }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a program using every public name type-checks against the built package (CommonJS, as `pulumi new` makes it)", async () => {
  const tsc = join(REPO, "node_modules/typescript/bin/tsc");
  const result = await promisify(execFile)(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir }).catch((e: { stdout: string }) => e);
  expect(result.stdout).toBe("");
}, 120_000);

test("the same program fails to type-check when it misuses a name (the check is real)", async () => {
  writeFileSync(join(dir, "bad.ts"), 'import * as llm from "pulumi-llm-accounts";\nnew llm.ApiKey("x", { alias: 1 });\n');
  writeFileSync(join(dir, "tsconfig.bad.json"), JSON.stringify({ extends: "./tsconfig.json", files: ["bad.ts"] }));
  const tsc = join(REPO, "node_modules/typescript/bin/tsc");
  const result = await promisify(execFile)(process.execPath, [tsc, "-p", "tsconfig.bad.json"], { cwd: dir }).then(
    () => ({ stdout: "" }),
    (e: { stdout: string }) => e,
  );
  expect(result.stdout).toMatch(/bad\.ts.*TS2322/);
}, 120_000);
