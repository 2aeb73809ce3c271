import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
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
  SecretLedger,
  type SettledOptions,
  stackFor,
} from "./support.js";

const PROGRAM = join(REPO, "tests/e2e/programs/rotation");
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let emu: Emulator;
let ledger: SecretLedger;
let stack: PulumiStack;
let recordDir: string;
let recordFile: string;

beforeAll(async () => {
  await requirePulumiCli();
  emu = await emulator({ rateWindowMs: 1000 });
  ledger = new SecretLedger(emu);
  recordDir = mkdtempSync(join(tmpdir(), "rotation-record-"));
  recordFile = join(recordDir, "consumer.log");
  writeFileSync(recordFile, "");
  stack = await stackFor(PROGRAM, emu, { env: { LLM_ACCOUNTS_RATE_WINDOW_MS: "1000", ROTATION_RECORD: recordFile } });
}, CLI_BUILD_TIMEOUT_MS);

afterAll(() => endFile({ emu, ledger, stacks: [stack], folders: [recordDir] }));

const fingerprint = (key: string) => createHash("sha256").update(key).digest("hex");
/** The fingerprints of the keys the consumer received, in order. */
const received = () =>
  readFileSync(recordFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => line.split(" ")[1]);
const ours = () => emu.state.listKeys().filter((k) => k.alias === "rotating");

/** Runs `pulumi up` and returns the calls it made; then proves the stack settled (expectSettled). */
async function upCalls(settled: SettledOptions = {}): Promise<Record<string, number>> {
  emu.clearRequests();
  await stack.up();
  ledger.record();
  const calls = emu.calls();
  await expectSettled(stack, settled);
  return calls;
}

type Outputs = { apiKey: string; keyId: string; previousKeyExpiresAt?: string; rotatedAt?: string };

async function current(): Promise<Outputs> {
  return (await stack.outputs({ showSecrets: true })) as Outputs;
}

describe("key rotation on the real Pulumi CLI", () => {
  let firstId: string;

  test("up: one key, and the consumer receives it", async () => {
    await stack.setConfig("ticket", "INC-1");
    expect(await upCalls()).toEqual({ "api-key/create": 1 });
    const out = await current();
    firstId = out.keyId;
    expect(ours().map((k) => k.key)).toEqual([out.apiKey]);
    expect(received()).toEqual([fingerprint(out.apiKey)]);
  }, 180_000);

  test("a changed trigger: preview says why and calls nothing; up rotates in place (1 create + 1 delete) and the consumer gets the new key in the same up", async () => {
    const old = (await current()).apiKey;
    await stack.setConfig("ticket", "INC-2");
    emu.clearRequests();
    const preview = await stack.preview();
    expect(preview.stdout).toContain("rotation triggered");
    expect(preview.stdout).not.toMatch(/replace/);
    expect(Object.keys(emu.calls()).filter((op) => !op.endsWith("/get"))).toEqual([]);

    // One get of the old key first: its successor takes what the console set on it (issue 43).
    expect(await upCalls()).toEqual({ "api-key/get": 1, "api-key/create": 1, "api-key/delete": 1 });
    const out = await current();
    expect(out.keyId).toBe(firstId);
    expect(out.apiKey).not.toBe(old);
    expect(emu.state.hasKey(old)).toBe(false);
    expect(ours().map((k) => k.key)).toEqual([out.apiKey]);
    expect(received().slice(-1)).toEqual([fingerprint(out.apiKey)]);
    expect(out.rotatedAt).toBe(emu.state.getKey(out.apiKey)!.created_at);
  }, 240_000);

  test("the old key cannot be deleted: up fails, the state keeps both keys, and the next up deletes it and updates the consumer", async () => {
    const old = (await current()).apiKey;
    await stack.setConfig("ticket", "INC-2b");
    emu.setFaults([{ kind: "500", ops: ["api-key/delete"] }]);
    const failed = await stack.up([], { allowFailure: true });
    emu.setFaults([]);
    ledger.record();
    expect(failed.code).not.toBe(0);
    expect(failed.stdout + failed.stderr).toMatch(/rotated, but the previous key sk-\.\.\.\w{4} could not be deleted/);
    // A failed up leaves the stack outputs as they were; the resource's state holds both keys, as secrets.
    const state = JSON.parse(await stack.exportState()) as {
      deployment: { resources: { type: string; outputs?: Record<string, unknown> }[] };
    };
    const kept = state.deployment.resources.find((r) => r.type === "pulumi-nodejs:dynamic/llm-accounts:ApiKey")!
      .outputs!;
    expect(kept.previousKeyExpiresAt).toEqual(expect.any(String));
    expect(kept.previousKey).toHaveProperty("ciphertext");
    expect(kept.key).toHaveProperty("ciphertext");
    expect(ours()).toHaveLength(2);
    expect(emu.state.hasKey(old)).toBe(true);

    expect(await upCalls()).toEqual({ "api-key/delete": 1 });
    const out = await current();
    expect(out.apiKey).not.toBe(old);
    expect(emu.state.hasKey(old)).toBe(false);
    expect(ours().map((k) => k.key)).toEqual([out.apiKey]);
    expect(received().slice(-1)).toEqual([fingerprint(out.apiKey)]);
    expect(out.previousKeyExpiresAt).toBeUndefined();
  }, 240_000);

  test("with an overlap: the old key keeps working until the promised time, and the first up after it deletes it", async () => {
    const old = (await current()).apiKey;
    const oldRecord = emu.state.getKey(old);
    await stack.setConfig("overlapHours", 1);
    await stack.setConfig("ticket", "INC-3");
    // The new key is issued 59.5 minutes "ago" by the platform's clock: its overlap ends 30 s from now, which the
    // test then waits out in real time (the plugin's clock is the machine's). What must fit in those 30 s is this
    // up's settle, two reads and the next up: 9 s from the create to the end of that up in CI with both lanes
    // running (measured on 2026-11-25), a third of it.
    emu.setClockOffset(-59.5 * 60_000);
    expect(await upCalls()).toEqual({ "api-key/get": 1, "api-key/create": 1 });
    emu.setClockOffset(0);
    const out = await current();
    const promised = Date.parse(out.previousKeyExpiresAt!);
    expect(promised).toBe(Date.parse(out.rotatedAt!) + HOUR);
    expect(received().slice(-1)).toEqual([fingerprint(out.apiKey)]);
    // Both keys are in the state, as secrets only.
    ledger.expectAbsent(await stack.exportState(), "pulumi stack export during the overlap");

    // Before the promised time: nothing is deleted, the old key is as it was; up calls nothing.
    const overlap =
      "the up above settled this same program and state, this up called nothing (asserted), and two more commands would eat into the 30 s left of the overlap";
    expect(await upCalls({ skip: { preview: overlap, refresh: overlap } })).toEqual({});
    expect(Date.now()).toBeLessThan(promised);
    expect(emu.state.getKey(old)).toEqual(oldRecord);

    await new Promise((r) => setTimeout(r, Math.max(0, promised - Date.now() + 1000)));
    // Refresh never deletes; the drift gate flags the expiry and says why.
    emu.clearRequests();
    const gate = await stack.preview(["--refresh", "--expect-no-changes"], { allowFailure: true });
    expect(gate.code).not.toBe(0);
    expect(gate.stdout).toContain("previous key expires");
    expect(Object.keys(emu.calls())).toEqual(["api-key/get"]);
    expect(emu.state.hasKey(old)).toBe(true);

    expect(await upCalls()).toEqual({ "api-key/delete": 1 });
    expect(emu.state.hasKey(old)).toBe(false);
    expect(ours().map((k) => k.key)).toEqual([out.apiKey]);
  }, 400_000);

  test("due by age: the drift gate fails naming the issue date, refresh rotates nothing, up rotates", async () => {
    await stack.setConfig("overlapHours", 0);
    await stack.setConfig("everyDays", 2);
    await stack.setConfig("ticket", "INC-4");
    emu.setClockOffset(-3 * DAY);
    const due = "the key is issued 3 days ago with everyDays 2: due at once by design, which the gate below asserts";
    expect(await upCalls({ skip: { preview: due, refresh: due } })).toEqual({
      "api-key/get": 1,
      "api-key/create": 1,
      "api-key/delete": 1,
    });
    emu.setClockOffset(0);
    const aged = await current();
    const issued = emu.state.getKey(aged.apiKey)!.created_at.slice(0, 10);

    const gate = await stack.preview(["--refresh", "--expect-no-changes"], { allowFailure: true });
    expect(gate.code).not.toBe(0);
    expect(gate.stdout).toContain(`rotation due: key issued ${issued}, every 2 days`);
    emu.clearRequests();
    await stack.refresh(["--skip-preview"]);
    expect(emu.calls()).toEqual({ "api-key/get": 1 });
    expect(ours().map((k) => k.key)).toEqual([aged.apiKey]);
    // After a refresh, a plain preview names the reason too (the refreshed inputs carry it).
    expect((await stack.preview()).stdout).toMatch(
      new RegExp(`- rotationDue\\s*: "rotation due: key issued ${issued}, every 2 days"`),
    );

    expect(await upCalls()).toEqual({ "api-key/get": 1, "api-key/create": 1, "api-key/delete": 1 });
    const out = await current();
    expect(out.keyId).toBe(firstId);
    expect(received().slice(-1)).toEqual([fingerprint(out.apiKey)]);
  }, 300_000);

  test("no key ever issued is in the state, the backend files or the outputs shown", async () => {
    ledger.expectAbsent(await stack.exportState(), "pulumi stack export");
    ledger.expectAbsent(stack.backendText(), "the backend folder");
    ledger.expectAbsent((await stack.run(["stack", "output"])).stdout, "pulumi stack output");
  }, 60_000);

  test("destroy deletes the key in one call", async () => {
    emu.clearRequests();
    await stack.destroy();
    expect(emu.calls()).toEqual({ "api-key/delete": 1 });
    expect(ours()).toEqual([]);
  }, 120_000);
});
