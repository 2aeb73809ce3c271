import { describe, expect, test } from "@jest/globals";
import * as provproto from "@pulumi/pulumi/proto/provider_pb.js";
import * as structproto from "google-protobuf/google/protobuf/struct_pb.js";
import { fingerprint } from "../../provider/api/redact.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { settingsOf } from "../../provider/plugin/protocol.js";
import { llmAccountsProvider as provider } from "../../provider/plugin/provider.js";
import { secretValue } from "../../provider/plugin/secrets.js";
import { startFresh, stackConfig } from "../../provider/runtime/index.js";
import { identityMark } from "../../provider/runtime/subAccountBatch/index.js";
import { calls, useRuntimeEmulator } from "../support/emulator.js";

// The provider plugin's methods (provider/plugin/provider.ts), called as `@pulumi/pulumi/provider`'s server calls them,
// against the emulator: the runtime's lifecycle behind them, secrets marked at the boundary, imports with no write.

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

const SIG = "4dabf18193072939515e22adb298388d";
const urn = (type: string, name: string) => `urn:pulumi:dev::proj::llm-accounts:index:${type}::${name}`;
const KEY = urn("ApiKey", "ci");
const BATCH = urn("SubAccountBatch", "team");
type Props = Record<string, unknown>;

/** The plain values of a set of properties (every secret marker opened), and which top-level ones were marked. */
function opened(props: Props): { plain: Props; secret: string[] } {
  const secret = Object.keys(props).filter((k) => (props[k] as Props | null)?.[SIG] !== undefined);
  const plain = Object.fromEntries(
    Object.entries(props).map(([k, v]) => [k, secret.includes(k) ? (v as Props).value : v]),
  );
  return { plain, secret };
}

/** A program's inputs through check, as the engine then hands them to create, diff and update. */
async function checked(type: string, name: string, news: Props, olds: Props = {}): Promise<Props> {
  const result = await provider.check!(urn(type, name), olds, news);
  expect(result.failures ?? []).toEqual([]);
  return result.inputs as Props;
}

describe("resources through the provider", () => {
  test("a wrong input fails check naming the field, as the dynamic resource's check does", async () => {
    const result = await provider.check!(
      KEY,
      {},
      { alias: "ci", securityConfig: { geo: { countries: ["CN", "cn"] } } },
    );
    expect(result.failures).toEqual([
      { property: "securityConfig.geo.countries[1]", reason: '"cn" must be a two-letter upper-case country code' },
    ]);
    expect(emu.requests()).toHaveLength(0);
  });

  test("create: the key is a secret of the outputs, the id its fingerprint; the next diff finds nothing to do", async () => {
    const inputs = await checked("ApiKey", "ci", { alias: "ci", enabled: false });
    const made = await provider.create!(KEY, inputs);
    const outs = opened(made.outs as Props);
    expect(outs.secret.sort()).toEqual(["key"]);
    expect(made.id).toBe(fingerprint(outs.plain.key as string));
    expect(JSON.stringify({ ...made.outs, key: undefined })).not.toContain((outs.plain.key as string).slice(3));
    expect(calls(emu)).toEqual({ "api-key/create": 1, "api-key/status": 1 });
    const again = await checked("ApiKey", "ci", { alias: "ci", enabled: false }, inputs);
    expect((await provider.diff!(made.id, KEY, made.outs, again)).changes).toBe(false);
  });

  test("a secret input stays secret in the inputs check returns and in the outputs", async () => {
    const live = emu.state.createKey("adopted");
    const inputs = await checked("ApiKey", "a", { alias: "adopted", adoptKey: secretValue(live.key) });
    expect(opened(inputs).secret).toEqual(["adoptKey"]);
    const made = await provider.create!(urn("ApiKey", "a"), inputs);
    expect(opened(made.outs as Props).secret.sort()).toEqual(["adoptKey", "key"]);
    expect(calls(emu)).toEqual({ "api-key/get": 1 });
  });

  test("a batch gets its mark from its URN, the one the SubAccountBatch class gives it", async () => {
    const inputs = await checked("SubAccountBatch", "team", { alias: "team", balance: 5, count: 2, modelPricing: [] });
    expect(inputs.mark).toBe(identityMark(["proj", "dev", "SubAccountBatch", "team"]));
    const made = await provider.create!(BATCH, inputs);
    expect(opened(made.outs as Props).secret.sort()).toEqual(["subAccounts", "tokens"]);
    expect(made.id).toMatch(/^sab-/);
  });
});

describe("import", () => {
  test("an ApiKey by env:<VARIABLE>: one get, no write; the program Pulumi writes from its inputs plans no change", async () => {
    const live = emu.state.createKey("imported", { ip: { allow: ["10.0.0.0/8"] } });
    process.env.P56_IMPORTED_KEY = live.key;
    try {
      emu.clearRequests();
      const found = await provider.read!("env:P56_IMPORTED_KEY", KEY, {});
      expect(calls(emu)).toEqual({ "api-key/get": 1 });
      expect(found.id).toBe(fingerprint(live.key));
      expect(opened(found.props as Props).secret.sort()).toEqual(["adoptKey", "key"]);
      expect(JSON.stringify(found.inputs)).not.toContain(live.key.slice(3));
      const news = await checked("ApiKey", "ci", found.inputs as Props, found.inputs as Props);
      startFresh();
      emu.clearRequests();
      expect((await provider.diff!(found.id!, KEY, found.props, news)).changes).toBe(false);
      expect(emu.requests()).toHaveLength(0);
    } finally {
      delete process.env.P56_IMPORTED_KEY;
    }
  });

  test("a key given as the import id is refused without being shown", async () => {
    const live = emu.state.createKey("pasted");
    const message = await provider.read!(live.key, KEY, {}).then(
      () => "",
      (err: Error) => err.message,
    );
    expect(message).toContain("env:<VARIABLE>");
    expect(message).not.toContain(live.key.slice(3));
    expect(emu.requests()).toHaveLength(0);
  });

  test("a SubAccountBatch by the ids of its sub-accounts: one list, no write; its declared inputs plan no change", async () => {
    const made = emu.state.createSubAccounts({
      alias: "imp",
      balance: 40,
      modelPricing: [{ model: "model-a", pricing_factor: 1.2 }],
      count: 2,
    });
    emu.clearRequests();
    const found = await provider.read!(made.map((s) => s.id).join(","), BATCH, {});
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    expect(found.inputs).toEqual({
      alias: "imp",
      balance: 40,
      count: 2,
      modelPricing: [{ model: "model-a", pricingFactor: 1.2 }],
      mark: expect.any(String),
    });
    const news = await checked("SubAccountBatch", "team", {
      alias: "imp",
      balance: 40,
      count: 2,
      modelPricing: [{ model: "model-a", pricingFactor: 1.2 }],
    });
    startFresh();
    emu.clearRequests();
    expect((await provider.diff!(found.id!, BATCH, found.props, news)).changes).toBe(false);
    expect(emu.requests()).toHaveLength(0);
  });
});

describe("functions and configuration", () => {
  test("getSubAccounts answers secret; getBalance plain", async () => {
    emu.state.createSubAccounts({ alias: "fn", balance: 1, modelPricing: [], count: 1 });
    const subs = await provider.invoke!("llm-accounts:index:getSubAccounts", { alias: "fn" });
    expect(opened(subs.outputs as Props).secret).toEqual(["subAccounts"]);
    expect((await provider.invoke!("llm-accounts:index:getBalance", {})).outputs).toEqual({
      balance: expect.any(String),
    });
  });

  test("a Configure request's provider inputs (secrets marked) and variables become the runtime's settings", () => {
    const request = new provproto.ConfigureRequest();
    request.getVariablesMap().set("llm-accounts:config:baseUrl", "http://127.0.0.1:1");
    request.setArgs(
      structproto.Struct.fromJavaScript({
        baseUrl: emu.baseUrl,
        adminKey: secretValue(emu.adminKey),
        version: "0.1.0",
      } as never),
    );
    const settings = settingsOf(request);
    expect(settings).toEqual({ baseUrl: emu.baseUrl, adminKey: emu.adminKey });
    startFresh({ stackConfig: settings });
    expect(stackConfig()).toEqual({ baseUrl: emu.baseUrl, adminKey: emu.adminKey });
  });
});
