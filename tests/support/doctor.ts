import { PassThrough } from "node:stream";
import { runDoctor, type DoctorIo } from "../../provider/commands/doctor/index.js";

/** A doctor's io for a test: `stdout` and the env it is given, stderr kept apart (read with `err()`), no terminal. */
export function doctorIo(stdout: NodeJS.WritableStream, env: NodeJS.ProcessEnv, extra: Partial<DoctorIo> = {}): DoctorIo & { err: () => string } {
  const stderr = new PassThrough();
  let err = "";
  stderr.on("data", (c: Buffer) => (err += c.toString()));
  return { stdin: new PassThrough(), stdout, stderr, env, stderrIsTty: false, ...extra, err: () => err };
}

/** Runs `llm-accounts doctor args` in-process: its exit code, stdout and stderr. */
export async function doctorRun(args: string[], env: NodeJS.ProcessEnv, extra: Partial<DoctorIo> = {}): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  let out = "";
  stdout.on("data", (c: Buffer) => (out += c.toString()));
  const io = doctorIo(stdout, env, extra);
  const code = await runDoctor(args, io);
  return { code, out, err: io.err() };
}
