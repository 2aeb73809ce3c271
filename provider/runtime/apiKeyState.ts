// What an ApiKey takes (its input schema) and what its state holds, and the functions that build its outputs.
import { z } from "zod";
import { fromWire, toWire } from "../api/casing.js";
import { maskKey } from "../api/redact.js";
import { AliasStringSchema, SecurityConfigSchema, type SecurityConfig } from "../api/schemas/index.js";
import { AdoptKeySchema } from "./adoption.js";
import { ConnectionInputSchema } from "./connection.js";
import { RotationSchema, type RotationState } from "./rotation.js";
import { upgradeState, type StoredState, type UpgradeStep } from "./stateVersions.js";
import { noKeysIn, optionalOrNull } from "./check.js";

/** A security config as users write it (camelCase), validated by the wire schema and kept in canonical form. */
const SecurityConfigInputSchema = z
  // Omitted, null and `{}` all mean "unrestricted": one form, so a program that did not change shows no diff.
  .preprocess(
    (value) => value ?? {},
    z.custom<object>((value) => value !== null && typeof value === "object" && !Array.isArray(value), {
      error: "must be an object { ip?, spendLimit?, geo?, models? }",
    }),
  )
  .transform((value) => toWire(value))
  .pipe(SecurityConfigSchema)
  .transform((wire) => fromWire(wire) as SecurityConfig);

/** What an ApiKey takes, as check validates it: one schema, defaults filled, security config in canonical form. */
export const ApiKeyInputsSchema = z
  .object({
    alias: AliasStringSchema,
    enabled: optionalOrNull(z.boolean({ error: "must be true or false" })).transform((enabled) => enabled ?? true),
    securityConfig: SecurityConfigInputSchema,
    adoptKey: AdoptKeySchema,
    connection: ConnectionInputSchema,
    rotation: optionalOrNull(RotationSchema),
  })
  .superRefine(noKeysIn(["alias", "securityConfig"]), { when: () => true });

/** Inputs of an ApiKey after check. */
export type ApiKeyInputs = z.output<typeof ApiKeyInputsSchema> & {
  /** Not declared by users: set by check (a changed trigger) and read (due by age, previous key expired). */
  rotationDue?: string;
};

/** What the state holds: every input echoed (so diff compares like with like) and what the platform adds. */
export type ApiKeyOutputs = ApiKeyInputs &
  RotationState & {
    /** The key itself: a secret output, carried forward because the platform never returns it again. */
    key: string;
    keyHint: string;
    createdAt: string;
    /** The shape version of this state (stateVersions.ts); absent in states written before versions were recorded. */
    stateVersion?: number;
  };

/** A key's configuration as the platform holds it. */
export type LiveView = { alias: string; enabled: boolean; securityConfig: SecurityConfig };

/** Omitted, null and `{}` all mean "unrestricted": one form, so a program that did not change shows no diff. */
export function normalizeSecurityConfig(value: unknown): SecurityConfig {
  if (value === undefined || value === null) return {};
  return fromWire(toWire(value as SecurityConfig)) as SecurityConfig;
}

/**
 * The upgrade steps of an ApiKey's state (stateVersions.ts): API_KEY_UPGRADES[n] reads a state of version n.
 * 0 -> 1: a state written before versions were recorded may lack `enabled` (true) and hold its security config
 * absent, null or in the wire's snake_case spelling.
 */
export const API_KEY_UPGRADES: readonly UpgradeStep[] = [
  (state) => ({ ...state, enabled: state.enabled ?? true, securityConfig: normalizeSecurityConfig(state.securityConfig) }),
];

/** The version of the state this package writes. */
export const API_KEY_STATE_VERSION = API_KEY_UPGRADES.length;

/** Outputs as any version wrote them, in today's shape: read once, where old state comes in (diff, update, read). */
export function fromState(old: ApiKeyOutputs | StoredState): ApiKeyOutputs {
  return upgradeState(old as StoredState, API_KEY_UPGRADES) as ApiKeyOutputs;
}

/** A key's configuration as the platform answered it (a key without restrictions may answer null). */
export function viewOf(answer: { alias: string; enabled: boolean; securityConfig?: SecurityConfig | null }): LiveView {
  return { alias: answer.alias, enabled: answer.enabled, securityConfig: answer.securityConfig ?? {} };
}

/**
 * The outputs of a key. `adoptKey` is the key the resource adopted at its creation, kept from then on whatever the
 * input says (the program may drop it, or still hold it after a rotation deleted that key).
 */
export function outputsOf(inputs: ApiKeyInputs, key: string, createdAt: string, live: LiveView | undefined, adoptKey: string | undefined): ApiKeyOutputs {
  const out: ApiKeyOutputs = {
    alias: live?.alias ?? inputs.alias,
    enabled: live?.enabled ?? inputs.enabled,
    securityConfig: live ? live.securityConfig : inputs.securityConfig,
    key,
    keyHint: maskKey(key),
    createdAt,
    stateVersion: API_KEY_STATE_VERSION,
  };
  if (adoptKey !== undefined) out.adoptKey = adoptKey;
  if (inputs.connection !== undefined) out.connection = inputs.connection;
  if (inputs.rotation !== undefined) out.rotation = inputs.rotation;
  return out;
}

/** The rotation state carried from one set of outputs to the next (a key not rotated yet has none). */
export function rotationStateOf(old: RotationState): RotationState {
  const out: RotationState = {};
  if (old.rotatedAt !== undefined) out.rotatedAt = old.rotatedAt;
  if (old.previousKey !== undefined) {
    out.previousKey = old.previousKey;
    if (old.previousKeyExpiresAt !== undefined) out.previousKeyExpiresAt = old.previousKeyExpiresAt;
  }
  return out;
}
