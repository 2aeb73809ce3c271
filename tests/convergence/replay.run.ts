import { expect, test } from "@jest/globals";
import { readFileSync } from "node:fs";
import { readingsOf, runHistory, type Step } from "./history.js";
import { subsets } from "./platforms.js";
import type { Reading } from "../../provider/emulator/index.js";

// `npm run soak -- --replay FILE [--times N] [--subsets]` (scripts/soak.mjs) runs this file: the history in FILE, as
// the soak wrote it (a JSON array of steps), or several by name ({"name": [steps], ...}), each N times, for the
// violations and how often each came. Histories with faults and parallel runs depend on timing: a violation seen once
// in N is still one. With --subsets, a history played under several readings also runs under each smaller set of them
// and under none (its other steps the same), to tell which of them it needs; only the history as written decides the
// exit status. Not part of `npm test`.

const file = process.env.REPLAY_FILE ?? "";
const times = Number(process.env.REPLAY_TIMES ?? 1);
const withSubsets = process.env.REPLAY_SUBSETS === "1";

/** The history with its platform steps replaced by one step per reading of `readings`. */
function under(steps: Step[], readings: readonly Reading[]): Step[] {
  const first = steps.find((s): s is Extract<Step, { kind: "platform" }> => s.kind === "platform");
  const platform = readings.map(
    (reading): Step => ({ kind: "platform", reading, ...(first?.profile && { profile: true }) }),
  );
  return [...platform, ...steps.filter((s) => s.kind !== "platform")];
}

/** Runs `steps` `times` times; prints the violations and how often each came; returns how many distinct ones. */
async function replay(name: string, steps: Step[]): Promise<number> {
  const seen = new Map<string, number>();
  // Once a run each: one run may report one violation several times (an orphan a line each), and "6/2" says nothing.
  for (let i = 0; i < times; i++)
    for (const v of new Set((await runHistory(steps)).violations)) seen.set(v, (seen.get(v) ?? 0) + 1);
  const lines = [...seen].map(([v, n]) => `  ${n}/${times}: ${v}`);
  process.stdout.write(
    `${name}: ${seen.size === 0 ? `no violation in ${times} run(s)` : `violations\n${lines.join("\n")}`}\n`,
  );
  return seen.size;
}

test(
  `replay ${file}, ${times} time(s) each`,
  async () => {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Step[] | Record<string, Step[]>;
    const histories = Array.isArray(parsed) ? { history: parsed } : parsed;
    let broken = 0;
    for (const [name, steps] of Object.entries(histories)) {
      const readings = readingsOf(steps);
      broken += await replay(`${name}${readings.length > 0 ? ` (${readings.join(" + ")})` : ""}`, steps);
      if (!withSubsets || readings.length < 2) continue;
      for (const fewer of [[], ...subsets(readings)])
        await replay(`${name} under ${fewer.join(" + ") || "no reading"}`, under(steps, fewer));
    }
    expect(broken).toBe(0);
  },
  24 * 3_600_000,
);
