import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Emulator } from "../../provider/emulator/index.js";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  disposeStack,
  endFile,
  expectSettled,
  requirePulumiCli,
  SecretLedger,
  stackFor,
} from "./support.js";

/** Every example program: each folder of examples/ with a Pulumi.yaml. */
const EXAMPLES = readdirSync(join(REPO, "examples"), { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(join(REPO, "examples", e.name, "Pulumi.yaml")))
  .map((e) => e.name);

let emu: Emulator;
let ledger: SecretLedger;

beforeAll(async () => {
  await requirePulumiCli();
  emu = await emulator({ rateWindowMs: 1000 });
  ledger = new SecretLedger(emu);
}, CLI_BUILD_TIMEOUT_MS);
afterAll(() => endFile({ emu, ledger }));

test("there are examples to run", () => {
  expect(EXAMPLES).toEqual(expect.arrayContaining(["quickstart", "sub-accounts", "multi-team", "ci-drift-gate"]));
});

describe.each(EXAMPLES)("examples/%s on the real Pulumi CLI", (name) => {
  test("up, no perpetual diff, secrets masked and out of the state, destroy without the program leaves nothing", async () => {
    const stack = await stackFor(join(REPO, "examples", name), emu, { env: { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" } });
    const before = {
      keys: new Set(emu.state.listKeys().map((k) => k.key)),
      subs: new Set(emu.state.listSubAccounts().map((s) => s.token)),
    };
    const ours = () => ({
      keys: emu.state.listKeys().filter((k) => !before.keys.has(k.key)),
      subs: emu.state.listSubAccounts().filter((s) => !before.subs.has(s.token)),
    });
    try {
      await stack.up();
      ledger.record();
      const created = ours();
      expect(created.keys.length + created.subs.length).toBeGreaterThan(0);

      // Outputs: no secret in plain text unless asked for; what is secret shows as [secret].
      const shown = (await stack.run(["stack", "output", "--json"])).stdout;
      ledger.expectAbsent(shown, `examples/${name}: pulumi stack output`);
      const revealed = (await stack.run(["stack", "output", "--json", "--show-secrets"])).stdout;
      const secretsShown = [...created.keys.map((k) => k.key), ...created.subs.map((s) => s.token)].filter((s) =>
        revealed.includes(s),
      );
      if (secretsShown.length > 0) expect(shown).toContain("[secret]");

      await expectSettled(stack);

      ledger.expectAbsent(await stack.exportState(), `examples/${name}: pulumi stack export`);
      ledger.expectAbsent(stack.backendText(), `examples/${name}: the backend folder`);

      writeFileSync(join(stack.dir, "index.ts"), 'throw new Error("the program must not run at destroy");\n');
      emu.clearRequests();
      await stack.destroy();
      expect(ours()).toEqual({ keys: [], subs: [] });
      // Deletes only, and at most the one list the batches' deletes share (what a killed run left under their marks).
      expect(Object.keys(emu.calls()).filter((op) => !op.endsWith("/delete"))).toEqual(
        emu.calls()["sub-account/list"] ? ["sub-account/list"] : [],
      );
      expect(emu.calls()["sub-account/list"] ?? 0).toBeLessThanOrEqual(1);
    } finally {
      disposeStack(stack);
    }
  }, 300_000);
});
