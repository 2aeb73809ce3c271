import { describe, expect, test } from "@jest/globals";
import { createDecipheriv, pbkdf2Sync } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RELEASES } from "../../scripts/lib/release.mjs";
import { TEST_PASSPHRASE } from "../../scripts/pulumi-cli.mjs";
import { z } from "zod";
import { apiKey, subAccountBatch, StateError } from "../../provider/runtime/index.js";
import { API_KEY_STATE, API_KEY_STATE_VERSION } from "../../provider/runtime/apiKey/state.js";
import { BATCH_STATE, BATCH_STATE_VERSION } from "../../provider/runtime/subAccountBatch/state.js";
import { StateVersions, versionOf, type StoredState } from "../../provider/runtime/engine/stateVersions.js";
import { REPO } from "../support/programDir.js";

const FIXTURES = join(REPO, "tests/e2e/fixtures/upgrade");
const KEY = "pulumi-nodejs:dynamic/llm-accounts:ApiKey";
const BATCH = "pulumi-nodejs:dynamic/llm-accounts:SubAccountBatch";
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

describe("the upgrade chain", () => {
  // Three versions of a made-up state: v0 { a }, v1 { a, trail }, v2 { b, trail }.
  const chain = StateVersions.first("Thing", z.object({ a: z.number() }))
    .then(z.object({ a: z.number(), trail: z.array(z.string()) }), (v0) => ({ ...v0, trail: ["0->1"] }))
    .then(z.object({ b: z.number(), trail: z.array(z.string()) }), (v1) => ({ b: v1.a, trail: [...v1.trail, "1->2"] }));

  test("a state without a recorded version is version 0, parsed by its schema and run through every step, in order; the version reached is recorded", () => {
    expect(versionOf({})).toBe(0);
    expect(chain.current).toBe(2);
    expect(chain.parse({ a: 1 })).toEqual({ b: 1, trail: ["0->1", "1->2"], stateVersion: 2 });
  });

  test("a state is parsed by the schema of the version it records and runs only the steps after it", () => {
    expect(chain.parse({ a: 1, trail: ["written by version 1"], stateVersion: 1 })).toEqual({
      b: 1,
      trail: ["written by version 1", "1->2"],
      stateVersion: 2,
    });
    expect(chain.parse({ b: 3, trail: [], stateVersion: 2 })).toEqual({ b: 3, trail: [], stateVersion: 2 });
  });

  test("a state of a later version (a newer package wrote it) is read by the current schema; a version that is no whole number counts as 0", () => {
    expect(chain.parse({ b: 1, trail: [], stateVersion: 7 })).toEqual({ b: 1, trail: [], stateVersion: 7 });
    expect(versionOf({ stateVersion: "1" })).toBe(0);
    expect(versionOf({ stateVersion: 1.5 })).toBe(0);
  });

  test("a state that does not parse against its version's schema is a StateError naming the resource, the version, the field, what was expected and what to do", () => {
    const parsed = chain.safeParse({ trail: [], stateVersion: 1 });
    expect(parsed.success).toBe(false);
    const err = parsed.success ? undefined : parsed.error;
    expect(err).toBeInstanceOf(StateError);
    expect(err?.message).toMatch(
      /^Thing: the state \(version 1\) cannot be read: a: expected number, received undefined; nothing was changed/,
    );
    expect(err?.message).toContain("`pulumi state edit`");
    expect(err?.message).toContain("`pulumi refresh`");
    expect(() => chain.parse({ a: "1" })).toThrow(/version 0\) cannot be read: a: expected number, received string/);
  });

  test("the versions written today are those of the chains, and outputs record them", () => {
    expect([API_KEY_STATE_VERSION, BATCH_STATE_VERSION]).toEqual([1, 1]);
    expect(
      API_KEY_STATE.parse({
        alias: "a",
        enabled: true,
        securityConfig: {},
        key: "sk-placeholder",
        createdAt: "2026-11-21T00:00:00Z",
      }).stateVersion,
    ).toBe(API_KEY_STATE_VERSION);
  });
});

describe("ApiKey version 0 -> 1 (states written before versions were recorded)", () => {
  const base = { alias: "a", key: "sk-placeholder", keyHint: "sk-...lder", createdAt: "2026-11-21T00:00:00Z" };
  const read = (state: StoredState) => API_KEY_STATE.parse(state);

  test("a missing enabled is true; a stored enabled is kept", () => {
    expect(read(base).enabled).toBe(true);
    expect(read({ ...base, enabled: false }).enabled).toBe(false);
  });

  test("a security config absent, null or in the wire's spelling is read in today's canonical camelCase form", () => {
    expect(read(base).securityConfig).toEqual({});
    expect(read({ ...base, securityConfig: null }).securityConfig).toEqual({});
    expect(
      read({ ...base, securityConfig: { spend_limit: { monthly: 5 }, geo: { countries: ["SG"] } } }).securityConfig,
    ).toEqual({
      spendLimit: { monthly: 5 },
      geo: { countries: ["SG"] },
    });
  });

  test("every other field is kept as stored", () => {
    const stored = { ...base, enabled: true, securityConfig: {}, previousKey: "sk-previous", rotatedAt: "r" };
    expect(read(stored)).toEqual({ ...stored, stateVersion: 1 });
  });

  test("version 1 holds enabled and its security config in camelCase: a state of version 1 without them does not parse", () => {
    expect(() => read({ ...base, stateVersion: 1 })).toThrow(
      /ApiKey: the state \(version 1\) cannot be read: enabled: expected boolean, received undefined; securityConfig: expected object/,
    );
  });
});

describe("SubAccountBatch version 0 -> 1 (states written before versions were recorded)", () => {
  const base = { alias: "team", balance: 10, count: 0 };
  const read = (state: StoredState) => BATCH_STATE.parse(state);
  const sub = {
    id: 1,
    token: "sk-t",
    alias: "team",
    enabled: true,
    modelPricing: [],
    createdAt: "2026-11-21T00:00:00Z",
  };

  test("pricing in the wire's or the deprecated spelling is converted as the platform stores it; absent is none", () => {
    expect(read({ ...base, modelPricing: [{ model: "m", pricing_factor: 2 }] }).modelPricing).toEqual([
      { model: "m", pricingFactor: 2 },
    ]);
    expect(read(base).modelPricing).toEqual([]);
    expect(read({ ...base, modelPricing: [{ model: "m", autoFollowing: true }] }).modelPricing).toEqual([
      { model: "m", pricingFactor: 1 },
    ]);
    expect(read({ ...base, modelPricing: [{ model: "m", pricingFactor: 1.5 }] }).modelPricing).toEqual([
      { model: "m", pricingFactor: 1.5 },
    ]);
  });

  test("missing subAccounts and tokens are none; stored ones are kept; missing tokens are those of the sub-accounts", () => {
    expect(read(base)).toMatchObject({ subAccounts: [], tokens: [] });
    expect(read({ ...base, subAccounts: [sub], tokens: ["sk-t"] })).toMatchObject({
      subAccounts: [sub],
      tokens: ["sk-t"],
    });
    expect(read({ ...base, subAccounts: [sub] })).toMatchObject({ subAccounts: [sub], tokens: ["sk-t"] });
  });

  test("version 1 holds tokens: a state of version 1 without them does not parse, and says what to do", () => {
    expect(() => read({ ...base, modelPricing: [], subAccounts: [sub], stateVersion: 1 })).toThrow(
      /SubAccountBatch: the state \(version 1\) cannot be read: tokens: expected array, received undefined; nothing was changed\. Put the field back as it was with `pulumi state edit`/,
    );
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
    if (SECRET_SIG in o && typeof o.ciphertext === "string")
      return asProviderSees(JSON.parse(decrypt(o.ciphertext)), decrypt, placeholders);
    return Object.fromEntries(
      Object.entries(o)
        .filter(([k]) => k !== "__provider")
        .map(([k, v]) => [k, asProviderSees(v, decrypt, placeholders)]),
    );
  }
  return value;
}

describe.each(RELEASES.map((r) => [r.name] as const))(
  "the outputs stored by %s (tests/e2e/fixtures/upgrade)",
  (name) => {
    const fixture = join(FIXTURES, name);
    const decrypt = crypterOf(readFileSync(join(fixture, "stack.yaml"), "utf8"));
    const state = JSON.parse(readFileSync(join(fixture, "state.json"), "utf8")) as {
      deployment: { resources: { type: string; inputs: StoredState; outputs: StoredState }[] };
    };
    const placeholders = new Map<string, string>();
    const stored = (type: string) =>
      state.deployment.resources
        .filter((r) => r.type === type)
        .map((r) => ({
          inputs: asProviderSees(r.inputs, decrypt, placeholders) as StoredState,
          outputs: asProviderSees(r.outputs, decrypt, placeholders) as StoredState,
        }));

    test("every ApiKey reads through the chain: version recorded, every stored field kept, no diff against its own inputs", async () => {
      const keys = stored(KEY);
      expect(keys).toHaveLength(3);
      for (const { inputs, outputs } of keys) {
        expect(versionOf(outputs)).toBe(0);
        expect(outputs.key).toMatch(/^sk-fixture/);
        const read = API_KEY_STATE.parse(outputs);
        expect(read).toEqual({ ...outputs, stateVersion: API_KEY_STATE_VERSION });
        const news = (await apiKey.check(inputs, inputs)).inputs;
        expect(await apiKey.diff("id", outputs, news)).toMatchObject({ changes: false, replaces: [] });
      }
    });

    test("the SubAccountBatch reads through the chain: version recorded, sub-accounts and tokens kept, no diff against its own inputs", async () => {
      const batches = stored(BATCH);
      expect(batches).toHaveLength(1);
      const { inputs, outputs } = batches[0];
      expect(versionOf(outputs)).toBe(0);
      const read = BATCH_STATE.parse(outputs);
      expect(read).toEqual({ ...outputs, stateVersion: BATCH_STATE_VERSION });
      expect(read.subAccounts).toHaveLength(2);
      expect(read.tokens).toEqual(read.subAccounts.map((s) => s.token));
      const news = (await subAccountBatch.check(inputs, inputs)).inputs;
      expect(await subAccountBatch.diff("id", outputs, news)).toMatchObject({ changes: false, replaces: [] });
    });
  },
);
