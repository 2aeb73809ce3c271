#!/usr/bin/env node
import { parseArgs } from "node:util";
import { HOUR_MS } from "./api/assumptions.js";
import { SETTINGS } from "./client/settings.js";
import { redact } from "./api/redact.js";
import { credentialProblem, FAULT_KINDS, MAX_CLOCK_OFFSET_HOURS, parseFaultSpec, READING_NAMES, startEmulator, type EmulatorOptions, type Reading } from "./emulator/index.js";
import { DOCTOR_USAGE, runDoctor } from "./doctor.js";
import { IMPORT_USAGE, runImport } from "./import/command.js";
import { AUDIT_USAGE, runAudit } from "./policy/audit.js";
import { UsageError } from "./usageError.js";
import { readOptionFile } from "./commands/kit.js";
import { runSweep, SWEEP_USAGE, SweepUsageError } from "./sweep.js";
import { nodeTooOld } from "./version.js";

// On a Node.js older than the package supports: one line naming the one needed, before any command runs.
const tooOld = nodeTooOld();
if (tooOld) {
  process.stderr.write(`llm-accounts: ${tooOld}\n`);
  process.exit(1);
}

/** Help without a command: the commands, and how to see each one's options. */
const USAGE = `Usage: llm-accounts <command> [options]

Commands:
  emulator    Run a local emulator of the account API.
  import      Write a Pulumi program that manages an existing account as it is.
  audit       Check the live account (sub-accounts, and the API keys of a list) against the policy rules.
  sweep       Find (and with --yes delete) objects a test run left on an account, by alias prefix.
  doctor      Check an account against each point the spec leaves open, before the first pulumi up.

Run llm-accounts <command> --help for the options of a command.
`;

const EMULATOR_USAGE = `Options of "emulator":
  --port N              Port to listen on (default 8787; 0 picks a free port)
  --host H              Address to bind (default 127.0.0.1)
  --admin-key-file F    File holding the admin key of the management group (default: the environment
                        variable LLM_ACCOUNTS_ADMIN_KEY, else generated, or kept in --state-file)
  --account-key-file F  File holding the main account key of the sub-account group (default: the environment
                        variable LLM_ACCOUNTS_ACCOUNT_KEY, else generated, or kept in --state-file)
  --admin-key K, --account-key K
                        The keys themselves: discouraged, as any user of the machine sees them in ps
  --rate-window-ms N    Length of a rate-limit "minute" in ms (default 60000; scales every window)
  --no-rate-limits      Turn rate limits off
  --state-file F        Keep the state (credentials included, mode 0600) in this file across restarts
  --fault SPEC          Inject a fault; repeatable. SPEC is kind[:key=value,...], kinds ${FAULT_KINDS.join(", ")};
                        keys rate, ops, count, after, ms, retryAfter. E.g. --fault 429:rate=0.2,ops=api-key/create  --fault latency:ms=50
  --seed N              Seed of the fault generator (default 1)
  --reading NAME        Answer one of the spec's open points another way a real platform may; repeatable.
                        NAMES: ${READING_NAMES.join(", ")}
                        (docs/emulator.md#other-readings says what each changes)
  --clock-offset-hours=H Move the emulator's clock by H hours (may be negative or fractional; at most
                        ${MAX_CLOCK_OFFSET_HOURS}, ten years, either way): keys issued while it runs get
                        a created_at that much off (=-2200: 92 days old)
  -h, --help            Show this help

The first line on stdout is one JSON object: {"baseUrl","adminKey","accountKey"}.
Logs go to stderr, one line per request. SIGINT or SIGTERM stops the emulator.
`;

/** Each command's own help: its usage line and its options, nothing of the other commands. */
const COMMAND_USAGE: Record<string, string> = {
  emulator: EMULATOR_USAGE,
  import: IMPORT_USAGE,
  audit: AUDIT_USAGE,
  sweep: SWEEP_USAGE,
  doctor: DOCTOR_USAGE,
};

function usageOf(command: string | undefined): string {
  const own = command === undefined ? undefined : COMMAND_USAGE[command];
  return own === undefined ? USAGE : `Usage: llm-accounts ${command} [options]\n\n${own}`;
}

function integer(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === "" || !Number.isInteger(n) || n < 0) throw new UsageError(`--${name}: "${value}" is not a whole number`);
  return n;
}

function hours(value: string | undefined, name: string, max: number): number {
  if (value === undefined) return 0;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw new UsageError(`--${name}: "${value}" is not a number of hours`);
  if (Math.abs(n) > max) throw new UsageError(`--${name}: ${value} is more than ${max} hours (ten years) either way`);
  return n;
}

/**
 * A credential from its file or its environment variable; a key given on the command line still works, with
 * a warning, since every user of the machine can read it in `ps` and /proc/<pid>/cmdline. Outer whitespace is
 * dropped (a file written by `echo` ends in a newline; no key holds a space); anything else that cannot be a key,
 * a second line included, is refused naming where it came from.
 */
async function credential(which: "adminKey" | "accountKey", flag: string | undefined, file: string | undefined): Promise<string | undefined> {
  const option = which === "adminKey" ? "admin-key" : "account-key";
  let value: string | undefined;
  let source: string;
  if (flag !== undefined) {
    process.stderr.write(`warning: --${option} is visible to every user of this machine (ps); use ${SETTINGS[which].env} or --${option}-file\n`);
    [value, source] = [flag, `--${option}`];
  } else if (file !== undefined) {
    [value, source] = [readOptionFile(`${option}-file`, file, UsageError), `--${option}-file ${file}`];
  } else {
    [value, source] = [process.env[SETTINGS[which].env] || undefined, SETTINGS[which].env];
  }
  if (value === undefined) return undefined;
  const key = value.trim();
  const problem = credentialProblem(which, key);
  if (problem) throw new UsageError(`${source}: the ${which === "adminKey" ? "admin key" : "account key"} ${problem}`);
  return key;
}

async function emulatorOptions(args: string[]): Promise<EmulatorOptions> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      "admin-key": { type: "string" },
      "account-key": { type: "string" },
      "admin-key-file": { type: "string" },
      "account-key-file": { type: "string" },
      "rate-window-ms": { type: "string" },
      "no-rate-limits": { type: "boolean" },
      "state-file": { type: "string" },
      fault: { type: "string", multiple: true },
      seed: { type: "string" },
      "clock-offset-hours": { type: "string" },
      reading: { type: "string", multiple: true },
    },
  });
  const readings = (values.reading ?? []).flatMap((r) => r.split(",")).map((r) => r.trim()).filter((r) => r !== "");
  const unknown = readings.find((r) => !(READING_NAMES as string[]).includes(r));
  if (unknown !== undefined) throw new UsageError(`--reading: "${unknown}" is not a reading (${READING_NAMES.join(", ")})`);
  const rateWindowMs = integer(values["rate-window-ms"], "rate-window-ms", 60_000);
  if (rateWindowMs === 0) throw new UsageError("--rate-window-ms must be greater than 0");
  let faults;
  try {
    faults = (values.fault ?? []).map(parseFaultSpec);
  } catch (err) {
    throw new UsageError(`--fault: ${(err as Error).message}`);
  }
  return {
    port: integer(values.port, "port", 8787),
    host: values.host ?? "127.0.0.1",
    adminKey: await credential("adminKey", values["admin-key"], values["admin-key-file"]),
    accountKey: await credential("accountKey", values["account-key"], values["account-key-file"]),
    rateWindowMs,
    rateLimits: values["no-rate-limits"] ? false : undefined,
    stateFile: values["state-file"],
    faults,
    seed: integer(values.seed, "seed", 1),
    clockOffsetMs: hours(values["clock-offset-hours"], "clock-offset-hours", MAX_CLOCK_OFFSET_HOURS) * HOUR_MS,
    readings: readings as Reading[],
    log: (line) => process.stderr.write(`${line}\n`),
  };
}

async function runEmulator(args: string[]): Promise<void> {
  const emulator = await startEmulator(await emulatorOptions(args));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${signal}: stopping the emulator\n`);
    emulator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  // Handlers first: whoever reads the first line may signal at once.
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.stdout.write(`${JSON.stringify({ baseUrl: emulator.baseUrl, adminKey: emulator.adminKey, accountKey: emulator.accountKey })}\n`);
  process.stderr.write(`emulator listening on ${emulator.baseUrl}\n`);
}

/**
 * A reader that closes stdout early (`llm-accounts audit | head`) is no error: the rest of the output is dropped
 * and the command ends quietly with the exit code it comes to. Any other failure of stdout is one.
 */
function dropOutputOnClosedStdout(): void {
  let closed = false;
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE" || (closed && err.code === "ERR_STREAM_DESTROYED")) {
      closed = true;
      return;
    }
    process.stderr.write(`llm-accounts: cannot write to stdout (${err.code ?? err.message})\n`);
    process.exit(1);
  });
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    process.stdout.write(USAGE);
    return;
  }
  if (!(command in COMMAND_USAGE)) throw new UsageError(`unknown command "${command}"`);
  if (rest.includes("-h") || rest.includes("--help")) {
    process.stdout.write(usageOf(command));
    return;
  }
  if (command === "emulator") return runEmulator(rest);
  if (command === "import") {
    return runImport(rest, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env });
  }
  if (command === "sweep") {
    process.exitCode = await runSweep(rest, { stdin: process.stdin, stdout: process.stdout, env: process.env });
    return;
  }
  if (command === "doctor") {
    process.exitCode = await runDoctor(rest, { stdout: process.stdout, env: process.env });
    return;
  }
  process.exitCode = await runAudit(rest, { stdin: process.stdin, stdout: process.stdout, env: process.env });
}

dropOutputOnClosedStdout();
main(process.argv.slice(2)).catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  const misuse = err instanceof UsageError || err instanceof SweepUsageError || String((err as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS");
  const command = process.argv[2];
  process.stderr.write(`llm-accounts: ${redact(message)}\n${misuse ? `\n${usageOf(command !== undefined && command in COMMAND_USAGE ? command : undefined)}` : ""}`);
  process.exit(misuse ? 2 : 1);
});
