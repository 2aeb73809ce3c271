import { describe, expect, test } from "@jest/globals";
import { createDecipheriv, pbkdf2Sync } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RELEASES } from "../../scripts/lib/release.mjs";
import { TEST_PASSPHRASE } from "../../scripts/pulumi-cli.mjs";
import { apiKey, subAccountBatch, type ApiKeyOutputs, type SubAccountBatchOutputs } from "../../provider/runtime/index.js";
import { API_KEY_STATE_VERSION, API_KEY_UPGRADES, fromState as apiKeyFromState } from "../../provider/runtime/apiKeyState.js";
import { BATCH_STATE_VERSION, BATCH_UPGRADES, fromState as batchFromState } from "../../provider/runtime/subAccountBatch.js";
import { upgradeState, versionOf, type StoredState } from "../../provider/runtime/stateVersions.js";
import { REPO } from "../support/programDir.js";

const FIXTURES = join(REPO, "tests/e2e/fixtures/upgrade");
const KEY = "pulumi-nodejs:dynamic/llm-accounts:ApiKey";
const BATCH = "pulumi-nodejs:dynamic/llm-accounts:SubAccountBatch";
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

describe("the upgrade chain", () => {
  const steps = [(s: StoredState) => ({ ...s, trail: [...((s.trail as string[]) ?? []), "0->1"] }), (s: StoredState) => ({ ...s, trail: [...(s.trail as string[]), "1->2"] })];

  test("a state without a recorded version is version 0 and runs every step, in order; the version reached is recorded", () => {
    expect(versionOf({})).toBe(0);
    expect(upgradeState({ a: 1 }, steps)).toEqual({ a: 1, trail: ["0->1", "1->2"], stateVersion: 2 });
  });

  test("a state runs only the steps after its recorded version", () => {
    expect(upgradeState({ trail: ["written by version 1"], stateVersion: 1 }, steps)).toEqual({ trail: ["written by version 1", "1->2"], stateVersion: 2 });
    expect(upgradeState({ trail: [], stateVersion: 2 }, steps)).toEqual({ trail: [], stateVersion: 2 });
  });

  test("a state of a later version (a newer package wrote it) is read as it is; a version that is no whole number counts as 0", () => {
    expect(upgradeState({ x: 1, stateVersion: 7 }, steps)).toEqual({ x: 1, stateVersion: 7 });
    expect(versionOf({ stateVersion: "1" })).toBe(0);
    expect(versionOf({ stateVersion: 1.5 })).toBe(0);
  });

  test("the versions written today are the lengths of the step lists, and outputs record them", () => {
    expect([API_KEY_STATE_VERSION, BATCH_STATE_VERSION]).toEqual([API_KEY_UPGRADES.length, BATCH_UPGRADES.length]);
    expect(apiKeyFromState({ alias: "a", enabled: true, securityConfig: {} }).stateVersion).toBe(API_KEY_STATE_VERSION);
  });
});

describe("ApiKey step 0 -> 1 (states written before versions were recorded)", () => {
  const step = API_KEY_UPGRADES[0];
  const base = { alias: "a", key: "sk-placeholder", keyHint: "sk-...lder", createdAt: "2026-11-21T00:00:00Z" };

  test("a missing enabled is true; a stored enabled is kept", () => {
    expect(step(base).enabled).toBe(true);
    expect(step({ ...base, enabled: false }).enabled).toBe(false);
  });

  test("a security config absent, null or in the wire's spelling is read in today's canonical camelCase form", () => {
    expect(step(base).securityConfig).toEqual({});
    expect(step({ ...base, securityConfig: null }).securityConfig).toEqual({});
    expect(step({ ...base, securityConfig: { spend_limit: { monthly: 5 }, geo: { countries: ["SG"] } } }).securityConfig).toEqual({
      spendLimit: { monthly: 5 },
      geo: { countries: ["SG"] },
    });
  });

  test("every other field is kept as stored", () => {
    expect(step({ ...base, enabled: true, securityConfig: {}, previousKey: "sk-previous", rotatedAt: "r" })).toEqual({ ...base, enabled: true, securityConfig: {}, previousKey: "sk-previous", rotatedAt: "r" });
  });
});

describe("SubAccountBatch step 0 -> 1 (states written before versions were recorded)", () => {
  const step = BATCH_UPGRADES[0];
  const base = { alias: "team", balance: 10, count: 0 };

  test("pricing in the wire's or the deprecated spelling is converted as the platform stores it; absent is none", () => {
    expect(step({ ...base, modelPricing: [{ model: "m", pricing_factor: 2 }] }).modelPricing).toEqual([{ model: "m", pricingFactor: 2 }]);
    expect(step(base).modelPricing).toEqual([]);
    expect(step({ ...base, modelPricing: [{ model: "m", pricingFactor: 1.5 }] }).modelPricing).toEqual([{ model: "m", pricingFactor: 1.5 }]);
  });

  test("missing subAccounts and tokens are none; stored ones are kept", () => {
    expect(step(base)).toMatchObject({ subAccounts: [], tokens: [] });
    const held = { subAccounts: [{ id: 1, token: "sk-t" }], tokens: ["sk-t"] };
    expect(step({ ...base, ...held })).toMatchObject(held);
  });
});

/** The passphrase key of a fixture's stack (Pulumi's passphrase secrets: PBKDF2-SHA256, 1e6 rounds, AES-256-GCM). */
function crypterOf(stackYaml: string): (ciphertext: string) => string {
  const salt = /encryptionsalt: v1:([^:]+):/.exec(stackYaml)![1];
  const key = pbkdf2Sync(TEST_PASSPHRASE, Buffer.from(salt, "base64"), 1_000_000, 32, "sha256");
  return (ciphertext) => {
    const [, nonce, sealed] = ciphertext.split(":");
    const bytes = Buffer.from(sealed, "base64");
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(nonce, "base64"));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString("utf8");
  };
}

/**
 * A fixture's values as the engine hands them to the provider: secrets decrypted, then every key and token
 * replaced by a placeholder of its own (so that no secret of the fixture can reach a failure message).
 */
function asProviderSees(value: unknown, decrypt: (c: string) => string, placeholders: Map<string, string>): unknown {
  if (typeof value === "string" && value.startsWith("sk-") && !value.startsWith("sk-...")) {
    if (!placeholders.has(value)) placeholders.set(value, `sk-fixture${String(placeholders.size).padStart(40, "0")}`);
    return placeholders.get(value);
  }
  if (Array.isArray(value)) return value.map((v) => asProviderSees(v, decrypt, placeholders));
  if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (SECRET_SIG in o && typeof o.ciphertext === "string") return asProviderSees(JSON.parse(decrypt(o.ciphertext)), decrypt, placeholders);
    return Object.fromEntries(Object.entries(o).filter(([k]) => k !== "__provider").map(([k, v]) => [k, asProviderSees(v, decrypt, placeholders)]));
  }
  return value;
}

describe.each(RELEASES.map((r) => [r.name] as const))("the outputs stored by %s (tests/e2e/fixtures/upgrade)", (name) => {
  const fixture = join(FIXTURES, name);
  const decrypt = crypterOf(readFileSync(join(fixture, "stack.yaml"), "utf8"));
  const state = JSON.parse(readFileSync(join(fixture, "state.json"), "utf8")) as { deployment: { resources: { type: string; inputs: StoredState; outputs: StoredState }[] } };
  const placeholders = new Map<string, string>();
  const stored = (type: string) =>
    state.deployment.resources
      .filter((r) => r.type === type)
      .map((r) => ({ inputs: asProviderSees(r.inputs, decrypt, placeholders) as StoredState, outputs: asProviderSees(r.outputs, decrypt, placeholders) as StoredState }));

  test("every ApiKey reads through the chain: version recorded, every stored field kept, no diff against its own inputs", async () => {
    const keys = stored(KEY);
    expect(keys).toHaveLength(3);
    for (const { inputs, outputs } of keys) {
      expect(versionOf(outputs)).toBe(0);
      expect(outputs.key).toMatch(/^sk-fixture/);
      const read = apiKeyFromState(outputs);
      expect(read).toEqual({ ...outputs, stateVersion: API_KEY_STATE_VERSION });
      const news = (await apiKey.check(inputs, inputs)).inputs;
      expect(await apiKey.diff("id", outputs as ApiKeyOutputs, news)).toMatchObject({ changes: false, replaces: [] });
    }
  });

  test("the SubAccountBatch reads through the chain: version recorded, sub-accounts and tokens kept, no diff against its own inputs", async () => {
    const batches = stored(BATCH);
    expect(batches).toHaveLength(1);
    const { inputs, outputs } = batches[0];
    expect(versionOf(outputs)).toBe(0);
    const read = batchFromState(outputs);
    expect(read).toEqual({ ...outputs, stateVersion: BATCH_STATE_VERSION });
    expect(read.subAccounts).toHaveLength(2);
    expect(read.tokens).toEqual(read.subAccounts.map((s) => s.token));
    const news = (await subAccountBatch.check(inputs, inputs)).inputs;
    expect(await subAccountBatch.diff("id", outputs as SubAccountBatchOutputs, news)).toMatchObject({ changes: false, replaces: [] });
  });
});
