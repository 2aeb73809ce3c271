import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { redact } from "../../provider/api/redact.js";
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
import { writeCalls } from "../support/emulatorCalls.js";

// The proof steps of issue 30 for every resource shape, in one stack of one program (programs/proof): ApiKey
// plain, with each security restriction and all of them, disabled, rotated; SubAccountBatch created, priced,
// scaled; then each of them adopted. After every up the stack is settled (expectSettled); import-verify: the
// state after adopting an object equals the state after creating it, but for IMPORT_VERIFY_IGNORED; disappears:
// every object deleted in the console is planned for re-creation by `preview --refresh` and re-created by `up`.

const PROGRAM = join(REPO, "tests/e2e/programs/proof");
const WINDOW_ENV = { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000" };
const KEY = "pulumi-nodejs:dynamic/llm-accounts:ApiKey";
const BATCH = "pulumi-nodejs:dynamic/llm-accounts:SubAccountBatch";
const KEYS = ["plain", "ip", "spend", "geo", "models", "locked", "disabled", "rotated"].map((n) => `key-${n}`);
const BATCHES = ["team", "priced", "scaled"].map((n) => `batch-${n}`);

/**
 * The fields in which the state of an adopted object may differ from the state of the same object created by
 * the provider (docs/development.md, "How each resource is proven"): the adoption inputs, and what the state keeps of them. Any other
 * difference fails the test.
 */
const IMPORT_VERIFY_IGNORED: Record<string, string[]> = {
  [KEY]: ["inputs.adoptKey", "outputs.adoptKey"],
  // In a batch's outputs, adoptTokens is the adopted set.
  [BATCH]: ["inputs.adoptTokens", "outputs.adoptTokens"],
};
/**
 * And for a key the resource rotated before it was adopted: its id stays that of the first key it issued (a
 * rotation is in place), `rotatedAt` says when it rotated (an adopted key was never rotated by the provider),
 * and the inputs the engine stored at that rotation keep the reason `check` gave it (`rotationDue: "rotation
 * triggered"`; check drops it from every later plan, so it is no diff).
 */
const ROTATED_IGNORED = ["id", "outputs.rotatedAt", "inputs.rotationDue"];

let emu: Emulator;
let ledger: SecretLedger;
let stack: PulumiStack;

type Resource = {
  urn: string;
  type: string;
  id?: string;
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown>;
};
const nameOf = (urn: string) => urn.split("::").pop()!;

/** Our resources in the state, by name, secrets shown (compared, never printed: differences are redacted). */
async function ours(): Promise<Map<string, Resource>> {
  const exported = revealed(JSON.parse((await stack.run(["stack", "export", "--show-secrets"])).stdout)) as {
    deployment: { resources: Resource[] };
  };
  return new Map(
    exported.deployment.resources.filter((r) => r.type === KEY || r.type === BATCH).map((r) => [nameOf(r.urn), r]),
  );
}

/** Runs `pulumi up`, returns the write calls it made; then expectSettled. */
async function upWrites(args: string[] = []): Promise<Record<string, number>> {
  emu.clearRequests();
  await stack.up(args);
  ledger.record();
  const writes = writeCalls(emu.calls());
  await expectSettled(stack);
  return writes;
}

/** What `preview --refresh` plans for our resources: "<op> <name>" for every step but `same` and the refresh's own. */
async function plannedAfterRefresh(): Promise<string[]> {
  emu.clearRequests();
  const r = await stack.preview(["--refresh", "--json"]);
  expect(Object.keys(writeCalls(emu.calls()))).toEqual([]);
  const steps = (JSON.parse(r.stdout) as { steps: { op: string; urn: string }[] }).steps;
  return steps
    .filter(
      (s) => !["same", "refresh"].includes(s.op) && (s.urn.includes(`::${KEY}::`) || s.urn.includes(`::${BATCH}::`)),
    )
    .map((s) => `${s.op} ${nameOf(s.urn)}`)
    .sort();
}

/** Every path (`inputs.alias`, `outputs.securityConfig.ip.allow.0`) where two values differ. */
function differences(a: unknown, b: unknown, path: string): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) === !Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) =>
      differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`),
    );
  }
  return [path];
}

/** Deletes every object of the program in the console (the emulator's own state, as the web console would). */
function deleteAllInConsole(): void {
  for (const k of emu.state.listKeys()) emu.state.deleteKey(k.key);
  emu.state.deleteSubAccounts(emu.state.listSubAccounts().map((s) => s.token));
}

beforeAll(async () => {
  await requirePulumiCli();
  emu = await emulator({ rateWindowMs: 1000 });
  ledger = new SecretLedger(emu);
  stack = await stackFor(PROGRAM, emu, { env: WINDOW_ENV });
}, CLI_BUILD_TIMEOUT_MS);

afterAll(() => endFile({ emu, ledger, stacks: [stack] }));

describe("every resource shape proven: settled after each up, disappears, import-verify", () => {
  test("created: each shape's up makes the fewest writes and the stack is settled", async () => {
    // 8 keys (the disabled one disabled after its create), 3 batches: each batch create is followed by the edit that
    // gives its sub-accounts the declared alias in place of the create's marked one (provider/api/assumptions.ts,
    // CREATE_MARKER: what lets a lost create be found without taking another stack's sub-accounts).
    expect(await upWrites()).toEqual({
      "api-key/create": 8,
      "api-key/status": 1,
      "sub-account/create": 3,
      "sub-account/edit": 3,
    });
    expect(emu.state.listKeys()).toHaveLength(8);
    expect(emu.state.listSubAccounts()).toHaveLength(6);
  }, 600_000);

  test("disappears (created objects): preview --refresh plans exactly one create per resource, up re-creates them all, settled", async () => {
    deleteAllInConsole();
    expect(await plannedAfterRefresh()).toEqual([...KEYS, ...BATCHES].map((n) => `create ${n}`).sort());
    // The settled check is not vacuous: here its refresh finds every object gone (and drops them from the state).
    await expect(expectSettled(stack)).rejects.toThrow(
      /not settled: `pulumi refresh --yes --skip-preview --diff --expect-no-changes` exited/,
    );
    // Each batch create and its edit (CREATE_MARKER), as in the first up.
    expect(await upWrites(["--refresh"])).toEqual({
      "api-key/create": 8,
      "api-key/status": 1,
      "sub-account/create": 3,
      "sub-account/edit": 3,
    });
    expect(emu.state.listKeys()).toHaveLength(8);
    expect(emu.state.listSubAccounts()).toHaveLength(6);
  }, 600_000);

  test("rotated and scaled: one create and one delete for the key, one create and its edit for the batch; settled", async () => {
    await stack.setConfig("trigger", "t2");
    await stack.setConfig("scaledCount", 3);
    // The raise's create, then the edit that sets the declared alias on what it made (CREATE_MARKER).
    expect(await upWrites()).toEqual({
      "api-key/create": 1,
      "api-key/delete": 1,
      "sub-account/create": 1,
      "sub-account/edit": 1,
    });
    expect(emu.state.listSubAccounts().filter((s) => s.alias === "proof-scaled")).toHaveLength(3);
  }, 600_000);

  test("import-verify: the same objects adopted (adoptKey, adoptTokens) give the state they had when created, but for the listed fields", async () => {
    const created = await ours();
    expect([...created.keys()].sort()).toEqual([...KEYS, ...BATCHES].sort());
    const adopt = Object.fromEntries(
      [...created].map(([name, r]) => [
        name,
        r.type === KEY ? (r.outputs.key as string) : (r.outputs.tokens as string[]),
      ]),
    );
    await stack.setConfig("adopt", JSON.stringify(adopt), { secret: true });
    // The stack forgets its resources (the objects stay): as a new stack adopting them would start.
    const exported = JSON.parse(await stack.exportState()) as { deployment: { resources: Resource[] } };
    exported.deployment.resources = exported.deployment.resources.filter((r) => r.type !== KEY && r.type !== BATCH);
    const file = join(stack.dir, "forgotten.json");
    writeFileSync(file, JSON.stringify(exported));
    await stack.run(["stack", "import", "--file", file]);

    const keysBefore = emu.state.listKeys();
    const tokensBefore = emu.state
      .listSubAccounts()
      .map((s) => s.token)
      .sort();
    expect(await upWrites()).toEqual({});
    expect(emu.state.listKeys()).toEqual(keysBefore);
    expect(
      emu.state
        .listSubAccounts()
        .map((s) => s.token)
        .sort(),
    ).toEqual(tokensBefore);

    const adopted = await ours();
    const found: string[] = [];
    for (const [name, c] of created) {
      const a = adopted.get(name)!;
      const ignored = [...IMPORT_VERIFY_IGNORED[c.type], ...(name === "key-rotated" ? ROTATED_IGNORED : [])];
      for (const path of [
        ...differences(c.id, a.id, "id"),
        ...differences(c.inputs, a.inputs, "inputs"),
        ...differences(c.outputs, a.outputs, "outputs"),
      ]) {
        if (!ignored.some((i) => path === i || path.startsWith(`${i}.`))) found.push(`${name}: ${path}`);
      }
    }
    // Paths only (values may be secrets), redacted all the same.
    expect(redact(found.join("\n"))).toBe("");
    // Not vacuous: every adopted resource does record its adoption, in the listed fields.
    for (const [name, a] of adopted) {
      if (a.type === KEY) expect([name, a.outputs.adoptKey]).toEqual([name, adopt[name]]);
      else
        expect([name, [...(a.outputs.adoptTokens as string[])].sort()]).toEqual([
          name,
          [...(adopt[name] as string[])].sort(),
        ]);
    }
  }, 600_000);

  test("disappears (adopted objects): batches are re-created to count; a key is not, as the README says, until adoptKey goes", async () => {
    deleteAllInConsole();
    // A key is dropped by the refresh (create planned: with adoptKey, which names a key that no longer exists);
    // a batch that adopted is kept and updated (its next update creates count anew).
    expect(await plannedAfterRefresh()).toEqual(
      [...KEYS.map((n) => `create ${n}`), ...BATCHES.map((n) => `update ${n}`)].sort(),
    );
    emu.clearRequests();
    // --continue-on-error: the batches' updates run whatever the order the engine meets the keys' failures in.
    const failed = await stack.up(["--refresh", "--continue-on-error"], { allowFailure: true });
    ledger.record();
    expect(failed.code).not.toBe(0);
    for (const name of KEYS)
      expect(failed.stdout + failed.stderr).toMatch(
        new RegExp(
          `${name}[\\s\\S]*adoptKey: the key sk-\\.\\.\\.\\w{4} does not exist on the platform; nothing was changed`,
        ),
      );
    expect(failed.stdout + failed.stderr).toContain("remove adoptKey: the next up creates a new key");
    ledger.expectAbsent(failed.stdout + failed.stderr, "the failed up");
    // No key was made; the batches were re-created to their counts.
    expect(emu.state.listKeys()).toEqual([]);
    expect(emu.calls()["sub-account/create"]).toBe(3);
    expect(emu.state.listSubAccounts()).toHaveLength(7);

    // adoptKey removed (the whole adopt config: a batch's adoption config matters only at adoption).
    await stack.removeConfig("adopt");
    expect(await upWrites()).toEqual({ "api-key/create": 8, "api-key/status": 1 });
    expect(emu.state.listKeys()).toHaveLength(8);
  }, 600_000);

  test("destroy: key and batch deletes share calls; the sweep finds nothing after", async () => {
    emu.clearRequests();
    await stack.destroy();
    // The 8 key and 3 batch deletes share calls as the engine's slots let them (runtime/command/deleteSchedule.ts): each
    // gathering of its 8 slots takes one call of each kind it holds, so at most 2 of each (one a batch made 3), after
    // one list shared by the batch deletes (what a killed run of a batch may have left under its mark).
    const calls = emu.calls();
    expect(Object.keys(calls).sort()).toEqual(["api-key/delete", "sub-account/delete", "sub-account/list"]);
    expect(calls["sub-account/list"]).toBe(1);
    expect(calls["api-key/delete"]).toBeLessThanOrEqual(2);
    expect(calls["sub-account/delete"]).toBeLessThanOrEqual(2);
    expect(emu.state.listKeys()).toEqual([]);
    expect(emu.state.listSubAccounts()).toEqual([]);
    ledger.expectAbsent(stack.backendText(), "the backend folder");
  }, 600_000);
});
