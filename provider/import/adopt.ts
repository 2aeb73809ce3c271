import { join } from "node:path";
import { redact } from "../api/redact.js";
import { runPulumi } from "../commands/pulumi.js";
import type { ImportedAccount } from "./account.js";
import { writeFile } from "./folder.js";
import { ImportError } from "./importError.js";
import { manages, type ImportPlan } from "./plan.js";
import { DATA_FILE, KEYS_CONFIG_KEY, KEYS_CONFIG_MAX_BYTES, renderAccountData } from "./program.js";
import { addIntoState, importIntoState, shortStack } from "./stackImport.js";

// How the adopted objects reach the stack once the program is written: their keys in its encrypted config (or what
// to run for that), or the objects in its state (pulumi stack import) and then the data file the program reads.

/**
 * Stores every API key in the stack's encrypted config as one secret JSON object, on stdin (never in an
 * argument list, where the process table and shell history would show it): two CLI runs whatever the
 * account's size. Returns false when no Pulumi CLI is at hand.
 */
async function storeKeys(value: string, stack: string, dir: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const selected = await runPulumi(["stack", "select", "--create", stack], { cwd: dir, env });
  if (selected === null) return false;
  if (selected.code !== 0)
    throw new ImportError(`pulumi stack select --create ${stack} failed: ${redact(selected.stderr.trim())}`);
  const r = await runPulumi(["config", "set", "--secret", "--stack", stack, KEYS_CONFIG_KEY], {
    cwd: dir,
    env,
    stdin: value,
  });
  if (r === null || r.code !== 0)
    throw new ImportError(
      `pulumi config set --secret ${KEYS_CONFIG_KEY} failed: ${redact(r?.stderr.trim() ?? "no pulumi CLI")}`,
    );
  return true;
}

function instructions(
  account: ImportedAccount,
  dir: string,
  stack: string | undefined,
  rerun: string,
  why: string,
): string {
  return [
    `${why}, so the ${account.keys.length} API key(s) were NOT stored. Either run the import again where the Pulumi CLI is on PATH:`,
    `  ${rerun}`,
    `or, in ${dir}: pulumi stack select --create ${stack ?? "<stack>"}, then give \`pulumi config set --secret ${KEYS_CONFIG_KEY}\``,
    `on stdin (never as an argument) a JSON object of resource name to key: {"<name>": "sk-...", ...}; index.ts shows`,
    "each key's name beside its masked hint.",
    "",
  ].join("\n");
}

/**
 * Writes the adopted objects into the stack's state (stackImport.ts), then the data file the program reads: last,
 * so that a program whose import was stopped before the state held everything stops instead of creating anything.
 */
export async function adoptIntoState(
  plan: ImportPlan,
  env: NodeJS.ProcessEnv,
  out: (line: string) => void,
): Promise<void> {
  const { dir, stack } = plan.args;
  const selected = await runPulumi(["stack", "select", "--create", stack!], { cwd: dir, env });
  if (selected === null)
    throw new ImportError(
      `no pulumi CLI was found on PATH: the objects cannot be written into stack ${stack}'s state; ${join(dir, "index.ts")} was written, ${DATA_FILE} was not`,
    );
  if (selected.code !== 0)
    throw new ImportError(`pulumi stack select --create ${stack} failed: ${redact(selected.stderr.trim())}`);
  const target = { project: plan.stackProject, stack: shortStack(stack!) };
  const held = manages(plan.state) ? plan.state : undefined;
  if (held) await addIntoState(plan.account, held, target, stack!, dir, env);
  else await importIntoState(plan.account, target, stack!, dir, env);
  writeFile(join(dir, DATA_FILE), renderAccountData(plan.account));
  const keys = plan.account.keys.filter((k) => !k.kept);
  const batches = plan.account.batches.filter((b) => !b.kept);
  const how = "(pulumi stack import, secrets encrypted by the stack's secrets provider)";
  if (!held || keys.length + batches.length > 0)
    out(
      `Adopted ${keys.length} API key(s) and ${batches.length} batch(es) into the state of stack ${stack} ${how}; wrote ${join(dir, DATA_FILE)}.`,
    );
  else
    out(
      `Nothing new to adopt: the state of stack ${stack} holds every object the program declares, and was not written; wrote ${join(dir, DATA_FILE)}.`,
    );
}

/** Stores the keys in the stack config, or says what to run when it cannot (no --stack, no Pulumi CLI). */
export async function adoptThroughConfig(
  plan: ImportPlan,
  env: NodeJS.ProcessEnv,
  out: (line: string) => void,
): Promise<boolean> {
  const { args, account, packagePlan } = plan;
  if (account.keys.length === 0) return true;
  if (args.stack && (await storeKeys(plan.keysValue, args.stack, args.dir, env))) {
    const stored = Object.keys(JSON.parse(plan.keysValue) as object).length;
    out(
      `Stored the ${stored} API key(s) in the encrypted config of stack ${args.stack}: one secret value, ${KEYS_CONFIG_KEY} (${Math.ceil(plan.envBytes / 1024)} KiB of the ${KEYS_CONFIG_MAX_BYTES / 1024} KiB a stack's config may take).`,
    );
    return true;
  }
  const keysFlag = args.keys === undefined ? "" : args.keys === "-" ? " --keys - < <key file>" : ` --keys ${args.keys}`;
  const rerun = `npx --package ${packagePlan.npxSpec} llm-accounts import --out ${args.dir}${keysFlag} --stack ${args.stack ?? "<stack>"} --force`;
  for (const line of instructions(
    account,
    args.dir,
    args.stack,
    rerun,
    args.stack ? "No pulumi CLI was found on PATH" : "No --stack was given",
  )
    .trimEnd()
    .split("\n"))
    out(line);
  return false;
}
