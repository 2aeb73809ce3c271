/**
 * `llm-accounts doctor`: checks a real account against each point the spec leaves open (docs/decisions.md), before the
 * first `pulumi up`. It sends the operations of api/operations.ts itself (it must see the answers as the wire carries
 * them) and judges each as the client will: by the client's own reading (client/refusals.ts judge), parsing and
 * schemas, and where the outcome is the client's to say (a list), by the client itself; never copies of them. A
 * meaning is measured from two agreeing readings, never from a transient answer (probe.ts). Read-only by default;
 * `--write` adds what only a write shows, with throwaway objects under a marked alias that it deletes on every way
 * out (throwaways.ts), and `--save` writes the platform profile it measured (api/profile.ts). Nothing secret is printed.
 *
 * The folder: probe.ts (the requests and their readings), checks/ (the points, by subject), throwaways.ts (what
 * `--write` makes, its deletes and the journal of earlier runs' leftovers), profile.ts, stack.ts (`--stack`),
 * report.ts (the table, --json and the exit code).
 */
import { constants } from "node:os";
import { USAGE_NEXT_PAGE_FIELD } from "../../api/assumptions.js";
import { LlmAccountsClient } from "../../client/client.js";
import { SYSTEM_CLOCK } from "../../client/clock.js";
import { parseBaseUrl, type TransportOptions } from "../../client/config.js";
import { SETTINGS } from "../../client/settings.js";
import { UsageError } from "../../usageError.js";
import { EXIT, type Command, type CommandIo } from "../command.js";
import { connect, readOnlyRows } from "./checks/account.js";
import { answerRows } from "./checks/answers.js";
import { writes } from "./checks/writes.js";
import { DOCTOR_USAGE, parseOptions, type DoctorOptions } from "./options.js";
import { Probe, Stopped, clean, type DoctorClock } from "./probe.js";
import { clashRows, profileOf } from "./profile.js";
import { byVerdict, report, reportFailure, type DoctorRow, type Found } from "./report.js";
import { unmeasuredRow, type Run } from "./run.js";
import { accountOf, saveProfile } from "./stack.js";
import { Journal } from "./journal.js";
import { Throwaways, sweepEarlier } from "./throwaways.js";

export { DOCTOR_USAGE } from "./options.js";
export type { DoctorRow } from "./report.js";
export type { DoctorClock } from "./probe.js";

/** The signals that stop `--write`: each deletes what it made, then exits 128 + the signal's number. */
const STOPPING_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
type StoppingSignal = (typeof STOPPING_SIGNALS)[number];

/** The doctor's io: a command's, and what a test may give instead of the process's own. */
export interface DoctorIo extends CommandIo {
  /** The clock of the doctor's waits (the wall clock unless a test gives another). */
  clock?: DoctorClock;
  /** Where the signals come from: the process unless a test gives another. */
  signals?: Pick<NodeJS.Process, "on" | "off">;
  /** The folder `--stack` reads and saves the stack in (the process's). */
  cwd?: string;
}

/** `llm-accounts doctor`, one command of the table in cli.ts. */
export const doctorCommand: Command = {
  name: "doctor",
  summary: "Check an account against each point the spec leaves open, before the first pulumi up.",
  usage: DOCTOR_USAGE,
  run: (args, io) => runDoctor(args, io),
};

/** Runs `llm-accounts doctor`; resolves with its exit code (EXIT; 128 + N after signal N). */
export async function runDoctor(args: string[], io: DoctorIo): Promise<number> {
  let opts: DoctorOptions;
  try {
    opts = parseOptions(args);
  } catch (err) {
    if (!(err instanceof UsageError) && !String((err as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS"))
      throw err;
    io.stderr.write(`llm-accounts: ${clean((err as Error).message)}\n\n${DOCTOR_USAGE}`);
    return EXIT.usage;
  }
  const cwd = io.cwd ?? process.cwd();
  let account: TransportOptions;
  try {
    account = await accountOf(io.env, opts.stack, cwd);
  } catch (err) {
    // A save that cannot land (no such stack, no pulumi, a mismatch, no account named) stops before anything is measured.
    return reportFailure(clean((err as Error).message), opts, io, undefined, opts.save ? { landed: false } : {});
  }
  return opts.write
    ? withSignals(io, (stop) => measure(account, opts, io, cwd, stop))
    : measure(account, opts, io, cwd, new AbortController().signal);
}

/**
 * Runs `work` with SIGINT, SIGTERM and SIGHUP caught: a signal aborts `stop` (the probes stop, the cleanup deletes
 * what they made), and the exit code is then 128 + the signal's number, whatever the work found.
 */
async function withSignals(io: DoctorIo, work: (stop: AbortSignal) => Promise<number>): Promise<number> {
  const signals = io.signals ?? process;
  const stop = new AbortController();
  let caught: StoppingSignal | undefined;
  const handlers = STOPPING_SIGNALS.map((signal) => {
    const handler = () => {
      if (caught !== undefined) return;
      caught = signal;
      io.stderr.write(`llm-accounts doctor: ${signal}: stopping, deleting what it made\n`);
      stop.abort(new Stopped(`interrupted (${signal})`));
    };
    signals.on(signal, handler);
    return [signal, handler] as const;
  });
  try {
    const code = await work(stop.signal);
    return caught === undefined ? code : 128 + constants.signals[caught];
  } finally {
    for (const [signal, handler] of handlers) signals.off(signal, handler);
  }
}

/** Measures, reports, saves with --save; the exit code. */
async function measure(
  account: TransportOptions,
  opts: DoctorOptions,
  io: DoctorIo,
  cwd: string,
  stop: AbortSignal,
): Promise<number> {
  const made = new Throwaways(new Journal(io.env, account), io.stderr);
  let found: Found;
  try {
    found = await examine(account, opts.write, { clock: io.clock ?? SYSTEM_CLOCK, stop, made, stderr: io.stderr });
  } catch (err) {
    const deleted = made.deletedText;
    if (deleted) io.stderr.write(`llm-accounts doctor: ${deleted}\n`);
    const message = clean([err instanceof Error ? err.message : String(err), made.left].filter(Boolean).join("; "));
    return reportFailure(
      message,
      opts,
      io,
      err instanceof Stopped ? err.reading : undefined,
      opts.save ? { landed: false } : {},
    );
  }
  const saved = opts.save && found.profile ? await saveProfile(found.profile, opts.stack, io.env, cwd) : undefined;
  return report(found, opts, io, made.left, saved);
}

/** The credentials the doctor runs with; both are needed. */
function bothKeys(options: TransportOptions): { admin: string; account: string } {
  if (!options.adminKey || !options.accountKey) {
    throw new Error(`both credentials are needed: set ${SETTINGS.adminKey.env} and ${SETTINGS.accountKey.env}`);
  }
  return { admin: options.adminKey, account: options.accountKey };
}

/** Every row, read-only checks first, then (with `write`) those that need a write, and with `write` the profile. Throws when the check cannot run. */
async function examine(
  options: TransportOptions,
  write: boolean,
  io: { clock: DoctorClock; stop: AbortSignal; made: Throwaways; stderr: CommandIo["stderr"] },
): Promise<Found> {
  const probe = new Probe(parseBaseUrl(options.baseUrl), bothKeys(options), io.clock, io.stop, io.stderr);
  const run: Run = {
    probe,
    client: new LlmAccountsClient({ ...options, rateLimits: false, clock: io.clock }),
    profile: options.platform?.profile,
    lateWritesMs: options.platform?.lateWritesMs,
    usageField: options.platform?.usagePageField ?? USAGE_NEXT_PAGE_FIELD,
    measured: { refused: [], goneKey: [], goneSubAccount: [], unauthorised: [], unmeasured: [], limits: {} },
    paging: { page_size: -1 },
    made: io.made,
    answers: { terse: false },
    models: [],
  };
  const rows = [...(await connect(run)), ...(await readOnlyRows(run))];
  if (write) {
    const earlier = await sweepEarlier(run);
    if (earlier) rows.push(earlier);
    rows.push(...(await writes(run)));
  } else rows.push(...readOnlyOmits(run));
  rows.push(...answerRows(probe));
  // Points whose answers were not measured and that no row names yet.
  for (const u of run.measured.unmeasured)
    if (!rows.some((r) => r.point === u.point)) rows.push(unmeasuredRow(u.point, "a steady answer", u.why));
  const all = rows.sort(byVerdict);
  if (!write) return { rows: all };
  const profile = profileOf(probe, run.measured, all);
  return { rows: [...all, ...clashRows(profile)].sort(byVerdict), profile };
}

/** The rows read-only does not check. */
function readOnlyOmits(run: Run): DoctorRow[] {
  return [
    {
      point: "usage paging field",
      assumes: `"${run.usageField}"`,
      observed: "checked with --write only (a key of the doctor's makes usage to page through)",
      verdict: "not checked",
    },
    {
      point: "create mark, write answers, refusals, alias filter",
      assumes: "see docs/decisions.md",
      observed: "checked with --write only",
      verdict: "not checked",
    },
    {
      point: "aliases and pricing as kept",
      assumes: "as written (case, length, factor decimals; an edit sets the whole pricing)",
      observed: "checked with --write only",
      verdict: "not checked",
    },
  ];
}
