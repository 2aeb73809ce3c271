import { redact } from "../api/redact.js";
import type { CheckFailure } from "../runtime/engine/index.js";
import type { ReimportOptions, StackHolding } from "./account.js";

// How the import names what it declares and what it leaves out: resource names from aliases, the other stacks that
// hold an object, the package's refusals; and the order and account of what a stack's state holds.

/** An other stack as the import's output names it: `stack dev of this project`, `stack org/b/dev of project b`. */
export const holderName = (o: Pick<StackHolding, "stack" | "project">): string =>
  `stack ${o.stack} of ${o.project === undefined ? "this project" : `project ${o.project}`}`;

/** The other stack that holds `value` (a key or a token), if any, named by holderName. */
export function heldElsewhere(options: ReimportOptions, value: string, kind: "keys" | "tokens"): string | undefined {
  const holder = options.elsewhere?.find((o) => o[kind].has(value));
  return holder && holderName(holder);
}

/** A readable resource name from an alias: lower case, runs of other characters as one dash. */
export function slug(alias: string, fallback: string): string {
  const s = alias
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48);
  return s === "" ? fallback : s;
}

/**
 * Names in order, each unique and none of `taken` (the names a stack's state holds): a repeat gets the first free
 * `-2`, `-3`, ... so that reruns name alike.
 */
export function uniqueNames(bases: string[], taken: Iterable<string> = []): string[] {
  const used = new Set(taken);
  return bases.map((base) => {
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}-${n}`;
    used.add(name);
    return name;
  });
}

/** Why the package's own check refuses a declaration, masked: empty when the program may declare it. */
export function refusals(failures: CheckFailure[]): string {
  return failures.map((f) => redact(`${f.property}: ${f.reason}`)).join("; ");
}

/** Held objects in name order: a state lists them in the order their last operations finished, which varies. */
export const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Whether a held object is of the account this import reads (no `connection`, or one that reaches it). */
export const ofThisAccount = (options: ReimportOptions) => (o: { connection?: unknown }) =>
  o.connection === undefined || (options.sameAccount?.(o.connection) ?? false);
