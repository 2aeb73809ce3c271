import { basename, join } from "node:path";
import { PACKAGE } from "../version.js";
import type { ImportedAccount } from "./account.js";
import { keepsOwnEntry } from "./folder.js";
import { LEFT_OUT_SHOWN, manages, names, type Carrier, type ImportPlan } from "./plan.js";
import { DATA_FILE } from "./program.js";

// What the import tells the user: what it wrote, kept, added and left out (lines, or one JSON object with --json), and
// the next step.

/** What a re-import kept of the stack's state, added, and dropped, on stdout (resource names; keys masked). */
function reportReimport(account: ImportedAccount, stack: string, out: (line: string) => void): void {
  const kept = [...account.keys, ...account.batches].filter((o) => o.kept).map((o) => JSON.stringify(o.name));
  const added = [...account.keys.filter((k) => !k.kept), ...account.batches.filter((b) => !b.kept)].map((o) =>
    JSON.stringify(o.name),
  );
  out(
    `Kept ${kept.length} object(s) stack ${stack} manages, under their resource names${kept.length > 0 ? `: ${names(kept)}` : ""}.`,
  );
  out(`Added ${added.length} object(s) it does not manage yet${added.length > 0 ? `: ${names(added)}` : ""}.`);
  if (account.drifted.length > 0)
    out(
      `Changed in the console since the state last read them (declared as they are now): ${names(account.drifted.map((n) => JSON.stringify(n)))}.`,
    );
  for (const n of account.notes.slice(0, LEFT_OUT_SHOWN)) out(`  ${n}`);
  if (account.dropped.length > 0) {
    out(`Dropped ${account.dropped.length} object(s) the stack manages, as --drop-unlisted asks:`);
    for (const d of account.dropped.slice(0, LEFT_OUT_SHOWN)) out(`  ${d}`);
    if (account.dropped.length > LEFT_OUT_SHOWN) out(`  and ${account.dropped.length - LEFT_OUT_SHOWN} more`);
  }
}

/** What was written, on stdout: the objects, a re-import's changes, what was left out, and the package entry. */
export function reportWritten(plan: ImportPlan, out: (line: string) => void): void {
  const { account, state, folder, packagePlan } = plan;
  const subAccounts = account.batches.reduce((n, b) => n + b.count, 0);
  out(
    `Wrote ${join(plan.args.dir, "index.ts")}: ${account.keys.length} API key(s), ${subAccounts} sub-account(s) in ${account.batches.length} batch(es).`,
  );
  if (manages(state)) reportReimport(account, state!.stack, out);
  if (account.leftOut.length > 0) {
    out(
      `Left out ${account.leftOut.length} object(s) the package's check refuses as they are (also listed in index.ts):`,
    );
    for (const l of account.leftOut.slice(0, LEFT_OUT_SHOWN)) out(`  ${l}`);
    if (account.leftOut.length > LEFT_OUT_SHOWN) out(`  and ${account.leftOut.length - LEFT_OUT_SHOWN} more`);
  }
  const existing = keepsOwnEntry(folder)
    ? (folder.packageJson!.dependencies as Record<string, unknown>)[PACKAGE.name]
    : undefined;
  if (keepsOwnEntry(folder) && existing !== packagePlan.spec)
    out(
      `package.json keeps its own ${PACKAGE.name} entry (${String(existing)}); this import ran ${packagePlan.spec ?? "from an unknown source"}.`,
    );
  else if (packagePlan.copyFrom)
    out(
      `Copied ${basename(packagePlan.copyFrom)} into ${join(plan.args.dir, "vendor")}: package.json installs it from there, on any machine.`,
    );
  if (packagePlan.note && !keepsOwnEntry(folder)) out(packagePlan.note);
}

/** The next step for the user, after the folder (and the keys) were written. */
export function nextStep(plan: ImportPlan): string {
  const { account, args } = plan;
  const stackFlag = args.stack ? ` --stack ${args.stack}` : "";
  const dir = args.dir;
  if (account.drifted.length > 0) {
    return (
      `Next, in ${dir}: npm install, review index.ts, then pulumi preview --refresh${stackFlag} and pulumi up --refresh${stackFlag}: the refresh reads first what changed in the console, so the up writes none of it back` +
      (account.reverted.length > 0
        ? `, but for the sub-accounts named above, changed alone in the console: it gives them back their batch's alias and pricing (one edit per batch: ${names(account.reverted.map((n) => JSON.stringify(n)))}), deleting nothing.`
        : ".")
    );
  }
  if (account.pending.length > 0) {
    return `Next, in ${dir}: npm install, review index.ts, then pulumi preview${stackFlag} (no delete, no replace), and pulumi up${stackFlag}, which deletes nothing and writes one edit per batch whose lost create left sub-accounts under its mark (${names(account.pending.map((n) => JSON.stringify(n)))}): it gives them the batch's alias.`;
  }
  const review = plan.carrier === "state" ? `review index.ts and ${DATA_FILE}` : "review index.ts";
  const dropped = account.dropped.length;
  if (dropped > 0) {
    const others = plan.carrier === "state" ? "nothing else changes" : "no other delete, no replace";
    return `Next, in ${dir}: npm install, ${review}, then pulumi preview${stackFlag} (${dropped} to delete: the object(s) dropped above; ${others}), and pulumi up${stackFlag}, which DELETES them from the platform and makes no other write.`;
  }
  const preview =
    plan.carrier === "state" ? "no change" : manages(plan.state) ? "no delete, no replace" : "only creates";
  return `Next, in ${dir}: npm install, ${review}, then pulumi preview${stackFlag} (${preview}), and pulumi up${stackFlag}, which makes no write.`;
}

/** What `llm-accounts import --json` prints: one object a CI job reads (resource names; keys only masked). */
export interface ImportReport {
  /** The program written. */
  program: string;
  stack: string | null;
  /** How the keys reach the stack: its encrypted config, or its state. */
  carrier: Carrier;
  apiKeys: number;
  subAccounts: number;
  batches: number;
  /** Objects the stack's state holds, kept under their resource names (`ApiKey ci-runner`, `SubAccountBatch team-a`). */
  kept: string[];
  /** Objects the state does not hold yet, by the resource names the program gives them. */
  added: string[];
  /** Objects left out, masked, with the reason the package's own check refuses them. */
  leftOut: string[];
  /** Objects the state holds that the program no longer declares (--drop-unlisted): the next up DELETES them. */
  dropped: string[];
  /** Objects changed in the console since the state last read them, by resource name. */
  drifted: string[];
  notes: string[];
  /** Whether the keys reached the stack (its config or its state); false: `messages` says what to run. */
  adopted: boolean;
  /** What the adoption did or what to run, as the lines without --json say it. */
  messages: string[];
  /** The next step. */
  next: string;
}

/** The report of `--json`, once the folder and the adoption are written. */
export function importReport(plan: ImportPlan, adopted: boolean, messages: string[]): ImportReport {
  const { account } = plan;
  const objects = [
    ...account.keys.map((k) => ({ ...k, type: "ApiKey" })),
    ...account.batches.map((b) => ({ ...b, type: "SubAccountBatch" })),
  ];
  return {
    program: join(plan.args.dir, "index.ts"),
    stack: plan.args.stack ?? null,
    carrier: plan.carrier,
    apiKeys: account.keys.length,
    subAccounts: account.batches.reduce((n, b) => n + b.count, 0),
    batches: account.batches.length,
    kept: objects.filter((o) => o.kept).map((o) => `${o.type} ${o.name}`),
    added: objects.filter((o) => !o.kept).map((o) => `${o.type} ${o.name}`),
    leftOut: account.leftOut,
    dropped: account.dropped,
    drifted: account.drifted,
    notes: account.notes,
    adopted,
    messages,
    next: nextStep(plan),
  };
}
