import { expect, test } from "@jest/globals";
import fc from "fast-check";
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { historyArb, readingsOf, runHistory, type Step } from "./history.js";
import { readingCombinations } from "./platforms.js";
import type { Reading } from "../../provider/emulator/index.js";

// `npm run soak -- --runs N --seed S` (scripts/soak.mjs) runs this file: N generated histories, the figures
// printed at the end. Not part of `npm test` (its name does not end in .test.ts).

const runs = Number(process.env.SOAK_RUNS ?? 200);
const seed = Number(process.env.SOAK_SEED ?? Date.now() % 2 ** 31);
/** `--stacks N`: every `up` is a round of N stacks on the one account (history.ts, stacks.ts). */
const stacks = Number(process.env.SOAK_STACKS ?? 1);
/** `--keep-going`: a violation is printed with its history and counted, and the soak goes on instead of shrinking it. */
const keepGoing = process.env.SOAK_KEEP_GOING === "1";
/** `--readings`: each history's platform answers in one of the emulator's other readings (history.ts HISTORY_READINGS). */
/** `--reading NAME` (repeated): in one of those named. */
const names = (process.env.SOAK_READING_NAMES ?? "").split(",").filter((n) => n !== "") as Reading[];
const readings = names.length > 0 ? names : process.env.SOAK_READINGS === "1";
/** `--profiles` (with readings): every stack carries the profile `llm-accounts doctor --write` measures of the platform. */
const profiles = process.env.SOAK_PROFILES === "1";
/** `--combinations 2,3`: each history's platform plays a combination of readings of one of these sizes (platforms.ts). */
const combinations = (process.env.SOAK_COMBINATIONS ?? "")
  .split(",")
  .filter((n) => n !== "")
  .map(Number);
/** `--failures DIR`: where each failing history is written, a file `npm run soak -- --replay FILE` runs again. */
const failures = resolve(process.env.SOAK_FAILURES || join(tmpdir(), `llm-accounts-soak-${seed}`));
const figures = { histories: 0, steps: 0, faultsInjected: 0, violations: 0, explainedOrphans: 0 };
/** Counts by feature over the histories: out-of-band objects, adoptions, releases, rotations, clock moves. */
const features: Record<string, number> = {};
/** The combinations of readings played, by name (`a + b`), and how many of their histories broke the invariant. */
const played = new Map<string, { histories: number; broken: number }>();

/** Writes a failing history where `--replay` reads it; returns the file's path. */
function saveFailure(name: string, steps: Step[]): string {
  mkdirSync(failures, { recursive: true });
  const file = join(failures, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(steps)}\n`);
  return file;
}

test(
  `soak: ${runs} histories, seed ${seed}, ${stacks} stack(s)`,
  async () => {
    const started = Date.now();
    let shrinking = false;
    let failure = "";
    let violations: string[] = [];
    let minimal: Step[] | undefined;
    try {
      await fc.assert(
        fc.asyncProperty(
          historyArb({
            maxKeys: 30,
            maxBatches: 6,
            maxSteps: 6,
            stacks,
            readings,
            profiles,
            ...(combinations.length > 0 && { combinations }),
          }),
          async (steps: Step[]) => {
            const report = await runHistory(steps);
            if (!shrinking) {
              figures.histories++;
              figures.steps += report.steps;
              figures.faultsInjected += report.faultsInjected;
              figures.explainedOrphans += report.explainedOrphans;
              for (const [name, n] of Object.entries(report.features ?? {})) features[name] = (features[name] ?? 0) + n;
              for (const s of steps)
                if (s.kind === "platform")
                  features[`reading ${s.reading}`] = (features[`reading ${s.reading}`] ?? 0) + 1;
              const platform = readingsOf(steps).join(" + ") || "(the package's reading)";
              const tally = played.get(platform) ?? { histories: 0, broken: 0 };
              played.set(platform, {
                histories: tally.histories + 1,
                broken: tally.broken + (report.violations.length > 0 ? 1 : 0),
              });
              if (report.violations.length > 0) {
                figures.violations++;
                const next = keepGoing ? "going on" : "shrinking it now";
                const file = saveFailure(`history-${figures.histories}`, steps);
                process.stdout.write(
                  `history ${figures.histories} broke the invariant under ${platform} (${next}; replay: ${file}):\n${report.violations.join("\n")}\n${JSON.stringify(steps)}\n`,
                );
              }
              if (figures.histories % 100 === 0)
                process.stdout.write(
                  `... ${figures.histories} histories, ${Math.round((Date.now() - started) / 1000)}s\n`,
                );
            }
            if (report.violations.length > 0 && !keepGoing) {
              shrinking = true;
              violations = report.violations;
              minimal = steps;
              throw new Error(report.violations.join("\n"));
            }
          },
        ),
        { seed, numRuns: runs },
      );
    } catch (err) {
      failure = (err as Error).message;
    }
    const seconds = Math.round((Date.now() - started) / 1000);
    const broken = [...played]
      .filter(([, t]) => t.broken > 0)
      .map(([name, t]) => `${name} (${t.broken} of ${t.histories})`);
    // Pairs of readings played together, alone or within a triple, of every pair that can coexist.
    const together = new Set(
      [...played.keys()].flatMap((name) =>
        [...readingCombinations(2, name.split(" + ") as Reading[])].map((p) => p.join(" + ")),
      ),
    );
    const pairs =
      combinations.length > 0
        ? `; pairs of readings played together: ${together.size} of ${[...readingCombinations(2)].length}`
        : "";
    process.stdout.write(
      [
        `soak seed=${seed} runs=${runs} stacks=${stacks}${readings ? " readings" : ""}${combinations.length > 0 ? ` combinations=${combinations.join(",")}` : ""}${profiles ? " profiles" : ""}`,
        `histories run:             ${figures.histories}`,
        `steps:                     ${figures.steps}`,
        `faults injected:           ${figures.faultsInjected}`,
        `invariant violations:      ${figures.violations}`,
        `orphans explained by lost create answers: ${figures.explainedOrphans}`,
        `by feature:                ${JSON.stringify(features)}`,
        `platforms played:          ${played.size}${pairs}${broken.length > 0 ? `; broke the invariant under: ${broken.join(", ")}` : ""}`,
        `time:                      ${seconds}s (${Math.round((figures.histories * 60) / Math.max(seconds, 1))} histories a minute)`,
        failure
          ? `minimal failing history (replay: ${saveFailure("minimal", minimal ?? [])}):\n${failure}\nits violations:\n${violations.join("\n")}`
          : "",
      ].join("\n") + "\n",
    );
    expect(failure).toBe("");
    expect(figures.violations).toBe(0);
  },
  24 * 3600_000,
);
