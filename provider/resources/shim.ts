import type * as pulumi from "@pulumi/pulumi";

/**
 * A provider made of thin methods that load the implementation by package name when they are called.
 *
 * The engine serializes this object into the state (`__provider`) and runs it, possibly from an older
 * state, at refresh and destroy. It therefore captures nothing but the export's name: no client, schema or
 * credential. `configure` stores the stack config synchronously, before any method can run.
 */
export function thinProvider(exportName: string): pulumi.dynamic.ResourceProvider {
  const load = async () => (await import("pulumi-llm-accounts/runtime" as string))[exportName];
  return {
    async configure(req) {
      const get = (k: string) => req.config.get(`llm-accounts:${k}`);
      (globalThis as Record<string, unknown>).__pulumiLlmAccountsStackConfig = {
        baseUrl: get("baseUrl"),
        adminKey: get("adminKey"),
        accountKey: get("accountKey"),
        rateWindowMs: get("rateWindowMs"),
        rateLimits: get("rateLimits"),
      };
    },
    async check(olds, news) {
      return (await load()).check(olds, news);
    },
    async diff(id, olds, news) {
      return (await load()).diff(id, olds, news);
    },
    async create(inputs) {
      return (await load()).create(inputs);
    },
    async read(id, props) {
      return (await load()).read(id, props);
    },
    async update(id, olds, news) {
      return (await load()).update(id, olds, news);
    },
    async delete(id, props) {
      return (await load()).delete(id, props);
    },
  };
}

/** Options with the outputs that must be secret in the state added to the user's own. */
export function withSecretOutputs(opts: pulumi.CustomResourceOptions | undefined, names: string[]): pulumi.CustomResourceOptions {
  return { ...opts, additionalSecretOutputs: [...new Set([...(opts?.additionalSecretOutputs ?? []), ...names])] };
}
