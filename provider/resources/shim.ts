import type * as pulumi from "@pulumi/pulumi";
import { STACK_CONFIG_SLOT } from "../runtime/slot.js";

/**
 * A provider made of thin methods that load the implementation by package name when they are called.
 *
 * The engine serializes this object into the state (`__provider`) and runs it, possibly from an older
 * state, at refresh and destroy. It therefore captures nothing but the export's name: no client, schema or
 * credential. `configure` only keeps the engine's config object, synchronously (the plugin may run a method
 * before an asynchronous `configure` finished); methods read the stack config from it when they run.
 *
 * Each serialized function costs about 250 bytes of wrapper, so `configure`, `create` and `check` share one
 * function: their arguments tell them apart without doubt (a request with `config.get`; one inputs object;
 * olds and news). The methods whose first argument is the id keep a function each. This keeps the provider
 * under 2 KB in the state of every resource. Names are short for the same reason.
 */
export function thinProvider(name: string): pulumi.dynamic.ResourceProvider {
  const run = async (m: string, a: unknown[]) => (await import("pulumi-llm-accounts/runtime" as string))[name][m](...a);
  const first = async (...a: any[]) => {
    if (a.length > 1) return run("check", a);
    if (typeof a[0]?.config?.get !== "function") return run("create", a);
    (globalThis as Record<string, unknown>)[STACK_CONFIG_SLOT] = a[0].config;
  };
  return {
    configure: first,
    create: first,
    check: first,
    diff: (...a) => run("diff", a),
    update: (...a) => run("update", a),
    read: (...a) => run("read", a),
    delete: (...a) => run("delete", a),
  };
}

/** Options with the outputs that must be secret in the state added to the user's own. */
export function withSecretOutputs(opts: pulumi.CustomResourceOptions | undefined, names: string[]): pulumi.CustomResourceOptions {
  return { ...opts, additionalSecretOutputs: [...new Set([...(opts?.additionalSecretOutputs ?? []), ...names])] };
}
