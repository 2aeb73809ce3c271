// Reads the lines that $LLM_ACCOUNTS_PULUMI_TIMING collects (one per `pulumi` command, see stack.mjs) and sums
// them per test file and per command: where an end-to-end run's minutes go. `npm test` prints it at the end when
// the variable is set; `node scripts/lib/timing.mjs FILE` prints it for a file kept from an earlier run.

import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The summary of a timing file as text lines: commands, wall and CPU seconds, by test file and by command. */
export function summarizeTiming(file) {
  if (!existsSync(file)) return [`[timing] ${file}: no pulumi command was run`];
  const rows = readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  const seconds = (ms) => (ms / 1000).toFixed(0);
  const table = (title, keyOf) => {
    const groups = new Map();
    for (const r of rows) {
      const g = groups.get(keyOf(r)) ?? { count: 0, ms: 0, cpuMs: 0 };
      g.count++;
      g.ms += r.ms;
      g.cpuMs += r.cpuMs ?? 0;
      groups.set(keyOf(r), g);
    }
    return [
      `[timing] by ${title} (commands, wall s, CPU s):`,
      ...[...groups]
        .sort((a, b) => b[1].ms - a[1].ms)
        .map(([k, g]) => `[timing]   ${k}: ${g.count}, ${seconds(g.ms)} s, ${seconds(g.cpuMs)} s`),
    ];
  };
  const total = rows.reduce((s, r) => s + r.ms, 0);
  const cpu = rows.reduce((s, r) => s + (r.cpuMs ?? 0), 0);
  return [
    `[timing] ${rows.length} pulumi commands, ${seconds(total)} s wall, ${seconds(cpu)} s CPU (${file})`,
    ...table("toolchain (a lane)", (r) => r.toolchain ?? "(not recorded)"),
    ...table("test file", (r) => r.testPath ?? "(outside jest)"),
    ...table("command", (r) => r.command),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!process.argv[2]) {
    process.stderr.write("usage: node scripts/lib/timing.mjs FILE (a file that LLM_ACCOUNTS_PULUMI_TIMING named)\n");
    process.exit(2);
  }
  console.log(summarizeTiming(process.argv[2]).join("\n"));
}
