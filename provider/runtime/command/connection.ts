import { ConnectionSchema, readStackConfig, type ConnectionArgs, type StackConfig } from "../../client/config.js";
import { STACK_CONFIG_SLOT, neverShown, optionalOrNull } from "../engine/index.js";
import { same } from "../../api/canonical.js";
import { keptFormsOf, type KeptForms } from "../../api/keptForms.js";
import { readSetting } from "../../client/settings.js";

export { STACK_CONFIG_SLOT };

interface ConfigSource {
  get(key: string): string | undefined;
}

/** The stack config the engine gave `configure` (empty when there was none, as in direct tests). */
export function stackConfig(): StackConfig {
  const source = (globalThis as Record<string, unknown>)[STACK_CONFIG_SLOT] as ConfigSource | undefined;
  return source ? readStackConfig((key) => source.get(key)) : {};
}

/**
 * The forms the platform profile (`llm-accounts:profile`, from the stack config or the environment, read at call time)
 * measured the platform keeping values in: the only ones a comparison of declared and live values tolerates
 * (api/keptForms.ts). None without a profile.
 */
export function keptForms(): KeptForms {
  return keptFormsOf(readSetting("profile", stackConfig(), process.env));
}

/**
 * Sets the stack config as `configure` would (programs that drive the runtime directly; tests say it with
 * `startFresh({ stackConfig })`). Nothing else changes: clients are resolved from the config at each call.
 */
export function setStackConfig(values: Record<string, string | undefined>): void {
  (globalThis as Record<string, unknown>)[STACK_CONFIG_SLOT] = {
    get: (key: string) => values[key.replace(/^llm-accounts:/, "")],
  };
}

/**
 * How a change of `connection` affects a resource: another base URL is another platform, hence a
 * replacement; other changes (the names of variables) need no API call but are recorded.
 */
export function connectionDiff(
  olds: { connection?: ConnectionArgs },
  news: { connection?: ConnectionArgs },
): { replace: boolean; changed: boolean } {
  const before = olds.connection;
  const after = news.connection;
  return {
    replace: (before?.baseUrl ?? null) !== (after?.baseUrl ?? null),
    changed: !same(before ?? null, after ?? null),
  };
}

/** `connection` among a resource's inputs: null means not given, and its values are never shown in a failure. */
export const ConnectionInputSchema = neverShown(optionalOrNull(ConnectionSchema));
