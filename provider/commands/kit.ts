import { readFileSync } from "node:fs";
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { maskKey } from "../api/redact.js";
import { KeySchema } from "../api/schemas/index.js";
import { LlmAccountsClient } from "../client/client.js";
import { resolveClientOptions } from "../client/config.js";
import { AuthenticationError } from "../client/errors.js";
import { SETTINGS } from "../client/settings.js";
import { UsageError } from "../usageError.js";
import { EXIT } from "./command.js";

// What every command of `llm-accounts` does alike: credentials, key files, reading input, printing safely.

/** The error class a command fails with: it chooses the exit code (a usage error is 2, any other 1). */
export type CommandError = new (message: string) => Error;

/**
 * A command's options, strictly: an unknown option, a missing value or a stray argument is a UsageError (exit 2,
 * the command's usage on stderr), as every other misuse.
 */
export function commandOptions<const O extends ParseArgsOptionsConfig>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    if (String((err as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS"))
      throw new UsageError((err as Error).message);
    throw err;
  }
}

/** What each exit code means for one command: ok and failed always, findings for a command that has findings. */
export interface ExitMeanings {
  ok: string;
  failed: string;
  findings?: string;
}

/**
 * A command's usage, as `--help`, `help <command>` and a misuse print it: the synopsis, what it does, its options
 * (`Options of "<name>"`, ending with -h/--help) and its exit codes in the one scheme (docs/commands.md#exit-codes).
 */
export function usageText(name: string, summary: string, options: string, exits: ExitMeanings): string {
  const codes = [
    `  ${EXIT.ok}  ${exits.ok}`,
    `  ${EXIT.failed}  could not run: ${exits.failed}`,
    `  ${EXIT.usage}  misuse: an unknown option or a malformed value (this usage is printed on stderr)`,
    ...(exits.findings ? [`  ${EXIT.findings}  ${exits.findings}`] : []),
  ];
  const help = "  -h, --help            Show this help\n";
  return `Usage: llm-accounts ${name} [options]\n\n${summary}\n\n${options}${help}\nExit codes (docs/commands.md#exit-codes):\n${codes.join("\n")}\n`;
}

/** The client of the account the environment names (LLM_ACCOUNTS_BASE_URL, _ADMIN_KEY, _ACCOUNT_KEY). */
export function clientFromEnvironment(env: NodeJS.ProcessEnv): LlmAccountsClient {
  return new LlmAccountsClient(resolveClientOptions(undefined, {}, env));
}

const CREDENTIAL_NAMES = { adminKey: "admin key", accountKey: "main account key" } as const;

/** Rethrows `err`; a 401 becomes the command's error naming the credential the platform refused and where it is set. */
export function refusedCredential(err: unknown, which: keyof typeof CREDENTIAL_NAMES, Fail: CommandError): never {
  if (err instanceof AuthenticationError) {
    throw new Fail(
      `the platform refused the ${CREDENTIAL_NAMES[which]} (${SETTINGS[which].env}) (401): check it, and the base URL (${err.message})`,
    );
  }
  throw err;
}

/** All of a stream (stdin) as UTF-8 text. */
export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/** The text of the file an option names; one it cannot read fails as `--flag FILE: cannot read <what> (ENOENT)`. */
export function readOptionFile(flag: string, file: string, Fail: CommandError, what = "it"): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new Fail(
      `--${flag} ${file}: cannot read ${what} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
}

/** A key list (`--keys FILE` of import, audit and sweep) with a line that is not an API key. */
export class KeyListError extends Error {}

/**
 * The API keys of a key file's text: one per line; blank lines and `#` comments skipped, repeats kept once.
 * A line that is not an API key fails naming its line number, masked (it may be a secret of another kind).
 */
export function parseKeyList(text: string, source: string): string[] {
  const keys = new Set<string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    if (!KeySchema.safeParse(line).success || line.startsWith("sk-admin-")) {
      // Echo nothing of a line that is not a key: it may be a secret of another kind.
      const admin = line.startsWith("sk-admin-") ? `: this is an admin key (${maskKey(line)})` : "";
      throw new KeyListError(`${source}, line ${i + 1}: not an API key (sk-...)${admin}`);
    }
    keys.add(line);
  });
  return [...keys];
}

/** The keys of `--keys SOURCE` (a file, or `-` for stdin); none without the option. */
export async function readKeyList(
  source: string | undefined,
  stdin: NodeJS.ReadableStream,
  Fail: CommandError,
): Promise<string[]> {
  if (source === undefined) return [];
  if (source === "-") return parseKeyList(await readAll(stdin), "stdin");
  return parseKeyList(readOptionFile("keys", source, Fail, "the key file"), source);
}

/** How JSON writes the control characters that have a short escape; every other one is written \u00XX. */
const SHORT_ESCAPES: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };

/**
 * Text from the platform (a console alias) as a command prints it: every control character (C0, DEL, C1; line
 * separators and bidi controls too) escaped as JSON escapes it, so that it can neither start a line, nor drive the
 * terminal, nor reorder what it shows. Keys in it are masked by redact (api/redact.ts) first where they may be.
 */
export function printable(text: string): string {
  return text.replace(
    /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
