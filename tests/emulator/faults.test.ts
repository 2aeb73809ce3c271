import { afterEach, describe, expect, it } from "@jest/globals";
import { OPERATIONS } from "../../provider/api/operations.js";
import {
  parseFaultSpec,
  startEmulator,
  type Emulator,
  type EmulatorOptions,
  type FaultSpec,
} from "../../provider/emulator/index.js";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO } from "../support/programDir.js";
import { call, ok } from "../support/emulatorCalls.js";

let emu: Emulator | undefined;

async function start(faults: FaultSpec[], options: EmulatorOptions = {}): Promise<Emulator> {
  emu = await startEmulator({ rateLimits: false, faults, ...options });
  return emu;
}
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

describe("fault kinds", () => {
  it("429 answers rate_limited with Retry-After and Retry-After-Ms, and creates nothing", async () => {
    const e = await start([{ kind: "429", ms: 250 }]);
    const answer = await call(e, "createApiKey", { alias: "x" });
    expect(answer.status).toBe(429);
    expect(answer.json.error.code).toBe("rate_limited");
    expect(answer.headers.get("retry-after")).toBe("1");
    expect(answer.headers.get("retry-after-ms")).toBe("250");
    expect(e.state.listKeys()).toEqual([]);
    expect(e.requests()[0]).toMatchObject({ op: "api-key/create", status: 429, fault: "429" });
  });

  it("429 with retryAfter off sends no retry headers", async () => {
    const e = await start([{ kind: "429", retryAfter: false }]);
    const answer = await call(e, "balance");
    expect(answer.status).toBe(429);
    expect(answer.headers.get("retry-after")).toBeNull();
    expect(answer.headers.get("retry-after-ms")).toBeNull();
  });

  it("429 hints one second scaled by rateWindowMs when no ms is given", async () => {
    const e = await start([{ kind: "429" }], { rateWindowMs: 600 });
    expect((await call(e, "balance")).headers.get("retry-after-ms")).toBe("10");
  });

  it.each(["500", "503"] as const)("%s answers a server error and commits nothing", async (kind) => {
    const e = await start([{ kind }]);
    const answer = await call(e, "createSubAccounts", { alias: "x", balance: 1, count: 2 });
    expect(answer.status).toBe(Number(kind));
    expect(answer.json.error.code).toBe(kind === "500" ? "internal_error" : "service_unavailable");
    expect(e.state.listSubAccounts()).toEqual([]);
  });

  it("latency delays the answer by ms and still processes the request", async () => {
    const e = await start([{ kind: "latency", ms: 300 }]);
    const started = Date.now();
    await ok(e, "createApiKey", { alias: "slow" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(e.state.listKeys()).toHaveLength(1);
    expect(e.requests()[0].fault).toBe("latency");
  });

  it("many requests waiting out latency at once raise no MaxListenersExceededWarning", async () => {
    // Node prints the warning from its own process object, which jest's sandbox does not see: the built
    // emulator runs in a child process, and its stderr is read.
    const script = `
      const { startEmulator } = await import(${JSON.stringify(join(REPO, "dist/provider/emulator/index.js"))});
      const emu = await startEmulator({ rateLimits: false, faults: [{ kind: "latency", ms: 100 }] });
      const request = { method: "POST", headers: { authorization: "Bearer " + emu.adminKey, "content-type": "application/json" }, body: "{}" };
      const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(emu.baseUrl + ${JSON.stringify(OPERATIONS.balance.path)}, request)));
      if (answers.some((a) => a.status !== 200)) throw new Error("not every request was answered 200");
      await emu.close();`;
    const { stderr } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script]);
    expect(stderr).not.toMatch(/MaxListenersExceeded/);
  });

  it("latency combines with another fault", async () => {
    const e = await start([{ kind: "latency", ms: 50 }, { kind: "500" }]);
    expect((await call(e, "balance")).status).toBe(500);
    expect(e.requests()[0].fault).toBe("latency+500");
  });

  it("drop-before closes the connection without an answer and commits nothing", async () => {
    const e = await start([{ kind: "drop-before" }]);
    await expect(call(e, "createApiKey", { alias: "lost" })).rejects.toThrow();
    expect(e.state.listKeys()).toEqual([]);
    expect(e.requests()).toEqual([expect.objectContaining({ op: "api-key/create", status: 0, fault: "drop-before" })]);
  });

  it("drop-after commits the change, then closes the connection without an answer (a lost response)", async () => {
    const e = await start([{ kind: "drop-after" }]);
    await expect(call(e, "createApiKey", { alias: "created-but-lost" })).rejects.toThrow();
    expect(e.state.listKeys().map((k) => k.alias)).toEqual(["created-but-lost"]);
    expect(e.requests()[0]).toMatchObject({ status: 0, fault: "drop-after" });
  });

  it("malformed answers 200 with a body that is not JSON, after committing", async () => {
    const e = await start([{ kind: "malformed" }]);
    const answer = await call(e, "createApiKey", { alias: "garbled" });
    expect(answer.status).toBe(200);
    expect(() => JSON.parse(answer.text)).toThrow();
    expect(e.state.listKeys()).toHaveLength(1);
  });

  it("wrong-type answers 200 with JSON the response schema refuses, after committing", async () => {
    const e = await start([{ kind: "wrong-type" }]);
    const key = e.state.createKey("typed").key;
    const status = await call(e, "setApiKeyStatus", { key, enabled: false });
    expect(status.status).toBe(200);
    expect(status.json).toEqual({ enabled: "no" });
    expect(OPERATIONS.setApiKeyStatus.response.safeParse(status.json).success).toBe(false);
    expect(e.state.getKey(key)!.enabled).toBe(false);
    const list = await call(e, "listSubAccounts");
    expect(list.json.items).toBe("x");
    expect(OPERATIONS.listSubAccounts.response.safeParse(list.json).success).toBe(false);
  });

  it("malformed and wrong-type leave error answers as they are", async () => {
    const e = await start([{ kind: "wrong-type" }]);
    const answer = await call(e, "getApiKey", { key: "sk-doesnotexist" });
    expect(answer.status).toBe(404);
    expect(answer.json.error.code).toBe("key_not_found");
  });
});

describe("fault selection", () => {
  it("applies only to the operations named in ops", async () => {
    const e = await start([{ kind: "500", ops: ["api-key/create"] }]);
    expect((await call(e, "createApiKey", { alias: "x" })).status).toBe(500);
    expect((await call(e, "balance")).status).toBe(200);
  });

  it("stops after count injections", async () => {
    const e = await start([{ kind: "503", count: 2 }]);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await call(e, "balance")).status);
    expect(answers).toEqual([503, 503, 200, 200]);
  });

  it("hits about rate of the requests, the same ones for the same seed", async () => {
    const run = async (seed: number) => {
      const e = await startEmulator({ rateLimits: false, faults: [{ kind: "500", rate: 0.3 }], seed });
      try {
        const out = [];
        for (let i = 0; i < 60; i++) out.push((await call(e, "balance")).status);
        return out;
      } finally {
        await e.close();
      }
    };
    const first = await run(7);
    expect(await run(7)).toEqual(first);
    const hits = first.filter((s) => s === 500).length;
    expect(hits).toBeGreaterThan(5);
    expect(hits).toBeLessThan(35);
  });

  it("applies after auth: a request without valid credentials gets a plain 401", async () => {
    const e = await start([{ kind: "500" }]);
    const answer = await call(e, "balance", {}, { credential: null });
    expect(answer.status).toBe(401);
    expect(e.requests()[0].fault).toBeUndefined();
  });

  it("setFaults replaces the faults and restarts their counts", async () => {
    const e = await start([{ kind: "500" }]);
    expect((await call(e, "balance")).status).toBe(500);
    e.setFaults([]);
    expect((await call(e, "balance")).status).toBe(200);
    e.setFaults([{ kind: "503", count: 1 }]);
    expect((await call(e, "balance")).status).toBe(503);
    expect((await call(e, "balance")).status).toBe(200);
  });

  it("after spares the first matching requests, then applies to each later one (count still bounds it)", async () => {
    const e = await start([{ kind: "500", ops: ["account/balance"], after: 2, count: 2 }]);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(e, "models")).status);
    for (let i = 0; i < 5; i++) statuses.push((await call(e, "balance")).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 500, 500, 200]);
    await expect(startEmulator({ faults: [{ kind: "500", after: -1 }] })).rejects.toThrow(
      /after must be a whole number/,
    );
  });

  it("refuses a fault spec with an unknown operation or a rate above 1", async () => {
    await expect(startEmulator({ faults: [{ kind: "500", ops: ["api-key/nothing"] }] })).rejects.toThrow(
      /unknown operation/,
    );
    await expect(startEmulator({ faults: [{ kind: "500", rate: 2 }] })).rejects.toThrow(/rate/);
  });
});

describe("parseFaultSpec (the --fault form)", () => {
  it("parses kind and options", () => {
    expect(parseFaultSpec("429:rate=0.2,ops=api-key/create")).toEqual({
      kind: "429",
      rate: 0.2,
      ops: ["api-key/create"],
    });
    expect(parseFaultSpec("latency:ms=50")).toEqual({ kind: "latency", ms: 50 });
    expect(parseFaultSpec("drop-after")).toEqual({ kind: "drop-after" });
    expect(parseFaultSpec("429:retryAfter=off,count=3")).toEqual({ kind: "429", retryAfter: false, count: 3 });
    expect(parseFaultSpec("latency:ms=600000,after=500,ops=api-key/get")).toEqual({
      kind: "latency",
      ms: 600000,
      after: 500,
      ops: ["api-key/get"],
    });
  });

  it("takes several operations with + or a repeated ops", () => {
    expect(parseFaultSpec("500:ops=api-key/create+api-key/edit").ops).toEqual(["api-key/create", "api-key/edit"]);
    expect(parseFaultSpec("500:ops=models,ops=account/balance").ops).toEqual(["models", "account/balance"]);
  });

  it("refuses an unknown kind, an unknown option or a bad number", () => {
    expect(() => parseFaultSpec("teapot")).toThrow(/kind/);
    expect(() => parseFaultSpec("500:colour=red")).toThrow(/unknown fault option/);
    expect(() => parseFaultSpec("latency:ms=soon")).toThrow(/not a number/);
  });
});
