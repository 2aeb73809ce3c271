import { beforeAll, describe, expect, test } from "@jest/globals";
import { join } from "node:path";
import { DEFAULT_RATE_LIMITS } from "../../provider/api/assumptions.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  disposeStack,
  expectSettled,
  requirePulumiCli,
  stackFor,
  type PulumiStack,
} from "./support.js";

// 300 keys against the platform's own limits, with every "minute" scaled to WINDOW_MS on both sides (the
// emulator's --rate-window-ms and the client's LLM_ACCOUNTS_RATE_WINDOW_MS). This test asserts behaviour: no
// resource fails, no 429, the limit holds in every window. How close the run comes to the floor the limits
// allow is a speed claim, measured side by side by `npm run bench`, not asserted on a shared machine here.
const COUNT = 300;
const WINDOW_MS = 4_000;
const PARALLEL = "64";
const PROGRAM = join(REPO, "tests/e2e/programs/many-keys");
const CREATES_PER_WINDOW = DEFAULT_RATE_LIMITS["api-key/create"][0].limit;

/** One `pulumi up` of COUNT keys on a fresh emulator and stack; checks that exactly the declared keys exist. */
async function upLimited(): Promise<{ statuses: Record<string, number>; creates: number[] }> {
  let emu: Emulator | undefined;
  let stack: PulumiStack | undefined;
  try {
    emu = await emulator({ rateWindowMs: WINDOW_MS });
    stack = await stackFor(PROGRAM, emu, { env: { LLM_ACCOUNTS_RATE_WINDOW_MS: String(WINDOW_MS) } });
    await stack.setConfig("count", COUNT);
    await stack.up(["--parallel", PARALLEL]);

    const keys = emu.state.listKeys();
    expect(keys).toHaveLength(COUNT);
    expect(new Set(keys.map((k) => k.alias))).toEqual(new Set(Array.from({ length: COUNT }, (_, i) => `key-${i}`)));
    const requests = emu.requests();
    const statuses: Record<string, number> = {};
    for (const q of requests) statuses[q.status] = (statuses[q.status] ?? 0) + 1;
    // Settled at this scale, within the same limits: the refresh's 300 gets are paced too (no 429).
    emu.clearRequests();
    await expectSettled(stack, { extra: ["--parallel", PARALLEL] });
    expect(emu.requests().filter((q) => q.status !== 200)).toEqual([]);
    // No sweep (expectSwept): the emulator lives and dies inside this test, and its 300 keys with it; a destroy
    // of 300 resources only to show the sweep an empty account would add a pulumi command and prove nothing
    // the destroys of lifecycle and proof do not.
    return { statuses, creates: requests.filter((q) => q.op === "api-key/create").map((q) => q.at) };
  } finally {
    disposeStack(stack);
    await emu?.close();
  }
}

beforeAll(async () => {
  await requirePulumiCli();
}, CLI_BUILD_TIMEOUT_MS);

describe("pulumi up of 300 keys against the platform's rate limits", () => {
  test(
    "no resource fails, the emulator answers no 429, and no window of the server's sees more creates than the limit",
    async () => {
      // `up` throws if any resource failed.
      const { statuses, creates } = await upLimited();
      // Every request was accepted: the client's limiter kept under the server's limits.
      expect(statuses).toEqual({ 200: COUNT });
      expect(creates).toHaveLength(COUNT);
      // The (i + limit)th create arrives at least a window after the ith (allowing the log's millisecond rounding).
      const tooClose = creates.slice(CREATES_PER_WINDOW).filter((at, i) => at - creates[i] < WINDOW_MS - 5);
      expect(tooClose).toEqual([]);
    },
    5 * 60_000,
  );
});
