#!/usr/bin/env node
import { redact } from "./api/redact.js";
import { auditCommand } from "./commands/audit.js";
import { EXIT, type Command, type CommandIo } from "./commands/command.js";
import { doctorCommand } from "./commands/doctor/index.js";
import { emulatorCommand } from "./commands/emulator.js";
import { importCommand } from "./commands/import.js";
import { sweepCommand } from "./commands/sweep.js";
import { UsageError } from "./usageError.js";
import { nodeTooOld, PACKAGE } from "./version.js";

// On a Node.js older than the package supports: one line naming the one needed, before any command runs.
const tooOld = nodeTooOld();
if (tooOld) {
  process.stderr.write(`llm-accounts: ${tooOld}\n`);
  process.exit(EXIT.failed);
}

/** The commands of `llm-accounts`, each in its home under provider/commands/ (docs/commands.md). */
const COMMANDS: readonly Command[] = [emulatorCommand, importCommand, auditCommand, sweepCommand, doctorCommand];

/** Help without a command: the commands, and how to see each one's options. */
const USAGE = `Usage: llm-accounts <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(10)}  ${c.summary}`).join("\n")}

Options:
  -V, --version  Print the version of the package and of Node.js
  -h, --help     Show this help

Run llm-accounts <command> --help (or llm-accounts help <command>) for the options and exit codes of a command.
Exit codes, the same for every command (docs/commands.md#exit-codes): ${EXIT.ok} ok, ${EXIT.failed} could not run, ${EXIT.usage} misuse, ${EXIT.findings} findings.
`;

/** `--version`: the package's version and the Node.js it runs on, as `pulumi version` prints one line. */
const VERSION = `${PACKAGE.name} ${PACKAGE.version} (Node.js ${process.version})\n`;

const commandNamed = (name: string | undefined): Command | undefined => COMMANDS.find((c) => c.name === name);

/** Help or the version on stdout: exit 0. */
function show(io: CommandIo, text: string): number {
  io.stdout.write(text);
  return EXIT.ok;
}

/** What `llm-accounts <args>` does before a command runs: help, the version, or the command and its arguments. */
async function main(argv: string[], io: CommandIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "-h" || name === "--help") return show(io, USAGE);
  if (name === "-V" || name === "--version") return show(io, VERSION);
  if (name === "help") {
    if (rest.length === 0) return show(io, USAGE);
    const asked = commandNamed(rest[0]);
    if (!asked) throw new UsageError(`help: unknown command "${rest[0]}"`);
    return show(io, asked.usage);
  }
  const command = commandNamed(name);
  if (!command) throw new UsageError(`unknown command "${name}"`);
  if (rest.includes("-h") || rest.includes("--help")) return show(io, command.usage);
  return command.run(rest, io);
}

/**
 * An error a command ends with, on stderr: a misuse (UsageError) with the command's usage (the top-level one for an
 * unknown command), exit 2; anything else exit 1. The message is redacted: it never shows a key.
 */
function failure(err: unknown, argv: string[], io: CommandIo): number {
  const message = err instanceof Error ? err.message : String(err);
  const misuse = err instanceof UsageError;
  const usage = misuse ? `\n${(argv[0] === "help" ? undefined : commandNamed(argv[0]))?.usage ?? USAGE}` : "";
  io.stderr.write(`llm-accounts: ${redact(message)}\n${usage}`);
  return misuse ? EXIT.usage : EXIT.failed;
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
    process.exit(EXIT.failed);
  });
}

const io: CommandIo = {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  stderrIsTty: process.stderr.isTTY === true,
};
const argv = process.argv.slice(2);
dropOutputOnClosedStdout();
main(argv, io).then(
  (code) => (process.exitCode = code),
  // A failed command may leave requests in flight (the other reads of a pool): they are not waited for.
  (err: unknown) => process.exit(failure(err, argv, io)),
);
