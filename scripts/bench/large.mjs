// The large-account section of `npm run bench` (issue 41): an account of N API keys and 0.8 N batches of 5
// sub-accounts adopted by `llm-accounts import` (through the stack's state), then every command a user runs on it,
// each beside the same command on as many trivial dynamic resources that call nothing (the engine's floor, run
// right after it on the same machine) and beside the floor the platform's rate limits set.

import { writeFileSync, readFileSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_RATE_LIMITS } from "../../dist/provider/client/index.js";
import { PulumiStack, linkNodeModules } from "../lib/stack.mjs";
import {
  emulator,
  limitsEnv,
  runImportCli,
  SETTINGS,
  stackOf,
  stateSize,
  statusesOf,
  watchPlugin,
} from "./measure.mjs";

const perWindow = (op) => DEFAULT_RATE_LIMITS[op][0].limit;

/** The commands measured, in the order they run. */
export const LARGE_STEPS = ["import", "firstUp", "preview", "refresh", "gate", "changeOneBatch", "destroy"];

/**
 * The floor each command's calls set at the platform's rates, for `keys` keys and `batches` batches at the engine's
 * `parallelism`, in windows.
 */
function rateFloorWindows(step, keys, batches, parallelism) {
  const reads = keys / perWindow("api-key/get");
  if (step === "import" || step === "refresh" || step === "gate") return reads;
  // Key and batch deletes share calls, but no more go together than the engine runs at once (callFloor); each kind
  // has its own limit, so the two may go side by side.
  if (step === "destroy") {
    const floor = callFloor(step, keys, batches, parallelism);
    return Math.max(
      floor["sub-account/delete"] / perWindow("sub-account/delete"),
      floor["api-key/delete"] / perWindow("api-key/delete"),
    );
  }
  return 0;
}

/** Runs one measured command after a pause of one window (the last command's budget refilled): time, calls, 429s. */
async function measured(emu, windowMs, fn) {
  await new Promise((r) => setTimeout(r, windowMs));
  emu.clearRequests();
  const started = Date.now();
  const result = await fn();
  return {
    ms: Date.now() - started,
    calls: emu.calls(),
    answered429: statusesOf(emu)[429] ?? 0,
    code: result?.code ?? 0,
  };
}

/**
 * An emulator (its limits in windows of `windowMs`) holding `keys` API keys and `batches` batches of sub-accounts, and
 * an empty stack in a new folder (prefix `prefix`) that reaches it: what the import adopts.
 */
async function seededAccount(ctx, keys, batches, windowMs, prefix) {
  const emu = await emulator(ctx, { rateWindowMs: windowMs, requestLogSize: 100_000 });
  const apiKeys = Array.from({ length: keys }, (_, i) => emu.state.createKey(`service-${i}`).key);
  for (let b = 0; b < batches; b++) {
    emu.state.createSubAccounts({
      alias: `customer-${b}`,
      balance: 10,
      modelPricing: [{ model: "model-a", pricing_factor: 1 }],
      count: SETTINGS.batchSize,
    });
  }
  const dir = mkdtempSync(join(ctx.work, prefix));
  linkNodeModules(dir);
  writeFileSync(join(dir, "Pulumi.yaml"), "name: large\nruntime: nodejs\n");
  const stack = await PulumiStack.create({
    dir,
    account: { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey },
    env: limitsEnv(windowMs),
  });
  ctx.cleanups.push(() => stack.dispose());
  return { emu, apiKeys, dir, stack };
}

/**
 * Our side at one size: the import (through the stack's state at every size: past about 1,200 keys it would choose
 * that route by itself), then each command on the stack it wrote.
 */
async function accountSide(ctx, keys, batches, windowMs) {
  const { emu, apiKeys, dir, stack } = await seededAccount(ctx, keys, batches, windowMs, "large-");
  const env = ctx.bigRunEnv;
  const steps = {};
  steps.import = await measured(emu, windowMs, () =>
    runImportCli(["--out", dir, "--keys", "-", "--stack", stack.stack, "--into-state"], apiKeys.join("\n"), stack.env),
  );
  const watch = watchPlugin(dir);
  steps.firstUp = await measured(emu, windowMs, () => stack.up([], { env }));
  const pluginPeakBytes = watch.stop();
  const state = stateSize(JSON.parse(await stack.exportState()));
  steps.preview = await measured(emu, windowMs, () => stack.run(["preview"], { env }));
  steps.refresh = await measured(emu, windowMs, () => stack.refresh(["--skip-preview"], { env }));
  steps.gate = await measured(emu, windowMs, () =>
    stack.run(["preview", "--refresh", "--expect-no-changes"], { env, allowFailure: true }),
  );
  const dataFile = join(dir, "account.json");
  const data = JSON.parse(readFileSync(dataFile, "utf8"));
  data.batches[0].alias = `${data.batches[0].alias}-renamed`;
  writeFileSync(dataFile, JSON.stringify(data));
  steps.changeOneBatch = await measured(emu, windowMs, () => stack.up([], { env }));
  steps.destroy = await measured(emu, windowMs, () => stack.destroy([], { env }));
  const left = { keys: emu.state.listKeys().length, subAccounts: emu.state.listSubAccounts().length };
  return { steps, pluginPeakBytes, state, left };
}

/**
 * The engine's floor at one size: as many trivial dynamic resources whose state holds what an ApiKey's holds and
 * that call nothing (tests/e2e/programs/many-keys, footprint), through the same commands. Its "import" is `pulumi
 * stack import` of its own state (as big), its "first up" an up that changes nothing, its change of one an up again.
 */
async function floorSide(ctx, resources, windowMs) {
  const emu = await emulator(ctx, { rateLimits: false });
  const stack = await stackOf(ctx, emu, limitsEnv(false), { count: resources, footprint: true });
  const env = ctx.bigRunEnv;
  await stack.up(["--parallel", String(SETTINGS.upParallel)], { env });
  const exported = join(ctx.work, `floor-${resources}.json`);
  writeFileSync(exported, (await stack.run(["stack", "export"])).stdout);
  const steps = {};
  steps.import = await measured(emu, windowMs, () => stack.run(["stack", "import", "--file", exported]));
  const watch = watchPlugin(stack.dir);
  steps.firstUp = await measured(emu, windowMs, () => stack.up([], { env }));
  const pluginPeakBytes = watch.stop();
  steps.preview = await measured(emu, windowMs, () => stack.run(["preview"], { env }));
  steps.refresh = await measured(emu, windowMs, () => stack.refresh(["--skip-preview"], { env }));
  steps.gate = await measured(emu, windowMs, () =>
    stack.run(["preview", "--refresh", "--expect-no-changes"], { env, allowFailure: true }),
  );
  steps.changeOneBatch = await measured(emu, windowMs, () => stack.up([], { env }));
  steps.destroy = await measured(emu, windowMs, () => stack.destroy([], { env }));
  return { steps, pluginPeakBytes, deploymentBytes: readFileSync(exported).length };
}

/**
 * The calls each command should make at most: the floor the API allows, and for a destroy what the package's
 * deletes are documented to make (docs/large-accounts.md): key deletes share calls as far as the engine's
 * parallelism lets them (keys / --parallel calls when the engine feeds them without pausing longer than a quiet
 * period: tests/runtime/command/deleteCoalescer.test.ts; each pause of the feed costs one call more, which this floor does
 * not allow for, since nothing outside the plugin sees when deletes arrive); the batches' deletes share calls the same
 * way, on the same schedule (batches / --parallel calls: tests/runtime/command/subAccountDeletes.test.ts), and one list.
 */
function callFloor(step, keys, batches, parallelism) {
  if (step === "import") return { "sub-account/list": 1, "api-key/get": keys };
  if (step === "refresh" || step === "gate") return { "sub-account/list": 1, "api-key/get": keys };
  if (step === "changeOneBatch") return { "sub-account/edit": 1 };
  if (step === "destroy") {
    // The engine hands key and batch deletes to the same `--parallel` slots, interleaved: each gathering of the slots
    // takes one call of each kind it holds, so neither kind can take fewer calls than the gatherings of all deletes.
    const gatherings = Math.ceil((keys + batches) / Math.min(parallelism, 1000));
    return {
      "api-key/delete": Math.min(gatherings, keys),
      "sub-account/delete": Math.min(gatherings, batches),
      "sub-account/list": 1,
    };
  }
  return {};
}

/** Whether `calls` stay within `floor` (a list more than the floor allows for, where the program reads the account, included). */
function atFloor(calls, floor) {
  return Object.entries(calls).every(([op, n]) => n <= (floor[op] ?? 0));
}

/**
 * A command's floors, its ratio to the larger, and whether its calls are at the floor: derived from what was measured
 * (its time, the engine's, its calls and exit code) and the row's size, so that a row measured before a floor was
 * counted otherwise is derived again (`npm run bench -- --rerate`). A destroy is at its floor only if it left nothing.
 */
export function rated(measured, row) {
  const { step, ms, engineMs, calls, code = 0 } = measured;
  const rateMs = rateFloorWindows(step, row.keys, row.batches, row.parallelism) * row.windowMs;
  const floorCalls = callFloor(step, row.keys, row.batches, row.parallelism);
  const leftNothing = step !== "destroy" || (row.left?.keys === 0 && row.left?.subAccounts === 0);
  return {
    ...measured,
    code,
    rateMs,
    ratio: ms / Math.max(engineMs, rateMs),
    floorCalls,
    callsAtFloor: atFloor(calls, floorCalls) && code === 0 && leftNothing,
  };
}

/** A row of an earlier run derived again by `rated` (its gate's exit code, recorded since 2026-11-28, taken as 0 before). */
export function reratedRow(row) {
  return { ...row, steps: row.steps.map((st) => rated(st, row)) };
}

/** One size: our side, then the engine's floor, side by side; each command's ratio to the larger floor. */
async function largeSize(ctx, keys, parallelism) {
  const batches = Math.round(keys * SETTINGS.largeBatchesPerKey);
  const windowMs = SETTINGS.largeWindowMs;
  ctx.log(`large account of ${keys} keys and ${batches} batches: our side`);
  const ours = await accountSide(ctx, keys, batches, windowMs);
  ctx.log(`large account of ${keys} keys: the engine's floor on ${keys + batches} trivial resources`);
  const floor = await floorSide(ctx, keys + batches, windowMs);
  const steps = LARGE_STEPS.map((step) => {
    const o = ours.steps[step];
    const st = rated(
      { step, ms: o.ms, engineMs: floor.steps[step].ms, calls: o.calls, code: o.code, answered429: o.answered429 },
      { keys, batches, windowMs, parallelism, left: ours.left },
    );
    ctx.log(
      `  ${step}: ${st.ms} ms beside engine ${st.engineMs} ms, rate floor ${Math.round(st.rateMs)} ms (ratio ${st.ratio.toFixed(3)}), calls ${JSON.stringify(st.calls)}`,
    );
    return st;
  });
  return {
    keys,
    batches,
    subAccounts: batches * SETTINGS.batchSize,
    resources: keys + batches,
    windowMs,
    parallelism,
    measuredAt: new Date().toISOString(),
    steps,
    pluginPeakBytes: ours.pluginPeakBytes,
    floorPluginPeakBytes: floor.pluginPeakBytes,
    stateBytes: ours.state.deploymentBytes,
    floorStateBytes: floor.deploymentBytes,
    left: ours.left,
  };
}

/**
 * The section: every size of `largeSizes` (the run's --large-sizes), each a row; rows of sizes measured by an earlier
 * run (`earlier`, with --update) are kept with the date they were measured at.
 */
export async function largeAccounts(ctx, parallelism, earlier) {
  const rows = [];
  for (const keys of SETTINGS.largeSizes) rows.push(await largeSize(ctx, keys, parallelism));
  const kept = (earlier?.rows ?? []).filter((r) => !rows.some((n) => n.keys === r.keys));
  return { rows: [...kept, ...rows].sort((a, b) => a.keys - b.keys) };
}

/** The rate-bound commands measured at the platform's own window (platformWindow). */
export const PLATFORM_WINDOW_STEPS = ["import", "refresh", "gate", "destroy"];

/**
 * `pulumi destroy --parallel` at the platform's window: at the engine's default (8 on two cores) the deletes of 5,000
 * keys and 4,000 batches take 1,125 calls of each kind, 19 minutes at 60 a minute; docs/large-accounts.md tells a user
 * with such an account to destroy with `--parallel 64` (141 calls of each kind).
 */
export const PLATFORM_DESTROY_PARALLEL = 64;

/**
 * The floor the rate limits set for `calls` (calls by operation) with a full window's budget at the start (each
 * command runs after a pause of one window): of each operation the first `limit` go at once, each later one a window
 * after one of those, on the emulator's sliding window as on the platform's; operations have limits of their own, so
 * they go side by side.
 */
const burstFloorMs = (calls, windowMs) =>
  Math.max(0, ...Object.entries(calls).map(([op, n]) => Math.max(0, Math.ceil(n / perWindow(op)) - 1) * windowMs));

/** The section's rows, in the shape of results.json before 2026-11-28 too (one row, with no `rows`). */
export const platformRows = (section) => (section ? (section.rows ?? [section]) : []);

/**
 * The rate-bound commands of the large account (import, refresh, gate: one get per key each; destroy: its shared
 * deletes) at the platform's own window (one minute, SETTINGS.windowMs.import), at each size of `largePlatformSizes`:
 * where the 1 s window of the large section makes the engine's floor the larger, the platform's limits make the rate
 * floor the larger, and this is the time a user of the platform sees. The engine's floor of each command is the large
 * section's at the same size (`large`, this run's or an earlier one's; its destroy ran at the engine's default
 * --parallel, and may be lower at PLATFORM_DESTROY_PARALLEL: the rate floor is the larger at the size). Rows of sizes not measured again are kept.
 */
export async function platformWindow(ctx, large, earlier) {
  const rows = [];
  for (const keys of SETTINGS.largePlatformSizes) {
    const before = platformRows(earlier).find((r) => r.keys === keys);
    rows.push(await platformSize(ctx, keys, large, before));
  }
  const kept = platformRows(earlier).filter((r) => !rows.some((n) => n.keys === r.keys));
  return { rows: [...kept, ...rows].sort((a, b) => a.keys - b.keys) };
}

/**
 * One size. With SETTINGS.largePlatformSteps (the run's --platform-steps), only those commands run (the import
 * always does: the others run on the stack it wrote) and the row keeps `before`'s other commands, each with the date
 * it was measured.
 */
async function platformSize(ctx, keys, large, before) {
  const chosen = new Set(SETTINGS.largePlatformSteps ?? PLATFORM_WINDOW_STEPS);
  const runs = (step) => chosen.has(step) || !before?.steps.some((st) => st.step === step);
  const batches = Math.round(keys * SETTINGS.largeBatchesPerKey);
  const windowMs = SETTINGS.windowMs.import;
  ctx.log(`large account of ${keys} keys and ${batches} batches at the platform's window (${windowMs} ms)`);
  const { emu, apiKeys, dir, stack } = await seededAccount(ctx, keys, batches, windowMs, "large-platform-");
  const env = ctx.bigRunEnv;
  const ran = {};
  ran.import = await measured(emu, windowMs, () =>
    runImportCli(["--out", dir, "--keys", "-", "--stack", stack.stack, "--into-state"], apiKeys.join("\n"), stack.env),
  );
  if (runs("refresh") || runs("gate") || runs("destroy")) await stack.up([], { env });
  if (runs("refresh")) ran.refresh = await measured(emu, windowMs, () => stack.refresh(["--skip-preview"], { env }));
  if (runs("gate"))
    ran.gate = await measured(emu, windowMs, () =>
      stack.run(["preview", "--refresh", "--expect-no-changes"], { env, allowFailure: true }),
    );
  if (runs("destroy"))
    ran.destroy = await measured(emu, windowMs, () =>
      stack.destroy(["--parallel", String(PLATFORM_DESTROY_PARALLEL)], { env }),
    );
  const left = ran.destroy
    ? { keys: emu.state.listKeys().length, subAccounts: emu.state.listSubAccounts().length }
    : before.left;
  const measuredAt = new Date().toISOString();
  const engine = large?.rows?.find((r) => r.keys === keys);
  const steps = PLATFORM_WINDOW_STEPS.map((step) => {
    if (!ran[step]) {
      const kept = before.steps.find((st) => st.step === step);
      return { ...kept, measuredAt: kept.measuredAt ?? before.measuredAt };
    }
    const o = ran[step];
    const engineMs = engine?.steps.find((st) => st.step === step)?.engineMs;
    const floorCalls = callFloor(step, keys, batches, step === "destroy" ? PLATFORM_DESTROY_PARALLEL : 1);
    const rateMs = burstFloorMs(floorCalls, windowMs);
    // No floor at all (a smoke run's size, with no large row and no waits): no ratio.
    const floorMs = Math.max(engineMs ?? 0, rateMs);
    const ratio = floorMs > 0 ? o.ms / floorMs : null;
    const leftNothing = step !== "destroy" || (left.keys === 0 && left.subAccounts === 0);
    ctx.log(
      `  ${step}: ${o.ms} ms beside rate floor ${rateMs} ms, engine ${engineMs ?? "not measured"} ms (ratio ${ratio?.toFixed(3) ?? "none"}), calls ${JSON.stringify(o.calls)}`,
    );
    return {
      step,
      ms: o.ms,
      engineMs,
      rateMs,
      ratio,
      calls: o.calls,
      floorCalls,
      callsAtFloor: atFloor(o.calls, floorCalls) && o.code === 0 && leftNothing,
      answered429: o.answered429,
      measuredAt,
    };
  });
  return { keys, batches, windowMs, destroyParallel: PLATFORM_DESTROY_PARALLEL, left, measuredAt, steps };
}
