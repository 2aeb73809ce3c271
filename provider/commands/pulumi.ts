import { spawn } from "node:child_process";

/** What a `pulumi` run answered: its exit code, its stdout (kept in memory: it may hold secrets) and its stderr. */
export interface PulumiRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Where a `pulumi` command runs, and what it reads on stdin. */
export interface PulumiOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** A value for its stdin (a secret is given there, never in the argument list the process table shows). */
  stdin?: string;
}

/**
 * The one way the commands run the Pulumi CLI (import, the doctor): always `--non-interactive` (a prompt would wait
 * on a CI job for ever), stdout kept in memory, never printed. Resolves with what it answered, or null when there is
 * no `pulumi` on the PATH. A CLI that exits without reading the value given on stdin makes the write fail (EPIPE):
 * the run then counts as failed (exit 1), even if it exited 0, since a value it did not read was not stored.
 */
export function runPulumi(args: string[], options: PulumiOptions = {}): Promise<PulumiRun | null> {
  const stdin = options.stdin ?? "";
  return new Promise((done, fail) => {
    const child = spawn("pulumi", [...args, "--non-interactive"], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    let stderr = "";
    let unread = false;
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdin.on("error", () => (unread = stdin !== ""));
    child.on("error", (err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? done(null) : fail(err)));
    child.on("close", (code) =>
      done({
        code: code === 0 && unread ? 1 : (code ?? 1),
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: unread && stderr === "" ? "it exited without reading the value" : stderr,
      }),
    );
    child.stdin.end(stdin);
  });
}
