/**
 * The choices this package makes where the platform's documentation is silent live in the protocol layer,
 * `provider/api/assumptions.ts`, which the client and the emulator both read; this path re-exports them.
 */
export * from "../api/assumptions.js";
