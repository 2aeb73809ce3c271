#!/usr/bin/env node
// `npm run bench`: runs the real Pulumi CLI against the emulator (in this process) and measures what the
// package costs: API calls per lifecycle operation beside the minimum the API allows, `pulumi up` under the
// platform's rate limits beside the bounds they leave, `pulumi destroy` of 1000 keys with and without delete
// coalescing, state size, the provider plugin's memory, and `pulumi preview` beside trivial dynamic resources.
// Every comparison is measured side by side in the same run. Prints a table, writes bench/results.json and
// docs/benchmarks.md, and exits non-zero when a target is missed.
//
// Options: --only <sections> (comma-separated: calls, up, destroy, preview) runs a part, for development; the
// files are written only by a full run. --with-checkpoints runs the destroys without PULUMI_SKIP_CHECKPOINTS
// (the file backend then writes the whole state before and after each step: expect about 15 minutes more).

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startEmulator } from "../dist/provider/emulator/index.js";
import { PulumiStack, prepareProgram, REPO } from "./lib/stack.mjs";
import { ensurePulumiCli } from "./pulumi-cli.mjs";

const PROGRAM = join(REPO, "tests/e2e/programs/many-keys");
const SECTIONS = ["calls", "up", "destroy", "preview"];

/** The platform's per-minute limit of key creates (spec 8): what the up floor is made of. */
const CREATES_PER_WINDOW = 60;
/** At most this many keys go into one delete call (spec 4.5). */
const DELETE_MAX = 1000;

/** Scaled rate-limit windows ("minutes") of each part, on the emulator and the client alike. */
const WINDOW = { calls: 1000, up: 4000, destroy: 1000 };
/** `pulumi up --parallel` of the up runs: enough that the engine is not what limits the creates. */
const UP_PARALLEL = 64;
const UP_SIZES = [10, 100, 300];
const DESTROY_SIZE = 1000;
const PREVIEW_SIZE = 500;
/** Preview runs of each kind, interleaved; the fastest of each is compared (the least disturbed by noise). */
const PREVIEW_ROUNDS = 3;

/** Targets, checked by the summary line. */
const TARGET = { upRatio: 1.15, providerBytes: 2048, previewRatio: 1.3 };

const { values: flags } = parseArgs({ options: { only: { type: "string" }, "with-checkpoints": { type: "boolean" } } });
/** Environment of the 1000-key runs: see docs/benchmarks.md for why checkpoints are skipped by default. */
const BIG_RUN_ENV = flags["with-checkpoints"] ? {} : { PULUMI_SKIP_CHECKPOINTS: "true" };
const only = flags.only ? flags.only.split(",") : SECTIONS;
for (const s of only) if (!SECTIONS.includes(s)) throw new Error(`--only: unknown section "${s}" (${SECTIONS.join(", ")})`);

const log = (line) => process.stderr.write(`[bench] ${line}\n`);
const work = mkdtempSync(join(os.tmpdir(), "llm-bench-"));
const cleanups = [];

// --- helpers ---------------------------------------------------------------------------------------------------

async function emulator(options) {
  const emu = await startEmulator({ port: 0, host: "127.0.0.1", ...options });
  cleanups.push(() => emu.close());
  return emu;
}

/** Client-side settings that match an emulator: the same scaled window, or limits off. */
function limitsEnv(windowMs) {
  return windowMs === false ? { LLM_ACCOUNTS_RATE_LIMITS: "off" } : { LLM_ACCOUNTS_RATE_WINDOW_MS: String(windowMs) };
}

async function stackOf(emu, env, config) {
  const dir = prepareProgram(PROGRAM, "llm-bench-program-");
  const stack = await PulumiStack.create({ dir, account: { baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey }, env });
  cleanups.push(() => {
    stack.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  for (const [k, v] of Object.entries(config)) await stack.setConfig(k, v);
  return stack;
}

function countCalls(emu) {
  const out = {};
  for (const r of emu.requests()) out[r.op] = (out[r.op] ?? 0) + 1;
  return out;
}

function sum(calls) {
  return Object.values(calls).reduce((a, b) => a + b, 0);
}

function statusesOf(emu, op) {
  const out = {};
  for (const r of emu.requests()) if (!op || r.op === op) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

/** Samples the peak resident memory (VmHWM) of the dynamic provider plugin that runs in `dir` (Linux). */
function watchPlugin(dir) {
  if (process.platform !== "linux") return { stop: () => null };
  const cwd = realpathSync(dir);
  let peakKb = 0;
  const sample = () => {
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("dynamic-provider")) continue;
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
  const creates = emu.requests().filter((r) => r.op === "api-key/create").map((r) => r.at);
  return {
    ms: ended - started,
    head: creates.length ? creates[0] - started : 0,
    span: creates.length ? creates[creates.length - 1] - creates[0] : 0,
    tail: creates.length ? ended - creates[creates.length - 1] : 0,
    creates: creates.length,
  };
}

function defaultParallelism(cli) {
  const help = spawnSync(cli.pulumi, ["destroy", "--help"], { encoding: "utf8" }).stdout ?? "";
  const m = /--parallel int32 .*\(default (\d+)\)/.exec(help);
  return m ? Number(m[1]) : 4 * os.cpus().length;
}

const fmtMs = (ms) => (ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 1000).toFixed(2)} s`);
const fmtBytes = (b) => (b >= 1024 * 1024 ? `${(b / 1024 / 1024).toFixed(1)} MiB` : b >= 1024 ? `${(b / 1024).toFixed(2)} KiB` : `${b} B`);
const fmtCalls = (calls) =>
  Object.entries(calls)
    .map(([op, n]) => `${op} ${n}`)
    .join(", ") || "none";

// --- 1. API calls per lifecycle operation -----------------------------------------------------------------------

async function lifecycleCalls() {
  const N = 10;
  const emu = await emulator({ rateWindowMs: WINDOW.calls });
  const env = limitsEnv(WINDOW.calls);
  const rows = [];
  const step = async (operation, resources, minimum, run) => {
    emu.clearRequests();
    await run();
    const calls = countCalls(emu);
    const total = sum(calls);
    rows.push({ operation, resources, calls, total, minimum, met: total === minimum });
    log(`calls: ${operation}: ${total} (minimum ${minimum})`);
  };

  const keys = await stackOf(emu, env, { count: N });
  await step(`create ${N} keys`, N, N, () => keys.up());
  await step(`toggle ${N} keys (disable)`, N, N, () => keys.setConfig("enabled", false).then(() => keys.up()));
  await step(`edit ${N} keys (spend limit)`, N, N, () => keys.setConfig("spendLimit", 5).then(() => keys.up()));
  await step(`refresh ${N} keys`, N, N, () => keys.refresh(["--skip-preview"]));
  // The engine hands the provider at most --parallel deletes at once: with N of them, one call can take all.
  const wide = ["--parallel", String(N)];
  await step(`delete ${N} keys (--parallel ${N})`, N, Math.ceil(N / DELETE_MAX), () => keys.destroy(wide));
  await step(`create ${N} keys declared disabled`, N, 2 * N, () => keys.up());
  await step(`delete ${N} disabled keys (--parallel ${N})`, N, Math.ceil(N / DELETE_MAX), () => keys.destroy(wide));

  const team = await stackOf(emu, env, { count: 0, subAccounts: 2 });
  await step("sub-account batch create (2)", 1, 1, () => team.up());
  await step("sub-account scale up (2 -> 4)", 1, 1, () => team.setConfig("subAccounts", 4).then(() => team.up()));
  await step("sub-account scale down (4 -> 1)", 1, 1, () => team.setConfig("subAccounts", 1).then(() => team.up()));
  await step("sub-account edit (alias)", 1, 1, () => team.setConfig("aliasPrefix", "renamed").then(() => team.up()));
  await step("sub-account refresh", 1, 1, () => team.refresh(["--skip-preview"]));
  await step("sub-account batch delete", 1, 1, () => team.destroy());
  return rows;
}

// --- 2. pulumi up under the rate limits -------------------------------------------------------------------------

async function upScaling() {
  const rows = [];
  for (const n of UP_SIZES) {
    const free = await emulator({ rateLimits: false });
    const freeRun = await timedUp(await stackOf(free, limitsEnv(false), { count: n }), free, ["--parallel", String(UP_PARALLEL)]);
    const limited = await emulator({ rateWindowMs: WINDOW.up });
    const run = await timedUp(await stackOf(limited, limitsEnv(WINDOW.up), { count: n }), limited, ["--parallel", String(UP_PARALLEL)]);
    const answered = statusesOf(limited);
    // The shortest create phase the limits allow; the floor is the run's own time before its first create
    // (nothing is rate-limited before it), that shortest create phase, and an unlimited run's time after its last.
    const minSpan = (Math.ceil(n / CREATES_PER_WINDOW) - 1) * WINDOW.up;
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
      met: ok && ratio <= TARGET.upRatio,
    });
    log(`up ${n}: ${run.ms} ms with limits, ${freeRun.ms} ms without, floor ${floor} ms, ratio ${ratio.toFixed(3)}, 429s ${answered[429] ?? 0}`);
    await free.close();
    await limited.close();
  }
  return rows;
}

// --- 3. pulumi destroy of 1000 keys, state size, plugin memory -------------------------------------------------

async function destroyAndState(cli, parallelism) {
  // One `up` of 1000 keys; each destroy then starts from a copy of its state (imported into the stack) and of
  // the emulator's data (a new emulator loads it), so that the four destroys start from the same point.
  const setupEmu = await emulator({ rateLimits: false });
  const stack = await stackOf(setupEmu, {}, { count: DESTROY_SIZE });
  const watch = watchPlugin(stack.dir);
  const up = await stack.up(["--parallel", String(UP_PARALLEL)], { env: { ...limitsEnv(false), ...BIG_RUN_ENV } });
  const upPeak = watch.stop();
  log(`destroy: up of ${DESTROY_SIZE} keys for the setup took ${up.ms} ms`);

  const exported = await stack.exportState();
  const deployment = join(work, "deployment.json");
  writeFileSync(deployment, exported);
  const snapshot = JSON.stringify(setupEmu.state.snapshot());
  await setupEmu.close();
  const state = stateSize(JSON.parse(exported));

  const runs = [];
  const scenarios = [
    { parallel: parallelism, label: `default (${parallelism})`, coalescing: true },
    { parallel: parallelism, label: `default (${parallelism})`, coalescing: false },
    { parallel: DESTROY_SIZE, label: String(DESTROY_SIZE), coalescing: true },
    { parallel: DESTROY_SIZE, label: String(DESTROY_SIZE), coalescing: false },
  ];
  let destroyPeak = 0;
  for (const s of scenarios) {
    const file = join(work, `emulator-${runs.length}.json`);
    writeFileSync(file, snapshot, { mode: 0o600 });
    const emu = await emulator({ stateFile: file, rateWindowMs: WINDOW.destroy });
    await stack.run(["stack", "import", "--file", deployment]);
    const env = {
      LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
      ...limitsEnv(WINDOW.destroy),
      ...BIG_RUN_ENV,
      ...(s.coalescing ? {} : { LLM_ACCOUNTS_DELETE_COALESCING: "off" }),
    };
    const w = watchPlugin(stack.dir);
    const extra = s.parallel === parallelism ? [] : ["--parallel", String(s.parallel)];
    const r = await stack.destroy(extra, { env });
    destroyPeak = Math.max(destroyPeak, w.stop() ?? 0);
    const answered = statusesOf(emu, "api-key/delete");
    const run = {
      parallel: s.label,
      coalescing: s.coalescing,
      deleteCalls: answered[200] ?? 0,
      answered429: answered[429] ?? 0,
      ms: r.ms,
      keysLeft: emu.state.listKeys().length,
    };
    runs.push(run);
    log(`destroy --parallel ${s.label}, coalescing ${s.coalescing ? "on" : "off"}: ${run.deleteCalls} delete calls, ${r.ms} ms, ${run.keysLeft} keys left`);
    await emu.close();
  }
  const pair = (label) => {
    const on = runs.find((r) => r.parallel === label && r.coalescing);
    const off = runs.find((r) => r.parallel === label && !r.coalescing);
    return { parallel: label, coalesced: on, baseline: off, callRatio: on.deleteCalls / off.deleteCalls, timeRatio: on.ms / off.ms };
  };
  return {
    runs,
    pairs: [pair(`default (${parallelism})`), pair(String(DESTROY_SIZE))],
    setupUpMs: up.ms,
    state,
    memory: { pluginPeakBytes: Math.max(upPeak ?? 0, destroyPeak) || null, duringUp: upPeak, duringDestroy: destroyPeak || null },
  };
}

/** Bytes of the exported state per ApiKey resource, and of the serialized provider each one carries. */
function stateSize(exported) {
  const keys = exported.deployment.resources.filter((r) => r.type.endsWith(":ApiKey"));
  const bytes = (v) => Buffer.byteLength(JSON.stringify(v));
  const provider = keys[0].inputs.__provider;
  return {
    resources: keys.length,
    deploymentBytes: bytes(exported),
    bytesPerResource: Math.round(keys.reduce((a, r) => a + bytes(r), 0) / keys.length),
    providerBytes: Buffer.byteLength(provider),
    // The engine keeps the provider among the inputs and among the outputs of each resource.
    providerCopiesPerResource: [keys[0].inputs.__provider, keys[0].outputs.__provider].filter((p) => p === provider).length,
  };
}

// --- 4. pulumi preview beside trivial dynamic resources --------------------------------------------------------

async function previewOverhead() {
  const emu = await emulator({ rateWindowMs: WINDOW.calls });
  const env = limitsEnv(WINDOW.calls);
  const llm = await stackOf(emu, env, { count: PREVIEW_SIZE });
  const trivial = await stackOf(emu, env, { count: PREVIEW_SIZE, trivial: true });
  const samples = { llm: [], trivial: [] };
  for (let i = 0; i < PREVIEW_ROUNDS; i++) {
    for (const [name, stack] of [["llm", llm], ["trivial", trivial]]) {
      const r = await stack.preview();
      samples[name].push(r.ms);
      log(`preview ${PREVIEW_SIZE} ${name}: ${r.ms} ms`);
    }
  }
  const best = { llm: Math.min(...samples.llm), trivial: Math.min(...samples.trivial) };
  const calls = sum(countCalls(emu));
  return { resources: PREVIEW_SIZE, samples, llmMs: best.llm, trivialMs: best.trivial, ratio: best.llm / best.trivial, apiCalls: calls };
}

// --- report -----------------------------------------------------------------------------------------------------

function table(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(" | ")} |`;
  return [line(headers), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

function targetsOf(results, parallelism) {
  const t = [];
  if (results.calls) {
    const missed = results.calls.filter((r) => !r.met).map((r) => r.operation);
    t.push({ name: "API calls equal the minimum for every operation", met: missed.length === 0, detail: missed.length ? `over: ${missed.join("; ")}` : `${results.calls.length} operations` });
  }
  if (results.up) {
    const worst = Math.max(...results.up.map((r) => r.ratio));
    t.push({
      name: `pulumi up within ${TARGET.upRatio}x of max(rate-limit floor, no limits)`,
      met: results.up.every((r) => r.met),
      detail: `worst ratio ${worst.toFixed(3)}; 429s ${results.up.reduce((a, r) => a + r.answered429, 0)}`,
    });
  }
  if (results.destroy) {
    const all = results.destroy.runs.every((r) => r.keysLeft === 0);
    const wide = results.destroy.runs.find((r) => r.coalescing && r.parallel === String(DESTROY_SIZE));
    const narrow = results.destroy.runs.find((r) => r.coalescing && r.parallel !== String(DESTROY_SIZE));
    const cap = Math.ceil(DESTROY_SIZE / parallelism);
    t.push({ name: `destroy ${DESTROY_SIZE} keys with --parallel ${DESTROY_SIZE}: 1 delete call`, met: all && wide.deleteCalls === 1, detail: `${wide.deleteCalls} calls` });
    t.push({
      name: `destroy ${DESTROY_SIZE} keys with the default --parallel ${parallelism}: at most ${cap} delete calls`,
      met: all && narrow.deleteCalls <= cap,
      detail: `${narrow.deleteCalls} calls`,
    });
    const s = results.destroy.state;
    t.push({ name: `serialized provider under ${TARGET.providerBytes} B per resource`, met: s.providerBytes < TARGET.providerBytes, detail: `${s.providerBytes} B` });
  }
  if (results.preview) {
    t.push({ name: `preview overhead under ${TARGET.previewRatio}x`, met: results.preview.ratio < TARGET.previewRatio, detail: `${results.preview.ratio.toFixed(3)}x` });
  }
  return t;
}

function report(results, targets) {
  const out = [];
  const m = results.machine;
  out.push(`Machine: ${m.cpus} x ${m.cpuModel}, ${fmtBytes(m.memoryBytes)} memory, ${m.os}; Node.js ${m.node}; Pulumi CLI ${results.versions.pulumiCli}, @pulumi/pulumi ${results.versions.pulumiSdk}; pulumi-llm-accounts ${results.versions.package}; ${results.date}`);
  if (results.calls) {
    out.push("", "### API calls per lifecycle operation (real CLI; emulator with its limits, window 1 s)", "");
    out.push(table(["operation", "calls made", "total", "minimum", "met"], results.calls.map((r) => [r.operation, fmtCalls(r.calls), r.total, r.minimum, r.met ? "yes" : "NO"])));
  }
  if (results.up) {
    out.push("", `### pulumi up under the rate limits (window ${WINDOW.up} ms, --parallel ${UP_PARALLEL})`, "");
    out.push(
      table(
        ["keys", "with limits", "creates took (min)", "no limits", "floor", "ratio to max(floor, no limits)", "429s", "met"],
        results.up.map((r) => [r.keys, fmtMs(r.ms), `${fmtMs(r.createPhaseMs)} (${fmtMs(r.minCreatePhaseMs)})`, fmtMs(r.unlimitedMs), fmtMs(r.floorMs), r.ratio.toFixed(3), r.answered429, r.met ? "yes" : "NO"]),
      ),
    );
  }
  if (results.destroy) {
    const d = results.destroy;
    out.push("", `### pulumi destroy of ${DESTROY_SIZE} keys (window ${WINDOW.destroy} ms; baseline: coalescing off, one key per call)`, "");
    out.push(
      table(
        ["--parallel", "delete calls (coalesced)", "delete calls (baseline)", "time (coalesced)", "time (baseline)", "time ratio", "keys left"],
        d.pairs.map((p) => [p.parallel, p.coalesced.deleteCalls, p.baseline.deleteCalls, fmtMs(p.coalesced.ms), fmtMs(p.baseline.ms), p.timeRatio.toFixed(3), p.coalesced.keysLeft + p.baseline.keysLeft]),
      ),
    );
    out.push("", `### State and memory at ${DESTROY_SIZE} keys`, "");
    out.push(
      table(
        ["measure", "value"],
        [
          ["state per ApiKey resource (stack export, compact JSON)", fmtBytes(d.state.bytesPerResource)],
          [`serialized provider (kept ${d.state.providerCopiesPerResource}x per resource: inputs and outputs)`, `${d.state.providerBytes} B`],
          [`whole exported state, ${d.state.resources} keys`, fmtBytes(d.state.deploymentBytes)],
          ["peak memory of the provider plugin (VmHWM), up and destroy", d.memory.pluginPeakBytes ? fmtBytes(d.memory.pluginPeakBytes) : "not measured"],
        ],
      ),
    );
  }
  if (results.preview) {
    const p = results.preview;
    out.push("", `### pulumi preview of ${p.resources} resources (fresh stack; fastest of ${PREVIEW_ROUNDS} interleaved runs)`, "");
    out.push(
      table(
        ["program", "time", "runs", "API calls"],
        [
          ["ApiKey resources", fmtMs(p.llmMs), p.samples.llm.map(fmtMs).join(", "), p.apiCalls],
          ["trivial dynamic resources (no API)", fmtMs(p.trivialMs), p.samples.trivial.map(fmtMs).join(", "), 0],
          ["ratio (the package's overhead)", `${p.ratio.toFixed(3)}x`, "", ""],
        ],
      ),
    );
  }
  out.push("", "### Targets", "");
  out.push(table(["target", "result", "met"], targets.map((t) => [t.name, t.detail, t.met ? "yes" : "NO"])));
  return out.join("\n");
}

function markdown(results, text, summary) {
  return `# Benchmarks

Measured by \`npm run bench\` (scripts/bench.mjs): the real Pulumi CLI against the emulator of the account API,
running in the benchmark's process. Every comparison is measured side by side in the same run. The raw numbers
are in [bench/results.json](../bench/results.json).

How to read it:

- **API calls**: calls the emulator received during each \`pulumi up\`, \`refresh\` or \`destroy\` of the
  program tests/e2e/programs/many-keys, beside the fewest the API allows (spec 4 and 8): one create per key (two
  when declared disabled), one status call per toggle, one edit per edit, one get per key on refresh,
  ceil(N / 1000) delete calls for N keys; one call per sub-account batch create, scale up, scale down, edit,
  refresh and delete.
- **pulumi up under the rate limits**: the emulator enforces the platform's own limits (60 creates a minute)
  with every "minute" scaled to ${WINDOW.up} ms, and the client is told the same window. N creates need at least
  (ceil(N / 60) - 1) windows between the first and the last. The *floor* is the run's own time before its first
  create (nothing is rate-limited before it), plus that minimum, plus the time the run without limits needs after
  its last create; the ratio compares the run with limits to the larger of the floor and the run without limits.
  Both runs use \`--parallel ${UP_PARALLEL}\`.
- **pulumi destroy of ${DESTROY_SIZE} keys**: the baseline is the same destroy with
  \`LLM_ACCOUNTS_DELETE_COALESCING=off\` (one key per delete call). Each destroy starts from the same state: one
  \`up\` of ${DESTROY_SIZE} keys, whose stack export and emulator data are restored before each run. The emulator
  enforces its limits (60 delete calls a window of ${WINDOW.destroy} ms). These runs, and the setup \`up\`, set
  \`PULUMI_SKIP_CHECKPOINTS=true\`: the file backend otherwise rewrites the whole state file (several MB at
  1000 keys) before and after every resource step, which makes a 1000-resource run take minutes whatever the
  provider does and spaces the deletes out by the time of one such write (\`npm run bench -- --with-checkpoints\`
  measures them that way). The time ratio depends on the window: scaled to ${WINDOW.destroy} ms, the limit of 60 delete
  calls a minute costs the baseline 60 times less than on the platform, while the coalescer's short wait for
  more deletes before each call is not scaled. On the platform, 1000 single-key delete calls take at least
  16 minutes; 125 calls take at least 2.
- **Memory**: the peak resident set (VmHWM) of the dynamic provider plugin process during the \`up\` of
  ${DESTROY_SIZE} keys and the destroys.
- **pulumi preview**: a fresh stack of ${PREVIEW_SIZE} ApiKey resources beside the same program declaring
  ${PREVIEW_SIZE} trivial dynamic resources whose provider calls nothing (config \`trivial\`).

## Results

${text}

${summary}
`;
}

// --- main -------------------------------------------------------------------------------------------------------

async function main() {
  const cli = await ensurePulumiCli({ log });
  const parallelism = defaultParallelism(cli);
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
  const sdk = JSON.parse(readFileSync(join(REPO, "node_modules/@pulumi/pulumi/package.json"), "utf8"));
  const results = {
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model?.trim() ?? "unknown",
      memoryBytes: os.totalmem(),
      os: `${os.type()} ${os.release()} ${os.arch()}`,
      node: process.version,
    },
    versions: { package: pkg.version, pulumiCli: cli.version, pulumiSdk: sdk.version },
    settings: { windowMs: WINDOW, upParallel: UP_PARALLEL, defaultParallel: parallelism, skipCheckpoints: !flags["with-checkpoints"], targets: TARGET },
  };
  const started = Date.now();
  if (only.includes("calls")) results.calls = await lifecycleCalls();
  if (only.includes("up")) results.up = await upScaling();
  if (only.includes("destroy")) results.destroy = await destroyAndState(cli, parallelism);
  if (only.includes("preview")) results.preview = await previewOverhead();
  results.benchMs = Date.now() - started;

  const targets = targetsOf(results, parallelism);
  results.targets = targets;
  const met = targets.filter((t) => t.met).length;
  const summary = `targets: ${met}/${targets.length} met`;
  const text = report(results, targets);
  process.stdout.write(`${text}\n\n${summary}\n`);
  if (only.length === SECTIONS.length) {
    mkdirSync(join(REPO, "bench"), { recursive: true });
    mkdirSync(join(REPO, "docs"), { recursive: true });
    writeFileSync(join(REPO, "bench/results.json"), `${JSON.stringify(results, null, 2)}\n`);
    writeFileSync(join(REPO, "docs/benchmarks.md"), markdown(results, text, summary));
    log("wrote bench/results.json and docs/benchmarks.md");
  }
  return met === targets.length;
}

let ok = false;
try {
  ok = await main();
} catch (err) {
  process.stderr.write(`[bench] failed: ${err?.stack ?? err}\n`);
} finally {
  for (const c of cleanups.reverse()) {
    try {
      await c();
    } catch {
      // Best effort.
    }
  }
  rmSync(work, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
