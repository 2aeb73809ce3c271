// `npm test`: the formatter's and the linter's check, the type check of the sources and the tests, then every suite,
// in two jest runs, on Node.js 22.12 or newer: on an older Node.js (this project's machines have 20) it fetches
// Node.js 22 from the npm registry's `node` package once, says so, and runs itself under it (scripts/lib/node.mjs).
//   0. `biome ci` (biome.json; docs/decisions.md ("Formatter and linter: Biome")): a file the formatter would change
//      or a finding of the linter fails the run; `npm run format` writes the formatting and the linter's safe fixes.
//   1. tsc --noEmit over tsconfig.json, with TypeScript 7 (the native compiler; docs/decisions.md): jest compiles
//      each test file on its own without checking types, so a test that reads a property the SDK does not declare
//      would otherwise pass unnoticed.
//   2. Everything but tests/e2e, on two workers: these tests talk to emulators in their own process and wait on
//      injected clocks, so they share the machine's two cores without changing what they assert.
//   3. tests/e2e, on one worker: each test drives the real Pulumi CLI, whose engine and plugins already use
//      every core; two at once would only make each slower.
// All four run even when one fails, so that one CI run reports every failure. With arguments
// (`npm test -- tests/client --verbose`), one jest run with exactly those arguments.
// With LLM_ACCOUNTS_PULUMI_TIMING=FILE, every `pulumi` command of the run adds a line to FILE (stack.mjs), and
// the sums per test file and per command (wall and CPU seconds) are printed at the end.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { runUnderNode } from "./lib/node.mjs";
import { TIMING_ENV } from "./lib/stack.mjs";
import { summarizeTiming } from "./lib/timing.mjs";

await runUnderNode(22, "test");

const require = createRequire(import.meta.url);
const jest = require.resolve("jest/package.json").replace(/package\.json$/, "bin/jest.js");
const tsc = require.resolve("typescript-native/package.json").replace(/package\.json$/, "bin/tsc");
const biome = require.resolve("@biomejs/biome/package.json").replace(/package\.json$/, "bin/biome");
const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --experimental-vm-modules`.trim() };

/** Runs jest with `args`; its exit status. */
function runJest(args) {
  const r = spawnSync(process.execPath, [jest, ...args], { env, stdio: "inherit" });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

/** Prints where the pulumi commands' time went, when timing was asked for. */
function printTiming() {
  if (process.env[TIMING_ENV]) console.log(summarizeTiming(process.env[TIMING_ENV]).join("\n"));
}

const given = process.argv.slice(2);
if (given.length > 0) {
  const code = runJest(given);
  printTiming();
  process.exit(code);
}

const styled = spawnSync(process.execPath, [biome, "ci", "--error-on-warnings", "."], { stdio: "inherit" });
const style = styled.error ? 1 : (styled.status ?? 1);
if (style !== 0)
  console.log(
    "[test] format or lint: FAILED (`npm run format` writes the formatting and the safe fixes; `npm run lint` lists the rest)",
  );
const checked = spawnSync(process.execPath, [tsc, "-p", "tsconfig.json", "--noEmit"], { stdio: "inherit" });
const types = checked.error ? 1 : (checked.status ?? 1);
const started = Date.now();
const unit = runJest(["--maxWorkers=2", "--testPathIgnorePatterns", "/tests/e2e/"]);
const unitSeconds = Math.round((Date.now() - started) / 1000);
const e2e = runJest(["--maxWorkers=1", "tests/e2e/"]);
console.log(
  `[test] format and lint: ${style === 0 ? "checked" : "FAILED"}; types: ${types === 0 ? "checked" : "FAILED"}; without e2e: ${unit === 0 ? "passed" : "FAILED"} in ${unitSeconds} s; e2e: ${e2e === 0 ? "passed" : "FAILED"} in ${Math.round((Date.now() - started) / 1000) - unitSeconds} s`,
);
printTiming();
process.exit(style || types || unit || e2e);
