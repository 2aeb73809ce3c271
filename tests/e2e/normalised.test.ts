import { afterAll, expect, test } from "@jest/globals";
import { join } from "node:path";
import type { Emulator } from "../../provider/emulator/index.js";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import { measuredProfile } from "../support/profile.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  endFile,
  expectSettled,
  requirePulumiCli,
  SecretLedger,
  stackFor,
  upSettled,
  type PulumiStack,
} from "./support.js";

// Issue 43: a platform that keeps aliases lower-cased and cut at 32 characters and pricing factors rounded to 2
// decimals (tests/readings/normalised.test.ts plays each in process). Before, the gate was red forever and every
// `up` wrote again. Through the real CLI: each up is settled (preview and refresh --expect-no-changes), a console
// drift is caught and repaired, and destroy leaves nothing.
const PROGRAM = join(REPO, "tests/e2e/programs/normalised");

const end: { emu?: Emulator; ledger?: SecretLedger; stack?: PulumiStack } = {};
afterAll(async () => endFile({ emu: end.emu, ledger: end.ledger, stacks: [end.stack] }), 5 * 60_000);

test(
  "aliases lower-cased and cut, factors rounded: up settled, a change settled, console drift caught and repaired, destroy: nothing left",
  async () => {
    await requirePulumiCli();
    const emu = (end.emu = await emulator({
      rateLimits: false,
      readings: ["lowercase-aliases", "cut-aliases", "rounded-factors"],
    }));
    end.ledger = new SecretLedger(emu);
    const stack = (end.stack = await stackFor(PROGRAM, emu));
    // The forms are taken for the values declared only under the profile the doctor measured (issue 53), which the
    // user saves as docs/doctor.md says.
    await stack.setConfig("llm-accounts:profile", await measuredProfile(emu));

    await upSettled(stack);
    end.ledger.record(...emu.state.listKeys().map((k) => k.key), ...emu.state.listSubAccounts().map((s) => s.token));
    expect(emu.state.listKeys().map((k) => k.alias)).toEqual(["deploy-key-of-the-production-clu"]);
    expect(emu.state.listSubAccounts().map((s) => [s.alias, s.model_pricing])).toEqual(
      Array(2).fill(["team-alpha-production-europe-wes", [{ model: "model-a", pricing_factor: 1.23 }]]),
    );

    // A second up writes nothing.
    emu.clearRequests();
    await stack.up();
    expect(emu.requests().filter((r) => !["api-key/get", "sub-account/list"].includes(r.op))).toEqual([]);

    await stack.setConfig("teamAlias", "Team-Beta-Production-Europe-West-2");
    await stack.setConfig("factor", 1.5678);
    await stack.setConfig("count", 3);
    await upSettled(stack);
    end.ledger.record(...emu.state.listSubAccounts().map((s) => s.token));
    expect(emu.state.listSubAccounts().map((s) => [s.alias, s.model_pricing])).toEqual(
      Array(3).fill(["team-beta-production-europe-west", [{ model: "model-a", pricing_factor: 1.57 }]]),
    );

    const [first] = emu.state.listSubAccounts();
    emu.state.editSubAccounts([first.token], "renamed-in-console", [{ model: "model-a", pricing_factor: 3 }]);
    emu.state.editKey(emu.state.listKeys()[0].key, "renamed-in-console", { spend_limit: { monthly: 100 } });
    const gate = await stack.run(["preview", "--refresh", "--expect-no-changes"], { allowFailure: true });
    expect(gate.code).not.toBe(0);
    await stack.up(["--refresh"]);
    await expectSettled(stack);
    expect(emu.state.listKeys().map((k) => k.alias)).toEqual(["deploy-key-of-the-production-clu"]);
    expect(emu.state.listSubAccounts().map((s) => [s.alias, s.model_pricing])).toEqual(
      Array(3).fill(["team-beta-production-europe-west", [{ model: "model-a", pricing_factor: 1.57 }]]),
    );

    await stack.destroy();
    expect(emu.state.listKeys()).toEqual([]);
    expect(emu.state.listSubAccounts()).toEqual([]);
  },
  CLI_BUILD_TIMEOUT_MS,
);
