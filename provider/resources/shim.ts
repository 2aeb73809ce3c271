import * as pulumi from "@pulumi/pulumi";
import { STACK_CONFIG_SLOT } from "../runtime/engine/index.js";
import { maskSdkDebugLog } from "./debugLog.js";
import { promiseTracesOff } from "./promiseTraces.js";
import { dynamicType } from "./typeTokens.js";

/** The runtime's export names (`pulumi-llm-accounts/runtime`) the stored provider text loads: never renamed. */
export type RuntimeExport = "apiKey" | "subAccountBatch";

/**
 * The provider the engine stores in the state (`__provider`, once among the inputs and once among the
 * outputs of every resource) and runs, possibly from an older state, at refresh and destroy: a CommonJS
 * module whose `handler()` returns the provider, which is what the dynamic provider plugin evaluates
 * (require-from-string). Written out here instead of produced by closure serialization, which wraps each
 * method in about 250 bytes: this text is about 400 bytes where the serialized shim of 0.1.0 was 1.9 KB.
 * Its methods load the implementation by package name when called, so it captures no client, schema or
 * credential; `configure` only keeps the engine's config object, synchronously (the plugin may run a method
 * before an asynchronous `configure` finished), and methods read the stack config from it when they run.
 */
export function providerText(name: RuntimeExport): string {
  return (
    `const m=k=>async(...a)=>(await import("pulumi-llm-accounts/runtime"))[${JSON.stringify(name)}][k](...a);` +
    `exports.handler=()=>({configure:async r=>{globalThis[${JSON.stringify(STACK_CONFIG_SLOT)}]=r.config},` +
    `check:m("check"),diff:m("diff"),create:m("create"),read:m("read"),update:m("update"),delete:m("delete")});`
  );
}

/**
 * What `pulumi.dynamic.Resource` registers (the same type, `pulumi-nodejs:dynamic/<module>:<type>`, served by
 * the same plugin), with `providerText` as the provider instead of a serialized closure. The type never
 * changes: another type would replace every resource of every existing state.
 */
export class DynamicResource extends pulumi.CustomResource {
  constructor(
    provider: string,
    name: string,
    props: pulumi.Inputs,
    opts: pulumi.CustomResourceOptions | undefined,
    module: string,
    type: string,
  ) {
    maskSdkDebugLog(); // before the registration whose answer the SDK logs
    // The SDK makes the registration's promises in its constructor, before its first await.
    const restore = promiseTracesOff();
    try {
      super(dynamicType(module, type), name, { ...props, __provider: provider }, opts);
    } finally {
      restore();
    }
  }
}

/**
 * The inputs the user gave, for registration: an input left out (undefined) is not registered at all. Every
 * registered property costs the SDK four promises, each with a captured stack trace, per resource (about 0.5 ms
 * here), and a missing input and an undefined one reach the provider the same way: absent.
 */
export function givenInputs(inputs: Record<string, unknown>): pulumi.Inputs {
  return Object.fromEntries(Object.entries(inputs).filter(([, v]) => v !== undefined));
}

/** Options with the outputs that must be secret in the state added to the user's own. */
export function withSecretOutputs(
  opts: pulumi.CustomResourceOptions | undefined,
  names: string[],
): pulumi.CustomResourceOptions {
  return { ...opts, additionalSecretOutputs: [...new Set([...(opts?.additionalSecretOutputs ?? []), ...names])] };
}
