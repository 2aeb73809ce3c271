import { resolve } from "node:path";
import { adoptIntoState, adoptThroughConfig } from "../import/adopt.js";
import { writeFolder } from "../import/folder.js";
import { planImport, type ImportArgs } from "../import/plan.js";
import { importReport, nextStep, reportWritten } from "../import/report.js";
import type { InstallSource } from "../import/source.js";
import { UsageError } from "../usageError.js";
import { EXIT, type Command, type CommandIo } from "./command.js";
import { commandOptions, usageText } from "./kit.js";
import { progressOn, type ProgressTiming } from "./progress.js";

/** What `llm-accounts import` does, in one line. */
const SUMMARY = "Write a Pulumi program that manages an existing account as it is.";

/** Help text of `llm-accounts import`. */
export const IMPORT_USAGE = usageText(
  "import",
  SUMMARY,
  `Options of "import" (credentials from LLM_ACCOUNTS_BASE_URL, LLM_ACCOUNTS_ADMIN_KEY, LLM_ACCOUNTS_ACCOUNT_KEY):
  --out DIR             Program folder to write (index.ts; Pulumi.yaml, tsconfig.json if missing; package.json entries)
  --keys FILE           API keys to adopt, one per line (- reads them from stdin); the API cannot list keys
  --stack NAME          Store the API keys in this stack's encrypted config (one secret value, on stdin of
                        pulumi config set --secret); without it, or without a pulumi CLI, the command says what to run
  --project NAME        Project name for a new Pulumi.yaml (default: from the folder name)
  --force               Overwrite an existing index.ts. Every object the stack's state already holds keeps its
                        resource name and stays declared, matched by key and sub-account (not alias), keys --keys
                        does not list included: the next up deletes and replaces nothing
  --into-state          Adopt the objects into the stack's state (pulumi stack import, on stdin; the CLI encrypts the
                        secrets) instead of its config; chosen by itself when the keys do not fit in a stack config
                        (past about 1,200 keys), and by a re-import of a folder with account.json: needs --stack;
                        a stack that holds objects keeps them, and only what is new is added
  --drop-unlisted       With --force: leave out the API keys the stack holds that --keys does not list (the next
                        up DELETES them from the platform) and batches none of whose sub-accounts is left
  --json                One JSON object on stdout: what was written, kept, added, left out and dropped, whether
                        the keys reached the stack, and the next step (no progress on stderr)
  --quiet               No progress on stderr
`,
  {
    ok: "the program was written (and the keys stored, or what to run to store them printed)",
    failed:
      "the platform refused a credential, a listed key does not exist, the folder or the stack refuses the program; nothing was written",
  },
);

/** Where the command reads and writes; for a test, where the package came from and the clock of its progress. */
export interface ImportIo extends CommandIo {
  /** Where the running package was installed from (tests give one); found from the package's own folder otherwise. */
  source?: InstallSource;
  progress?: ProgressTiming;
}

/** Pulumi's rule for project names: letters, digits, `-`, `_` and `.`, at most 100. */
const PROJECT_NAME = /^[A-Za-z0-9_.-]{1,100}$/;
/** A stack name, optionally `org/project/stack`: what Pulumi accepts, and never an option (`-x`). */
const STACK_NAME = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*(\/[A-Za-z0-9_.-]+){0,2}$/;

function parseImportArgs(args: string[]): ImportArgs {
  const values = commandOptions(args, {
    out: { type: "string" },
    keys: { type: "string" },
    stack: { type: "string" },
    project: { type: "string" },
    force: { type: "boolean" },
    "drop-unlisted": { type: "boolean" },
    "into-state": { type: "boolean" },
    json: { type: "boolean" },
    quiet: { type: "boolean" },
  });
  if (!values.out) throw new UsageError("--out DIR is required: the folder the program is written to");
  if (values.project !== undefined && !PROJECT_NAME.test(values.project)) {
    throw new UsageError(
      "--project: a project name has only letters, digits, '-', '_' and '.' (at most 100); nothing was written",
    );
  }
  if (values.stack !== undefined && !STACK_NAME.test(values.stack)) {
    throw new UsageError(
      "--stack: a stack name has only letters, digits, '-', '_' and '.' (optionally org/project/stack); nothing was written",
    );
  }
  if (values["into-state"] && values.stack === undefined)
    throw new UsageError(
      "--into-state needs --stack NAME: the stack whose state the objects are written into; nothing was written",
    );
  const { keys, stack, project } = values;
  const flags = {
    force: values.force ?? false,
    dropUnlisted: values["drop-unlisted"] ?? false,
    intoState: values["into-state"] ?? false,
    json: values.json ?? false,
  };
  return { dir: resolve(values.out), keys, stack, project, ...flags, quiet: values.quiet ?? false };
}

/**
 * `llm-accounts import`: plans (reads the folder, the stack's state and the account: provider/import/plan.ts),
 * writes the program folder and the adoption, and reports: lines on stdout, or one JSON object with --json.
 */
export async function runImport(argv: string[], io: ImportIo): Promise<number> {
  const args = parseImportArgs(argv);
  const progress = progressOn(io, "llm-accounts import: read", "API key(s)", {
    quiet: args.quiet || args.json,
    timing: io.progress,
  });
  const warn = (line: string): void => void io.stderr.write(`${line}\n`);
  const plan = await planImport(args, { stdin: io.stdin, env: io.env, source: io.source, progress, warn });
  const messages: string[] = [];
  const out = args.json
    ? (line: string): void => void messages.push(line)
    : (line: string): void => void io.stdout.write(`${line}\n`);
  writeFolder(plan);
  if (!args.json) reportWritten(plan, out);
  let adopted = true;
  if (plan.carrier === "state") await adoptIntoState(plan, io.env, out);
  else adopted = await adoptThroughConfig(plan, io.env, out);
  if (args.json) io.stdout.write(`${JSON.stringify(importReport(plan, adopted, messages), null, 2)}\n`);
  else out(nextStep(plan));
  return EXIT.ok;
}

/** `llm-accounts import`, in the command table (cli.ts). */
export const importCommand: Command = { name: "import", summary: SUMMARY, usage: IMPORT_USAGE, run: runImport };
