import { redact } from "../api/redact.js";
import { runPulumi } from "../commands/pulumi.js";
import type { StackHolding } from "./account.js";
import { ImportError } from "./importError.js";
import { holderName } from "./names.js";
import { readStackState } from "./stackState.js";

// The backend's other stacks, read before the import writes: whether an unnamed stack may be one of several, and
// what every other stack holds (never adopted here: one object, one owner).

/**
 * The stacks the folder's project has in the backend (`pulumi stack ls`), asked only when no stack is named and
 * none is selected (a CI checkout, another machine, a fresh PULUMI_HOME): the import cannot tell which of them the
 * program is for, and a program written as for a new stack makes the next `up` of an existing one delete what it
 * holds. None without a CLI (readStackState already refused a folder with stack files then).
 */
export async function unselectedStacks(dir: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const r = await runPulumi(["stack", "ls", "--json"], { cwd: dir, env });
  if (r === null) return [];
  let listed: unknown;
  try {
    listed = r.code === 0 ? JSON.parse(r.stdout) : undefined;
  } catch {
    listed = undefined;
  }
  if (!Array.isArray(listed)) {
    throw new ImportError(
      `no stack is selected in ${dir} and pulumi stack ls failed, so whether the project has stacks cannot be told (${redact(r.stderr.trim()) || "no list"}): ` +
        "name the stack with --stack NAME; nothing was written",
    );
  }
  return listed.flatMap((s: unknown) =>
    typeof (s as { name?: unknown })?.name === "string" ? [(s as { name: string }).name] : [],
  );
}

/** A stack name as the CLI lists or takes it (`dev`, `org/dev`, `org/project/dev`), with `project` where it names none. */
function stackIdentity(name: string, project: string | undefined): { org?: string; project?: string; stack: string } {
  const parts = name.split("/");
  if (parts.length >= 3) return { org: parts[0], project: parts[1], stack: parts.slice(2).join("/") };
  return parts.length === 2 ? { org: parts[0], project, stack: parts[1] } : { project, stack: name };
}

/**
 * The backend's stacks, of every project (`pulumi stack ls --all`: this project's by short name, another's as
 * `org/project/stack`), or this project's alone where the CLI refuses `--all`; none when the list cannot be read.
 */
async function backendStacks(dir: string, env: NodeJS.ProcessEnv): Promise<{ name: string; current: boolean }[]> {
  let r = await runPulumi(["stack", "ls", "--all", "--json"], { cwd: dir, env });
  if (r !== null && r.code !== 0) r = await runPulumi(["stack", "ls", "--json"], { cwd: dir, env });
  let listed: unknown;
  try {
    listed = r !== null && r.code === 0 ? JSON.parse(r.stdout) : undefined;
  } catch {
    listed = undefined;
  }
  if (!Array.isArray(listed)) return [];
  return listed.flatMap((e: unknown) => {
    const o = e as { name?: unknown; current?: unknown } | null;
    return typeof o?.name === "string" ? [{ name: o.name, current: o.current === true }] : [];
  });
}

/**
 * What the backend's other stacks hold, those of other projects too (another team's project on the same account):
 * one `pulumi stack export` of each, kept in memory, so that the import never adopts an object another stack holds.
 * The target is left out by its whole name (another project's `dev` is read when the target is `dev`). A stack
 * that cannot be read is named on stderr: what it holds may then be adopted here, and the user is told which.
 */
export async function otherStacks(
  dir: string,
  project: string | undefined,
  target: string | undefined,
  io: { env: NodeJS.ProcessEnv; warn: (line: string) => void },
): Promise<StackHolding[]> {
  const wanted = target !== undefined ? stackIdentity(target, project) : undefined;
  // An organisation only one of the two names spells out is the default one, so either matches.
  const isTarget = (e: { name: string; current: boolean }): boolean => {
    if (wanted === undefined) return e.current;
    const id = stackIdentity(e.name, project);
    return (
      id.project === wanted.project &&
      id.stack === wanted.stack &&
      (id.org === undefined || wanted.org === undefined || id.org === wanted.org)
    );
  };
  const out: StackHolding[] = [];
  for (const other of (await backendStacks(dir, io.env)).filter((e) => !isTarget(e))) {
    const theirs = stackIdentity(other.name, project).project;
    const holder = { stack: other.name, ...(theirs !== project && theirs !== undefined ? { project: theirs } : {}) };
    try {
      const state = await readStackState(dir, other.name, io.env, { withConfig: holder.project === undefined });
      if (!state) continue;
      const keys = new Set([
        ...state.keys.flatMap((k) => [k.key, k.previousKey, k.adoptKey].filter((v): v is string => v !== undefined)),
        ...state.configKeys.map((c) => c.key),
      ]);
      const tokens = new Set(state.batches.flatMap((b) => b.subAccounts.map((s) => s.token)));
      const markedAliases = new Set(state.batches.flatMap((b) => (b.unconfirmedAlias ? [b.unconfirmedAlias] : [])));
      out.push({ ...holder, keys, tokens, markedAliases });
    } catch (err) {
      io.warn(
        `llm-accounts import: ${holderName(holder)} could not be read (${redact((err as Error).message)}): what it holds may be adopted here too; read it, or check the program before its up`,
      );
    }
  }
  return out;
}
