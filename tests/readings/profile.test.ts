import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { startEmulator, type Emulator, type Reading } from "../../provider/emulator/index.js";
import { LIFECYCLE_READINGS } from "../support/emulator.js";
import { apiKey, startFresh, subAccountBatch, type Props } from "../../provider/runtime/index.js";
import { checkedInputs } from "../support/check.js";
import { measuredProfile } from "../support/profile.js";

/**
 * The profile `llm-accounts doctor --write --save` measures under each reading, obeyed by the runtime (issue 44):
 * with it, the lifecycle works as without it (create, an empty gate, a change, a console drift repaired, a delete
 * that leaves nothing), every answer classified by the profile's signatures and none by words.
 */

const SETTINGS_FOR: Partial<Record<Reading, Record<string, string>>> = { "usage-cursor": { usagePageField: "cursor" } };

async function gateIsEmpty<I>(
  provider: {
    read(id: string, p: Props): Promise<{ id: string; props: object; inputs?: I }>;
    diff(id: string, o: Props, n: I): Promise<{ changes?: boolean }>;
  },
  id: string,
  outs: object,
  inputs: I,
): Promise<Props> {
  startFresh();
  const found = await provider.read(id, outs as Props);
  expect(found.inputs).toBeUndefined();
  expect((await provider.diff(id, found.props as Props, inputs)).changes).toBe(false);
  return found.props as Props;
}

describe.each(LIFECYCLE_READINGS)("with the profile the doctor measured under %s", (reading) => {
  let emu: Emulator;
  const readings = reading === "(the package's reading)" ? [] : [reading];
  beforeAll(async () => {
    emu = await startEmulator({ port: 0, host: "127.0.0.1", rateLimits: false, readings });
    const settings = readings[0] ? SETTINGS_FOR[readings[0]] : undefined;
    const profile = await measuredProfile(emu, settings);
    startFresh({
      stackConfig: {
        baseUrl: emu.baseUrl,
        adminKey: emu.adminKey,
        accountKey: emu.accountKey,
        rateLimits: "off",
        profile,
        ...settings,
      },
      clientOverrides: { clock: { now: () => Date.now(), sleep: async () => undefined } },
    });
  });
  afterAll(async () => emu.close());

  test("ApiKey and SubAccountBatch: created, gate empty, changed, console drift repaired, deleted: nothing left", async () => {
    const key = await checkedInputs(apiKey, { alias: "ci-runner", securityConfig: { geo: { countries: ["CN"] } } });
    const made = await apiKey.create(key);
    let outs = await gateIsEmpty(apiKey, made.id, made.outs, key);
    emu.state.editKey(made.outs.key, "renamed-in-console", { geo: { countries: ["US"] } });
    startFresh();
    const drifted = await apiKey.read(made.id, outs);
    expect("inputs" in drifted && drifted.inputs).toBeTruthy();
    outs = (await apiKey.update(made.id, drifted.props as Props, key)).outs;
    outs = await gateIsEmpty(apiKey, made.id, outs, key);
    startFresh();
    await apiKey.delete(made.id, outs);
    expect(emu.state.listKeys()).toEqual([]);

    const batch = await checkedInputs(subAccountBatch, {
      alias: "team-a",
      balance: 5,
      count: 3,
      modelPricing: [{ model: "model-a", pricingFactor: 1.2 }],
    });
    const created = await subAccountBatch.create(batch);
    let bouts = await gateIsEmpty(subAccountBatch, created.id, created.outs, batch);
    const grown = await checkedInputs(subAccountBatch, {
      alias: "team-b",
      balance: 5,
      count: 4,
      modelPricing: [{ model: "model-a", pricingFactor: 1.2 }],
    });
    startFresh();
    bouts = (await subAccountBatch.update(created.id, bouts, grown)).outs;
    bouts = await gateIsEmpty(subAccountBatch, created.id, bouts, grown);
    expect(emu.state.listSubAccounts().map((s) => s.alias)).toEqual(Array(4).fill("team-b"));
    startFresh();
    await subAccountBatch.delete(created.id, bouts);
    expect(emu.state.listSubAccounts()).toEqual([]);
  });
});

describe.each<Reading[]>([
  ["envelope", "no-content"],
  ["envelope-no-data", "no-content"],
])(
  "with the profile the doctor measured where answers are wrapped and writes with nothing to return answer 204 (%s, %s)",
  (...readings) => {
    let emu: Emulator;
    beforeAll(async () => {
      emu = await startEmulator({ port: 0, host: "127.0.0.1", rateLimits: false, readings });
      startFresh({
        stackConfig: {
          baseUrl: emu.baseUrl,
          adminKey: emu.adminKey,
          accountKey: emu.accountKey,
          rateLimits: "off",
          profile: await measuredProfile(emu),
        },
        clientOverrides: { clock: { now: () => Date.now(), sleep: async () => undefined } },
      });
    });
    afterAll(async () => emu.close());

    test("a 204 carries no envelope and no refusal: a key disabled and deleted, a batch edited and deleted, nothing left", async () => {
      const key = await checkedInputs(apiKey, { alias: "ci-runner", enabled: false });
      const made = await apiKey.create(key);
      expect(emu.state.getKey(made.outs.key)?.enabled).toBe(false);
      startFresh();
      await apiKey.delete(made.id, made.outs);
      expect(emu.state.listKeys()).toEqual([]);

      const batch = await checkedInputs(subAccountBatch, { alias: "team-a", balance: 5, count: 2, modelPricing: [] });
      const created = await subAccountBatch.create(batch);
      startFresh();
      await subAccountBatch.delete(created.id, created.outs);
      expect(emu.state.listSubAccounts()).toEqual([]);
    });
  },
);
