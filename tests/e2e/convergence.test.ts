import { beforeAll, describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Emulator, FaultSpec } from "../../provider/emulator/index.js";
import { SecretLedger } from "../faults/support.js";
import {
  checkInvariant,
  consoleEdit,
  consoleEditSubAccount,
  DOUBT,
  historyArb,
  stateObjectsExist,
  type HistoryReport,
  type Program,
  type StateView,
  type Step,
} from "../convergence/history.js";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import { CLI_BUILD_TIMEOUT_MS, disposeStack, requirePulumiCli, stackFor, type PulumiStack } from "./support.js";

// Issue 12 through the real engine: a few generated histories played with `pulumi up --parallel N` (N drawn),
// faults injected into the emulator during a run, console edits and restarts between runs; then fault-free
// `pulumi up --refresh` (at most two) and the same invariant as tests/convergence, read from `stack export`.

const PROGRAM = join(REPO, "tests/e2e/programs/convergence");
const SEED = 1122;
const RUNS = Number(process.env.CONVERGENCE_CLI_RUNS ?? 3);
const HISTORIES = fc.sample(historyArb({ maxKeys: 5, maxBatches: 2, maxSteps: 3 }), { seed: SEED, numRuns: RUNS });
let faultsInjected = 0;

beforeAll(async () => {
  await requirePulumiCli();
}, CLI_BUILD_TIMEOUT_MS);

const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/** A value of `stack export --show-secrets`: secrets come as `{<sig>: ..., plaintext: "<json>"}`. */
function revealed(value: unknown): unknown {
  if (value !== null && typeof value === "object" && SECRET_SIG in value) return JSON.parse(String((value as Record<string, unknown>).plaintext));
  return value;
}

/** The stack's checkpoint as the invariant reads it (secrets decrypted), pending deletes included. */
async function stateOf(stack: PulumiStack): Promise<StateView> {
  const exported = JSON.parse((await stack.run(["stack", "export", "--show-secrets"])).stdout) as {
    deployment: { resources?: { urn: string; outputs?: Record<string, unknown>; delete?: boolean }[] };
  };
  const view = new Map<string, { type: "ApiKey" | "SubAccountBatch"; outputs: Record<string, unknown> }>();
  for (const r of exported.deployment.resources ?? []) {
    const outputs = Object.fromEntries(Object.entries(r.outputs ?? {}).map(([k, v]) => [k, revealed(v)]));
    const type = "tokens" in outputs ? "SubAccountBatch" : "key" in outputs ? "ApiKey" : undefined;
    if (!type) continue;
    view.set(`${type}::${r.urn.split("::").pop()}${r.delete ? "#pending-delete" : ""}`, { type, outputs });
  }
  return view;
}

async function play(steps: Step[]): Promise<HistoryReport> {
  const dir = mkdtempSync(join(tmpdir(), "llm-convergence-cli-"));
  const stateFile = join(dir, "emulator.json");
  const options = { rateLimits: false as const, rateWindowMs: 600, stateFile };
  let emu: Emulator = await emulator(options);
  const port = Number(new URL(emu.baseUrl).port);
  const ledger = new SecretLedger(emu);
  const stack = await stackFor(PROGRAM, emu, { env: { LLM_ACCOUNTS_RATE_LIMITS: "off" } });
  const report: HistoryReport = { steps: steps.length, faultsInjected: 0, explainedOrphans: 0, violations: [] };
  const doubted: string[] = [];
  const consoleDeleted = new Set<string>();
  const createdAs = new Map<string, string>();
  let program: Program = { keys: [], batches: [] };

  const up = async (refresh: boolean, parallel: number, faults: FaultSpec[]) => {
    writeFileSync(join(stack.dir, "program.json"), JSON.stringify(program));
    emu.setFaults(faults);
    emu.clearRequests();
    const r = await stack.up(["--parallel", String(parallel), ...(refresh ? ["--refresh"] : [])], { allowFailure: true });
    emu.setFaults([]);
    report.faultsInjected += emu.requests().filter((q) => q.fault).length;
    const text = r.stdout + r.stderr;
    // Pulumi prints an error more than once; one lost create per alias per run at most.
    doubted.push(...new Set([...text.matchAll(new RegExp(DOUBT.source, "g"))].map((m) => m[1])));
    const state = await stateOf(stack);
    for (const e of state.values()) ledger.record(e.outputs.key as string | undefined, ...((e.outputs.tokens as string[] | undefined) ?? []));
    ledger.expectAbsent(text, "pulumi's output");
    if (refresh && r.code === 0) consoleDeleted.clear();
    if (r.code === 0) stateObjectsExist(emu, state, consoleDeleted, report, "after a run without errors");
    return { code: r.code, text, state };
  };

  try {
    for (const step of steps) {
      if (step.kind === "up") {
        program = step.program;
        await up(step.refresh, step.parallel, step.faults);
      } else if (step.kind === "edit") consoleEdit(emu, step, consoleDeleted, createdAs);
      else if (step.kind === "editSubAccount") consoleEditSubAccount(emu, step, consoleDeleted, createdAs);
      else {
        ledger.record();
        await emu.close();
        emu = await emulator({ ...options, port });
      }
    }
    let final = await up(true, 10, []);
    if (final.code !== 0) final = await up(true, 10, []);
    if (final.code !== 0) report.violations.push(`the second fault-free up --refresh failed:\n${final.text.slice(-2000)}`);
    checkInvariant(emu, final.state, program, doubted, createdAs, report);
    ledger.expectAbsent(stack.backendText(), "the stack's backend files");
  } finally {
    disposeStack(stack);
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return report;
}

describe("randomized convergence through the real Pulumi CLI", () => {
  for (const [i, steps] of HISTORIES.entries()) {
    test(`history ${i + 1} of ${HISTORIES.length} (seed ${SEED}): ${steps.map((s) => s.kind).join(", ")}`, async () => {
      const report = await play(steps);
      faultsInjected += report.faultsInjected;
      expect(report.violations).toEqual([]);
    }, 600_000);
  }

  test("the histories did meet faults (the test is not vacuous)", () => {
    expect(faultsInjected).toBeGreaterThan(0);
  });
});
