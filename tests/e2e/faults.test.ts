import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { join } from "node:path";
import type { Emulator } from "../../provider/emulator/index.js";
import { REPO } from "../../scripts/lib/stack.mjs";
import { emulator } from "../support/emulator.js";
import { statuses } from "../support/faults.js";
import { SecretLedger } from "../support/secrets.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  disposeStack,
  endFile,
  expectSettled,
  type PulumiStack,
  requirePulumiCli,
  stackFor,
} from "./support.js";

// The real Pulumi CLI against an emulator that injects faults: a 429 storm (with and without Retry-After),
// latency, 5xx on reads, a 5xx on a key create, a lost answer on the sub-account create and on a delete.
// `pulumi up` either completes or fails with a clear error; a plain re-run converges to exactly the declared
// objects; no secret shows in the CLI's output, the exported state or the backend's files.

const PROGRAM = join(REPO, "tests/e2e/programs/many-keys");
const COUNT = 3;
const TEAM = 2;
// The platform's own limits, with a one-second "minute" on both sides.
const WINDOW_MS = 1000;

let emu: Emulator;
let ledger: SecretLedger;
let stack: PulumiStack;
const outputs: string[] = [];

beforeAll(async () => {
  await requirePulumiCli();
  emu = await emulator({ rateWindowMs: WINDOW_MS, seed: 7 });
  ledger = new SecretLedger(emu);
  stack = await stackFor(PROGRAM, emu, { env: { LLM_ACCOUNTS_RATE_WINDOW_MS: String(WINDOW_MS) } });
  await stack.setConfig("count", COUNT);
  await stack.setConfig("subAccounts", TEAM);
  await stack.setConfig("aliasPrefix", "faulty");
}, CLI_BUILD_TIMEOUT_MS);

afterAll(async () => {
  emu?.setFaults([]);
  await endFile({ emu, ledger, stacks: [stack] });
});

/** Runs a pulumi command and keeps its output for the secret check. */
async function pulumi(run: () => Promise<{ code: number; stdout: string; stderr: string }>) {
  const r = await run();
  outputs.push(r.stdout, r.stderr);
  ledger.record();
  return r;
}

/** The weather of every run: 429s (hinted and not), latency. */
const STORM = [
  { kind: "429" as const, rate: 0.3 },
  { kind: "429" as const, rate: 0.2, retryAfter: false },
  { kind: "latency" as const, ms: 80, rate: 0.5 },
];

function expectDeclaredOnly(): void {
  const keys = emu.state.listKeys();
  expect(keys.map((k) => k.alias).sort()).toEqual(Array.from({ length: COUNT }, (_, i) => `faulty-${i}`));
  expect(emu.state.listSubAccounts().map((s) => s.alias)).toEqual(Array(TEAM).fill("faulty-team"));
}

describe("pulumi up, refresh and destroy under injected faults", () => {
  test(
    "up: a 500 on one key create fails the run with a clear error; a lost sub-account create answer is recovered; the re-run converges",
    async () => {
      emu.setFaults([
        { kind: "429", ops: ["api-key/create"], count: 2 },
        { kind: "500", ops: ["api-key/create"], count: 1 },
        { kind: "drop-after", ops: ["sub-account/create"], count: 1 },
        ...STORM,
      ]);
      const first = await pulumi(() => stack.up(["--parallel", "8"], { allowFailure: true }));
      expect(first.code).not.toBe(0);
      const text = first.stdout + first.stderr;
      expect(text).toMatch(
        /500 internal_error: .*the key may have been created although no answer came back \(POST api-key\/create\)\. The API cannot list keys: look in the web console/,
      );
      expect(text).toMatch(/POST api-key\/create/);
      const s = statuses(emu);
      expect(s["api-key/create 500"]).toBe(1);
      expect(s["api-key/create 200"]).toBe(COUNT - 1);
      expect(s["sub-account/create 0"]).toBe(1);
      expect(s["sub-account/create 200"] ?? 0).toBe(0);
      // The list of what a killed run left under the batch's mark, then the one that finds what the lost create made.
      expect(s["sub-account/list 200"]).toBe(2);
      expect(s["api-key/create 429"]).toBeGreaterThanOrEqual(2);
      expect(emu.state.listKeys().map((k) => k.alias)).toHaveLength(COUNT - 1);
      expect(emu.state.listSubAccounts().map((t) => t.alias)).toEqual(Array(TEAM).fill("faulty-team"));

      emu.clearRequests();
      const second = await pulumi(() => stack.up(["--parallel", "8"]));
      expect(second.code).toBe(0);
      // Only the key that failed is created; nothing else is touched (429s aside).
      expect(Object.entries(statuses(emu)).filter(([k]) => !k.endsWith(" 429"))).toEqual([["api-key/create 200", 1]]);
      expectDeclaredOnly();
      // Settled under the same weather (429s, latency): the storm is retried, never a change.
      await expectSettled(stack);
    },
    5 * 60_000,
  );

  test(
    "refresh: 5xx on the reads are retried; the stack stays converged",
    async () => {
      emu.clearRequests();
      emu.setFaults([
        { kind: "500", ops: ["api-key/get"], count: 2 },
        { kind: "503", ops: ["sub-account/list"], count: 2 },
        ...STORM,
      ]);
      await pulumi(() => stack.refresh(["--skip-preview"]));
      const s = statuses(emu);
      expect(s["api-key/get 500"]).toBe(2);
      expect(s["sub-account/list 503"]).toBe(2);
      expect(s["api-key/get 200"]).toBe(COUNT);
      await pulumi(() => stack.preview(["--expect-no-changes"]));
      expectDeclaredOnly();
    },
    5 * 60_000,
  );

  test("no key or token is in the CLI's output, the exported state or the backend's files", async () => {
    const exported = await stack.exportState();
    expect(exported).toContain("faulty-0");
    ledger.expectAbsent(exported, "pulumi stack export");
    ledger.expectAbsent(stack.backendText(), "the backend's files");
    ledger.expectAbsent(outputs.join("\n"), "the output of pulumi");
  });

  test(
    "destroy: a 500 and a lost answer on the delete are retried; nothing is left",
    async () => {
      emu.clearRequests();
      emu.setFaults([
        { kind: "500", ops: ["api-key/delete"], count: 1 },
        { kind: "drop-after", ops: ["sub-account/delete"], count: 1 },
        ...STORM,
      ]);
      await pulumi(() => stack.destroy(["--parallel", "8"]));
      // Aliases compared: a failure message must not print a key.
      expect(emu.state.listKeys().map((k) => k.alias)).toEqual([]);
      expect(emu.state.listSubAccounts().map((t) => t.alias)).toEqual([]);
      ledger.expectAbsent(outputs.join("\n"), "the output of pulumi");
      ledger.expectAbsent(stack.backendText(), "the backend's files");
    },
    5 * 60_000,
  );
});

describe("a key created but left not as declared", () => {
  test(
    "status and delete fail for good after a create: the key is recorded as created-but-failed, secret in the state; the re-run disables it",
    async () => {
      const half = await stackFor(PROGRAM, emu, { env: { LLM_ACCOUNTS_RATE_WINDOW_MS: String(WINDOW_MS) } });
      try {
        await half.setConfig("count", 1);
        await half.setConfig("enabled", false);
        await half.setConfig("aliasPrefix", "half");
        emu.clearRequests();
        emu.setFaults([{ kind: "503", ops: ["api-key/status", "api-key/delete"] }]);
        const first = await pulumi(() => half.up([], { allowFailure: true }));
        expect(first.code).not.toBe(0);
        expect(first.stdout + first.stderr).toMatch(
          /the key was created but could not be disabled .*kept in the state and the next update disables it/,
        );
        const made = emu.state.listKeys().filter((k) => k.alias === "half-0");
        expect(made.map((k) => k.alias)).toHaveLength(1);
        expect(made[0].enabled).toBe(true);
        // The engine recorded the key: encrypted, like any key in the state.
        const exported = await half.exportState();
        expect(exported).toContain("half-0");
        expect(exported).toMatch(/"key": \{\s*"4dabf18193072939515e22adb298388d"/);
        ledger.expectAbsent(exported, "pulumi stack export");
        ledger.expectAbsent(half.backendText(), "the backend's files");

        emu.setFaults([]);
        emu.clearRequests();
        await pulumi(() => half.up());
        expect(statuses(emu)).toEqual({ "api-key/status 200": 1 });
        await expectSettled(half);
        const after = emu.state.listKeys().filter((k) => k.alias === "half-0");
        expect(after.map((k) => k.enabled)).toEqual([false]);
        expect(after[0].key === made[0].key).toBe(true);
        await pulumi(() => half.destroy());
        expect(emu.state.listKeys().map((k) => k.alias)).toEqual([]);
        ledger.expectAbsent(outputs.join("\n"), "the output of pulumi");
        ledger.expectAbsent(half.backendText(), "the backend's files");
      } finally {
        disposeStack(half);
      }
    },
    5 * 60_000,
  );
});
