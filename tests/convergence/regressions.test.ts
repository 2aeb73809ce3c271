import { describe, expect, test } from "@jest/globals";
import type { FaultSpec } from "../../provider/emulator/index.js";
import { runHistory, type Program, type Step } from "./history.js";

// Minimal histories that once broke the invariant of issue 12, kept so that they never do again.

const batch = (name: string, balance: number): Program["batches"][number] => ({ name, alias: name, balance, count: 1, modelPricing: [] });
const up = (program: Partial<Program>, faults: FaultSpec[] = []): Step => ({
  kind: "up",
  program: { keys: [], batches: [], ...program },
  refresh: false,
  parallel: 2,
  faults,
});

describe("histories that once broke convergence", () => {
  test("a batch replaced (new balance) whose create answer is a 500 does not adopt its own replaced twin's sub-accounts", async () => {
    const report = await runHistory([
      up({ batches: [batch("b0", 0)] }),
      up({ batches: [batch("b0", 2)] }, [{ kind: "500", ops: ["sub-account/create"], count: 1 }]),
    ]);
    expect(report.violations).toEqual([]);
  });
});
