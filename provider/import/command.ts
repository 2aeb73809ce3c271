import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { LlmAccountsClient } from "../client/client.js";
import { resolveClientOptions } from "../client/config.js";
import { redact } from "../api/redact.js";
import { PACKAGE } from "../version.js";
import { ImportError, parseKeyList, readAccount, slug } from "./account.js";
import { mergePackageJson, programSecrets, renderProgram, renderProjectFile, TSCONFIG, type ProgramSecret } from "./program.js";

/** Help text of `llm-accounts import`. */
export const IMPORT_USAGE = `Options of "import" (credentials from LLM_ACCOUNTS_BASE_URL, LLM_ACCOUNTS_ADMIN_KEY, LLM_ACCOUNTS_ACCOUNT_KEY):
  --out DIR             Program folder to write (index.ts; Pulumi.yaml, tsconfig.json if missing; package.json entries)
  --keys FILE           API keys to adopt, one per line (- reads them from stdin); the API cannot list keys
  --stack NAME          Store the keys and tokens in this stack's encrypted config (pulumi config set --secret,
                        value on stdin); without it, or without a pulumi CLI, the command says what to run
  --project NAME        Project name for a new Pulumi.yaml (default: from the folder name)
  --force               Overwrite an existing index.ts
`;

/** Where the command reads and writes; the process's own streams unless a test gives others. */
export interface ImportIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

async function readKeys(source: string | undefined, io: ImportIo): Promise<string[]> {
  if (source === undefined) return [];
  if (source === "-") return parseKeyList(await readAll(io.stdin), "stdin");
  let text: string;
  try {
    text = readFileSync(source, "utf8");
  } catch (err) {
    throw new ImportError(`--keys ${source}: cannot read the key file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return parseKeyList(text, source);
}

/** Runs the Pulumi CLI with a value on stdin; resolves with its exit code and stderr, or null when there is no CLI. */
function pulumi(args: string[], cwd: string, env: NodeJS.ProcessEnv, stdin = ""): Promise<{ code: number; stderr: string } | null> {
  return new Promise((done, fail) => {
    const child = spawn("pulumi", [...args, "--non-interactive"], { cwd, env, stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", (err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? done(null) : fail(err)));
    child.on("close", (code) => done({ code: code ?? 1, stderr }));
    child.stdin.end(stdin);
  });
}

/**
 * Stores every secret in the stack's encrypted config, each value on stdin (never in an argument list, where
 * the process table and shell history would show it). Returns false when no Pulumi CLI is at hand.
 */
async function storeSecrets(secrets: ProgramSecret[], stack: string, dir: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const selected = await pulumi(["stack", "select", "--create", stack], dir, env);
  if (selected === null) return false;
  if (selected.code !== 0) throw new ImportError(`pulumi stack select --create ${stack} failed: ${redact(selected.stderr.trim())}`);
  for (const s of secrets) {
    const r = await pulumi(["config", "set", "--secret", "--stack", stack, s.configKey], dir, env, s.value);
    if (r === null || r.code !== 0) throw new ImportError(`pulumi config set --secret ${s.configKey} failed: ${redact(r?.stderr.trim() ?? "no pulumi CLI")}`);
  }
  return true;
}

function instructions(secrets: ProgramSecret[], dir: string, stack: string | undefined, why: string): string {
  const stackFlag = stack ? ` --stack ${stack}` : "";
  return [
    `${why}, so the keys and tokens were NOT stored. In ${dir}, for the stack you will use, run:`,
    ...(stack ? [`  pulumi stack select --create ${stack}`] : ["  pulumi stack select --create <stack>"]),
    ...secrets.map((s) => `  pulumi config set --secret${stackFlag} ${s.configKey}    # then paste the ${s.hint}`),
    "Give each value at the prompt or on stdin, never as an argument (shell history and the process list keep those).",
    "",
  ].join("\n");
}

/** `llm-accounts import`: reads the account, writes the program folder, stores its secrets in the stack config. */
export async function runImport(args: string[], io: ImportIo): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      out: { type: "string" },
      keys: { type: "string" },
      stack: { type: "string" },
      project: { type: "string" },
      force: { type: "boolean" },
    },
  });
  if (!values.out) throw new ImportError("--out DIR is required: the folder the program is written to");
  const dir = resolve(values.out);
  const index = join(dir, "index.ts");
  if (existsSync(index) && !values.force) throw new ImportError(`${index} exists: refusing to overwrite it (use --force)`);
  const apiKeys = await readKeys(values.keys, io);

  const client = new LlmAccountsClient(resolveClientOptions(undefined, {}, io.env));
  const account = await readAccount(client, apiKeys);

  const project = values.project ?? slug(basename(dir), "llm-accounts");
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(dir, "Pulumi.yaml"))) writeFileSync(join(dir, "Pulumi.yaml"), renderProjectFile(project));
  if (!existsSync(join(dir, "tsconfig.json"))) writeFileSync(join(dir, "tsconfig.json"), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
  const pkgPath = join(dir, "package.json");
  const existing = existsSync(pkgPath) ? (JSON.parse(readFileSync(pkgPath, "utf8")) as Record<string, unknown>) : undefined;
  writeFileSync(pkgPath, `${JSON.stringify(mergePackageJson(existing, project, PACKAGE.version), null, 2)}\n`);
  writeFileSync(index, renderProgram(account, client.origin, new Date()));

  const subAccounts = account.batches.reduce((n, b) => n + b.tokens.length, 0);
  io.stdout.write(
    `Wrote ${index}: ${account.keys.length} API key(s), ${subAccounts} sub-account(s) in ${account.batches.length} batch(es).\n`,
  );
  const secrets = programSecrets(account);
  if (secrets.length === 0) return;
  const stored = values.stack ? await storeSecrets(secrets, values.stack, dir, io.env) : false;
  if (stored) {
    io.stdout.write(`Stored ${secrets.length} secret(s) in the encrypted config of stack ${values.stack}: ${secrets.map((s) => s.configKey).join(", ")}.\n`);
    io.stdout.write(`Next: npm install, review index.ts, then pulumi preview --stack ${values.stack} (it should show no change).\n`);
  } else {
    io.stdout.write(instructions(secrets, dir, values.stack, values.stack ? "No pulumi CLI was found on PATH" : "No --stack was given"));
  }
}
