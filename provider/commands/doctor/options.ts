import { parseArgs } from "node:util";
import { UsageError } from "../../usageError.js";
import { usageText } from "../kit.js";

/** The doctor's usage: its options and exit codes (EXIT in commands/command.ts). */
export const DOCTOR_USAGE = usageText(
  "doctor",
  "Checks an account against each point the spec leaves open, before the first pulumi up.\n\n" +
    "Credentials from LLM_ACCOUNTS_BASE_URL, LLM_ACCOUNTS_ADMIN_KEY, LLM_ACCOUNTS_ACCOUNT_KEY (with --stack, from that\n" +
    "stack's config). Stopped by SIGINT, SIGTERM or SIGHUP, it deletes what it made and exits 128+N (130, 143, 129).",
  `Options of "doctor":
  --write    Also check what only a write shows: creates one API key (restricted, then disabled), and
             sub-accounts of balance 0 (a few, then one create of 100, the most the package sends at once) under
             an alias marked "doctor~", and deletes them again on every way out (SIGINT, SIGTERM, SIGHUP too); what
             it could not delete is named with the command that deletes it, and deleted first by its next run
  --save     With --write: print the platform profile it measured as a "pulumi config set llm-accounts:profile" line
             (plain JSON, no secret); with it, the package classifies every answer by the profile's signatures
  --stack NAME  With --save: measure the account of stack NAME's config (in this folder) and save the profile
             in it with "pulumi config set"
  --json     One JSON object on stdout instead of the table
`,
  {
    ok: "every point holds, is handled by the package, or is decided by looking",
    failed: "no credentials, a credential refused, no answer, or a save that did not land",
    findings: "a setting is needed before the first up",
  },
);

/** What the doctor was asked. */
export interface DoctorOptions {
  write: boolean;
  json: boolean;
  save: boolean;
  stack?: string;
}

/** Parses the doctor's options; a misuse throws a UsageError. */
export function parseOptions(args: string[]): DoctorOptions {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      write: { type: "boolean" },
      json: { type: "boolean" },
      save: { type: "boolean" },
      stack: { type: "string" },
    },
  });
  if (values.save && !values.write)
    throw new UsageError("--save needs --write: the profile is measured with throwaway objects");
  if (values.stack !== undefined && !values.save) throw new UsageError("--stack needs --save");
  if (values.stack !== undefined && !/^[A-Za-z0-9_./-]{1,200}$/.test(values.stack))
    throw new UsageError("--stack must be a stack name");
  return { write: values.write === true, json: values.json === true, save: values.save === true, stack: values.stack };
}
