import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { join } from "node:path";
import type { Emulator } from "../../provider/emulator/index.js";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import { CLI_BUILD_TIMEOUT_MS, endFile, expectSettled, type PulumiStack, requirePulumiCli, revealed, SecretLedger, stackFor } from "./support.js";

// Two stacks on one account, as platform teams run them (issue 28): one program, one stack per environment,
// deployed at once in CI, declaring the same aliases and balances (the worst case for telling their objects
// apart). Each must hold its own objects, repair only its own, and destroy only its own.

const WINDOW_ENV = { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" };
const PROGRAM = join(REPO, "tests/e2e/programs/lifecycle");

let emu: Emulator;
let ledger: SecretLedger;
let dev: PulumiStack;
let prod: PulumiStack;
/** What each stack held after the last upBoth: [dev, prod]. */
let last: [Held, Held];

beforeAll(async () => {
  await requirePulumiCli();
  emu = await emulator({ rateWindowMs: 1000 });
  ledger = new SecretLedger(emu);
  dev = await stackFor(PROGRAM, emu, { stack: "dev", env: WINDOW_ENV });
  prod = await stackFor(PROGRAM, emu, { stack: "prod", env: WINDOW_ENV });
  for (const s of [dev, prod]) {
    await s.setConfig("alias", "shared");
    await s.setConfig("teamAlias", "team");
  }
}, CLI_BUILD_TIMEOUT_MS);

afterAll(() => endFile({ emu, ledger, stacks: [dev, prod], destroy: [] }), 5 * 60_000);

interface Held {
  apiKey: string;
  tokens: string[];
}

/** What a stack holds: its key and its tokens, from its outputs. */
async function held(stack: PulumiStack): Promise<Held> {
  const out = revealed(JSON.parse((await stack.run(["stack", "output", "--json", "--show-secrets"])).stdout)) as { apiKey: string; tokens: string[] };
  return { apiKey: out.apiKey, tokens: [...out.tokens].sort() };
}

const liveTeam = () =>
  emu.state
    .listSubAccounts()
    .filter((s) => s.alias === "team")
    .map((s) => s.token)
    .sort();

/**
 * `pulumi up` of both stacks at once (with `during` in force, then lifted), then both settled; what each holds
 * after, checked to be its own: none held by both, together exactly the platform's team.
 */
async function upBoth(args: string[] = [], during: () => () => void = () => () => {}): Promise<[Held, Held]> {
  const lift = during();
  try {
    await Promise.all([dev.up(args), prod.up(args)]);
  } finally {
    lift();
  }
  ledger.record();
  await expectSettled(dev);
  await expectSettled(prod);
  const [d, p] = [await held(dev), await held(prod)];
  expect(d.tokens.filter((t) => p.tokens.includes(t))).toEqual([]);
  expect([...d.tokens, ...p.tokens].sort()).toEqual(liveTeam());
  last = [d, p];
  return last;
}

describe("two stacks of one program on one account, at once", () => {
  test("up of both at once: each holds its own key and sub-accounts, none shared, and both are settled", async () => {
    const [d, p] = await upBoth();
    expect(d.tokens).toHaveLength(2);
    expect(p.tokens).toHaveLength(2);
    expect(d.apiKey).not.toBe(p.apiKey);
    expect(emu.state.listKeys().map((k) => k.key).sort()).toEqual([d.apiKey, p.apiKey].sort());
  }, 300_000);

  test("count 2 -> 3 in both at once, one of dev's sub-accounts deleted in the console and one create's answer lost: up --refresh of both repairs and grows each stack with its own", async () => {
    const [d, p] = last;
    emu.state.deleteSubAccounts([d.tokens[0]]);
    for (const s of [dev, prod]) await s.setConfig("count", 3);
    // The first sub-account create of the two is made on the platform and its answer never comes back.
    emu.clearRequests();
    const [d2, p2] = await upBoth(["--refresh"], () => {
      emu.setFaults([{ kind: "drop-after", ops: ["sub-account/create"], count: 1 }]);
      return () => emu.setFaults([]);
    });
    expect(emu.requests().filter((q) => q.fault && q.op === "sub-account/create")).toHaveLength(1);
    // The stack that lost the answer found its create by its mark (a list), and made it once: one create a stack.
    expect(emu.requests().filter((q) => q.op === "sub-account/create")).toHaveLength(2);
    expect(d2.tokens).toHaveLength(3);
    expect(p2.tokens).toHaveLength(3);
    expect(d2.tokens).toContain(d.tokens[1]);
    expect(d2.tokens).not.toContain(d.tokens[0]);
    expect(p.tokens.every((t) => p2.tokens.includes(t))).toBe(true);
    expect(p2.apiKey).toBe(p.apiKey);
    expect(d2.apiKey).toBe(d.apiKey);
  }, 300_000);

  test("destroy of dev deletes dev's objects only: prod's key and sub-accounts stay, and prod stays settled", async () => {
    const p = last[1];
    await dev.destroy();
    expect(liveTeam()).toEqual(p.tokens);
    expect(emu.state.listKeys().map((k) => k.key)).toEqual([p.apiKey]);
    const gate = await prod.preview(["--refresh", "--expect-no-changes"], { allowFailure: true });
    expect(gate.code).toBe(0);
  }, 300_000);
});
