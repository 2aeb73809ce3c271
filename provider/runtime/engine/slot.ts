/**
 * Where the provider shim's `configure` leaves the engine's config object (synchronously, before any method
 * can run); methods read the stack config from it when they are called. The shim serialized into every state
 * ever written sets this name: it can never change.
 */
export const STACK_CONFIG_SLOT = "__llmAccountsConfig";
