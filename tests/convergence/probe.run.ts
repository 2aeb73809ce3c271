import { test } from "@jest/globals";
import fc from "fast-check";
import { historyArb, runHistory } from "./history.js";

const runs = Number(process.env.SOAK_RUNS ?? 50);
const seed = Number(process.env.SOAK_SEED ?? 1);
const only = process.env.PROBE_ONLY;
test("probe", async () => {
  const histories = fc.sample(historyArb({ maxKeys: 30, maxBatches: 6, maxSteps: 6 }), { seed, numRuns: runs });
  const features: Record<string, number> = {};
  let bad = 0;
  for (const [i, steps] of histories.entries()) {
    if (only !== undefined && String(i) !== only) continue;
    const r = await runHistory(steps);
    for (const [k, n] of Object.entries(r.features ?? {})) features[k] = (features[k] ?? 0) + n;
    if (r.violations.length) {
      bad++;
      if (only !== undefined) process.stdout.write(`${JSON.stringify(steps)}\n${r.violations.join("\n")}\n`);
      else process.stdout.write(`#${i}: ${[...new Set(r.violations.map((v) => v.replace(/[A-Za-z]+::\w+/g, "R").slice(0, 300)))].join(" || ")}\n`);
    }
  }
  process.stdout.write(`bad ${bad}/${runs} ${JSON.stringify(features)}\n`);
}, 3600_000);
