import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { join } from "node:path";
import type { Emulator } from "../../provider/emulator/index.js";
import { calls, emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  disposeStack,
  expectSettled,
  expectSwept,
  requirePulumiCli,
  SecretLedger,
  stackFor,
  upSettled,
  type PulumiStack,
} from "./support.js";

// A refresh of many SubAccountBatch resources through the real engine, which hands the provider --parallel reads
// at a time: one list of the account answers them all (command/sharedList.ts), and drift made before a command is seen.
const BATCHES = 60;
const PROGRAM = join(REPO, "tests/e2e/programs/many-keys");

let emu: Emulator;
let stack: PulumiStack;
let ledger: SecretLedger;

beforeAll(async () => {
  await requirePulumiCli();
  emu = await emulator({ rateLimits: false });
  // The client's limiter is not the subject: off, so that 60 batch creates never wait for a window.
  stack = await stackFor(PROGRAM, emu, { env: { LLM_ACCOUNTS_RATE_LIMITS: "off" } });
  await stack.setConfig("count", 0);
  await stack.setConfig("batches", BATCHES);
  await stack.up(["--parallel", "64"]);
  ledger = new SecretLedger(emu);
}, CLI_BUILD_TIMEOUT_MS);

afterAll(async () => {
  try {
    if (stack) await stack.destroy(["--parallel", "64"]);
    expect(emu.state.listSubAccounts()).toEqual([]);
    await expectSwept(emu, ledger);
  } finally {
    disposeStack(stack);
    await emu?.close();
  }
}, 5 * 60_000);

describe(`pulumi refresh of ${BATCHES} sub-account batches`, () => {
  test(
    "at the default --parallel: one list call in all, and the state unchanged",
    async () => {
      // The up of beforeAll, settled: its refresh (--expect-no-changes) is the one this test counts.
      emu.clearRequests();
      await expectSettled(stack);
      expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    },
    5 * 60_000,
  );

  test(
    "drift made before a command is seen by its list (and the confirmation of what it misses); up --refresh repairs it",
    async () => {
      const byAlias = (alias: string) => emu.state.listSubAccounts().filter((s) => s.alias === alias);
      const renamed = byAlias("key-team-7");
      emu.state.editSubAccounts(
        renamed.map((s) => s.token),
        "renamed-in-console",
        renamed[0].model_pricing,
      );
      emu.state.deleteSubAccounts(byAlias("key-team-8").map((s) => s.token));
      emu.clearRequests();
      const gate = await stack.run(["preview", "--refresh", "--expect-no-changes"], { allowFailure: true });
      expect(gate.code).not.toBe(0);
      // One list of the account, and one more to confirm what it misses before anything is dropped: a paged list
      // may skip live sub-accounts when another process deletes between pages (issue 28). Here the 5 of key-team-8
      // are missing, more than the 3 that are each confirmed by an sk-filtered list, so the account is listed again.
      // They were made longer ago than a lagging platform may take to show them (lateWritesMs, LOOK_ENV's 5 s here:
      // the up and the settled checks of beforeAll came between), so nothing is looked for again.
      expect(calls(emu)).toEqual({ "sub-account/list": 2 });
      await upSettled(stack, ["--refresh"]);
      expect(byAlias("key-team-7")).toHaveLength(5);
      expect(byAlias("renamed-in-console")).toEqual([]);
      expect(byAlias("key-team-8")).toHaveLength(5);
    },
    5 * 60_000,
  );
});
