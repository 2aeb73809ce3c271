import { expect, test } from "@jest/globals";
import * as pulumi from "@pulumi/pulumi";
import { maskSdkDebugLog } from "../../provider/resources/debugLog.js";

// The program's SDK logs each RegisterResource answer, outputs included, as a debug message (written to the
// engine's log from -v=3, printed with --debug): the package masks keys in those messages. The real CLI's log is
// checked in tests/e2e/debugLog.test.ts; here, what the wrapper passes on.
test("the SDK's debug messages reach the engine with every key masked, once wrapped however many resources wrap it", async () => {
  const log = pulumi.log as unknown as { debug: (msg: string, ...rest: unknown[]) => Promise<void> };
  const received: string[] = [];
  log.debug = async (msg: string) => void received.push(msg);
  maskSdkDebugLog();
  maskSdkDebugLog();
  const key = `sk-${"a1".repeat(20)}Zq9x`;
  await log.debug(
    `RegisterResource RPC finished: resource:k[pulumi-nodejs:dynamic/llm-accounts:ApiKey]; err: null, resp: urn,x,${key},sk-admin-${"b".repeat(30)}wxyz,task-runner`,
  );
  await log.debug("Registering resource: t=pulumi:pulumi:Stack");
  expect(received).toEqual([
    "RegisterResource RPC finished: resource:k[pulumi-nodejs:dynamic/llm-accounts:ApiKey]; err: null, resp: urn,x,sk-...Zq9x,sk-admin-...wxyz,task-runner",
    "Registering resource: t=pulumi:pulumi:Stack",
  ]);
});

// The SDK sends each debug message to the engine with a promise whose stack trace it formats (source-mapped) and
// keeps while pending; three messages per resource: the wrapper passes them on with traces of no frame, unless
// PULUMI_DEBUG_PROMISE_LEAKS asks for the traces.
test("the SDK's debug messages are sent with stack traces of no frame, unless PULUMI_DEBUG_PROMISE_LEAKS is set", async () => {
  const log = pulumi.log as unknown as { debug: (msg: string) => Promise<void> };
  const limits: number[] = [];
  log.debug = async () => void limits.push(Error.stackTraceLimit);
  maskSdkDebugLog();
  const limit = Error.stackTraceLimit;
  await log.debug("Registering resource: t=pulumi:pulumi:Stack");
  process.env.PULUMI_DEBUG_PROMISE_LEAKS = "true";
  try {
    await log.debug("Registering resource: t=pulumi:pulumi:Stack");
  } finally {
    delete process.env.PULUMI_DEBUG_PROMISE_LEAKS;
  }
  expect(limits).toEqual([0, limit]);
  expect(Error.stackTraceLimit).toBe(limit);
});
