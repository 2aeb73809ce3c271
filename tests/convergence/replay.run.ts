import { expect, test } from "@jest/globals";
import { readFileSync } from "node:fs";
import { runHistory, type Step } from "./history.js";

// `npm run soak -- --replay FILE [--times N]` (scripts/soak.mjs) runs this file: the history in FILE, as the soak
// printed it after "broke the invariant" (a JSON array of steps), or several by name ({"name": [steps], ...}),
// each N times, for the violations and how often each came. Histories with faults and parallel runs depend on
// timing: a violation seen once in N is still one. Not part of `npm test`.

const file = process.env.REPLAY_FILE ?? "";
const times = Number(process.env.REPLAY_TIMES ?? 1);

test(`replay ${file}, ${times} time(s) each`, async () => {
  const parsed = JSON.parse(readFileSync(file, "utf8")) as Step[] | Record<string, Step[]>;
  const histories = Array.isArray(parsed) ? { history: parsed } : parsed;
  let broken = 0;
  for (const [name, steps] of Object.entries(histories)) {
    const seen = new Map<string, number>();
    for (let i = 0; i < times; i++) for (const v of (await runHistory(steps)).violations) seen.set(v, (seen.get(v) ?? 0) + 1);
    broken += seen.size;
    const lines = [...seen].map(([v, n]) => `  ${n}/${times}: ${v}`);
    process.stdout.write(`${name}: ${seen.size === 0 ? `no violation in ${times} run(s)` : `violations\n${lines.join("\n")}`}\n`);
  }
  expect(broken).toBe(0);
}, 24 * 3_600_000);
