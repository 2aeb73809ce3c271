import { maskKey } from "../api/redact.js";
import type { LlmAccountsClient } from "../client/client.js";
import { configureRules, evaluate, type AuditFinding, type Configured, type LiveAccount } from "../policy/audit.js";
import { PolicyConfigError } from "../policy/rules.js";
import { batchFromLive, keyFromLive } from "../policy/subjects.js";
import { UsageError } from "../usageError.js";
import { groupSubAccounts } from "./batchGroups.js";
import { EXIT, type Command, type CommandIo } from "./command.js";
import { readKeys } from "./keyReads.js";
import {
  clientFromEnvironment,
  commandOptions,
  printable,
  readKeyList,
  readOptionFile,
  refusedCredential,
  usageText,
} from "./kit.js";
import { progressOn, type Progress, type ProgressTiming } from "./progress.js";

/** What `llm-accounts audit` does, in one line. */
const SUMMARY = "Check the live account (sub-accounts, and the API keys of a list) against the policy rules.";

/** Help text of `llm-accounts audit`. */
export const AUDIT_USAGE = usageText(
  "audit",
  `${SUMMARY}
A stdout closed by its reader (| head) drops the rest of the output quietly, and the code stays the audit's own.`,
  `Options of "audit" (credentials from LLM_ACCOUNTS_BASE_URL, LLM_ACCOUNTS_ADMIN_KEY, LLM_ACCOUNTS_ACCOUNT_KEY):
  --policy-config FILE  Levels and options of the rules: the JSON of pulumi's --policy-pack-config (required)
  --keys FILE           API keys to audit, one per line (- reads them from stdin); the API cannot list keys
  --json                One JSON object on stdout instead of the table (no progress on stderr)
  --quiet               No progress on stderr
`,
  {
    ok: "no mandatory finding (advisory ones are printed)",
    failed:
      "the policy config or the key list cannot be read, the platform refused a credential, a listed key does not exist",
    findings: "a mandatory rule found something",
  },
);

/** Exit codes of `llm-accounts audit`. */
export const AUDIT_EXIT = { clean: EXIT.ok, mandatory: EXIT.findings } as const;

/** Where the command reads and writes; for a test, the time key ages are measured at and the clock of its progress. */
export interface AuditIo extends CommandIo {
  /** The time key ages are measured at. */
  now?: () => number;
  progress?: ProgressTiming;
}

/**
 * Reads what the rules look at: one list of every sub-account, one get per API key of the list through the
 * commands' one reader of many keys (a bounded number at once, paced by the client's limiter: the platform's rate
 * limits are never tripped).
 */
async function readLive(
  client: LlmAccountsClient,
  apiKeys: string[],
  now: number,
  progress: Progress,
): Promise<LiveAccount> {
  const subAccounts = await client.subAccounts
    .list()
    .catch((err: unknown) => refusedCredential(err, "accountKey", PolicyConfigError));
  const views = await readKeys(
    client,
    apiKeys,
    {
      gone: (key, i) => {
        throw new PolicyConfigError(`API key ${i + 1} of the list (${maskKey(key)}) does not exist on the platform`);
      },
      failed: (err) => refusedCredential(err, "adminKey", PolicyConfigError),
    },
    progress,
  );
  const keys = views.map((view, i) => keyFromLive(apiKeys[i], view, now));
  return { keys, batches: groupSubAccounts(subAccounts).map(batchFromLive), subAccounts: subAccounts.length };
}

/** The rules as the file of --policy-config sets them. */
function configuredFrom(configFile: string | undefined): Configured[] {
  if (!configFile)
    throw new UsageError(
      "--policy-config FILE is required: the rules' levels and options (the JSON of --policy-pack-config)",
    );
  let config: unknown;
  try {
    config = JSON.parse(readOptionFile("policy-config", configFile, PolicyConfigError));
  } catch (err) {
    if (err instanceof PolicyConfigError) throw err;
    throw new PolicyConfigError(`--policy-config ${configFile}: not JSON (${(err as Error).message})`);
  }
  return configureRules(config, configFile);
}

/** A cell as the table prints it: control, line-separator and bidi characters escaped (commands/kit.ts). */
const cell = printable;

function table(rows: string[][]): string {
  const widths = rows[0].map((_c, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  ")).join("\n") + "\n";
}

/** What the audit found, counted. */
interface AuditSummary {
  apiKeys: number;
  subAccounts: number;
  groups: number;
  findings: number;
  mandatory: number;
  advisory: number;
  disabled: string[];
}

/** The findings as a table and a summary line on stdout. */
function printFindings(findings: AuditFinding[], summary: AuditSummary, out: CommandIo["stdout"]): void {
  if (findings.length > 0) {
    out.write(
      table([
        ["OBJECT", "RULE", "LEVEL", "MESSAGE"],
        ...findings.map((f) => [f.object, f.rule, f.level, `${f.path} ${f.message}`].map(cell)),
      ]),
    );
  }
  const disabled = summary.disabled.length ? `; disabled: ${summary.disabled.join(", ")}` : "";
  out.write(
    `${summary.findings} finding(s): ${summary.mandatory} mandatory, ${summary.advisory} advisory, over ${summary.apiKeys} API key(s) and ` +
      `${summary.subAccounts} sub-account(s) in ${summary.groups} group(s)${disabled}.\n`,
  );
}

/**
 * `llm-accounts audit`: the package's rules over the live account, objects no program manages included.
 * Resolves with the exit code: AUDIT_EXIT.mandatory when a mandatory rule found something.
 */
export async function runAudit(args: string[], io: AuditIo): Promise<number> {
  const values = commandOptions(args, {
    "policy-config": { type: "string" },
    keys: { type: "string" },
    json: { type: "boolean" },
    quiet: { type: "boolean" },
  });
  const configured = configuredFrom(values["policy-config"]);
  const apiKeys = await readKeyList(values.keys, io.stdin, PolicyConfigError);

  const progress = progressOn(io, "llm-accounts audit: read", "API key(s)", {
    quiet: values.quiet || values.json,
    timing: io.progress,
  });
  const live = await readLive(clientFromEnvironment(io.env), apiKeys, (io.now ?? Date.now)(), progress);
  const findings = evaluate(configured, live);

  const mandatory = findings.filter((f) => f.level === "mandatory").length;
  const summary: AuditSummary = {
    apiKeys: live.keys.length,
    subAccounts: live.subAccounts,
    groups: live.batches.length,
    findings: findings.length,
    mandatory,
    advisory: findings.length - mandatory,
    disabled: configured.filter((c) => c.level === "disabled").map((c) => c.rule.name),
  };
  if (values.json) io.stdout.write(`${JSON.stringify({ findings, summary }, null, 2)}\n`);
  else printFindings(findings, summary, io.stdout);
  return mandatory > 0 ? AUDIT_EXIT.mandatory : AUDIT_EXIT.clean;
}

/** `llm-accounts audit`, in the command table (cli.ts). */
export const auditCommand: Command = { name: "audit", summary: SUMMARY, usage: AUDIT_USAGE, run: runAudit };
