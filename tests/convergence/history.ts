import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLOCK_SKEW_MS } from "../../provider/api/assumptions.js";
import { toWire } from "../../provider/api/casing.js";
import { FAULT_KINDS, type Emulator, type FaultSpec } from "../../provider/emulator/index.js";
import { startFresh } from "../../provider/runtime/index.js";
import { COALESCE } from "../../provider/runtime/deleteCoalescer.js";
import { DEFAULT_RETRY } from "../../provider/client/retry.js";
import { normalizeSecurityConfig } from "../../provider/runtime/apiKey.js";
import { normalizeModelPricing } from "../../provider/runtime/subAccountBatch.js";
import { SecretLedger } from "../support/secrets.js";
import { emulator } from "../support/emulator.js";
import { Engine, type Declared, type DeployResult, type StateEntry } from "./engine.js";
import { Watch } from "./model.js";

// Generated histories of program changes, platform faults, console edits and emulator restarts, and the
// invariant of issue 12 checked after fault-free `up --refresh` runs.

/** Deletes of one deployment still arrive together, without the quarter second of quiet a real engine needs. */
COALESCE.minQuietMs = 15;
/**
 * Retries back off in milliseconds, not tenths of seconds: which faults are retried, and how often, is what a
 * history tests, not how long the waits are (tests/client/retry.test.ts holds those). A history plays in a
 * quarter of the time.
 */
DEFAULT_RETRY.baseDelayMs = 5;
DEFAULT_RETRY.maxDelayMs = 40;

type Props = Record<string, unknown>;

/** How a key rotates, as a program declares it. */
export type Rotation = { everyDays?: number; triggers?: string[]; overlapHours?: number };

/** A program: declared keys and batches by logical name, with real keys and tokens to adopt. */
export interface Program {
  keys: { name: string; alias: string; enabled: boolean; securityConfig: Props; adoptKey?: string; rotation?: Rotation }[];
  batches: { name: string; alias: string; balance: number; count: number; modelPricing: Props[]; adoptTokens?: string[] }[];
}

/**
 * A program as generated: `adopt` refers to out-of-band objects by their index (modulo how many were made),
 * which the runner resolves into real keys and tokens as a user would write them (model.ts, Watch.resolve).
 * A batch's `adopt: []` is `adoptTokens: []`.
 */
export interface Plan {
  keys: (Omit<Program["keys"][number], "adoptKey"> & { adopt?: number })[];
  batches: (Omit<Program["batches"][number], "adoptTokens"> & { adopt?: number[] })[];
}

/** One step of a history. `outOfBand` edits pick among the objects made in the console. */
export type Step =
  | { kind: "up"; program: Plan; refresh: boolean; parallel: number; faults: FaultSpec[] }
  | { kind: "edit"; target: number; action: "alias" | "disable" | "delete" | "security"; outOfBand?: boolean }
  | { kind: "editSubAccount"; target: number; action: "alias" | "pricing" | "delete"; outOfBand?: boolean }
  | { kind: "console"; keys: number; subAccounts: number; balance: number; ageDays: number }
  | { kind: "clock"; hours: number }
  | { kind: "restart" };

const SECURITY = [{}, { ip: { allow: ["10.0.0.0/8"] } }, { spendLimit: { monthly: 5 } }, { geo: { countries: ["DE", "FR"] } }];
const PRICING = [[], [{ model: "model-a", pricingFactor: 1.5 }], [{ model: "model-b", pricingFactor: 1 }, { model: "embed-1", pricingFactor: 2 }]];
const OPS = ["api-key/create", "api-key/get", "api-key/edit", "api-key/status", "api-key/delete", "sub-account/create", "sub-account/list", "sub-account/edit", "sub-account/delete"];

/** `undefined` `weight` times in `weight + 1`... or less often: a feature drawn for some resources only. */
const sometimes = <T>(arb: fc.Arbitrary<T>, weightNone: number, weightSome: number): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: weightNone, arbitrary: fc.constant(undefined) }, { weight: weightSome, arbitrary: arb });

/** Rotation settings: by age (made due by the clock steps), by triggers (two values, so they change), overlaps 0 and more. */
const rotationArb: fc.Arbitrary<Rotation> = fc.record(
  { everyDays: fc.constantFrom(30, 90), triggers: fc.constantFrom(["t1"], ["t2"], ["t2"]), overlapHours: fc.constantFrom(0, 1, 24) },
  { requiredKeys: [] },
);

const keyArb = (i: number) =>
  fc.record(
    {
      name: fc.constant(`k${i}`),
      alias: fc.constantFrom(`k${i}`, `k${i}-renamed`),
      enabled: fc.boolean(),
      securityConfig: fc.constantFrom(...SECURITY),
      adopt: sometimes(fc.nat(7), 3, 1),
      rotation: sometimes(rotationArb, 1, 2),
    },
    { requiredKeys: ["name", "alias", "enabled", "securityConfig"] },
  );

const batchArb = (i: number) =>
  fc.record(
    {
      name: fc.constant(`b${i}`),
      alias: fc.constantFrom(`b${i}`, `b${i}-renamed`),
      balance: fc.constantFrom(0, 2),
      count: fc.integer({ min: 1, max: 4 }),
      modelPricing: fc.constantFrom(...PRICING),
      // Few indexes, so that lists overlap from run to run: tokens kept, added, released, taken by another batch.
      adopt: sometimes(fc.oneof({ weight: 1, arbitrary: fc.constant<number[]>([]) }, { weight: 4, arbitrary: fc.uniqueArray(fc.nat(4), { minLength: 1, maxLength: 3 }) }), 1, 1),
    },
    { requiredKeys: ["name", "alias", "balance", "count", "modelPricing"] },
  );

/** Programs of 0-`maxKeys` keys and 0-`maxBatches` batches, drawn from a fixed pool of names so that runs overlap. */
export function programArb(maxKeys: number, maxBatches: number): fc.Arbitrary<Plan> {
  const pick = (pool: number, max: number) => fc.uniqueArray(fc.integer({ min: 0, max: pool - 1 }), { maxLength: max });
  return fc
    .record({ keys: pick(Math.max(maxKeys + 4, 1), maxKeys), batches: pick(Math.max(maxBatches + 2, 1), maxBatches) })
    .chain(({ keys, batches }) =>
      fc.record({
        keys: fc.tuple(...keys.sort((a, b) => a - b).map(keyArb)),
        batches: fc.tuple(...batches.sort((a, b) => a - b).map(batchArb)),
      }),
    );
}

/** A fault mix for one run: 429 storms, 5xx, latency, lost requests and answers, malformed and wrongly typed bodies. */
export const faultsArb: fc.Arbitrary<FaultSpec[]> = fc.array(
  fc.oneof(
    fc.record({ kind: fc.constant("429" as const), rate: fc.constantFrom(0.3, 1), count: fc.integer({ min: 1, max: 20 }), ms: fc.constantFrom(1, 10) }),
    fc.record(
      {
        kind: fc.constantFrom(...FAULT_KINDS.filter((k) => k !== "429" && k !== "latency")),
        rate: fc.constantFrom(0.05, 0.2, 0.5, 1),
        ops: fc.subarray(OPS, { minLength: 1 }),
        count: fc.integer({ min: 1, max: 6 }),
      },
      { requiredKeys: ["kind", "rate"] },
    ),
    fc.record({ kind: fc.constant("latency" as const), rate: fc.constantFrom(0.2, 1), ms: fc.integer({ min: 1, max: 30 }) }),
  ),
  { minLength: 1, maxLength: 3 },
);

/** Objects made in the web console: keys and one group of sub-accounts, made an hour or 100 days ago. */
const consoleArb: fc.Arbitrary<Extract<Step, { kind: "console" }>> = fc.record({
  kind: fc.constant("console" as const),
  keys: fc.integer({ min: 0, max: 3 }),
  subAccounts: fc.integer({ min: 0, max: 5 }),
  balance: fc.constantFrom(0, 2),
  ageDays: fc.constantFrom(0, 100),
});

/** Histories of 1-`maxSteps` steps (one more when they begin with objects made in the console). */
export function historyArb(sizes: { maxKeys: number; maxBatches: number; maxSteps: number }): fc.Arbitrary<Step[]> {
  const up = fc.record({
    kind: fc.constant("up" as const),
    program: programArb(sizes.maxKeys, sizes.maxBatches),
    refresh: fc.boolean(),
    parallel: fc.integer({ min: 1, max: 16 }),
    faults: fc.oneof({ weight: 1, arbitrary: fc.constant<FaultSpec[]>([]) }, { weight: 3, arbitrary: faultsArb }),
  });
  const step: fc.Arbitrary<Step> = fc.oneof(
    { weight: 6, arbitrary: up },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("edit" as const),
        target: fc.nat(40),
        action: fc.constantFrom("alias" as const, "disable" as const, "delete" as const, "security" as const),
        outOfBand: fc.boolean(),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant("editSubAccount" as const), target: fc.nat(40), action: fc.constantFrom("alias" as const, "pricing" as const, "delete" as const), outOfBand: fc.boolean() }),
    },
    { weight: 1, arbitrary: consoleArb },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("clock" as const), hours: fc.constantFrom(-2200, 0) }) },
    { weight: 1, arbitrary: fc.constant({ kind: "restart" as const }) },
  );
  // Most histories begin with objects made in the console, so that their programs have something to adopt.
  return fc
    .tuple(sometimes(consoleArb, 1, 3), fc.array(step, { minLength: 1, maxLength: sizes.maxSteps }))
    .map(([made, steps]) => (made ? [made, ...steps] : steps));
}

/** What one history did, for the soak figures. */
export interface HistoryReport {
  steps: number;
  faultsInjected: number;
  explainedOrphans: number;
  violations: string[];
  /** Out-of-band objects made, adopted, released; rotations; adopted objects deleted in the console; clock moves. */
  features?: Record<string, number>;
}

/** The resources a program declares, as the engine receives them (inputs not given are left out, not undefined). */
export function declared(program: Program): Declared[] {
  const props = (p: Props) => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined));
  return [
    ...program.keys.map(({ name, ...p }) => ({ type: "ApiKey" as const, name, props: props(p) })),
    ...program.batches.map(({ name, ...p }) => ({ type: "SubAccountBatch" as const, name, props: props(p) })),
  ];
}

/** Operations whose lost answers a run may meet while the emulator's clock is moved (see `clockSafe`). */
const KEY_OPS = OPS.filter((op) => op.startsWith("api-key/"));

/**
 * The faults of a run while the emulator's clock is moved: none that loses a sub-account create's answer. Its
 * recovery looks for sub-accounts made at most 5 s before the request by our clock (`CLOCK_SKEW_MS`, the
 * platform's clock is assumed that close to ours); a clock moved by months breaks that assumption, which is
 * not what the model tests. Keys, whose age is what the move is for, get every fault.
 */
export function clockSafe(faults: FaultSpec[]): FaultSpec[] {
  return faults.flatMap((f) => {
    if (f.kind === "429" || f.kind === "latency") return [f];
    const ops = (f.ops ?? OPS).filter((op) => op !== "sub-account/create");
    return ops.length > 0 ? [{ ...f, ops: f.ops ? ops : [...KEY_OPS, ...ops.filter((op) => !KEY_OPS.includes(op))] }] : [];
  });
}

/** Plays a history on a fresh emulator, then fault-free `up --refresh` (at most two), and checks the invariant. */
export async function runHistory(steps: Step[]): Promise<HistoryReport> {
  const dir = mkdtempSync(join(tmpdir(), "llm-convergence-"));
  const stateFile = join(dir, "emulator.json");
  const logLines: string[] = [];
  let clockOffsetMs = 0;
  const start = () => emulator({ rateLimits: false, rateWindowMs: 600, stateFile, clockOffsetMs, log: (line) => logLines.push(line) });
  let emu = await start();
  const connect = (e: Emulator) => startFresh({ stackConfig: { baseUrl: e.baseUrl, adminKey: e.adminKey, accountKey: e.accountKey, rateLimits: "off" } });
  connect(emu);
  const ledger = new SecretLedger(emu);
  const engine = new Engine();
  const report: HistoryReport = { steps: steps.length, faultsInjected: 0, explainedOrphans: 0, violations: [] };
  const watch = new Watch(report);
  const errors: Error[] = [];
  /** Objects deleted in the console since the last refresh: the state may still hold them. */
  const consoleDeleted = new Set<string>();
  /** Keys and sub-accounts renamed in the console, with the alias they were created with (what a "may exist" error named). */
  const createdAs = new Map<string, string>();
  let plan: Plan = { keys: [], batches: [] };
  let program: Program = { keys: [], batches: [] };
  let clockMoves = 0;

  const countFaults = () => (report.faultsInjected += emu.requests().filter((r) => r.fault).length);
  const deploy = async (refresh: boolean, parallel: number, faults: FaultSpec[]): Promise<DeployResult> => {
    emu.setFaults(clockOffsetMs < -CLOCK_SKEW_MS ? clockSafe(faults) : faults);
    emu.clearRequests();
    // Each deployment is a `pulumi` command: a new plugin process, which keeps nothing from the one before.
    startFresh();
    watch.before(emu, engine.state, program);
    const result = await engine.up(declared(program), { refresh, parallel });
    emu.setFaults([]);
    countFaults();
    errors.push(...result.errors);
    recordSecrets(ledger, engine);
    expectClean(ledger, result, report);
    watch.after(emu, engine.state, result.errors.length === 0);
    if (refresh && result.errors.length === 0) consoleDeleted.clear();
    if (result.errors.length === 0) stateObjectsExist(emu, engine.state, consoleDeleted, report, "after a run without errors");
    return result;
  };

  try {
    for (const step of steps) {
      if (step.kind === "up") {
        plan = step.program;
        program = watch.resolve(plan, engine.state, emu);
        await deploy(step.refresh, step.parallel, step.faults);
      } else if (step.kind === "edit") {
        consoleEdit(emu, step, consoleDeleted, createdAs, step.outOfBand ? watch.oobKeys : undefined);
        watch.consoleDone(emu, engine.state);
      } else if (step.kind === "editSubAccount") {
        consoleEditSubAccount(emu, step, consoleDeleted, createdAs, step.outOfBand ? watch.oobTokens : undefined);
        watch.consoleDone(emu, engine.state);
      } else if (step.kind === "console") {
        watch.makeOutOfBand(emu, step, clockOffsetMs);
      } else if (step.kind === "clock") {
        if (step.hours * 3_600_000 !== clockOffsetMs) clockMoves++;
        clockOffsetMs = step.hours * 3_600_000;
        emu.setClockOffset(clockOffsetMs);
      } else {
        ledger.record();
        await emu.close();
        emu = await start();
        connect(emu);
      }
    }
    // The platform's clock is back to the real time before the final runs and the gate.
    clockOffsetMs = 0;
    emu.setClockOffset(0);
    // The user's program as it can be written now: a key to adopt may have been deleted in the console since.
    const finalRun = () => {
      program = watch.resolve(plan, engine.state, emu);
      return deploy(true, 10, []);
    };
    let final = await finalRun();
    if (final.errors.length > 0) final = await finalRun();
    if (final.errors.length > 0) {
      report.violations.push(`the second fault-free up --refresh failed: ${final.errors.map((e) => e.message).join(" | ")}`);
    }
    startFresh();
    const gate = await engine.gate(declared(program));
    if (gate.length > 0) report.violations.push(`the gate (preview --refresh --expect-no-changes) fails: ${gate.join("; ")}`);
    checkInvariant(emu, engine.state, program, doubtedAliases(errors), createdAs, report, watch.freeObjects());
    ledger.expectAbsent(logLines.join("\n"), "the emulator's log");
  } catch (err) {
    report.violations.push(`unexpected: ${(err as Error).stack ?? (err as Error).message}`);
  } finally {
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  }
  report.features = { ...watch.counts, clockMoves };
  return report;
}

function recordSecrets(ledger: SecretLedger, engine: Engine): void {
  for (const e of engine.state.values()) ledger.record(e.outputs.key as string | undefined, ...((e.outputs.tokens as string[] | undefined) ?? []));
}

function expectClean(ledger: SecretLedger, result: DeployResult, report: HistoryReport): void {
  try {
    for (const err of result.errors) ledger.expectCleanError(err);
    for (const id of result.ids) ledger.expectAbsent(id, "a resource id");
    for (const outs of result.outputs) ledger.expectCleanOutputs(outs);
  } catch (err) {
    report.violations.push((err as Error).message);
  }
}

/** Console edits of keys: the `target`-th live key (modulo; among `among` if given) is renamed, disabled, restricted or deleted. */
export function consoleEdit(emu: Emulator, step: Extract<Step, { kind: "edit" }>, deleted: Set<string>, createdAs: Map<string, string>, among?: readonly string[]): void {
  const keys = emu.state.listKeys().filter((k) => !among || among.includes(k.key));
  if (keys.length === 0) return;
  const k = keys[step.target % keys.length];
  if (step.action === "alias") {
    if (!createdAs.has(k.key)) createdAs.set(k.key, k.alias);
    emu.state.editKey(k.key, `${k.alias}-console`, k.security_config ?? {});
  } else if (step.action === "security") emu.state.editKey(k.key, k.alias, { ip: { allow: ["192.0.2.1"] } });
  else if (step.action === "disable") emu.state.setKeyEnabled(k.key, !k.enabled);
  else {
    emu.state.deleteKey(k.key);
    deleted.add(k.key);
  }
}

/** Console edits of sub-accounts: the `target`-th one (modulo; among `among` if given) is renamed, repriced or deleted. */
export function consoleEditSubAccount(
  emu: Emulator,
  step: Extract<Step, { kind: "editSubAccount" }>,
  deleted: Set<string>,
  createdAs: Map<string, string>,
  among?: readonly string[],
): void {
  const subs = emu.state.listSubAccounts().filter((s) => !among || among.includes(s.token));
  if (subs.length === 0) return;
  const s = subs[step.target % subs.length];
  if (step.action === "alias") {
    if (!createdAs.has(s.token)) createdAs.set(s.token, s.alias);
    emu.state.editSubAccounts([s.token], `${s.alias}-console`, s.model_pricing);
  } else if (step.action === "pricing") emu.state.editSubAccounts([s.token], s.alias, [{ model: "vision-1", pricing_factor: 3 }]);
  else {
    emu.state.deleteSubAccount(s.token);
    deleted.add(s.token);
  }
}

/** The state as the invariant reads it: resources by URN-like key, with type and outputs. */
export type StateView = ReadonlyMap<string, Pick<StateEntry, "type" | "outputs">>;

/** Every object the state holds exists, unless it was deleted in the console since the last refresh. */
export function stateObjectsExist(emu: Emulator, state: StateView, consoleDeleted: Set<string>, report: HistoryReport, when: string): void {
  for (const [urn, e] of state) {
    const keys = [e.outputs.key, e.outputs.previousKey].filter((k): k is string => typeof k === "string");
    const objects = e.type === "ApiKey" ? keys : ((e.outputs.tokens as string[] | undefined) ?? []);
    for (const o of objects) {
      const exists = e.type === "ApiKey" ? emu.state.hasKey(o) : emu.state.hasSubAccount(o);
      if (!exists && !consoleDeleted.has(o)) report.violations.push(`${when}: the state holds ${urn} whose object is gone`);
    }
  }
}

/** The aliases named by the "may exist" errors of lost creates, once per error. */
export function doubtedAliases(errors: Error[]): string[] {
  return errors
    .filter((err) => (err as { mayHaveSucceeded?: boolean }).mayHaveSucceeded)
    .flatMap((err) => DOUBT.exec(err.message)?.[1] ?? []);
}

/** How a lost create names its alias (the runtime's advice: adviseLostKey, lostSubAccountsAdvice). */
export const DOUBT = /(?:a key with alias|[Ll]ist sub-accounts with alias) "([^"]+)"/;

/**
 * The invariant: the platform holds exactly the declared objects (a key's current one and, during its overlap,
 * its previous one); besides them only objects made out of band that no resource holds (`free`: the Watch
 * checked that runs left them as they were), orphan keys where a create's "may exist" error named the alias
 * (`doubted`, once per error), and orphan sub-accounts where such an error named the alias and the console
 * then renamed them (nothing could find them by alias any more).
 */
export function checkInvariant(
  emu: Emulator,
  state: StateView,
  program: Program,
  doubted: string[],
  createdAs: Map<string, string>,
  report: HistoryReport,
  free: ReadonlySet<string> = new Set(),
): void {
  const v = report.violations;
  const urns = [...state.keys()].sort();
  const expected = declared(program).map((d) => `${d.type}::${d.name}`).sort();
  if (JSON.stringify(urns) !== JSON.stringify(expected)) v.push(`the state holds ${urns.join(",")} but the program declares ${expected.join(",")}`);
  stateObjectsExist(emu, state, new Set(), report, "after the final refresh");

  const liveKeys = emu.state.listKeys();
  const stateKeys = new Set<string>();
  for (const k of program.keys) {
    const e = state.get(`ApiKey::${k.name}`);
    const live = e && liveKeys.find((r) => r.key === e.outputs.key);
    if (typeof e?.outputs.previousKey === "string") stateKeys.add(e.outputs.previousKey);
    if (!live) continue;
    stateKeys.add(live.key);
    const want = { alias: k.alias, enabled: k.enabled, security_config: toWire(normalizeSecurityConfig(k.securityConfig)) };
    const got = { alias: live.alias, enabled: live.enabled, security_config: live.security_config ?? {} };
    if (JSON.stringify(got) !== JSON.stringify(want)) v.push(`key ${k.name} is ${JSON.stringify(got)}, declared ${JSON.stringify(want)}`);
  }
  const doubts = new Map<string, number>();
  for (const alias of doubted) doubts.set(alias, (doubts.get(alias) ?? 0) + 1);
  for (const orphan of liveKeys.filter((r) => !stateKeys.has(r.key) && !free.has(r.key))) {
    const alias = createdAs.get(orphan.key) ?? orphan.alias;
    const left = doubts.get(alias) ?? 0;
    if (left > 0) {
      doubts.set(alias, left - 1);
      report.explainedOrphans++;
    } else {
      v.push(`orphan key with alias "${orphan.alias}" that no "may exist" error named`);
    }
  }

  const liveSubs = emu.state.listSubAccounts();
  const stateTokens = new Set<string>();
  for (const b of program.batches) {
    const e = state.get(`SubAccountBatch::${b.name}`);
    const tokens = (e?.outputs.tokens as string[] | undefined) ?? [];
    const live = liveSubs.filter((s) => tokens.includes(s.token));
    for (const s of live) stateTokens.add(s.token);
    if (live.length !== b.count) v.push(`batch ${b.name} has ${live.length} sub-accounts, declared ${b.count}`);
    const pricing = toWire(normalizeModelPricing(b.modelPricing));
    for (const s of live) {
      if (s.alias !== b.alias || JSON.stringify(s.model_pricing) !== JSON.stringify(pricing)) {
        v.push(`batch ${b.name}: a sub-account is ${JSON.stringify({ alias: s.alias, pricing: s.model_pricing })}, declared ${JSON.stringify({ alias: b.alias, pricing })}`);
      }
    }
  }
  for (const orphan of liveSubs.filter((s) => !stateTokens.has(s.token) && !free.has(s.token))) {
    // Renamed in the console before a run could adopt it: out of the package's reach, as the error said.
    const original = createdAs.get(orphan.token);
    if (original !== undefined && doubts.has(original)) report.explainedOrphans++;
    else v.push(`orphan sub-account with alias "${orphan.alias}"`);
  }
}
