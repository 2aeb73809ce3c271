// The benchmark's measurements: each section runs the real Pulumi CLI (or the runtime directly) against the
// emulator in this process and returns plain data. Rendering is in render.mjs, the prose in about.md, the
// entry point is scripts/bench.mjs.

import { spawn, spawnSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import { join } from "node:path";
import {
  API_KEY_DELETE_MAX,
  DEFAULT_RATE_LIMITS,
  SubAccountListResponseSchema,
  fromWire,
} from "../../dist/provider/client/index.js";
import { startEmulator } from "../../dist/provider/emulator/index.js";
import {
  COALESCING_SWITCH,
  SHARING_SWITCH,
  setStackConfig,
  startFresh,
  subAccountBatch,
} from "../../dist/provider/runtime/index.js";
import { buildRelease, RELEASE_0_1_0 } from "../lib/release.mjs";
import { PulumiStack, linkNodeModules, prepareProgram, REPO } from "../lib/stack.mjs";

const PROGRAM = join(REPO, "tests/e2e/programs/many-keys");

/** The platform's per-window limit of key creates (spec 8), from the one table the emulator enforces. */
export const CREATES_PER_WINDOW = DEFAULT_RATE_LIMITS["api-key/create"][0].limit;
/** The platform's per-window limit of key delete calls. */
export const DELETES_PER_WINDOW = DEFAULT_RATE_LIMITS["api-key/delete"][0].limit;
/** The platform's per-window limit of key reads: what bounds an import and the first `up` of what it wrote. */
export const GETS_PER_WINDOW = DEFAULT_RATE_LIMITS["api-key/get"][0].limit;
export { API_KEY_DELETE_MAX as DELETE_MAX };

/** Sizes, windows and rounds of every section: reported with the results. */
export const SETTINGS = {
  /** Scaled rate-limit windows ("minutes") of each part, on the emulator and the client alike. */
  windowMs: { calls: 1000, up: 4000, destroy: [1000, 10_000], import: 60_000 },
  /** `pulumi up --parallel` of the up runs: enough that the engine is not what limits the creates. */
  upParallel: 64,
  upSizes: [10, 100, 300],
  destroySize: 1000,
  /** Sub-accounts per batch in the refresh rows and in the state measurement. */
  batchSize: 5,
  refreshBatches: [10, 100, 1000],
  /** Reads at once in the runtime refresh rows: the engine's default --parallel on this machine's 2 cores. */
  baselineReadsAtOnce: 8,
  /** SubAccountBatch resources of the `pulumi refresh` rows (real CLI, default --parallel). */
  cliRefreshBatches: 500,
  /** Reads the baseline times, at most (each lists the whole account); its time is scaled to all N reads. */
  baselineSampleReads: 100,
  parseItems: 10_000,
  checkpointedUpSize: 1000,
  previewSize: 500,
  /** The account `llm-accounts import` adopts: API keys, and batches of `batchSize` sub-accounts. */
  importKeys: 1000,
  importBatches: 200,
  /** The large-account section (large.mjs): API keys of each size, batches of `batchSize` per key, its window. */
  largeSizes: [1000, 2500, 5000],
  largeBatchesPerKey: 0.8,
  largeWindowMs: 1000,
  /** Keys of the large accounts whose rate-bound commands run at the platform's own window (large.mjs platformWindow). */
  largePlatformSizes: [5000],
  /** Preview runs of each kind, interleaved; the fastest of each is compared (the least disturbed by noise). */
  previewRounds: 5,
  /** Preview runs with and without the policy pack, interleaved (each a preview of previewSize keys). */
  policyRounds: 3,
  /** Keys of the small stack whose previews, with and without the pack, measure the pack's fixed start apart. */
  policySmallSize: 10,
};

/** Targets, checked by the summary line. */
export const TARGETS = {
  upRatio: 1.15,
  /** The provider text stored twice in every resource's state. */
  providerBytes: 512,
  previewRatio: 1.15,
  /** `pulumi preview --policy-pack node_modules/pulumi-llm-accounts/policy-pack` beside the same preview without it. */
  policyRatio: 1.2,
  /** Coalesced destroys beside one key per call, at every window and parallelism. */
  destroyTimeRatio: 1.0,
  /** State per ApiKey as a share of release 0.1.0's, measured in the same run. */
  keyStateShare: 0.5,
  /** List calls of a refresh of N batches (runtime rows), and of each `pulumi refresh` pass (real CLI). */
  refreshListCalls: 1,
  /** State per key of 1000 ApiKeys beside the footprint baseline. */
  footprintStateRatio: 1.2,
  /** `llm-accounts import` beside the floor the platform's get rate sets for its keys. */
  importRatio: 1.2,
  /** Each large-account command beside the larger of the engine's floor (trivial resources) and the rate-limit floor. */
  largeRatio: 1.25,
  /** Peak memory of the provider plugin at any large-account size. */
  largePluginBytes: 1024 * 1024 * 1024,
};

/** What every section needs: a log, a scratch folder, cleanups to run at the end, the run's settings. */
export function context({ log, withCheckpoints }) {
  return {
    log,
    work: mkdtempSync(join(os.tmpdir(), "llm-bench-")),
    cleanups: [],
    /** Environment of the 1000-key destroys: see about.md for why checkpoints are skipped by default. */
    bigRunEnv: withCheckpoints ? {} : { PULUMI_SKIP_CHECKPOINTS: "true" },
  };
}

// --- helpers ---------------------------------------------------------------------------------------------------

export async function emulator(ctx, options) {
  const emu = await startEmulator({ port: 0, host: "127.0.0.1", ...options });
  ctx.cleanups.push(() => emu.close());
  return emu;
}

/** Client-side settings that match an emulator: the same scaled window, or limits off. */
export function limitsEnv(windowMs) {
  return windowMs === false ? { LLM_ACCOUNTS_RATE_LIMITS: "off" } : { LLM_ACCOUNTS_RATE_WINDOW_MS: String(windowMs) };
}

export async function stackOf(ctx, emu, env, config) {
  const dir = prepareProgram(PROGRAM, "llm-bench-program-");
  const stack = await PulumiStack.create({
    dir,
    account: { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey },
    env,
  });
  ctx.cleanups.push(() => {
    stack.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  for (const [k, v] of Object.entries(config)) await stack.setConfig(k, v);
  return stack;
}

export function countCalls(emu) {
  const out = {};
  for (const r of emu.requests()) out[r.op] = (out[r.op] ?? 0) + 1;
  return out;
}

function sum(calls) {
  return Object.values(calls).reduce((a, b) => a + b, 0);
}

export function statusesOf(emu, op) {
  const out = {};
  for (const r of emu.requests()) if (!op || r.op === op) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

/** Samples the peak resident memory (VmHWM) of the provider plugin (`marker` in its command line) that runs in `dir` (Linux). */
export function watchPlugin(dir, marker = "dynamic-provider") {
  if (process.platform !== "linux") return { stop: () => null };
  const cwd = realpathSync(dir);
  let peakKb = 0;
  const sample = () => {
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)) continue;
        if (realpathSync(`/proc/${pid}/cwd`) !== cwd) continue;
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
        if (m) peakKb = Math.max(peakKb, Number(m[1]));
      } catch {
        // The process ended meanwhile.
      }
    }
  };
  const timer = setInterval(sample, 250);
  return {
    stop: () => {
      clearInterval(timer);
      return peakKb > 0 ? peakKb * 1024 : null;
    },
  };
}

/** `pulumi up`, timed, with the creates' arrival times split out: before the first, between, after the last. */
async function timedUp(stack, emu, extra) {
  emu.clearRequests();
  const started = Date.now();
  await stack.up(extra);
  const ended = Date.now();
  const creates = emu
    .requests()
    .filter((r) => r.op === "api-key/create")
    .map((r) => r.at);
  return {
    ms: ended - started,
    head: creates.length ? creates[0] - started : 0,
    span: creates.length ? creates[creates.length - 1] - creates[0] : 0,
    tail: creates.length ? ended - creates[creates.length - 1] : 0,
    creates: creates.length,
  };
}

/** The engine's default `--parallel`, as the CLI states it. */
export function defaultParallelism(cli) {
  const help = spawnSync(cli.pulumi, ["destroy", "--help"], { encoding: "utf8" }).stdout ?? "";
  const m = /--parallel int32 .*\(default (\d+)\)/.exec(help);
  return m ? Number(m[1]) : 4 * os.cpus().length;
}

// --- 1. API calls per lifecycle operation ---------------------------------------------------------------------

/** 1. API calls per lifecycle operation beside the minimum the API allows. */
export async function lifecycleCalls(ctx) {
  const N = 10;
  const emu = await emulator(ctx, { rateWindowMs: SETTINGS.windowMs.calls });
  const env = limitsEnv(SETTINGS.windowMs.calls);
  const rows = [];
  const step = async (operation, resources, minimum, run) => {
    emu.clearRequests();
    await run();
    const calls = countCalls(emu);
    const total = sum(calls);
    rows.push({ operation, resources, calls, total, minimum, met: total === minimum });
    ctx.log(`calls: ${operation}: ${total} (minimum ${minimum})`);
  };

  const keys = await stackOf(ctx, emu, env, { count: N });
  await step(`create ${N} keys`, N, N, () => keys.up());
  await step(`toggle ${N} keys (disable)`, N, N, () => keys.setConfig("enabled", false).then(() => keys.up()));
  // One get before each edit: an edit replaces the whole config (spec 4.3), and the console may have set what the
  // package cannot declare since the last refresh (issue 43).
  await step(`edit ${N} keys (spend limit)`, N, 2 * N, () => keys.setConfig("spendLimit", 5).then(() => keys.up()));
  await step(`refresh ${N} keys`, N, N, () => keys.refresh(["--skip-preview"]));
  // The engine hands the provider at most --parallel deletes at once: with N of them, one call can take all.
  const wide = ["--parallel", String(N)];
  await step(`delete ${N} keys (--parallel ${N})`, N, Math.ceil(N / API_KEY_DELETE_MAX), () => keys.destroy(wide));
  await step(`create ${N} keys declared disabled`, N, 2 * N, () => keys.up());
  await step(`delete ${N} disabled keys (--parallel ${N})`, N, Math.ceil(N / API_KEY_DELETE_MAX), () =>
    keys.destroy(wide),
  );

  const team = await stackOf(ctx, emu, env, { count: 0, subAccounts: 2 });
  // One list of what a killed run left under the batch's mark (shared by the command's creates), a create and the
  // edit that sets the declared alias: the fewest calls with which a lost or killed create's recovery tells its own
  // sub-accounts from another stack's and makes none twice (provider/api/assumptions.ts, CREATE_MARKER).
  await step("sub-account batch create (2)", 1, 3, () => team.up());
  await step("sub-account scale up (2 -> 4)", 1, 3, () => team.setConfig("subAccounts", 4).then(() => team.up()));
  await step("sub-account scale down (4 -> 1)", 1, 1, () => team.setConfig("subAccounts", 1).then(() => team.up()));
  await step("sub-account edit (alias)", 1, 1, () => team.setConfig("aliasPrefix", "renamed").then(() => team.up()));
  await step("sub-account refresh", 1, 1, () => team.refresh(["--skip-preview"]));
  // The delete, and the list (shared by the command's deletes) of what a killed run left under the batch's mark.
  await step("sub-account batch delete", 1, 2, () => team.destroy());
  return rows;
}

// --- 2. pulumi up under the rate limits -------------------------------------------------------------------------

/** 2. `pulumi up` under the rate limits beside the bounds they leave. */
export async function upScaling(ctx) {
  const rows = [];
  for (const n of SETTINGS.upSizes) {
    const free = await emulator(ctx, { rateLimits: false });
    const freeRun = await timedUp(await stackOf(ctx, free, limitsEnv(false), { count: n }), free, [
      "--parallel",
      String(SETTINGS.upParallel),
    ]);
    const limited = await emulator(ctx, { rateWindowMs: SETTINGS.windowMs.up });
    const run = await timedUp(await stackOf(ctx, limited, limitsEnv(SETTINGS.windowMs.up), { count: n }), limited, [
      "--parallel",
      String(SETTINGS.upParallel),
    ]);
    const answered = statusesOf(limited);
    // The shortest create phase the limits allow; the floor is the run's own time before its first create
    // (nothing is rate-limited before it), that shortest create phase, and an unlimited run's time after its last.
    const minSpan = (Math.ceil(n / CREATES_PER_WINDOW) - 1) * SETTINGS.windowMs.up;
    const floor = run.head + minSpan + freeRun.tail;
    const bound = Math.max(floor, freeRun.ms);
    const ratio = run.ms / bound;
    const ok = run.creates === n && limited.state.listKeys().length === n && (answered[429] ?? 0) === 0;
    rows.push({
      keys: n,
      ms: run.ms,
      beforeFirstCreateMs: run.head,
      createPhaseMs: run.span,
      minCreatePhaseMs: minSpan,
      afterLastCreateMs: run.tail,
      unlimitedMs: freeRun.ms,
      unlimitedPhasesMs: { beforeFirstCreate: freeRun.head, creates: freeRun.span, afterLastCreate: freeRun.tail },
      floorMs: floor,
      boundMs: bound,
      ratio,
      answered429: answered[429] ?? 0,
      allCreated: ok,
      met: ok && ratio <= TARGETS.upRatio,
    });
    ctx.log(
      `up ${n}: ${run.ms} ms with limits, ${freeRun.ms} ms without, floor ${floor} ms, ratio ${ratio.toFixed(3)}, 429s ${answered[429] ?? 0}`,
    );
    await free.close();
    await limited.close();
  }
  return rows;
}

// --- 3. pulumi destroy of 1000 keys, state size, plugin memory -------------------------------------------------

/**
 * One `up` of 1000 keys; each destroy then starts from a copy of its state
 * (imported into the stack) and of the emulator's data (a new emulator loads it), so that every destroy starts
 * from the same point: at each emulator window, the default --parallel and --parallel 1000, coalescing on and off.
 */
export async function destroyAndState(ctx, cli, parallelism) {
  const size = SETTINGS.destroySize;
  const setupEmu = await emulator(ctx, { rateLimits: false });
  // Keys only: another resource's delete would take one of the engine's slots and blur the call counts.
  const stack = await stackOf(ctx, setupEmu, {}, { count: size });
  const watch = watchPlugin(stack.dir);
  const up = await stack.up(["--parallel", String(SETTINGS.upParallel)], {
    env: { ...limitsEnv(false), ...ctx.bigRunEnv },
  });
  const upPeak = watch.stop();
  ctx.log(`destroy: up of ${size} keys for the setup took ${up.ms} ms`);

  const exported = await stack.exportState();
  const deployment = join(ctx.work, "deployment.json");
  writeFileSync(deployment, exported);
  const snapshot = JSON.stringify(setupEmu.state.snapshot());
  await setupEmu.close();
  const state = stateSize(JSON.parse(exported));

  const runs = [];
  let destroyPeak = 0;
  for (const windowMs of SETTINGS.windowMs.destroy) {
    for (const parallel of [parallelism, size]) {
      for (const coalescing of [true, false]) {
        const file = join(ctx.work, `emulator-${runs.length}.json`);
        writeFileSync(file, snapshot, { mode: 0o600 });
        const emu = await emulator(ctx, { stateFile: file, rateWindowMs: windowMs });
        await stack.run(["stack", "import", "--file", deployment]);
        const env = {
          LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
          ...limitsEnv(windowMs),
          ...ctx.bigRunEnv,
          ...(coalescing ? {} : { [COALESCING_SWITCH]: "off" }),
        };
        const w = watchPlugin(stack.dir);
        const r = await stack.destroy(parallel === parallelism ? [] : ["--parallel", String(parallel)], { env });
        destroyPeak = Math.max(destroyPeak, w.stop() ?? 0);
        const answered = statusesOf(emu, "api-key/delete");
        const label = parallel === parallelism ? `default (${parallel})` : String(parallel);
        const run = {
          windowMs,
          parallel: label,
          coalescing,
          deleteCalls: answered[200] ?? 0,
          answered429: answered[429] ?? 0,
          ms: r.ms,
          keysLeft: emu.state.listKeys().length,
        };
        runs.push(run);
        ctx.log(
          `destroy window ${windowMs} ms, --parallel ${label}, coalescing ${coalescing ? "on" : "off"}: ${run.deleteCalls} delete calls, ${r.ms} ms, ${run.keysLeft} keys left`,
        );
        await emu.close();
      }
    }
  }
  const pairs = [];
  for (const on of runs.filter((r) => r.coalescing)) {
    const off = runs.find((r) => !r.coalescing && r.windowMs === on.windowMs && r.parallel === on.parallel);
    pairs.push({
      windowMs: on.windowMs,
      parallel: on.parallel,
      coalesced: on,
      baseline: off,
      callRatio: on.deleteCalls / off.deleteCalls,
      timeRatio: on.ms / off.ms,
    });
  }
  return {
    runs,
    pairs,
    setupUpMs: up.ms,
    state,
    memory: {
      pluginPeakBytes: Math.max(upPeak ?? 0, destroyPeak) || null,
      duringUp: upPeak,
      duringDestroy: destroyPeak || null,
    },
  };
}

/** Bytes of the exported state per resource of each of the package's types, and of the provider each one carries. */
export function stateSize(exported) {
  const bytes = (v) => Buffer.byteLength(JSON.stringify(v));
  const ofType = (type) => {
    const rs = exported.deployment.resources.filter((r) => r.type === `pulumi-nodejs:dynamic/llm-accounts:${type}`);
    if (rs.length === 0) return null;
    return {
      resources: rs.length,
      bytesPerResource: Math.round(rs.reduce((a, r) => a + bytes(r), 0) / rs.length),
      providerBytes: Buffer.byteLength(rs[0].inputs.__provider),
      // The engine keeps the provider among the inputs and among the outputs of each resource.
      providerCopiesPerResource: [rs[0].inputs.__provider, rs[0].outputs.__provider].filter(
        (p) => p === rs[0].inputs.__provider,
      ).length,
    };
  };
  return { deploymentBytes: bytes(exported), apiKey: ofType("ApiKey"), subAccountBatch: ofType("SubAccountBatch") };
}

// --- 4. pulumi up of 1000 keys with checkpoints, 0.1.0 beside this version --------------------------------------

/**
 * `pulumi up` of 1000 keys with the file backend's checkpoints on (the whole state rewritten at every step),
 * with release 0.1.0 (built from git) and with this version, on emulators without limits.
 */
export async function checkpointedUp(ctx) {
  const n = SETTINGS.checkpointedUpSize;
  const out = {};
  for (const [name, pkg] of [
    ["release 0.1.0", buildRelease(RELEASE_0_1_0)],
    ["this version", REPO],
  ]) {
    const emu = await emulator(ctx, { rateLimits: false });
    const stack = await stackOf(ctx, emu, limitsEnv(false), { count: n, subAccounts: SETTINGS.batchSize });
    const link = join(stack.dir, "node_modules", "pulumi-llm-accounts");
    rmSync(link, { force: true });
    symlinkSync(pkg, link);
    const r = await stack.up(["--parallel", String(SETTINGS.upParallel)]);
    const state = stateSize(JSON.parse(await stack.exportState()));
    out[name === "this version" ? "after" : "before"] = {
      package: name,
      ms: r.ms,
      keys: emu.state.listKeys().length,
      state,
    };
    ctx.log(`checkpointed up of ${n} keys, ${name}: ${r.ms} ms, ${state.apiKey.bytesPerResource} B per key`);
  }
  return { keys: n, ...out, timeRatio: out.after.ms / out.before.ms };
}

// --- 5. refresh of many sub-account batches, read sharing on and off; zod's share of a list parse -------------

/** Runs `fn` over items with at most `width` at once. */
async function pool(items, width, fn) {
  const results = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return results;
}

/**
 * Refresh of N batches of 5, calling the runtime's read directly (as the engine's plugin does), scheduled as the
 * engine schedules them: `baselineReadsAtOnce` at a time, the next started as one is answered. With sharing, and
 * the baseline (one list per read, LLM_ACCOUNTS_READ_SHARING=off); each run starts as a new plugin process.
 */
export async function refreshSharing(ctx) {
  const saved = { ...process.env };
  process.env.LLM_ACCOUNTS_RATE_LIMITS = "off";
  const rows = [];
  try {
    for (const n of SETTINGS.refreshBatches) {
      const emu = await emulator(ctx, { rateLimits: false });
      setStackConfig({ baseUrl: emu.baseUrl, accountKey: emu.accountKey, adminKey: emu.adminKey });
      const batches = await pool(
        Array.from({ length: n }, (_, i) => i),
        16,
        async (i) => {
          const { inputs } = await subAccountBatch.check(
            {},
            {
              alias: `team-${i}`,
              balance: 1,
              count: SETTINGS.batchSize,
              modelPricing: [{ model: "model-a", pricingFactor: 1 }],
            },
          );
          return subAccountBatch.create(inputs);
        },
      );
      const run = async (sharing) => {
        process.env[SHARING_SWITCH] = sharing ? "on" : "off";
        startFresh();
        emu.clearRequests();
        const started = Date.now();
        const read = (b) => subAccountBatch.read(b.id, b.outs);
        const timed = sharing ? batches : batches.slice(0, SETTINGS.baselineSampleReads);
        const reads = await pool(timed, SETTINGS.baselineReadsAtOnce, read);
        // Every baseline read costs the same (one list of the whole account): a sample, scaled, is the whole.
        const scale = n / timed.length;
        const ms = (Date.now() - started) * scale;
        const correct = reads.every(
          (r, i) => r.id === batches[i].id && JSON.stringify(r.props.tokens) === JSON.stringify(batches[i].outs.tokens),
        );
        const listCalls = (countCalls(emu)["sub-account/list"] ?? 0) * scale;
        return { ms, listCalls, timedReads: timed.length, msPerSubAccount: ms / (n * SETTINGS.batchSize), correct };
      };
      const shared = await run(true);
      const baseline = await run(false);
      rows.push({
        batches: n,
        subAccounts: n * SETTINGS.batchSize,
        shared,
        baseline,
        timeRatio: shared.ms / baseline.ms,
      });
      ctx.log(
        `refresh ${n} batches: shared ${shared.listCalls} lists ${shared.ms} ms; baseline ${baseline.listCalls} lists ${baseline.ms} ms`,
      );
      await emu.close();
    }
  } finally {
    process.env = saved;
  }
  return rows;
}

/**
 * `pulumi refresh --skip-preview` of `cliRefreshBatches` SubAccountBatch resources of 5 at the CLI's default
 * --parallel, with read sharing and with it off (one list per read), each run twice, interleaved; the faster of
 * each is compared. Checkpoints are skipped, as in the destroys: the file backend's rewrites are not the subject.
 */
export async function cliRefresh(ctx) {
  const n = SETTINGS.cliRefreshBatches;
  const emu = await emulator(ctx, { rateLimits: false });
  const env = { ...ctx.bigRunEnv, LLM_ACCOUNTS_RATE_LIMITS: "off" };
  const stack = await stackOf(ctx, emu, env, { count: 0, batches: n });
  await stack.up(["--parallel", "64"]);
  const samples = { on: [], off: [] };
  for (let round = 0; round < 2; round++) {
    for (const sharing of ["on", "off"]) {
      emu.clearRequests();
      const r = await stack.refresh(["--skip-preview"], { env: { [SHARING_SWITCH]: sharing } });
      const calls = countCalls(emu);
      samples[sharing].push({
        ms: r.ms,
        listCalls: calls["sub-account/list"] ?? 0,
        otherCalls: sum(calls) - (calls["sub-account/list"] ?? 0),
      });
      ctx.log(
        `pulumi refresh of ${n} batches, sharing ${sharing}: ${r.ms} ms, ${calls["sub-account/list"] ?? 0} lists`,
      );
    }
  }
  const stateUnchanged = (await stack.run(["preview", "--expect-no-changes"], { allowFailure: true })).code === 0;
  await stack.destroy(["--parallel", "64"]);
  const fastest = (list) => list.reduce((a, b) => (b.ms < a.ms ? b : a));
  const shared = fastest(samples.on);
  const baseline = fastest(samples.off);
  return {
    batches: n,
    subAccounts: n * SETTINGS.batchSize,
    samples,
    shared,
    baseline,
    timeRatio: shared.ms / baseline.ms,
    stateUnchanged,
  };
}

/** Median of `rounds` timings of `fn`, in ms. */
function median(fn, rounds = 9) {
  fn();
  const times = [];
  for (let i = 0; i < rounds; i++) {
    const t = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return times.sort((a, b) => a - b)[Math.floor(rounds / 2)];
}

/** Where the time of parsing one list of 10,000 sub-accounts goes: JSON, the zod schema, the casing. */
export async function parseShare(ctx) {
  const emu = await emulator(ctx, { rateLimits: false });
  const per = 100;
  for (let i = 0; i < SETTINGS.parseItems / per; i++)
    emu.state.createSubAccounts({
      alias: `team-${i}`,
      balance: 1,
      modelPricing: [{ model: "model-a", pricing_factor: 1.5 }],
      count: per,
    });
  const items = emu.state.listSubAccounts();
  const body = JSON.stringify({ items, total: items.length, page: 1, pageSize: -1 });
  const json = JSON.parse(body);
  const parsed = SubAccountListResponseSchema.parse(json);
  const ms = {
    jsonParse: median(() => JSON.parse(body)),
    zod: median(() => SubAccountListResponseSchema.parse(json)),
    casing: median(() => parsed.items.map((i) => fromWire(i))),
  };
  const total = ms.jsonParse + ms.zod + ms.casing;
  ctx.log(
    `parse of ${items.length} sub-accounts: JSON ${ms.jsonParse.toFixed(1)} ms, zod ${ms.zod.toFixed(1)} ms, casing ${ms.casing.toFixed(1)} ms`,
  );
  return { items: items.length, bytes: Buffer.byteLength(body), ms, totalMs: total, zodShare: ms.zod / total };
}

// --- 7. pulumi preview with the policy pack beside without it ---------------------------------------------------

/** The rules' levels and options in the policy row: every rule runs, mandatory; the program's keys break none. */
const POLICY_CONFIG = {
  "api-key-spend-limit": { enforcementLevel: "mandatory", maxMonthly: 500 },
  "api-key-unique-aliases": "mandatory",
  "account-budget": { enforcementLevel: "mandatory", maxTotalBalance: 1000 },
  "sub-account-pricing-floor": "mandatory",
  "sub-account-balance": { enforcementLevel: "mandatory", maxBalance: 100 },
  "sub-account-models": { enforcementLevel: "mandatory", approvedModels: ["model-a"] },
  "api-key-ip-allowlist": { enforcementLevel: "mandatory", allowedRanges: ["10.0.0.0/8"] },
  "api-key-models": { enforcementLevel: "mandatory", approvedModels: ["model-a"] },
  "api-key-geo": { enforcementLevel: "mandatory", approvedCountries: ["SG"] },
  "api-key-rotation": { enforcementLevel: "mandatory", maxAgeDays: 90, minOverlapHours: 24 },
};

/**
 * 7. `pulumi preview` of `previewSize` ApiKey resources with the ready pack of the package
 * (node_modules/pulumi-llm-accounts/policy-pack: compiled JavaScript, run by the real engine through the language
 * host's RunPlugin) beside the same preview without a pack, interleaved, fastest of each compared. The same pair
 * on a stack of `policySmallSize` keys measures the pack's fixed start apart: what the big pair adds beyond it is
 * the per-resource cost.
 */
export async function policyPreview(ctx) {
  const emu = await emulator(ctx, { rateWindowMs: SETTINGS.windowMs.calls });
  const env = limitsEnv(SETTINGS.windowMs.calls);
  const big = await stackOf(ctx, emu, env, { count: SETTINGS.previewSize, restricted: true });
  const small = await stackOf(ctx, emu, env, { count: SETTINGS.policySmallSize, restricted: true });
  // The pack as a user points at it: inside the package in the program's node_modules.
  const pack = join(big.dir, "node_modules/pulumi-llm-accounts/policy-pack");
  const config = join(ctx.work, "policy-bench-config.json");
  writeFileSync(config, JSON.stringify(POLICY_CONFIG));
  const withPack = ["--policy-pack", pack, "--policy-pack-config", config];
  // The control: a pack of one resource rule that returns at once, run the same way. What it costs is Pulumi's
  // (the engine's Analyze call per resource, run-policy-pack's start, @pulumi/policy), whatever a pack's rules do.
  const control = join(big.dir, "control-policy-pack");
  mkdirSync(control, { recursive: true });
  writeFileSync(
    join(control, "PulumiPolicy.yaml"),
    "runtime: nodejs\ndescription: one rule that does nothing (the bench's control)\n",
  );
  writeFileSync(
    join(control, "package.json"),
    JSON.stringify({ name: "control-policy-pack", version: "0.0.1", main: "index.js" }),
  );
  writeFileSync(
    join(control, "index.js"),
    'const { PolicyPack } = require("@pulumi/policy");\n' +
      'new PolicyPack("control-policy-pack", { policies: [{ name: "nothing", description: "does nothing", enforcementLevel: "mandatory", validateResource: () => {} }] });\n',
  );
  const withControl = ["--policy-pack", control];
  const samples = { pack: [], none: [], control: [], smallPack: [], smallNone: [], smallControl: [] };
  let violations = 0;
  for (let i = 0; i < SETTINGS.policyRounds; i++) {
    for (const [name, stack, extra] of [
      ["pack", big, withPack],
      ["none", big, []],
      ["control", big, withControl],
      ["smallPack", small, withPack],
      ["smallNone", small, []],
      ["smallControl", small, withControl],
    ]) {
      const r = await stack.run(["preview", ...extra]);
      samples[name].push(r.ms);
      if (name === "pack") violations = (r.stdout.match(/\[(advisory|mandatory)\]/g) ?? []).length;
      const which = {
        pack: "with the policy pack",
        none: "without a pack",
        control: "with the control pack (one rule that does nothing)",
      };
      ctx.log(
        `preview ${name.startsWith("small") ? SETTINGS.policySmallSize : SETTINGS.previewSize} keys ${which[name.replace(/^small(.)/, (_, c) => c.toLowerCase())]}: ${r.ms} ms`,
      );
    }
  }
  const best = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, Math.min(...v)]));
  const fixedMs = best.smallPack - best.smallNone;
  const perResourceMs = (best.pack - best.none - fixedMs) / (SETTINGS.previewSize - SETTINGS.policySmallSize);
  const controlFixedMs = best.smallControl - best.smallNone;
  return {
    control: {
      ms: best.control,
      smallMs: best.smallControl,
      ratio: best.control / best.none,
      fixedMs: controlFixedMs,
      perResourceMs: (best.control - best.none - controlFixedMs) / (SETTINGS.previewSize - SETTINGS.policySmallSize),
    },
    pack: "policy-pack (ready, compiled JavaScript)",
    resources: SETTINGS.previewSize,
    smallResources: SETTINGS.policySmallSize,
    samples,
    packMs: best.pack,
    noneMs: best.none,
    smallPackMs: best.smallPack,
    smallNoneMs: best.smallNone,
    ratio: best.pack / best.none,
    fixedMs,
    perResourceMs,
    violations,
    apiCalls: sum(countCalls(emu)),
  };
}

// --- 6. pulumi preview beside trivial dynamic resources --------------------------------------------------------

/** 6. `pulumi preview` of ApiKey resources beside trivial dynamic resources. */
export async function previewOverhead(ctx) {
  const emu = await emulator(ctx, { rateWindowMs: SETTINGS.windowMs.calls });
  const env = limitsEnv(SETTINGS.windowMs.calls);
  const llm = await stackOf(ctx, emu, env, { count: SETTINGS.previewSize });
  const trivial = await stackOf(ctx, emu, env, { count: SETTINGS.previewSize, trivial: true });
  const samples = { llm: [], trivial: [] };
  for (let i = 0; i < SETTINGS.previewRounds; i++) {
    for (const [name, stack] of [
      ["llm", llm],
      ["trivial", trivial],
    ]) {
      const r = await stack.preview();
      samples[name].push(r.ms);
      ctx.log(`preview ${SETTINGS.previewSize} ${name}: ${r.ms} ms`);
    }
  }
  const best = { llm: Math.min(...samples.llm), trivial: Math.min(...samples.trivial) };
  const calls = sum(countCalls(emu));
  return {
    resources: SETTINGS.previewSize,
    samples,
    llmMs: best.llm,
    trivialMs: best.trivial,
    ratio: best.llm / best.trivial,
    apiCalls: calls,
  };
}

// --- 7. llm-accounts import of a large account, and the first pulumi up of what it wrote ------------------------

/** Runs `llm-accounts import` of the built package with the keys on stdin; resolves with its output and time. */
export function runImportCli(args, stdin, env) {
  const started = Date.now();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(REPO, "dist/provider/cli.js"), "import", ...args], {
      env,
      cwd: os.tmpdir(),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", fail);
    child.on("close", (code) =>
      code === 0
        ? done({ stdout, stderr, ms: Date.now() - started })
        : fail(new Error(`import exited ${code}: ${stderr}`)),
    );
    child.stdin.end(stdin);
  });
}

/**
 * 7. `llm-accounts import` of `importKeys` API keys and `importBatches` batches of 5 against the emulator with the
 * platform's own rate limits and window, beside the floor the get rate sets (N keys / 600 a minute); then, one
 * window later (the import's reads spent the window's budget), the first `pulumi up` of the program it wrote:
 * its writes (0 expected), calls, time beside the same floor, the plugin's peak memory and the state per key.
 */
export async function importScale(ctx) {
  const n = SETTINGS.importKeys;
  const windowMs = SETTINGS.windowMs.import;
  const emu = await emulator(ctx, { rateWindowMs: windowMs });
  const keys = Array.from({ length: n }, (_, i) => emu.state.createKey(`console-key-${i}`).key);
  for (let i = 0; i < SETTINGS.importBatches; i++) {
    emu.state.createSubAccounts({
      alias: `team-${i}`,
      balance: 10,
      modelPricing: [{ model: "model-a", pricing_factor: 1 }],
      count: SETTINGS.batchSize,
    });
  }
  const dir = mkdtempSync(join(ctx.work, "imported-"));
  linkNodeModules(dir);
  writeFileSync(join(dir, "Pulumi.yaml"), "name: imported\nruntime: nodejs\n");
  const stack = await PulumiStack.create({
    dir,
    account: { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey },
    env: limitsEnv(windowMs),
  });
  ctx.cleanups.push(() => stack.dispose());

  emu.clearRequests();
  const imported = await runImportCli(
    ["--out", dir, "--keys", "-", "--stack", stack.stack],
    keys.join("\n"),
    stack.env,
  );
  const importCalls = countCalls(emu);
  const import429 = statusesOf(emu)[429] ?? 0;
  const floorMs = (n / GETS_PER_WINDOW) * windowMs;
  const configKiB = Number(/adoptKeys \((\d+) KiB/.exec(imported.stdout)?.[1] ?? NaN);
  ctx.log(
    `import of ${n} keys and ${SETTINGS.importBatches} batches: ${imported.ms} ms (floor ${floorMs} ms), calls ${JSON.stringify(importCalls)}`,
  );

  await new Promise((r) => setTimeout(r, windowMs));
  emu.clearRequests();
  const watch = watchPlugin(dir);
  const up = await stack.up([], { env: ctx.bigRunEnv });
  const pluginPeakBytes = watch.stop();
  const upCalls = countCalls(emu);
  const up429 = statusesOf(emu)[429] ?? 0;
  const writes = Object.entries(upCalls)
    .filter(([op]) => !/\/(get|list)$/.test(op))
    .reduce((a, [, c]) => a + c, 0);
  const state = stateSize(JSON.parse(await stack.exportState()));
  const unchanged = (await stack.run(["preview", "--expect-no-changes"], { allowFailure: true })).code === 0;
  ctx.log(
    `first up of the imported program: ${up.ms} ms, writes ${writes}, calls ${JSON.stringify(upCalls)}, preview unchanged ${unchanged}`,
  );
  return {
    keys: n,
    batches: SETTINGS.importBatches,
    subAccounts: SETTINGS.importBatches * SETTINGS.batchSize,
    windowMs,
    floorMs,
    import: {
      ms: imported.ms,
      ratio: imported.ms / floorMs,
      calls: importCalls,
      answered429: import429,
      configKiB,
      progressLines: imported.stderr.split("\n").filter(Boolean).length,
    },
    firstUp: {
      ms: up.ms,
      ratio: up.ms / floorMs,
      calls: upCalls,
      answered429: up429,
      writes,
      pluginPeakBytes,
      state,
      previewUnchanged: unchanged,
    },
  };
}

// --- 8. memory and state of 1000 keys beside the footprint baseline --------------------------------------------

/**
 * 8. `pulumi up` of `destroySize` ApiKey resources and, in the same run, of as many footprint-baseline resources:
 * trivial dynamic resources whose state holds the same properties (the key secret) and whose stored provider is
 * a short text like ours, calling nothing. Peak memory of each plugin process and state per resource, side by side.
 */
export async function footprint(ctx) {
  const n = SETTINGS.destroySize;
  const emu = await emulator(ctx, { rateLimits: false });
  const out = {};
  for (const [name, config, type] of [
    ["apiKey", { count: n }, "pulumi-nodejs:dynamic/llm-accounts:ApiKey"],
    ["baseline", { count: n, footprint: true }, "pulumi-nodejs:dynamic/trivial:Trivial"],
  ]) {
    const stack = await stackOf(ctx, emu, limitsEnv(false), config);
    const watch = watchPlugin(stack.dir);
    const up = await stack.up(["--parallel", String(SETTINGS.upParallel)], { env: ctx.bigRunEnv });
    const pluginPeakBytes = watch.stop();
    const resources = JSON.parse(await stack.exportState()).deployment.resources.filter((r) => r.type === type);
    const bytes = (v) => Buffer.byteLength(JSON.stringify(v));
    out[name] = {
      resources: resources.length,
      ms: up.ms,
      pluginPeakBytes,
      bytesPerResource: Math.round(resources.reduce((a, r) => a + bytes(r), 0) / resources.length),
      providerBytes: Buffer.byteLength(resources[0].inputs.__provider),
      outputNames: Object.keys(resources[0].outputs).sort(),
    };
    ctx.log(
      `footprint, ${name}: ${up.ms} ms, plugin peak ${pluginPeakBytes} B, ${out[name].bytesPerResource} B per resource`,
    );
    await stack.destroy(["--parallel", String(n)], { env: ctx.bigRunEnv });
  }
  return {
    keys: n,
    ...out,
    memoryRatio:
      out.apiKey.pluginPeakBytes && out.baseline.pluginPeakBytes
        ? out.apiKey.pluginPeakBytes / out.baseline.pluginPeakBytes
        : null,
    stateRatio: out.apiKey.bytesPerResource / out.baseline.bytesPerResource,
  };
}
