import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A stand-in `pulumi` in a new folder under `parent`: it logs each run's arguments, and answers the runs whose
 * arguments match a case of `cases` (shell `case` patterns, e.g. `"stack export"*`) with that shell text. `read(f)`
 * reads a file the stand-in wrote into its folder (`$BIN/f`).
 */
export function standInPulumi(
  parent: string,
  cases: Record<string, string>,
): { bin: string; env: Record<string, string>; runs: () => string[]; read: (file: string) => string } {
  const bin = mkdtempSync(join(parent, "llm-stand-in-pulumi-"));
  const script = [
    "#!/bin/sh",
    `BIN="${bin}"`,
    'echo "$*" >> "$BIN/runs"',
    'case "$*" in',
    ...Object.entries(cases).map(([pattern, then]) => `  ${pattern}) ${then};;`),
    "esac",
    "exit 0",
  ].join("\n");
  writeFileSync(join(bin, "pulumi"), script);
  chmodSync(join(bin, "pulumi"), 0o755);
  const read = (f: string) => (existsSync(join(bin, f)) ? readFileSync(join(bin, f), "utf8") : "");
  return { bin, env: { PATH: `${bin}:/usr/bin:/bin` }, runs: () => read("runs").split("\n").filter(Boolean), read };
}
