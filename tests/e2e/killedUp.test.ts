import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { Emulator } from "../../provider/emulator/index.js";
import { emulator } from "../support/emulator.js";
import { killTree } from "../support/processes.js";
import { REPO } from "../support/programDir.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  endFile,
  expectSettled,
  requirePulumiCli,
  revealed,
  SecretLedger,
  stackFor,
  type PulumiStack,
} from "./support.js";

// Issue 36, "a killed up": `pulumi up` killed (SIGKILL, the whole process group: CLI, language host, plugin) between
// a batch's create and its edit. The next `up` of the same stack finds what the killed one created by the
// resource's own mark and creates nothing twice; the gate passes and `destroy` leaves nothing.
const PROGRAM = join(REPO, "tests/e2e/programs/lifecycle");
const TRANSFER = join(REPO, "tests/e2e/programs/transfer");

let emu: Emulator | undefined;
let ledger: SecretLedger | undefined;
let stack: PulumiStack | undefined;
let transfer: PulumiStack | undefined;

beforeAll(async () => {
  await requirePulumiCli();
  emu = await emulator({ rateLimits: false });
  ledger = new SecretLedger(emu);
  stack = await stackFor(PROGRAM, emu);
}, CLI_BUILD_TIMEOUT_MS);

afterAll(
  async () => endFile({ emu, ledger, stacks: [stack, transfer].filter((s): s is PulumiStack => s !== undefined) }),
  5 * 60_000,
);

/**
 * Runs `pulumi up` and kills it, with every process it started, while the edit that follows its batch create waits
 * at the emulator (a latency fault holds it: `at`, the operation it waits for): the sub-accounts exist under their
 * marked alias and nothing recorded them. The kill waits 2 s more, so that it does not land in the CLI's write of a checkpoint of another resource (a
 * local backend's state file cut in the middle is another failure, Pulumi's: its backup restores it).
 */
async function killedUp(s: PulumiStack, e: Emulator, at = "sub-account/edit"): Promise<void> {
  const child = spawn(s.cli.pulumi, ["up", "--yes", "--skip-preview", "--non-interactive", "--stack", s.stack], {
    cwd: s.dir,
    env: s.env,
    detached: true,
    stdio: "ignore",
  });
  const exited = new Promise<void>((done) => child.on("exit", () => done()));
  const deadline = Date.now() + 120_000;
  while ((e.calls()[at] ?? 0) < 1) {
    if (Date.now() > deadline) throw new Error(`the up never reached its ${at}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 2000));
  killTree(child.pid!);
  await exited;
  // What the CLI asks of a user after a killed update: release the stack's lock.
  await s.run(["cancel", "--yes"]);
}

describe("pulumi up killed between a batch's create and its edit", () => {
  test(
    "first up killed: the next up takes what it created (no second create), settles, and destroy leaves nothing",
    async () => {
      const e = emu!;
      const s = stack!;
      // The edit that follows the create waits (a latency fault of 10 minutes), so the kill lands between the two.
      e.setFaults([{ kind: "latency", ops: ["sub-account/edit"], ms: 600_000, count: 1 }]);
      await killedUp(s, e);
      e.setFaults([]);
      const left = e.state.listSubAccounts();
      expect(left).toHaveLength(2);
      expect(left.every((sub) => sub.alias.startsWith("team~"))).toBe(true);
      ledger!.record(...left.map((sub) => sub.token), ...e.state.listKeys().map((k) => k.key));

      e.clearRequests();
      // The killed run left its pending operations in the state: the next up goes on without them.
      const up = await s.run(["up", "--yes", "--skip-preview"], { allowFailure: true });
      expect(up).toMatchObject({ code: 0 });
      expect(e.calls()["sub-account/create"] ?? 0).toBe(0);
      expect(
        e.state
          .listSubAccounts()
          .map((sub) => sub.token)
          .sort(),
      ).toEqual(left.map((sub) => sub.token).sort());
      expect(e.state.listSubAccounts().map((sub) => sub.alias)).toEqual(["team", "team"]);
      await expectSettled(s);

      await s.destroy();
      expect(e.state.listSubAccounts()).toEqual([]);
      expect(e.state.listKeys()).toEqual([]);
    },
    10 * 60_000,
  );

  test(
    "a scale-up killed: the next up takes the sub-accounts it created, and destroy leaves nothing",
    async () => {
      const e = emu!;
      const s = stack!;
      await s.up();
      await s.setConfig("count", 4);
      e.clearRequests();
      e.setFaults([{ kind: "latency", ops: ["sub-account/edit"], ms: 600_000, count: 1 }]);
      await killedUp(s, e);
      e.setFaults([]);
      expect(e.state.listSubAccounts()).toHaveLength(4);
      ledger!.record(...e.state.listSubAccounts().map((sub) => sub.token), ...e.state.listKeys().map((k) => k.key));
      e.clearRequests();
      await s.run(["up", "--yes", "--skip-preview"]);
      expect(e.calls()["sub-account/create"] ?? 0).toBe(0);
      expect(e.state.listSubAccounts().map((sub) => sub.alias)).toEqual(Array(4).fill("team"));
      await expectSettled(s);
      await s.destroy();
      expect(e.state.listSubAccounts()).toEqual([]);
    },
    10 * 60_000,
  );
});

describe("pulumi up killed while a sub-account moves from one batch to another", () => {
  test(
    "killed while the giver's update runs: the taker (registered first) has not adopted it, the next up moves it, and one batch holds it",
    async () => {
      const e = emu!;
      transfer = await stackFor(TRANSFER, e);
      const [x, y] = e.state
        .createSubAccounts({
          alias: "console",
          balance: 1,
          modelPricing: [{ model: "model-a", pricing_factor: 1 }],
          count: 2,
        })
        .map((sub) => sub.token);
      ledger!.record(x, y);
      await transfer.setConfig("giverTokens", JSON.stringify([x, y]), { secret: true });
      await transfer.setConfig("giverCount", 2);
      await transfer.setConfig("takerCount", 1);
      await transfer.up();

      // The giver releases y and creates one (its create held 10 minutes at the emulator); the taker adopts y.
      await transfer.setConfig("giverTokens", JSON.stringify([x]), { secret: true });
      await transfer.setConfig("takerTokens", JSON.stringify([y]), { secret: true });
      await transfer.setConfig("takerCount", 2);
      e.clearRequests();
      e.setFaults([{ kind: "latency", ops: ["sub-account/create"], ms: 600_000, count: 1 }]);
      await killedUp(transfer, e, "sub-account/create");
      e.setFaults([]);
      // Before, the taker's list and edit ended while the giver's create waited: y renamed "taker", and both states
      // held it (a later removal of the giver would have deleted it).
      expect(e.state.getSubAccount(y)?.alias).toBe("giver");
      expect(holdersOf(await exported(transfer), y)).toEqual(["giver"]);

      ledger!.record(...e.state.listSubAccounts().map((sub) => sub.token));
      await transfer.run(["up", "--yes", "--skip-preview"]);
      expect(e.state.getSubAccount(y)?.alias).toBe("taker");
      expect(holdersOf(await exported(transfer), y)).toEqual(["taker"]);
      await expectSettled(transfer);
      await transfer.destroy();
      expect(e.state.listSubAccounts()).toEqual([]);
    },
    10 * 60_000,
  );
});

/** `pulumi stack export --show-secrets`, kept in memory only. */
async function exported(s: PulumiStack): Promise<string> {
  return (await s.run(["stack", "export", "--show-secrets"])).stdout;
}

/** The names of the batches whose state holds `token`, in an export with its secrets shown. */
function holdersOf(text: string, token: string): string[] {
  const state = JSON.parse(text) as {
    deployment: { resources?: { urn: string; type: string; outputs?: Record<string, unknown> }[] };
  };
  return (state.deployment.resources ?? [])
    .filter((r) => r.type.endsWith("SubAccountBatch") && JSON.stringify(revealed(r.outputs ?? {})).includes(token))
    .map((r) => r.urn.split("::").pop()!);
}
