import type { CommandIo } from "./command.js";

/**
 * Progress of long work on stderr (docs/commands.md#progress): done of total and the time left, redrawn in place
 * on a terminal (at most every REDRAW_MS), one line every LOG_EVERY_MS in a log (a CI job), and the last count when
 * anything was shown. A timer shows it again while no answer comes (the client waiting for the rate limit's minute). Nothing with --quiet or --json: stdout carries the result alone either way. Our own small
 * module rather than a progress-bar library (docs/decisions.md): one line of text is all it draws.
 */

/** One answer more: how many of how many are done. */
export type Progress = (done: number, total: number) => void;

/** The time progress is measured on (a test gives a fake clock and timer), and how often a log gets a line. */
export interface ProgressTiming {
  now?: () => number;
  /** Between two lines in a log (not a terminal); LOG_EVERY_MS unless given. */
  everyMs?: number;
  /** Calls `tick` every `ms` until the returned stop is called: an unref'd setInterval unless a test gives another. */
  repeat?: (tick: () => void, ms: number) => () => void;
}

/** setInterval that never keeps the process alive, and its stop. */
function repeatEvery(tick: () => void, ms: number): () => void {
  const timer = setInterval(tick, ms);
  timer.unref();
  return () => clearInterval(timer);
}

/** Between two lines when stderr is a log. */
export const LOG_EVERY_MS = 3000;
/** Between two redraws on a terminal. */
const REDRAW_MS = 100;

/** A duration as the time left shows it: `45s`, `6m 20s`, `2h 05m`. */
export function durationText(ms: number): string {
  const s = Math.max(1, Math.ceil(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/** The time left at the pace so far (done in `elapsedMs`), or undefined before the first answer. */
function timeLeft(done: number, total: number, elapsedMs: number): string | undefined {
  if (done === 0 || done >= total || elapsedMs <= 0) return undefined;
  return `about ${durationText(((total - done) * elapsedMs) / done)} left`;
}

/**
 * The progress of one piece of work, shown on `io.stderr` as `<what> <done> of <total> <unit>, about <time> left`
 * (`llm-accounts audit: read 1200 of 5000 API key(s), about 6m 20s left`); a no-op when `quiet`.
 */
export function progressOn(
  io: Pick<CommandIo, "stderr" | "stderrIsTty">,
  what: string,
  unit: string,
  options: { quiet?: boolean; timing?: ProgressTiming } = {},
): Progress {
  if (options.quiet) return () => {};
  const now = options.timing?.now ?? Date.now;
  const everyMs = io.stderrIsTty ? REDRAW_MS : (options.timing?.everyMs ?? LOG_EVERY_MS);
  const started = now();
  let last = started;
  let shown = false;
  let counted = { done: 0, total: 0 };
  let stop: (() => void) | undefined;
  const draw = (at: number): void => {
    const { done, total } = counted;
    const finished = done >= total;
    last = at;
    shown = true;
    const left = timeLeft(done, total, at - started);
    const text = `${what} ${done} of ${total} ${unit}${left ? `, ${left}` : ""}`;
    if (!io.stderrIsTty) io.stderr.write(`${text}\n`);
    // On a terminal the line is redrawn over itself (\r, then cleared to its end), and ended once the work is.
    else io.stderr.write(`\r${text}\x1b[K${finished ? "\n" : ""}`);
  };
  const due = (): boolean => now() - last >= everyMs;
  return (done, total) => {
    counted = { done, total };
    const finished = done >= total;
    if (!finished)
      stop ??= (options.timing?.repeat ?? repeatEvery)(() => due() && draw(now()), Math.max(everyMs, 1000));
    else stop?.();
    if (finished ? shown : due()) draw(now());
  };
}
