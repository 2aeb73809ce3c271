import { describe, expect, test } from "@jest/globals";
import { LATE_WRITES, lookWaits } from "../../provider/api/assumptions.js";
import type { Emulator } from "../../provider/emulator/index.js";
import { apiKey, startFresh, subAccountBatch, type Props } from "../../provider/runtime/index.js";
import { checkedInputs } from "../support/check.js";
import { calls, clientOf, useRuntimeEmulator } from "../support/emulator.js";

/**
 * A gone object recognised in every answer the spec allows (issue 43), on a platform that answers an unknown key or
 * token with a 400 (`gone-400`) instead of a 404: a refresh finds it gone, a delete of it is done, a batch delete
 * "rejected as a whole" for one gone key deletes the others; a 400 on a live object stays a failure.
 */
let emu: Emulator;
useRuntimeEmulator((e) => (emu = e), { readings: ["gone-400"] });

const key = async (alias: string) => apiKey.create(await checkedInputs(apiKey, { alias }));
const batch = async (alias: string, count: number) =>
  subAccountBatch.create(
    await checkedInputs(subAccountBatch, {
      alias,
      balance: 5,
      count,
      modelPricing: [{ model: "model-a", pricingFactor: 1 }],
    }),
  );

describe("ApiKey on a platform that answers a gone key with 400 invalid_key", () => {
  test("the platform says 400, not 404", async () => {
    const made = await key("probe");
    emu.state.deleteKeys([made.outs.key]);
    await expect(clientOf(emu, { rateLimits: false }).apiKeys.get(made.outs.key)).rejects.toMatchObject({
      status: 400,
      code: "invalid_key",
    });
  });

  test("read: a key deleted in the console is gone (the gate reports drift, up --refresh recreates), one get", async () => {
    const made = await key("gone-read");
    emu.state.deleteKeys([made.outs.key]);
    startFresh();
    emu.clearRequests();
    expect(await apiKey.read(made.id, made.outs as unknown as Props)).toEqual({ id: "", props: {} });
    // A key made in the last two minutes is looked at again before it is called gone (a platform may show writes late);
    // and a 400 naming a key, with no answer of the admin key's group yet, may be the admin key refused (an IP
    // allow-list): one balance, which names no key, tells.
    expect(calls(emu)).toEqual({ "account/balance": 1, "api-key/get": 1 + lookWaits(LATE_WRITES.boundMs).length });
  });

  test("delete: a batch rejected as a whole for one gone key: one get per key, then the live ones in one call", async () => {
    const [a, b, c] = [await key("a"), await key("b"), await key("c")];
    emu.state.deleteKeys([b.outs.key]);
    startFresh();
    emu.clearRequests();
    await Promise.all([a, b, c].map((k) => apiKey.delete(k.id, k.outs as unknown as Props)));
    expect(emu.state.listKeys().filter((k) => [a, b, c].some((m) => m.outs.key === k.key))).toEqual([]);
    expect(calls(emu)).toEqual({ "api-key/delete": 2, "api-key/get": 3 });
  });

  test("delete: a retried delete whose first answer was lost, answered 400 for the key now gone, is done", async () => {
    const made = await key("lost-answer");
    startFresh();
    emu.setFaults([{ kind: "drop-after", ops: ["api-key/delete"], count: 1 }]);
    await apiKey.delete(made.id, made.outs as unknown as Props);
    expect(emu.state.hasKey(made.outs.key)).toBe(false);
  });

  test("delete: a 400 for a live key (the get answers it) is a refusal: the delete fails, nothing is taken for gone", async () => {
    const made = await key("refused");
    startFresh();
    emu.setFaults([{ kind: "400", ops: ["api-key/delete"] }]);
    await expect(apiKey.delete(made.id, made.outs as unknown as Props)).rejects.toMatchObject({
      status: 400,
      code: "invalid_request",
    });
    expect(emu.state.hasKey(made.outs.key)).toBe(true);
    // The refused batch once, its key looked at once: never sent again.
    expect(calls(emu)).toMatchObject({ "api-key/delete": 1, "api-key/get": 1 });
    emu.setFaults([]);
    await apiKey.delete(made.id, made.outs as unknown as Props);
  });
});

describe("SubAccountBatch on a platform that answers a gone token with 400 invalid_token", () => {
  test("delete: a sub-account deleted in the console: the batch delete (rejected as a whole) is followed by one list and one delete of the rest", async () => {
    const made = await batch("gone-del", 3);
    emu.state.deleteSubAccounts([made.outs.tokens[1]]);
    startFresh();
    emu.clearRequests();
    await subAccountBatch.delete(made.id, made.outs as unknown as Props);
    expect(emu.state.listSubAccounts().filter((s) => made.outs.tokens.includes(s.token))).toEqual([]);
    expect(calls(emu)).toEqual({ "sub-account/delete": 2, "sub-account/list": 1 });
  });

  test("deletes of 3 batches sharing a call, one sub-account of one deleted in the console: the shared call's 400 sends each batch again alone; all done, all deleted", async () => {
    const made = [await batch("shared-0", 2), await batch("shared-1", 2), await batch("shared-2", 2)];
    emu.state.deleteSubAccounts([made[1].outs.tokens[0]]);
    startFresh();
    emu.clearRequests();
    await Promise.all(made.map((b) => subAccountBatch.delete(b.id, b.outs as unknown as Props)));
    const tokens = made.flatMap((b) => b.outs.tokens);
    expect(emu.state.listSubAccounts().filter((s) => tokens.includes(s.token))).toEqual([]);
    // The shared call, one a batch, and the gone one's list and the delete of its remaining sub-account.
    expect(calls(emu)).toEqual({ "sub-account/delete": 1 + 3 + 1, "sub-account/list": 1 });
  });

  test("delete: a 400 while the list shows every sub-account is a refusal: the delete fails, nothing is taken for gone", async () => {
    const made = await batch("refused-del", 2);
    startFresh();
    emu.setFaults([{ kind: "400", ops: ["sub-account/delete"] }]);
    await expect(subAccountBatch.delete(made.id, made.outs as unknown as Props)).rejects.toMatchObject({ status: 400 });
    expect(emu.state.listSubAccounts().filter((s) => made.outs.tokens.includes(s.token))).toHaveLength(2);
    expect(calls(emu)).toMatchObject({ "sub-account/delete": 1 });
    emu.setFaults([]);
    await subAccountBatch.delete(made.id, made.outs as unknown as Props);
  });
});
