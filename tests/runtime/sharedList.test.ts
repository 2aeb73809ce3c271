import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "@jest/globals";
import type { Emulator } from "../../provider/emulator/index.js";
import { getSubAccounts } from "../../provider/resources/dataSources.js";
import { SHARE, SharedSubAccountList } from "../../provider/runtime/sharedList.js";
import { setStackConfig, subAccountBatch, type SubAccountBatchOutputs } from "../../provider/runtime/index.js";
import { calls, clientOf, emulator } from "../support/emulator.js";
import { found } from "../support/readOutcome.js";

let emu: Emulator;
const saved = { ...process.env };
beforeAll(async () => {
  emu = await emulator({ rateLimits: false });
  setStackConfig({ baseUrl: emu.baseUrl, adminKey: emu.adminKey, accountKey: emu.accountKey });
  // The data sources read the same account from the environment, so they get the same client as the runtime.
  Object.assign(process.env, { LLM_ACCOUNTS_BASE_URL: emu.baseUrl, LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey, LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey });
});
afterAll(async () => {
  process.env = saved;
  await emu.close();
});
beforeEach(() => emu.clearRequests());
afterEach(() => emu.setFaults([]));

const pricing = [{ model: "model-a", pricingFactor: 1.2 }];

async function batches(prefix: string, n: number, count = 5): Promise<{ id: string; outs: SubAccountBatchOutputs }[]> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const { inputs } = await subAccountBatch.check({}, { alias: `${prefix}-${i}`, balance: 1, count, modelPricing: pricing });
    out.push(await subAccountBatch.create(inputs));
  }
  emu.clearRequests();
  return out;
}

const readAll = (bs: { id: string; outs: SubAccountBatchOutputs }[]) => Promise.all(bs.map((b) => subAccountBatch.read(b.id, b.outs)));

describe("shared sub-account list", () => {
  test("20 concurrent reads: 1 list call, each batch gets exactly its own sub-accounts", async () => {
    const bs = await batches("sh", 20);
    const reads = await readAll(bs);
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    reads.forEach((r, i) => {
      expect(r.id).toBe(bs[i].id);
      expect(r.props.tokens).toEqual(bs[i].outs.tokens);
      expect(r.props.alias).toBe(`sh-${i}`);
    });
  });

  test("reads arriving a little apart still share; reads after an answer get a fresh list", async () => {
    const bs = await batches("apart", 6, 1);
    const staggered = bs.map((b, i) => new Promise((r) => setTimeout(r, i)).then(() => subAccountBatch.read(b.id, b.outs)));
    await Promise.all(staggered);
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    emu.state.editSubAccounts(bs[0].outs.tokens, "apart-renamed", []);
    const after = await subAccountBatch.read(bs[0].id, bs[0].outs);
    expect(after.props.alias).toBe("apart-renamed");
    expect(calls(emu)).toEqual({ "sub-account/list": 2 });
  });

  test("drift, a batch gone and a batch partly gone: each read sees only its own", async () => {
    const [kept, drifted, gone, partial] = await batches("dr", 4, 2);
    emu.state.editSubAccounts(drifted.outs.tokens, "dr-renamed", [{ model: "model-a", pricing_factor: 9 }]);
    emu.state.deleteSubAccounts(gone.outs.tokens);
    emu.state.deleteSubAccounts([partial.outs.tokens[1]]);
    const [k, d, g, p] = await readAll([kept, drifted, gone, partial]);
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    expect(k.props).toMatchObject({ alias: "dr-0", count: 2, tokens: kept.outs.tokens });
    expect(d.props).toMatchObject({ alias: "dr-renamed", modelPricing: [{ model: "model-a", pricingFactor: 9 }] });
    expect(found(d).inputs).toMatchObject({ alias: "dr-renamed" });
    expect(g).toEqual({ id: "", props: {} });
    expect(p.props).toMatchObject({ count: 1, tokens: [partial.outs.tokens[0]] });
  });

  test("a failed list fails only the reads that waited for it; the next reads succeed", async () => {
    const bs = await batches("fail", 3, 1);
    emu.setFaults([{ kind: "500", ops: ["sub-account/list"], count: 10 }]);
    const failed = await Promise.allSettled(bs.map((b) => subAccountBatch.read(b.id, b.outs)));
    expect(failed.map((f) => f.status)).toEqual(["rejected", "rejected", "rejected"]);
    emu.setFaults([]);
    emu.clearRequests();
    const reads = await readAll(bs);
    expect(reads.map((r) => r.props.tokens)).toEqual(bs.map((b) => b.outs.tokens));
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
  });

  test("reads during a list in flight wait for the next one (never answered from a list sent before them)", async () => {
    const shared = new SharedSubAccountList(clientOf(emu, { rateLimits: false }).subAccounts, { ...SHARE, enabled: true });
    const first = shared.snapshot();
    await new Promise((r) => setTimeout(r, SHARE.minQuietMs + 1)); // the first list is on the wire
    emu.state.createSubAccounts({ alias: "late", balance: 1, modelPricing: [], count: 1 });
    const late = await Promise.all([shared.list({ alias: "late" }), shared.list({ alias: "late" })]);
    await first;
    expect(late.map((l) => l.length)).toEqual([1, 1]);
    expect(calls(emu)).toEqual({ "sub-account/list": 2 });
  });

  test("getSubAccounts calls in the same window share the list with reads; filters apply to it", async () => {
    const [b] = await batches("ds", 1, 3);
    const [read, byAlias, byKey, none] = await Promise.all([
      subAccountBatch.read(b.id, b.outs),
      getSubAccounts({ alias: "ds-0" }),
      getSubAccounts({ sk: b.outs.tokens[1] }),
      getSubAccounts({ alias: "nobody" }),
    ]);
    expect(calls(emu)).toEqual({ "sub-account/list": 1 });
    expect(read.props.tokens).toEqual(b.outs.tokens);
    expect(byAlias.subAccounts.map((s) => s.token).sort()).toEqual([...b.outs.tokens].sort());
    expect(byKey.subAccounts.map((s) => s.token)).toEqual([b.outs.tokens[1]]);
    expect(none.subAccounts).toEqual([]);
  });

  test("sharing off: one list per read (the benchmark's baseline)", async () => {
    const shared = new SharedSubAccountList(clientOf(emu, { rateLimits: false }).subAccounts, { ...SHARE, enabled: false });
    await Promise.all([shared.snapshot(), shared.snapshot(), shared.list({ alias: "x" })]);
    expect(calls(emu)).toEqual({ "sub-account/list": 3 });
  });
});
