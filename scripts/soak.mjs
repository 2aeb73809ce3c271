// `npm run soak -- --runs N --seed S [--stacks N] [--readings | --reading NAME...] [--combinations 2,3] [--profiles]
// [--failures DIR]`: N generated histories of program changes, faults, console edits and emulator restarts
// (tests/convergence), each checked against the invariant of issues 12, 22 and 28. With --stacks N (default 1), every
// `up` is a round of N stacks on one account at once. With --readings, each history's platform answers in one of the
// emulator's other readings (its first step names it); with --reading NAME (repeated), in one of those named; with
// --combinations 2,3, in a combination of two or three readings that can coexist (tests/convergence/platforms.ts;
// with --reading, each holds one of those named); with --profiles, every stack also carries the doctor's profile of
// it. A violation is printed with its readings and written to a file in DIR (default: a folder of the seed under the
// system's temporary folder); it stops the soak and shrinks to a minimal history (written too); with --keep-going
// the soak goes on. `--replay FILE [--times N] [--subsets]` runs a written history again instead (a JSON array of
// steps, or several by name), N times each; with --subsets, also under each smaller set of its readings and under
// none, to tell which of them it needs.
import { spawnSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "200" },
    seed: { type: "string" },
    "keep-going": { type: "boolean", default: false },
    stacks: { type: "string", default: "1" },
    readings: { type: "boolean", default: false },
    reading: { type: "string", multiple: true, default: [] },
    combinations: { type: "string" },
    profiles: { type: "boolean", default: false },
    failures: { type: "string" },
    replay: { type: "string" },
    times: { type: "string", default: "1" },
    subsets: { type: "boolean", default: false },
  },
});
for (const [name, value] of Object.entries({
  runs: values.runs,
  seed: values.seed,
  stacks: values.stacks,
  times: values.times,
})) {
  if (value !== undefined && !/^\d+$/.test(value)) {
    console.error(`--${name} must be a whole number, got "${value}"`);
    process.exit(2);
  }
}
if (values.combinations !== undefined && !/^[1-9]\d*(,[1-9]\d*)*$/.test(values.combinations)) {
  console.error(`--combinations must be sizes separated by commas (2,3), got "${values.combinations}"`);
  process.exit(2);
}
if (Number(values.stacks) < 1) {
  console.error(`--stacks must be 1 or more, got "${values.stacks}"`);
  process.exit(2);
}
const seed = values.seed ?? String(Date.now() % 2 ** 31);
// --replay FILE: the history the soak printed (or several by name), --times N each (tests/convergence/replay.run.ts).
const replay =
  values.replay === undefined
    ? {}
    : { REPLAY_FILE: resolve(values.replay), REPLAY_TIMES: values.times, REPLAY_SUBSETS: values.subsets ? "1" : "0" };
const result = spawnSync(
  process.execPath,
  [
    join(repo, "node_modules/jest/bin/jest.js"),
    "--testMatch",
    `<rootDir>/tests/convergence/${values.replay === undefined ? "soak" : "replay"}.run.ts`,
    "--silent=false",
  ],
  {
    cwd: repo,
    stdio: "inherit",
    env: {
      ...process.env,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --experimental-vm-modules`,
      SOAK_RUNS: values.runs,
      SOAK_SEED: seed,
      SOAK_STACKS: values.stacks,
      SOAK_KEEP_GOING: values["keep-going"] ? "1" : "0",
      SOAK_READINGS: values.readings ? "1" : "0",
      SOAK_READING_NAMES: values.reading.join(","),
      SOAK_PROFILES: values.profiles ? "1" : "0",
      SOAK_COMBINATIONS: values.combinations ?? "",
      SOAK_FAILURES: values.failures === undefined ? "" : resolve(values.failures),
      ...replay,
    },
  },
);
process.exit(result.status ?? 1);
