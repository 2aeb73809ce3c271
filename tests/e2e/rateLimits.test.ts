import { beforeAll, describe, expect, test } from "@jest/globals";
import { join } from "node:path";
import { DEFAULT_RATE_LIMITS } from "../../provider/client/assumptions.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import { CLI_BUILD_TIMEOUT_MS, disposeStack, requirePulumiCli, stackFor, type PulumiStack } from "./support.js";

// 300 keys against the platform's own limits, with every "minute" scaled to WINDOW_MS on both sides (the
// emulator's --rate-window-ms and the client's LLM_ACCOUNTS_RATE_WINDOW_MS). At 60 creates per window, 300
// creates need at least 4 windows between the first and the last: 16 s, so that the floor of the whole run
// (about 21 s on a quiet 2-core machine) is close to the same `up` with no limits at all (15 to 25 s, depending
// on the load), and neither bound makes the check trivial.
const COUNT = 300;
const WINDOW_MS = 4_000;
const PARALLEL = "64";
const PROGRAM = join(REPO, "tests/e2e/programs/many-keys");
const CREATES_PER_WINDOW = DEFAULT_RATE_LIMITS["api-key/create"][0].limit;

interface Run {
  ms: number;
  /** From the start of `pulumi up` to the first create, the creates, and from the last create to the end. */
  head: number;
  span: number;
  tail: number;
  statuses: Record<string, number>;
}

/** One `pulumi up` of COUNT keys on a fresh emulator and stack; checks that exactly the declared keys exist. */
async function upOnce(limited: boolean): Promise<Run> {
  let emu: Emulator | undefined;
  let stack: PulumiStack | undefined;
  try {
    emu = await emulator(limited ? { rateWindowMs: WINDOW_MS } : { rateLimits: false });
    const env: Record<string, string> = limited ? { LLM_ACCOUNTS_RATE_WINDOW_MS: String(WINDOW_MS) } : { LLM_ACCOUNTS_RATE_LIMITS: "off" };
    stack = await stackFor(PROGRAM, emu, { env });
    await stack.setConfig("count", COUNT);
    const started = Date.now();
    await stack.up(["--parallel", PARALLEL]);
    const ended = Date.now();

    const keys = emu.state.listKeys();
    expect(keys).toHaveLength(COUNT);
    expect(new Set(keys.map((k) => k.alias))).toEqual(new Set(Array.from({ length: COUNT }, (_, i) => `key-${i}`)));
    const requests = emu.requests();
    const statuses: Record<string, number> = {};
    for (const q of requests) statuses[q.status] = (statuses[q.status] ?? 0) + 1;
    const creates = requests.filter((q) => q.op === "api-key/create").map((q) => q.at);
    expect(creates).toHaveLength(COUNT);
    return {
      ms: ended - started,
      head: creates[0] - started,
      span: creates[creates.length - 1] - creates[0],
      tail: ended - creates[creates.length - 1],
      statuses,
    };
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
    "no resource fails, the emulator answers no 429, and the wall time is within 1.15x of max(the limits' floor, the same up without limits)",
    async () => {
      const free = await upOnce(false);
      const limited = await upOnce(true);

      // Every request of the limited run was accepted: the client's limiter kept under the server's limits.
      expect(limited.statuses).toEqual({ 200: COUNT });

      // The shortest create phase the limits allow, and the floor of the whole run: the run's own time before
      // its first create (nothing is rate-limited before it, so a slow start on a busy machine is not held
      // against the limiter), that shortest create phase, then the time an unlimited run needs after its last create.
      const minSpan = (Math.ceil(COUNT / CREATES_PER_WINDOW) - 1) * WINDOW_MS;
      const floor = limited.head + minSpan + free.tail;
      const bound = Math.max(floor, free.ms);
      const ratio = limited.ms / bound;
      process.stdout.write(
        `rate limits, ${COUNT} keys, window ${WINDOW_MS} ms, --parallel ${PARALLEL}: ` +
          `without limits ${free.ms} ms (head ${free.head}, creates ${free.span}, tail ${free.tail}); ` +
          `with limits ${limited.ms} ms (head ${limited.head}, creates ${limited.span} vs minimum ${minSpan}, tail ${limited.tail}); ` +
          `floor ${floor} ms; ratio ${ratio.toFixed(3)}\n`,
      );
      // The emulator counts arrivals on its own clock: allow for the millisecond rounding of the logged times.
      expect(limited.span).toBeGreaterThanOrEqual(minSpan - 5);
      expect(ratio).toBeLessThanOrEqual(1.15);
    },
    5 * 60_000,
  );
});
