import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { join } from "node:path";
import { maskKey } from "../../provider/api/redact.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { emulator, expectNoSecret, secretsOf } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  endFile,
  type PulumiStack,
  requirePulumiCli,
  SecretLedger,
  stackFor,
  upSettled,
} from "./support.js";

// Pulumi's debug logs (docs/credentials.md, "Pulumi's debug logs"): the Node.js SDK logs each RegisterResource
// answer, outputs included, as a debug message, which the engine writes to its log from -v=3 and prints with
// --debug. The package masks the keys in those messages (resources/debugLog.ts); the engine's own log of provider
// calls at -v=9 is out of its reach and not tested here.
const PROGRAM = join(REPO, "tests/e2e/programs/lifecycle");
const FLAGS = ["-v=3", "--logtostderr", "--debug"];

let emu: Emulator;
let stack: PulumiStack;

beforeAll(async () => {
  await requirePulumiCli();
  emu = await emulator({ rateLimits: false });
  stack = await stackFor(PROGRAM, emu);
}, CLI_BUILD_TIMEOUT_MS);

afterAll(() => endFile({ emu, ledger: emu && new SecretLedger(emu), stacks: [stack], destroy: [] }), 5 * 60_000);

describe("pulumi up at -v=3 with --debug", () => {
  test(
    "the SDK's RegisterResource lines are in the log and on the output, with every key and token masked",
    async () => {
      const created = await upSettled(stack, FLAGS);
      const printed = created.stdout + created.stderr;
      expectNoSecret(printed, secretsOf(emu));
      // The lines are there (the check is real): in the engine's log on stderr, and on the output as debug: lines,
      // each key and token in its masked form.
      expect(created.stderr).toMatch(
        /RegisterResource RPC finished: resource:key\[pulumi-nodejs:dynamic\/llm-accounts:ApiKey\]/,
      );
      expect(created.stdout).toMatch(
        /debug: RegisterResource RPC finished: resource:team\[pulumi-nodejs:dynamic\/llm-accounts:SubAccountBatch\]/,
      );
      const { apiKey, tokens } = await stack.outputs({ showSecrets: true });
      for (const k of [apiKey as string, ...(tokens as string[])]) expect(printed).toContain(maskKey(k));
    },
    5 * 60_000,
  );
});
