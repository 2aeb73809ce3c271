import * as pulumi from "@pulumi/pulumi";
import { redact } from "../api/redact.js";
import { promiseTracesOff } from "./promiseTraces.js";

/** Marks the SDK's debug function once it masks: one wrapper per copy of @pulumi/pulumi, however many resources. */
const MASKED = Symbol.for("pulumi-llm-accounts.maskedDebugLog");

type DebugLog = typeof pulumi.log.debug & { [MASKED]?: true };

/**
 * Masks keys (`sk-...1a2b`) in the debug messages of the program's own Pulumi SDK. The Node.js SDK logs each
 * RegisterResource answer as a debug message, outputs included (`RegisterResource RPC finished: ...; resp:
 * ...`); the engine writes debug messages to its log from `-v=3` and prints them with `--debug`, so every created
 * key, previous key and sub-account token would be there in plain text (docs/credentials.md). Debug messages are
 * only read by people, so each passes through `redact` on its way. The engine's own log of provider calls at
 * `-v=9` is beyond a package's reach.
 */
export function maskSdkDebugLog(): void {
  // `pulumi.log` is the SDK's log module object, which its resource code calls as `log.debug(...)`.
  const log = pulumi.log as unknown as { debug?: DebugLog } | undefined;
  if (typeof log?.debug !== "function" || log.debug[MASKED]) return;
  const original = log.debug;
  const masked: DebugLog = (msg, ...rest) => {
    const restore = promiseTracesOff(); // the SDK sends each debug message with a promise of its own
    try {
      return original(typeof msg === "string" ? redact(msg) : msg, ...rest);
    } finally {
      restore();
    }
  };
  masked[MASKED] = true;
  try {
    log.debug = masked;
  } catch {
    // An SDK whose log module cannot be written to keeps its own function: a program must never fail for this.
  }
}
