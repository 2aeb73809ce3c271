// `npm run soak -- --runs N --seed S [--stacks N] [--readings | --reading NAME...] [--profiles]`: N generated
// histories of program changes, faults, console edits and emulator restarts (tests/convergence), each checked
// against the invariant of issues 12, 22 and 28. With --stacks N (default 1), every `up` is a round of N stacks on
// one account at once. With --readings, each history's platform answers in one of the emulator's other readings
// (its first step names it); with --reading NAME (repeated), in one of those named; with --profiles, every stack
// also carries the doctor's profile of it. A violation stops the soak and shrinks to a minimal history; with
// --keep-going it is printed and the soak goes on. `--replay FILE [--times N]` runs a printed history again instead
// (a JSON array of steps, or several by name), N times each.
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
    profiles: { type: "boolean", default: false },
    replay: { type: "string" },
    times: { type: "string", default: "1" },
  },
});
for (const [name, value] of Object.entries({ runs: values.runs, seed: values.seed, stacks: values.stacks, times: values.times })) {
  if (value !== undefined && !/^\d+$/.test(value)) {
    console.error(`--${name} must be a whole number, got "${value}"`);
    process.exit(2);
  }
}
if (Number(values.stacks) < 1) {
  console.error(`--stacks must be 1 or more, got "${values.stacks}"`);
  process.exit(2);
}
const seed = values.seed ?? String(Date.now() % 2 ** 31);
// --replay FILE: the history the soak printed (or several by name), --times N each (tests/convergence/replay.run.ts).
const replay = values.replay === undefined ? {} : { REPLAY_FILE: resolve(values.replay), REPLAY_TIMES: values.times };
const result = spawnSync(
  process.execPath,
  [join(repo, "node_modules/jest/bin/jest.js"), "--testMatch", `<rootDir>/tests/convergence/${values.replay === undefined ? "soak" : "replay"}.run.ts`, "--silent=false"],
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
      ...replay,
    },
  },
);
process.exit(result.status ?? 1);
