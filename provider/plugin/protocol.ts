// Two gaps of `@pulumi/pulumi/provider`'s server (3.248 to 3.270 at least), filled where the service is added to gRPC
// (the `@grpc/grpc-js` the SDK itself loads), around the server's own handlers:
// - Configure: the server answers it without handing the provider anything. The plugin writes what the request
//   carries to the runtime's config slot, where the dynamic resources' shim writes the stack config; from there
//   every method reads it as it reads a stack's `llm-accounts:` config (client/config.ts), with the same fallbacks
//   to the environment.
// - Read of an import: the engine sends no properties, and the server reads them unchecked ("Cannot read
//   properties of undefined (reading 'toJavaScript')"). The plugin gives such a request empty properties, which
//   the provider's read takes for an import (provider.ts).
import { createRequire } from "node:module";
import { setStackConfig } from "../runtime/index.js";
import { reveal } from "./secrets.js";

/** What the plugin reads of a ReadRequest (pulumirpc.ReadRequest). */
interface ReadRequest {
  getProperties(): unknown;
  setProperties(value: unknown): void;
}

/** What the plugin reads of a ConfigureRequest (pulumirpc.ConfigureRequest). */
interface ConfigureRequest {
  getArgs(): { toJavaScript(): Record<string, unknown> } | undefined;
  getVariablesMap(): { toObject(): [string, string][] };
}

/** A provider input as a setting's raw text: settings are read from text (client/settings.ts), as config values are. */
const asText = (value: unknown): string | undefined =>
  value === undefined || value === null ? undefined : typeof value === "string" ? value : JSON.stringify(value);

/** The settings a Configure request carries, by short name: the provider's inputs, over the deprecated variables. */
export function settingsOf(request: ConfigureRequest): Record<string, string | undefined> {
  const values: Record<string, string | undefined> = {};
  // `<pkg>:config:<name>` (or `<pkg>:<name>`): the short name is the last part.
  for (const [key, value] of request.getVariablesMap().toObject()) values[key.split(":").pop()!] = value;
  for (const [name, value] of Object.entries(reveal(request.getArgs()?.toJavaScript()).plain)) {
    if (name !== "version") values[name] = asText(value);
  }
  return values;
}

type Handler<R> = (call: { request: R }, callback: (err: unknown, value?: unknown) => void) => void;

/** A handler of the server that runs `before` on the request first; an error of `before` is the call's answer. */
function first<R>(impl: Record<string, unknown>, name: string, before: (request: R) => void): void {
  const handler = impl[name] as Handler<R> | undefined;
  if (typeof handler !== "function") return;
  impl[name] = ((call, callback) => {
    try {
      before(call.request);
    } catch (err) {
      callback(err);
      return;
    }
    handler.call(impl, call, callback);
  }) satisfies Handler<R>;
}

/** Makes the gRPC server of `@pulumi/pulumi/provider` fill the two gaps above. Called once, before `main`. */
export function adjustServer(): void {
  const sdk = createRequire(createRequire(import.meta.url).resolve("@pulumi/pulumi/provider"));
  const grpc = sdk("@grpc/grpc-js") as {
    Server: { prototype: { addService(service: unknown, impl: Record<string, unknown>): void } };
  };
  const { Struct } = sdk("google-protobuf/google/protobuf/struct_pb") as { Struct: new () => unknown };
  const addService = grpc.Server.prototype.addService;
  grpc.Server.prototype.addService = function (this: unknown, service: unknown, impl: Record<string, unknown>) {
    first<ConfigureRequest>(impl, "configure", (request) => setStackConfig(settingsOf(request)));
    first<ReadRequest>(impl, "read", (request) => {
      if (request.getProperties() === undefined) request.setProperties(new Struct());
    });
    addService.call(this, service, impl);
  };
}
