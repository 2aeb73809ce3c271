// `npm test`: every suite, in two jest runs.
//   1. Everything but tests/e2e, on two workers: these tests talk to emulators in their own process and wait on
//      injected clocks, so they share the machine's two cores without changing what they assert.
//   2. tests/e2e, on one worker: each test drives the real Pulumi CLI, whose engine and plugins already use
//      every core; two at once would only make each slower.
// Both run even when the first fails, so that one CI run reports every failure. With arguments
// (`npm test -- tests/client --verbose`), one jest run with exactly those arguments.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const jest = createRequire(import.meta.url).resolve("jest/package.json").replace(/package\.json$/, "bin/jest.js");
const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --experimental-vm-modules`.trim() };

/** Runs jest with `args`; its exit status. */
function runJest(args) {
  const r = spawnSync(process.execPath, [jest, ...args], { env, stdio: "inherit" });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

const given = process.argv.slice(2);
if (given.length > 0) process.exit(runJest(given));

const started = Date.now();
const unit = runJest(["--maxWorkers=2", "--testPathIgnorePatterns", "/tests/e2e/"]);
const unitSeconds = Math.round((Date.now() - started) / 1000);
const e2e = runJest(["--maxWorkers=1", "tests/e2e/"]);
console.log(`[test] without e2e: ${unit === 0 ? "passed" : "FAILED"} in ${unitSeconds} s; e2e: ${e2e === 0 ? "passed" : "FAILED"} in ${Math.round((Date.now() - started) / 1000) - unitSeconds} s`);
process.exit(unit || e2e);
