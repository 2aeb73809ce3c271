import type { Profile } from "../../api/profile.js";
import { EXIT, type CommandIo } from "../command.js";
import type { DoctorOptions } from "./options.js";
import { clean } from "./probe.js";

/**
 * What the doctor says of one point: "holds" (as assumed), "handled" (otherwise, and the package reads it by itself),
 * "by looking" (an answer with two meanings on this platform: the runtime decides each one by looking, with a get or
 * a list), "setting" (a setting is needed), "not checked" (hidden, or not measured: and why).
 */
export type Verdict = "holds" | "handled" | "by looking" | "setting" | "not checked";

/** One open point as the doctor found it. */
export interface DoctorRow {
  /** The open point (docs/decisions.md). */
  point: string;
  /** What the package assumes. */
  assumes: string;
  /** What the platform did (or why it was not checked or not measured). */
  observed: string;
  verdict: Verdict;
  /** The setting to set, with its value, when one is needed or saves calls. */
  setting?: string;
  /** The emulator reading (`llm-accounts emulator --reading`) that answers this point the way the platform did. */
  reading?: string;
}

/** What the doctor found: its rows, and with --write the profile it measured. */
export interface Found {
  rows: DoctorRow[];
  profile?: Profile;
}

/** Where `--save` put the profile: `landed` false when it did not (the exit code is then 1). */
export interface Saved {
  landed: boolean;
  text: string;
}

const VERDICTS: Verdict[] = ["holds", "handled", "by looking", "setting", "not checked"];

/** Rows in the order of their verdicts. */
export const byVerdict = (a: DoctorRow, b: DoctorRow): number =>
  VERDICTS.indexOf(a.verdict) - VERDICTS.indexOf(b.verdict);

/** The exit code of what was found: a setting needed is 3, a save that did not land 1, else 0. */
export function exitOf(rows: DoctorRow[], saved: Saved | undefined): number {
  if (saved && !saved.landed) return EXIT.failed;
  return rows.some((r) => r.verdict === "setting") ? EXIT.findings : EXIT.ok;
}

/** Prints what the doctor found (the table or --json) on stdout, what it left on stderr too; the exit code. */
export function report(
  found: Found,
  opts: DoctorOptions,
  io: CommandIo,
  left: string | undefined,
  saved: Saved | undefined,
): number {
  // Every row is printable and masked, in the table and in --json alike.
  const rows = found.rows.map(
    (r) =>
      Object.fromEntries(
        Object.entries(r).map(([k, v]) => [k, typeof v === "string" ? clean(v) : v]),
      ) as unknown as DoctorRow,
  );
  const code = exitOf(rows, saved);
  const differs = [
    ...new Set(
      rows.flatMap((r) => (r.reading && r.verdict !== "holds" && r.verdict !== "not checked" ? [r.reading] : [])),
    ),
  ];
  const settings = rows.flatMap((r) => (r.setting ? [r.setting] : []));
  if (left) io.stderr.write(`llm-accounts doctor: ${clean(left)}\n`);
  if (saved && !saved.landed) io.stderr.write(`llm-accounts doctor: ${saved.text}\n`);
  if (opts.json) {
    const savedPart = saved && { saved: saved.text, landed: saved.landed };
    io.stdout.write(
      `${JSON.stringify({ ran: true, exitCode: code, differs, settings, rows, ...(found.profile && { profile: found.profile }), ...savedPart, ...(left && { left: clean(left) }) })}\n`,
    );
    return code;
  }
  const width = Math.max(...rows.map((r) => r.point.length));
  for (const r of rows) {
    io.stdout.write(
      `${r.verdict.padEnd(11)} ${r.point.padEnd(width)}  assumes ${r.assumes}; the platform: ${r.observed}${r.setting ? `; set ${r.setting}` : ""}\n`,
    );
  }
  const needed = rows.some((r) => r.verdict === "setting");
  io.stdout.write(
    needed
      ? `\nA setting is needed before the first up: ${settings.join("; ")}.\n`
      : `\nEvery point checked holds or is handled by the package${differs.length ? ` (this platform differs in: ${differs.join(", ")}; the emulator plays it with --reading)` : ""}.\n`,
  );
  if (left) io.stdout.write(`\n${clean(left)}.\n`);
  if (saved?.landed)
    io.stdout.write(
      opts.stack
        ? `\nThe profile: ${saved.text}.\n`
        : `\nThe profile, for the stack config (plain, not secret):\n${saved.text}\n`,
    );
  return code;
}

/** Prints why the doctor could not run (stderr; --json on stdout too); the exit code 1. */
export function reportFailure(
  message: string,
  opts: { json: boolean },
  io: CommandIo,
  reading?: string,
  more: Record<string, unknown> = {},
): number {
  io.stderr.write(`llm-accounts doctor could not run: ${message}\n`);
  if (opts.json)
    io.stdout.write(
      `${JSON.stringify({ ran: false, exitCode: EXIT.failed, error: message, ...(reading && { differs: [reading] }), ...more })}\n`,
    );
  return EXIT.failed;
}
