// The provider's configuration. `@pulumi/pulumi/provider`'s server (3.248 to 3.270 at least) answers the engine's
// Configure without handing the provider anything, so the plugin reads the request itself: it wraps the server's
// `configure` as the service is added to gRPC (the `@grpc/grpc-js` the SDK itself loads) and writes what the
// request carries to the runtime's config slot, where the dynamic resources' shim writes the stack config. From
// there every method reads it as it reads a stack's `llm-accounts:` config (client/config.ts), with the same
// fallbacks to the environment.
import { createRequire } from "node:module";
import { setStackConfig } from "../runtime/index.js";
import { reveal } from "./secrets.js";

/** What the plugin reads of a ConfigureRequest (pulumirpc.ConfigureRequest). */
interface ConfigureRequest {
  getArgs(): { toJavaScript(): Record<string, unknown> } | undefined;
  getVariablesMap(): { toObject(): [string, string][] };
}

/** A provider input as a setting's raw text: settings are read from text (client/settings.ts), as config values are. */
const asText = (value: unknown): string | undefined => (value === undefined || value === null ? undefined : typeof value === "string" ? value : JSON.stringify(value));

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

type Handler = (call: { request: ConfigureRequest }, callback: (err: unknown, value?: unknown) => void) => void;

/** Makes the gRPC server of `@pulumi/pulumi/provider` hand each Configure request's settings to the runtime first. */
export function readConfigureRequests(): void {
  const sdk = createRequire(createRequire(import.meta.url).resolve("@pulumi/pulumi/provider"));
  const grpc = sdk("@grpc/grpc-js") as { Server: { prototype: { addService(service: unknown, impl: Record<string, unknown>): void } } };
  const addService = grpc.Server.prototype.addService;
  grpc.Server.prototype.addService = function (this: unknown, service: unknown, impl: Record<string, unknown>) {
    const configure = impl.configure as Handler | undefined;
    if (typeof configure === "function") {
      impl.configure = ((call, callback) => {
        try {
          setStackConfig(settingsOf(call.request));
        } catch (err) {
          callback(err);
          return;
        }
        configure.call(impl, call, callback);
      }) satisfies Handler;
    }
    addService.call(this, service, impl);
  };
}
