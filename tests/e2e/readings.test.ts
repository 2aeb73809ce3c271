import { afterAll, describe, expect, test } from "@jest/globals";
import { join } from "node:path";
import type { Emulator, Reading } from "../../provider/emulator/index.js";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import { CLI_BUILD_TIMEOUT_MS, endFile, expectSettled, requirePulumiCli, SecretLedger, stackFor, upSettled, type PulumiStack } from "./support.js";

// A user's lifecycle through the real Pulumi CLI against a platform that reads the spec's open points otherwise
// (issue 35; tests/readings plays every reading in process): the first up, an empty gate, a change, a console
// drift that the gate catches and `up --refresh` repairs, and a destroy that leaves nothing. One platform for the
// answers' shapes, one for the sub-account group's.
const PROGRAM = join(REPO, "tests/e2e/programs/lifecycle");
const GROUPS: Record<string, Reading[]> = {
  "answers: an envelope, unknown fields, other value forms, terse write confirmations": ["envelope", "extra-fields", "other-forms", "terse-writes"],
  "sub-account group: refusals as HTTP 200, a list without total, a prefix alias filter, restricted aliases": [
    "refusals-200",
    "list-no-total",
    "alias-filter-prefix",
    "restricted-aliases",
  ],
};

const ends: { emu?: Emulator; ledger?: SecretLedger; stack?: PulumiStack }[] = [];
afterAll(async () => {
  for (const end of ends) await endFile({ emu: end.emu, ledger: end.ledger, stacks: [end.stack] });
}, 5 * 60_000);

describe.each(Object.entries(GROUPS))("through the real CLI, a platform whose %s", (_name, readings) => {
  test(
    "up, empty gate, change, console drift caught by the gate and repaired by up --refresh, destroy: nothing left",
    async () => {
      await requirePulumiCli();
      const end: (typeof ends)[number] = {};
      ends.push(end);
      const emu = (end.emu = await emulator({ rateLimits: false, readings }));
      end.ledger = new SecretLedger(emu);
      const stack = (end.stack = await stackFor(PROGRAM, emu));

      await upSettled(stack);
      end.ledger.record(...emu.state.listKeys().map((k) => k.key), ...emu.state.listSubAccounts().map((s) => s.token));
      expect(emu.state.listKeys().map((k) => k.alias)).toEqual(["lifecycle"]);
      expect(emu.state.listSubAccounts().map((s) => s.alias)).toEqual(["team", "team"]);

      await stack.setConfig("teamAlias", "team-b");
      await stack.setConfig("count", 3);
      await stack.setConfig("enabled", false);
      await upSettled(stack);
      expect(emu.state.listSubAccounts().map((s) => s.alias)).toEqual(["team-b", "team-b", "team-b"]);
      expect(emu.state.listKeys()[0]).toMatchObject({ alias: "lifecycle", enabled: false });

      const [first] = emu.state.listSubAccounts();
      emu.state.editSubAccounts([first.token], "renamed-in-console", first.model_pricing);
      emu.state.setKeyEnabled(emu.state.listKeys()[0].key, true);
      const gate = await stack.run(["preview", "--refresh", "--expect-no-changes"], { allowFailure: true });
      expect(gate.code).not.toBe(0);
      await stack.up(["--refresh"]);
      await expectSettled(stack);
      expect(emu.state.listSubAccounts().map((s) => s.alias)).toEqual(["team-b", "team-b", "team-b"]);
      expect(emu.state.listKeys()[0].enabled).toBe(false);
      end.ledger.record(...emu.state.listSubAccounts().map((s) => s.token));

      await stack.destroy();
      expect(emu.state.listKeys()).toEqual([]);
      expect(emu.state.listSubAccounts()).toEqual([]);
    },
    CLI_BUILD_TIMEOUT_MS,
  );
});

// Issue 43: a platform that answers a gone key or token with 400 (`gone-400`), not 404. Before, the gate errored
// instead of reporting drift, `up --refresh` failed, and every plain `destroy` failed on the batch delete the spec
// "rejects as a whole".
describe("through the real CLI, a platform that answers a gone key or token with 400 (gone-400)", () => {
  test(
    "a console delete: the gate reports drift, up --refresh recreates; a plain destroy after another console delete finishes: nothing left",
    async () => {
      await requirePulumiCli();
      const end: (typeof ends)[number] = {};
      ends.push(end);
      const emu = (end.emu = await emulator({ rateLimits: false, readings: ["gone-400"] }));
      end.ledger = new SecretLedger(emu);
      const stack = (end.stack = await stackFor(PROGRAM, emu));
      await stack.setConfig("extraKeys", 2);
      await upSettled(stack);
      const record = () => end.ledger!.record(...emu.state.listKeys().map((k) => k.key), ...emu.state.listSubAccounts().map((s) => s.token));
      record();

      const lifecycle = () => emu.state.listKeys().find((k) => k.alias === "lifecycle")!;
      emu.state.deleteKeys([lifecycle().key]);
      emu.state.deleteSubAccounts([emu.state.listSubAccounts()[0].token]);
      const gate = await stack.run(["preview", "--refresh", "--expect-no-changes"], { allowFailure: true });
      expect(gate.code).not.toBe(0);
      expect(gate.stdout + gate.stderr).not.toMatch(/invalid_key|invalid_token/);
      await stack.up(["--refresh"]);
      await expectSettled(stack);
      record();
      expect(emu.state.listKeys().map((k) => k.alias).sort()).toEqual(["extra-0", "extra-1", "lifecycle"]);
      expect(emu.state.listSubAccounts()).toHaveLength(2);

      // No refresh: the destroy meets a gone key in its batch delete, and a gone sub-account.
      emu.state.deleteKeys([emu.state.listKeys().find((k) => k.alias === "extra-0")!.key]);
      emu.state.deleteSubAccounts([emu.state.listSubAccounts()[1].token]);
      await stack.destroy();
      expect(emu.state.listKeys()).toEqual([]);
      expect(emu.state.listSubAccounts()).toEqual([]);
    },
    CLI_BUILD_TIMEOUT_MS,
  );
});
