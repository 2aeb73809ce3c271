#!/usr/bin/env node
// `npm run bench`: measures what the package costs with the real Pulumi CLI against the emulator (in this
// process): API calls per lifecycle operation beside the minimum, `pulumi up` under the rate limits, destroys of
// 1000 keys with and without delete coalescing, state size and a checkpointed `up` beside release 0.1.0, refresh
// of many sub-account batches with and without read sharing (the runtime's reads, and `pulumi refresh`), zod's share of a list parse, and `pulumi preview`
// beside trivial dynamic resources and with the policy pack beside without it, and `llm-accounts import` of a large account with the first `up` of what it wrote, and every command on accounts of 1,000 to 5,000 keys and 0.8 batches of 5 per key beside the engine's floor. Every comparison is measured side by side in the same run. Prints a table,
// writes bench/results.json and docs/benchmarks.md, and exits non-zero when a target is missed.
//
// Options: --only <sections> (comma-separated) runs a part and --smoke runs at toy sizes, for development; the
// files are written only by a full run, after each section (a run cut short leaves the sections it finished).
// --with-checkpoints runs the destroys without PULUMI_SKIP_CHECKPOINTS. --only <sections> --update measures those
// sections and merges them into the existing bench/results.json (each section keeps the date it was measured at,
// in sectionDates), then writes both files again. --large-sizes 1000,2500 picks the sizes of the large-account
// section (default 1000, 2500 and 5000 keys), --platform-sizes 1000 those of the platform-window section (default
// 5000); with --update, the rows of sizes not measured again are kept.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { REPO } from "./lib/stack.mjs";
import { ensurePulumiCli } from "./pulumi-cli.mjs";
import * as measure from "./bench/measure.mjs";
import { largeAccounts, platformWindow, reratedRow } from "./bench/large.mjs";
import { providerPlugin } from "./bench/plugin.mjs";
import { markdown, report, targetsOf } from "./bench/render.mjs";
import { runUnderNode } from "./lib/node.mjs";

// The commands measured (`llm-accounts import` among them) need Node.js 22: on an older one, run under it, as `npm test` does.
await runUnderNode(22, "bench");

/** Sections in the order they run; each returns its part of results.json. */
const SECTIONS = {
  parse: (ctx) => measure.parseShare(ctx),
  refresh: (ctx) => measure.refreshSharing(ctx),
  cliRefresh: (ctx) => measure.cliRefresh(ctx),
  destroy: (ctx, cli, parallelism) => measure.destroyAndState(ctx, cli, parallelism),
  checkpointedUp: (ctx) => measure.checkpointedUp(ctx),
  preview: (ctx) => measure.previewOverhead(ctx),
  policy: (ctx) => measure.policyPreview(ctx),
  calls: (ctx) => measure.lifecycleCalls(ctx),
  up: (ctx) => measure.upScaling(ctx),
  footprint: (ctx) => measure.footprint(ctx),
  plugin: (ctx, cli) => providerPlugin(ctx, cli),
  import: (ctx) => measure.importScale(ctx),
  large: (ctx, cli, parallelism, earlier) => largeAccounts(ctx, parallelism, earlier),
  platformWindow: (ctx, cli, parallelism, earlier, results) => platformWindow(ctx, results.large, earlier),
};

const { values: flags } = parseArgs({
  options: {
    only: { type: "string" },
    "large-sizes": { type: "string" },
    "platform-sizes": { type: "string" },
    "platform-steps": { type: "string" },
    "with-checkpoints": { type: "boolean" },
    smoke: { type: "boolean" },
    update: { type: "boolean" },
    rerate: { type: "boolean" },
  },
});
// --rerate measures nothing: it derives the large rows' floors and ratios again from what they measured (after a
// change of how a floor is counted) and writes both files.
if (flags.rerate && (flags.only || flags.smoke || flags.update))
  throw new Error("--rerate measures nothing: not with --only, --smoke or --update");
if (flags.update && (!flags.only || flags.smoke))
  throw new Error("--update merges the sections of --only into bench/results.json (not with --smoke)");
// A run at toy sizes, to try the sections out: its files are never written.
if (flags.smoke)
  Object.assign(measure.SETTINGS, {
    upSizes: [10],
    destroySize: 40,
    refreshBatches: [10],
    cliRefreshBatches: 10,
    checkpointedUpSize: 20,
    previewSize: 20,
    previewRounds: 1,
    policyRounds: 1,
    parseItems: 1000,
    importKeys: 20,
    importBatches: 4,
    largeSizes: [20],
    largePlatformSizes: [20],
  });
// --large-sizes 1000,2500: the sizes of the large-account section this run measures (the others an earlier run measured are kept with --update).
if (flags["large-sizes"]) measure.SETTINGS.largeSizes = flags["large-sizes"].split(",").map(Number);
// --platform-sizes 1000: the sizes of the platform-window section this run measures (kept the same way).
if (flags["platform-sizes"]) measure.SETTINGS.largePlatformSizes = flags["platform-sizes"].split(",").map(Number);
// --platform-steps import: only those commands of the platform-window section (the import always runs); with
// --update, each row keeps its other commands as an earlier run measured them, each with its date.
if (flags["platform-steps"]) measure.SETTINGS.largePlatformSteps = flags["platform-steps"].split(",");
const full = !flags.only && !flags.smoke && !flags.rerate;
const writes = full || flags.update || flags.rerate;
const only = flags.rerate ? [] : flags.only ? flags.only.split(",") : Object.keys(SECTIONS);
for (const s of only)
  if (!(s in SECTIONS)) throw new Error(`--only: unknown section "${s}" (${Object.keys(SECTIONS).join(", ")})`);

const log = (line) => process.stderr.write(`[bench] ${line}\n`);
const ctx = measure.context({ log, withCheckpoints: flags["with-checkpoints"] });

async function main() {
  const cli = await ensurePulumiCli({ log });
  const parallelism = measure.defaultParallelism(cli);
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
  const sdk = JSON.parse(readFileSync(join(REPO, "node_modules/@pulumi/pulumi/package.json"), "utf8"));
  const resultsFile = join(REPO, "bench/results.json");
  // With --update: the sections of an earlier full run, to which the sections measured now are merged.
  const earlier = flags.update || flags.rerate ? JSON.parse(readFileSync(resultsFile, "utf8")) : {};
  const results = {
    ...earlier,
    sectionDates: { ...earlier.sectionDates },
    date: earlier.date ?? new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model?.trim() ?? "unknown",
      memoryBytes: os.totalmem(),
      os: `${os.type()} ${os.release()} ${os.arch()}`,
      node: process.version,
    },
    versions: { package: pkg.version, pulumiCli: cli.version, pulumiSdk: sdk.version },
    settings: {
      ...earlier.settings,
      ...measure.SETTINGS,
      defaultParallel: parallelism,
      skipCheckpoints: !flags["with-checkpoints"],
      targets: measure.TARGETS,
    },
  };
  if (flags.rerate && results.large) results.large = { ...results.large, rows: results.large.rows.map(reratedRow) };
  const started = Date.now();
  const write = () => {
    if (full) results.benchMs = Date.now() - started;
    const targets = targetsOf(results, parallelism);
    results.targets = targets;
    const met = targets.filter((t) => t.met).length;
    const done = only.filter((s) => s in results);
    const today = new Date().toISOString().slice(0, 10);
    const merged = flags.update
      ? ` (${only.join(", ")} measured again on ${today} and merged into the run of ${results.date.slice(0, 10)})`
      : flags.rerate
        ? ` (the large rows' floors derived again on ${today} from what they measured)`
        : "";
    const summary = `targets: ${met}/${targets.length} met${done.length < only.length ? ` (partial run: ${done.join(", ")})` : ""}${merged}`;
    const text = report(results, targets);
    if (writes) {
      mkdirSync(join(REPO, "bench"), { recursive: true });
      mkdirSync(join(REPO, "docs"), { recursive: true });
      writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
      writeFileSync(join(REPO, "docs/benchmarks.md"), markdown(results, text, summary));
    }
    return { text, summary, met: met === targets.length };
  };
  for (const name of only) {
    const t = Date.now();
    results[name] = await SECTIONS[name](ctx, cli, parallelism, earlier[name], results);
    results.sectionDates[name] = new Date().toISOString();
    log(`${name}: done in ${Math.round((Date.now() - t) / 1000)} s`);
    write();
  }
  const { text, summary, met } = write();
  process.stdout.write(`${text}\n\n${summary}\n`);
  if (writes) log("wrote bench/results.json and docs/benchmarks.md");
  return met;
}

let ok = false;
try {
  ok = await main();
} catch (err) {
  process.stderr.write(`[bench] failed: ${err?.stack ?? err}\n`);
} finally {
  for (const c of ctx.cleanups.reverse()) {
    try {
      await c();
    } catch {
      // Best effort.
    }
  }
  rmSync(ctx.work, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
