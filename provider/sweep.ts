import { parseArgs } from "node:util";
import { API_KEY_DELETE_MAX, SUB_ACCOUNT_MAX_SKS } from "./api/assumptions.js";
import { maskKey, redact } from "./api/redact.js";
import { keyUnknown } from "./client/apiKeys.js";
import { clientFromEnvironment, printable, readKeyList, refusedCredential } from "./commands/kit.js";

/** Help text of `llm-accounts sweep`. */
export const SWEEP_USAGE = `Options of "sweep" (credentials from LLM_ACCOUNTS_BASE_URL, LLM_ACCOUNTS_ADMIN_KEY, LLM_ACCOUNTS_ACCOUNT_KEY):
  --prefix P            Sweep objects whose alias starts with P (repeatable; e.g. the alias prefix of a test run)
  --any-alias           Sweep objects of any alias: only for a throwaway account (an emulator, a test account)
  --keys FILE           API keys to consider, one per line (- reads them from stdin). The API cannot list keys,
                        so only keys of this list are swept; without it, only sub-accounts (found by one list)
  --yes                 Delete what was found; without it, a dry run that only prints it
  --json                One JSON object on stdout instead of lines
  Calls: one list of the sub-accounts, one get per key of the list, then one delete per 1000 sub-accounts and one
  per 1000 keys. Keys and tokens are printed masked (sk-...1a2b).
  Exit code: 0 when nothing was found or what was found was deleted, 3 when a dry run found something, 1 on
  errors, 2 on a misused command.
`;

/** Exit codes of `llm-accounts sweep`. */
export const SWEEP_EXIT = { clean: 0, found: 3 } as const;

/** A misused sweep command (the CLI adds the usage). */
export class SweepUsageError extends Error {}

/** Where the command reads and writes; the process's own streams unless a test gives others. */
export interface SweepIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
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

/**
 * `llm-accounts sweep`: finds the objects a test run left on an account by alias prefix (sub-accounts through
 * one list; API keys only from a given list, since the API cannot list keys), prints them masked, and deletes
 * them with `--yes`. Resolves with the exit code.
 */
export async function runSweep(args: string[], io: SweepIo): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      prefix: { type: "string", multiple: true },
      "any-alias": { type: "boolean" },
      keys: { type: "string" },
      yes: { type: "boolean" },
      json: { type: "boolean" },
    },
  });
  const prefixes = values.prefix ?? [];
  const any = values["any-alias"] === true;
  if (any && prefixes.length > 0) throw new SweepUsageError("--prefix and --any-alias exclude each other");
  if (!any && prefixes.length === 0) throw new SweepUsageError("--prefix P is required (the alias prefix of the test objects), or --any-alias on a throwaway account");
  const empty = prefixes.findIndex((p) => p.trim() === "");
  if (empty >= 0) throw new SweepUsageError(`--prefix ${empty + 1}: an empty prefix matches every alias; say --any-alias if that is meant`);
  const matches = (alias: string) => any || prefixes.some((p) => alias.startsWith(p));

  const keyList = await readKeyList(values.keys, io.stdin, SweepUsageError);

  const client = clientFromEnvironment(io.env);
  const subAccounts = (await client.subAccounts.list().catch((err: unknown) => refusedCredential(err, "accountKey", Error))).filter((s) => matches(s.alias));
  let keysGone = 0;
  const keys = (
    await Promise.all(
      keyList.map(async (key) => {
        try {
          return { key, alias: (await client.apiKeys.get(key)).alias };
        } catch (err) {
          // Gone: a 404, or a 400 naming the key (client/apiKeys.ts keyUnknown).
          if (keyUnknown(err)) {
            keysGone += 1;
            return undefined;
          }
          return refusedCredential(err, "adminKey", Error);
        }
      }),
    )
  ).filter((k): k is { key: string; alias: string } => k !== undefined && matches(k.alias));

  const found: SweptObject[] = [
    ...subAccounts.map((s) => ({ kind: "sub-account" as const, alias: redact(s.alias), hint: maskKey(s.token), id: s.id })),
    ...keys.map((k) => ({ kind: "api-key" as const, alias: redact(k.alias), hint: maskKey(k.key) })),
  ];
  const deleting = values.yes === true && found.length > 0;
  if (deleting) {
    for (let i = 0; i < subAccounts.length; i += SUB_ACCOUNT_MAX_SKS) await client.subAccounts.delete(subAccounts.slice(i, i + SUB_ACCOUNT_MAX_SKS).map((s) => s.token));
    for (let i = 0; i < keys.length; i += API_KEY_DELETE_MAX) await client.apiKeys.delete(keys.slice(i, i + API_KEY_DELETE_MAX).map((k) => k.key));
  }

  const report: SweepReport = { prefixes: any ? "any" : prefixes, deleted: deleting, found, keysGone };
  if (values.json) {
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    for (const o of found) io.stdout.write(`${o.kind === "api-key" ? "API key    " : `sub-account ${o.id}`}  ${o.hint}  alias ${printable(JSON.stringify(o.alias))}\n`);
    const what = `${subAccounts.length} sub-account(s) and ${keys.length} API key(s) of ${keyList.length} listed${keysGone ? ` (${keysGone} already gone)` : ""}`;
    const scope = any ? "of any alias" : `with alias prefix ${prefixes.map((p) => JSON.stringify(redact(p))).join(", ")}`;
    if (found.length === 0) io.stdout.write(`Nothing to sweep ${scope}: 0 sub-accounts, 0 API keys of ${keyList.length} listed${keysGone ? ` (${keysGone} already gone)` : ""}.\n`);
    else if (deleting) io.stdout.write(`Deleted ${what} ${scope}.\n`);
    else io.stdout.write(`Found ${what} ${scope}. Dry run: nothing deleted; run again with --yes to delete them.\n`);
  }
  return found.length > 0 && !deleting ? SWEEP_EXIT.found : SWEEP_EXIT.clean;
}
