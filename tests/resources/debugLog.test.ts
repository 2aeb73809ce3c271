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
  await log.debug(`RegisterResource RPC finished: resource:k[pulumi-nodejs:dynamic/llm-accounts:ApiKey]; err: null, resp: urn,x,${key},sk-admin-${"b".repeat(30)}wxyz,task-runner`);
  await log.debug("Registering resource: t=pulumi:pulumi:Stack");
  expect(received).toEqual([
    "RegisterResource RPC finished: resource:k[pulumi-nodejs:dynamic/llm-accounts:ApiKey]; err: null, resp: urn,x,sk-...Zq9x,sk-admin-...wxyz,task-runner",
    "Registering resource: t=pulumi:pulumi:Stack",
  ]);
});
