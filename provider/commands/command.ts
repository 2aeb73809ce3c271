/**
 * The one shape of every `llm-accounts` command (docs/commands.md): a name, a summary for the command table, its
 * usage (options and exit codes), and a run that takes the arguments after the command's name and one `io`, and
 * returns the exit code. The table in cli.ts lists them; what commands share stands beside this file (kit.ts, keyReads.ts,
 * progress.ts, pulumi.ts, batchGroups.ts), and a command's own file holds its options, its usage and its run.
 */

/** What a command reads and writes: results on stdout, errors, progress and hints on stderr. */
export interface CommandIo {
  stdin: NodeJS.ReadableStream;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
  /** Whether stderr is a terminal: progress is redrawn in place there, and written as a line every few seconds elsewhere. */
  stderrIsTty: boolean;
}

/** The exit codes of every command, documented in one place (docs/commands.md#exit-codes). */
export const EXIT = {
  /** Done, nothing found, nothing needed. */
  ok: 0,
  /** Could not run (the platform refused the credentials, an answer could not be read, a save did not land). */
  failed: 1,
  /** Misuse: an unknown option or a malformed value; the command's usage is printed on stderr. */
  usage: 2,
  /** Findings: a dry run found objects, an audit found violations, the doctor found a setting needed. */
  findings: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** One command of `llm-accounts`. */
export interface Command {
  name: string;
  /** One line for the table of commands. */
  summary: string;
  /** Its usage: synopsis, options, exit codes (printed by `--help`, `help <name>`, and after a misuse). */
  usage: string;
  run(args: string[], io: CommandIo): Promise<number>;
}
