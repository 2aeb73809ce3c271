import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { join } from "node:path";
import type { Emulator } from "../../provider/emulator/index.js";
import { emulator } from "../support/emulator.js";
import { REPO } from "../support/programDir.js";
import {
  CLI_BUILD_TIMEOUT_MS,
  endFile,
  expectSettled,
  type PulumiStack,
  requirePulumiCli,
  revealed,
  SecretLedger,
  stackFor,
} from "./support.js";

// Two stacks on one account, as platform teams run them (issue 28): one program, one stack per environment,
// deployed at once in CI, declaring the same aliases and balances (the worst case for telling their objects
// apart). Each must hold its own objects, repair only its own, and destroy only its own.

const WINDOW_ENV = { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" };
const PROGRAM = join(REPO, "tests/e2e/programs/lifecycle");
/** A program that gets another stack's key and batch by id (ApiKey.get, SubAccountBatch.get). */
const GET_PROGRAM = join(REPO, "tests/e2e/programs/getById");

let emu: Emulator;
let ledger: SecretLedger;
let dev: PulumiStack;
let prod: PulumiStack;
let viewer: PulumiStack;
/** What each stack held after the last upBoth: [dev, prod]. */
let last: [Held, Held];

beforeAll(async () => {
  await requirePulumiCli();
  emu = await emulator({ rateWindowMs: 1000 });
  ledger = new SecretLedger(emu);
  dev = await stackFor(PROGRAM, emu, { stack: "dev", env: WINDOW_ENV });
  prod = await stackFor(PROGRAM, emu, { stack: "prod", env: WINDOW_ENV });
  viewer = await stackFor(GET_PROGRAM, emu, { stack: "viewer", env: WINDOW_ENV });
  for (const s of [dev, prod]) {
    await s.setConfig("alias", "shared");
    await s.setConfig("teamAlias", "team");
  }
}, CLI_BUILD_TIMEOUT_MS);

afterAll(() => endFile({ emu, ledger, stacks: [dev, prod, viewer], destroy: [] }), 5 * 60_000);

interface Held {
  apiKey: string;
  tokens: string[];
}

/** What a stack holds: its key and its tokens, from its outputs. */
async function held(stack: PulumiStack): Promise<Held> {
  const out = revealed(JSON.parse((await stack.run(["stack", "output", "--json", "--show-secrets"])).stdout)) as {
    apiKey: string;
    tokens: string[];
  };
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
    expect(
      emu.state
        .listKeys()
        .map((k) => k.key)
        .sort(),
    ).toEqual([d.apiKey, p.apiKey].sort());
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

/** A resource of a stack's state (`pulumi stack export --show-secrets`, secrets revealed), by its type's name. */
async function stateOf(
  stack: PulumiStack,
  type: "ApiKey" | "SubAccountBatch",
): Promise<{ id: string; outputs: Record<string, unknown>; external?: boolean }> {
  const exported = revealed(JSON.parse((await stack.run(["stack", "export", "--show-secrets"])).stdout)) as {
    deployment: { resources: { type: string; id: string; outputs: Record<string, unknown>; external?: boolean }[] };
  };
  return exported.deployment.resources.find((r) => r.type === `pulumi-nodejs:dynamic/llm-accounts:${type}`)!;
}

describe("the static get: another stack's objects read by id, as every Pulumi resource's get does", () => {
  test("a third stack gets prod's key and batch by id and state: read from the platform at each up, a console rename seen, nothing written; its destroy deletes nothing", async () => {
    const [key, team] = [await stateOf(prod, "ApiKey"), await stateOf(prod, "SubAccountBatch")];
    const o = { key: key.outputs, team: team.outputs };
    for (const [k, v] of Object.entries({
      keyId: key.id,
      alias: o.key.alias,
      createdAt: o.key.createdAt,
      teamId: team.id,
      teamAlias: o.team.alias,
      balance: o.team.balance,
      count: o.team.count,
    })) {
      await viewer.setConfig(k, String(v));
    }
    await viewer.setConfig("key", String(o.key.key), { secret: true });
    await viewer.setConfig("tokens", JSON.stringify(o.team.tokens), { secret: true });
    emu.clearRequests();
    await viewer.up();
    const out = revealed(await viewer.outputs({ showSecrets: true })) as Record<string, unknown>;
    expect(out).toMatchObject({
      keyId: key.id,
      alias: "shared",
      enabled: true,
      countries: ["SG"],
      teamId: team.id,
      teamAlias: "team",
      teamCount: 3,
    });
    expect(out.keyHint).toBe(`sk-...${String(o.key.key).slice(-4)}`);
    expect([...(out.tokens as string[])].sort()).toEqual(last[1].tokens);
    expect(out.instances).toEqual([true, true, false, false, false]);
    // Read, never written: one get of the key, one list for the batch.
    expect(
      emu
        .requests()
        .map((q) => q.op)
        .sort(),
    ).toEqual(["api-key/get", "sub-account/list"]);
    // The state holds both as read resources (`external`): the stack does not manage them.
    expect([(await stateOf(viewer, "ApiKey")).external, (await stateOf(viewer, "SubAccountBatch")).external]).toEqual([
      true,
      true,
    ]);

    emu.state.editKey(String(o.key.key), "renamed-in-console", emu.state.getKey(String(o.key.key))!.security_config);
    await viewer.up();
    expect(((await viewer.outputs()) as { alias: string }).alias).toBe("renamed-in-console");

    emu.clearRequests();
    await viewer.destroy();
    expect(emu.requests().filter((q) => /\/(create|edit|status|delete)$/.test(q.op))).toEqual([]);
    expect(emu.state.listKeys().map((k) => k.key)).toEqual([o.key.key]);
    expect(liveTeam()).toEqual(last[1].tokens);
  }, 300_000);
});
