import { SUB_ACCOUNT_MAX_SKS } from "../api/assumptions.js";
import { maskKey, redact } from "../api/redact.js";
import type { LlmAccountsClient } from "../client/client.js";
import { DeleteCoalescer, deleteTokens } from "../runtime/index.js";
import { UsageError } from "../usageError.js";
import { EXIT, type Command, type CommandIo } from "./command.js";
import { readKeys } from "./keyReads.js";
import { clientFromEnvironment, commandOptions, printable, readKeyList, refusedCredential, usageText } from "./kit.js";
import { progressOn, type Progress, type ProgressTiming } from "./progress.js";

/** What `llm-accounts sweep` does, in one line. */
const SUMMARY = "Find (and with --yes delete) objects a test run left on an account, by alias prefix.";

/** Help text of `llm-accounts sweep`. */
export const SWEEP_USAGE = usageText(
  "sweep",
  `${SUMMARY}
Calls: one list of the sub-accounts, one get per key of the list, then one delete per 1000 sub-accounts and one
per 1000 keys. Keys and tokens are printed masked (sk-...1a2b).`,
  `Options of "sweep" (credentials from LLM_ACCOUNTS_BASE_URL, LLM_ACCOUNTS_ADMIN_KEY, LLM_ACCOUNTS_ACCOUNT_KEY):
  --prefix P            Sweep objects whose alias starts with P (repeatable; e.g. the alias prefix of a test run)
  --any-alias           Sweep objects of any alias: only for a throwaway account (an emulator, a test account)
  --keys FILE           API keys to consider, one per line (- reads them from stdin). The API cannot list keys,
                        so only keys of this list are swept; without it, only sub-accounts (found by one list)
  --yes                 Delete what was found; without it, a dry run that only prints it
  --json                One JSON object on stdout instead of lines (no progress on stderr)
  --quiet               No progress on stderr
`,
  {
    ok: "nothing was found, or what was found was deleted",
    failed: "the platform refused a credential, an answer could not be read, a delete failed",
    findings: "a dry run found objects (run again with --yes to delete them)",
  },
);

/** Exit codes of `llm-accounts sweep`. */
export const SWEEP_EXIT = { clean: EXIT.ok, found: EXIT.findings } as const;

/** Where the command reads and writes, and (for a test) the clock of its progress. */
export interface SweepIo extends CommandIo {
  progress?: ProgressTiming;
}

/** One object the sweep found: never the key or token itself, only its masked form. */
export interface SweptObject {
  kind: "api-key" | "sub-account";
  alias: string;
  /** `sk-...1a2b`. */
  hint: string;
  /** The sub-account's id (sub-accounts only). */
  id?: number | string;
}

/** What `--json` prints. */
export interface SweepReport {
  prefixes: string[] | "any";
  deleted: boolean;
  found: SweptObject[];
  /** Keys of the list that no longer exist on the platform (already gone: nothing to sweep). */
  keysGone: number;
}

/** What the command line asks: which aliases to sweep, the key list, whether to delete and how to print. */
interface SweepOptions {
  prefixes: string[];
  any: boolean;
  keys?: string;
  yes: boolean;
  json: boolean;
  quiet: boolean;
}

function sweepOptions(args: string[]): SweepOptions {
  const values = commandOptions(args, {
    prefix: { type: "string", multiple: true },
    "any-alias": { type: "boolean" },
    keys: { type: "string" },
    yes: { type: "boolean" },
    json: { type: "boolean" },
    quiet: { type: "boolean" },
  });
  const prefixes = values.prefix ?? [];
  const any = values["any-alias"] === true;
  if (any && prefixes.length > 0) throw new UsageError("--prefix and --any-alias exclude each other");
  if (!any && prefixes.length === 0)
    throw new UsageError(
      "--prefix P is required (the alias prefix of the test objects), or --any-alias on a throwaway account",
    );
  const empty = prefixes.findIndex((p) => p.trim() === "");
  if (empty >= 0)
    throw new UsageError(
      `--prefix ${empty + 1}: an empty prefix matches every alias; say --any-alias if that is meant`,
    );
  return {
    prefixes,
    any,
    keys: values.keys,
    yes: values.yes === true,
    json: values.json === true,
    quiet: values.quiet === true,
  };
}

/**
 * The sub-accounts (one list) and the listed keys (one get each, through the commands' one reader of many keys)
 * whose alias matches; keys already gone are counted.
 */
async function findLeftovers(
  client: LlmAccountsClient,
  keyList: string[],
  matches: (alias: string) => boolean,
  progress: Progress,
) {
  const subAccounts = (
    await client.subAccounts.list().catch((err: unknown) => refusedCredential(err, "accountKey", Error))
  ).filter((s) => matches(s.alias));
  let keysGone = 0;
  const answers = await readKeys(
    client,
    keyList,
    {
      // Gone, by the runtime's rule (ApiKeysApi.find: a 404, or a 400 naming the key once the admin key is known to be taken).
      gone: () => {
        keysGone += 1;
        return undefined;
      },
      failed: (err) => refusedCredential(err, "adminKey", Error),
    },
    progress,
  );
  const keys = keyList.flatMap((key, i) => {
    const view = answers[i];
    return view !== undefined && matches(view.alias) ? [{ key, alias: view.alias }] : [];
  });
  return { subAccounts, keys, keysGone };
}

/**
 * Deletes what the sweep found, as the runtime deletes (deleteTokens, DeleteCoalescer): a delete sent again after a
 * lost answer that meets "gone" is done, a refused key fails alone, an answer that is not the platform's is
 * confirmed by looking. The sub-accounts in calls of SUB_ACCOUNT_MAX_SKS, the keys gathered in calls of up to 1000
 * (the coalescer's); a failure of one part does not keep the others from being deleted, and the first is thrown.
 */
async function deleteFound(client: LlmAccountsClient, tokens: string[], keys: string[]): Promise<void> {
  const parts: Promise<void>[] = [];
  for (let i = 0; i < tokens.length; i += SUB_ACCOUNT_MAX_SKS)
    parts.push(deleteTokens(client.subAccounts, tokens.slice(i, i + SUB_ACCOUNT_MAX_SKS)));
  const coalescer = new DeleteCoalescer(client.apiKeys);
  parts.push(...keys.map((k) => coalescer.delete(k)));
  const failed = (await Promise.allSettled(parts)).find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
}

/** The report's lines: one per object found, then what was found or deleted. */
function printReport(
  report: SweepReport,
  counts: { subAccounts: number; keys: number; listed: number },
  out: CommandIo["stdout"],
): void {
  for (const o of report.found)
    out.write(
      `${o.kind === "api-key" ? "API key    " : `sub-account ${o.id}`}  ${o.hint}  alias ${printable(JSON.stringify(o.alias))}\n`,
    );
  const gone = report.keysGone ? ` (${report.keysGone} already gone)` : "";
  const what = `${counts.subAccounts} sub-account(s) and ${counts.keys} API key(s) of ${counts.listed} listed${gone}`;
  const scope =
    report.prefixes === "any"
      ? "of any alias"
      : `with alias prefix ${report.prefixes.map((p) => JSON.stringify(redact(p))).join(", ")}`;
  if (report.found.length === 0)
    out.write(`Nothing to sweep ${scope}: 0 sub-accounts, 0 API keys of ${counts.listed} listed${gone}.\n`);
  else if (report.deleted) out.write(`Deleted ${what} ${scope}.\n`);
  else out.write(`Found ${what} ${scope}. Dry run: nothing deleted; run again with --yes to delete them.\n`);
}

/**
 * `llm-accounts sweep`: finds the objects a test run left on an account by alias prefix (sub-accounts through
 * one list; API keys only from a given list, since the API cannot list keys), prints them masked, and deletes
 * them with `--yes`. Resolves with the exit code.
 */
export async function runSweep(args: string[], io: SweepIo): Promise<number> {
  const options = sweepOptions(args);
  const matches = (alias: string) => options.any || options.prefixes.some((p) => alias.startsWith(p));
  const keyList = await readKeyList(options.keys, io.stdin, UsageError);

  const client = clientFromEnvironment(io.env);
  const progress = progressOn(io, "llm-accounts sweep: read", "API key(s)", {
    quiet: options.quiet || options.json,
    timing: io.progress,
  });
  const { subAccounts, keys, keysGone } = await findLeftovers(client, keyList, matches, progress);
  const found: SweptObject[] = [
    ...subAccounts.map((s) => ({
      kind: "sub-account" as const,
      alias: redact(s.alias),
      hint: maskKey(s.token),
      id: s.id,
    })),
    ...keys.map((k) => ({ kind: "api-key" as const, alias: redact(k.alias), hint: maskKey(k.key) })),
  ];
  const deleting = options.yes && found.length > 0;
  if (deleting)
    await deleteFound(
      client,
      subAccounts.map((s) => s.token),
      keys.map((k) => k.key),
    );

  const report: SweepReport = { prefixes: options.any ? "any" : options.prefixes, deleted: deleting, found, keysGone };
  if (options.json) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else printReport(report, { subAccounts: subAccounts.length, keys: keys.length, listed: keyList.length }, io.stdout);
  return found.length > 0 && !deleting ? SWEEP_EXIT.found : SWEEP_EXIT.clean;
}

/** `llm-accounts sweep`, in the command table (cli.ts). */
export const sweepCommand: Command = {
  name: "sweep",
  summary: SUMMARY,
  usage: SWEEP_USAGE,
  run: runSweep,
};
