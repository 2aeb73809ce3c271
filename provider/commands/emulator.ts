import { HOUR_MS } from "../api/assumptions.js";
import { SETTINGS } from "../client/settings.js";
import {
  credentialProblem,
  FAULT_KINDS,
  MAX_CLOCK_OFFSET_HOURS,
  parseFaultSpec,
  READING_NAMES,
  startEmulator,
  type EmulatorOptions,
  type Reading,
} from "../emulator/index.js";
import { UsageError } from "../usageError.js";
import { EXIT, type Command, type CommandIo } from "./command.js";
import { commandOptions, readOptionFile, usageText } from "./kit.js";

/** What `llm-accounts emulator` does, in one line. */
const SUMMARY = "Run a local emulator of the account API.";

/** Help text of `llm-accounts emulator`. */
const EMULATOR_USAGE = usageText(
  "emulator",
  `${SUMMARY}
The first line on stdout is one JSON object: {"baseUrl","adminKey","accountKey"}.
Logs go to stderr, one line per request. SIGINT or SIGTERM stops the emulator.`,
  `Options of "emulator":
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
`,
  {
    ok: "stopped by SIGINT or SIGTERM",
    failed: "it could not listen (the port is taken), or could not read or write its --state-file",
  },
);

function integer(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === "" || !Number.isInteger(n) || n < 0)
    throw new UsageError(`--${name}: "${value}" is not a whole number`);
  return n;
}

function hours(value: string | undefined, name: string, max: number): number {
  if (value === undefined) return 0;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n))
    throw new UsageError(`--${name}: "${value}" is not a number of hours`);
  if (Math.abs(n) > max) throw new UsageError(`--${name}: ${value} is more than ${max} hours (ten years) either way`);
  return n;
}

/**
 * A credential from its file or its environment variable; a key given on the command line still works, with
 * a warning, since every user of the machine can read it in `ps` and /proc/<pid>/cmdline. Outer whitespace is
 * dropped (a file written by `echo` ends in a newline; no key holds a space); anything else that cannot be a key,
 * a second line included, is refused naming where it came from.
 */
async function credential(
  which: "adminKey" | "accountKey",
  flag: string | undefined,
  file: string | undefined,
  io: Pick<CommandIo, "env" | "stderr">,
): Promise<string | undefined> {
  const stderr = io.stderr;
  const option = which === "adminKey" ? "admin-key" : "account-key";
  let value: string | undefined;
  let source: string;
  if (flag !== undefined) {
    stderr.write(
      `warning: --${option} is visible to every user of this machine (ps); use ${SETTINGS[which].env} or --${option}-file\n`,
    );
    [value, source] = [flag, `--${option}`];
  } else if (file !== undefined) {
    [value, source] = [readOptionFile(`${option}-file`, file, UsageError), `--${option}-file ${file}`];
  } else {
    [value, source] = [io.env[SETTINGS[which].env] || undefined, SETTINGS[which].env];
  }
  if (value === undefined) return undefined;
  const key = value.trim();
  const problem = credentialProblem(which, key);
  if (problem) throw new UsageError(`${source}: the ${which === "adminKey" ? "admin key" : "account key"} ${problem}`);
  return key;
}

async function emulatorOptions(args: string[], io: CommandIo): Promise<EmulatorOptions> {
  const values = commandOptions(args, {
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
  });
  const readings = (values.reading ?? [])
    .flatMap((r) => r.split(","))
    .map((r) => r.trim())
    .filter((r) => r !== "");
  const unknown = readings.find((r) => !(READING_NAMES as string[]).includes(r));
  if (unknown !== undefined)
    throw new UsageError(`--reading: "${unknown}" is not a reading (${READING_NAMES.join(", ")})`);
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
    adminKey: await credential("adminKey", values["admin-key"], values["admin-key-file"], io),
    accountKey: await credential("accountKey", values["account-key"], values["account-key-file"], io),
    rateWindowMs,
    rateLimits: values["no-rate-limits"] ? false : undefined,
    stateFile: values["state-file"],
    faults,
    seed: integer(values.seed, "seed", 1),
    clockOffsetMs: hours(values["clock-offset-hours"], "clock-offset-hours", MAX_CLOCK_OFFSET_HOURS) * HOUR_MS,
    readings: readings as Reading[],
    log: (line) => void io.stderr.write(`${line}\n`),
  };
}

/**
 * `llm-accounts emulator`: serves the API until SIGINT or SIGTERM, then closes and resolves with the exit code.
 * The first line on stdout is its address and credentials; one log line per request on stderr.
 */
export async function runEmulator(args: string[], io: CommandIo): Promise<number> {
  const emulator = await startEmulator(await emulatorOptions(args, io));
  const stopped = new Promise<number>((done) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      io.stderr.write(`${signal}: stopping the emulator\n`);
      emulator.close().then(
        () => done(EXIT.ok),
        () => done(EXIT.failed),
      );
    };
    // Handlers first: whoever reads the first line may signal at once.
    process.on("SIGINT", () => stop("SIGINT"));
    process.on("SIGTERM", () => stop("SIGTERM"));
  });
  io.stdout.write(
    `${JSON.stringify({ baseUrl: emulator.baseUrl, adminKey: emulator.adminKey, accountKey: emulator.accountKey })}\n`,
  );
  io.stderr.write(`emulator listening on ${emulator.baseUrl}\n`);
  return stopped;
}

/** `llm-accounts emulator`, in the command table (cli.ts). */
export const emulatorCommand: Command = { name: "emulator", summary: SUMMARY, usage: EMULATOR_USAGE, run: runEmulator };
