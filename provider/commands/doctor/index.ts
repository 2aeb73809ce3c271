import { redact } from "../../api/redact.js";
import { DOCTOR_USAGE, runDoctor } from "../../doctor.js";
import type { Command, CommandIo } from "../command.js";
import { commandOptions } from "../kit.js";
import { runPulumi } from "../pulumi.js";

/**
 * `llm-accounts doctor` in the command table: a thin adapter around provider/doctor.ts (split into this folder by the
 * doctor's own work, issue 54), which runs the Pulumi CLI through the commands' one helper and refuses an unknown
 * option as every command does (its usage on stderr, exit 2) before the doctor starts.
 */

/** `pulumi config set ...` of the doctor's --save --stack, through the one helper (--non-interactive). */
function pulumiIn(env: NodeJS.ProcessEnv): (args: string[]) => Promise<void> {
  return async (args) => {
    const r = await runPulumi(args, { env });
    if (r === null) throw new Error("no pulumi CLI was found on PATH");
    if (r.code !== 0) throw new Error(`pulumi exited ${r.code}: ${redact(r.stderr.trim())}`);
  };
}

async function run(args: string[], io: CommandIo): Promise<number> {
  commandOptions(args, { write: { type: "boolean" }, json: { type: "boolean" }, save: { type: "boolean" }, stack: { type: "string" } });
  return runDoctor(args, { stdout: io.stdout as NodeJS.WritableStream, env: io.env, pulumi: pulumiIn(io.env) });
}

export const doctorCommand: Command = {
  name: "doctor",
  summary: "Check an account against each point the spec leaves open, before the first pulumi up.",
  usage: `Usage: llm-accounts doctor [options]\n\n${DOCTOR_USAGE}`,
  run,
};
