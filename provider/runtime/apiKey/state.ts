// What an ApiKey takes (its input schema), what its state holds in each version it was written in (one schema
// each, parsed once where the engine hands a state over: runtime/index.ts), and the functions that build its outputs.
import { z } from "zod";
import { fromWire, toWire } from "../../api/casing.js";
import { maskKey } from "../../api/redact.js";
import { AliasStringSchema, KeySchema, SecurityConfigSchema, type SecurityConfig } from "../../api/schemas/index.js";
import { AdoptKeySchema, ConnectionInputSchema } from "../command/index.js";
import { type Props, StateVersions, noKeysIn, optionalOrNull } from "../engine/index.js";
import { KEY_DELETED, RotationSchema, RotationStateSchema, type RotationState } from "./rotation.js";

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

/**
 * A security config as a state keeps it (camelCase), checked by the wire schema the platform's answers are parsed
 * with: what a state holds came from check or from the platform.
 */
const StoredSecurityConfigSchema = z
  .preprocess((value) => toWire(value), SecurityConfigSchema)
  .transform((wire) => fromWire(wire));

/**
 * Version 1 of an ApiKey's state (written since 2026-11-25): every input echoed (so diff compares like with like),
 * the key and what the platform adds. Fields a refresh takes from the platform (alias) are not held to the rules
 * of a declared input.
 */
const ApiKeyStateV1Schema = z.object({
  ...ApiKeyInputsSchema.shape,
  alias: z.string(),
  enabled: z.boolean(),
  securityConfig: StoredSecurityConfigSchema,
  /** Set by check (a changed trigger) and read (due by age, previous key expired, key deleted elsewhere). */
  rotationDue: z.string().optional(),
  /** The key itself: a secret output, carried forward because the platform never returns it again. */
  key: KeySchema,
  /** The key masked; derived from `key` by every write. */
  keyHint: z.string().optional(),
  createdAt: z.string(),
  /**
   * What of the key's `security_config` the package does not know (parts, and fields inside a known part), as the
   * platform last showed it (JSON text, api/schemas platformOwnedOf): sent back with every edit, which replaces the
   * whole config, and with the create of a rotated successor. Absent in states written before 2026-11-26 and for
   * keys without any.
   */
  platformParts: z.string().optional(),
  ...RotationStateSchema.shape,
  /** The shape version of this state. */
  stateVersion: z.number().optional(),
});

/**
 * Version 0: states written before versions were recorded (0.1.0 up to 2026-11-25), the fixtures of
 * tests/e2e/fixtures/upgrade. They may lack `enabled`, and hold their security config absent, null or in the
 * wire's snake_case spelling.
 */
const ApiKeyStateV0Schema = ApiKeyStateV1Schema.omit({ stateVersion: true }).extend({
  enabled: z.boolean().optional(),
  securityConfig: z.preprocess((value) => value ?? {}, StoredSecurityConfigSchema),
});

/** Every version of an ApiKey's state, and the steps between them (engine/stateVersions.ts). */
export const API_KEY_STATE = StateVersions.first("ApiKey", ApiKeyStateV0Schema).then(ApiKeyStateV1Schema, (v0) => ({
  ...v0,
  enabled: v0.enabled ?? true,
}));

/** The version of the state this package writes. */
export const API_KEY_STATE_VERSION = API_KEY_STATE.current;

/** What the state holds, in today's shape. */
export type ApiKeyOutputs = z.output<typeof ApiKeyStateV1Schema>;

/** A key's configuration as the platform holds it (`platformParts`: the parts of its security config the package does not know). */
export type LiveView = { alias: string; enabled: boolean; securityConfig: SecurityConfig; platformParts?: string };

/** A security config as any version of the state held it (absent, null, wire or camelCase), in today's form. */
export function normalizeSecurityConfig(value: unknown): SecurityConfig {
  return StoredSecurityConfigSchema.parse(value ?? {});
}

/** A key's configuration as the platform answered it (a key without restrictions may answer null). */
export function viewOf(answer: {
  alias: string;
  enabled: boolean;
  securityConfig?: SecurityConfig | null;
  platformParts?: string;
}): LiveView {
  const view: LiveView = { alias: answer.alias, enabled: answer.enabled, securityConfig: answer.securityConfig ?? {} };
  if (answer.platformParts !== undefined) view.platformParts = answer.platformParts;
  return view;
}

/**
 * The outputs of a key. `adoptKey` is the key the resource adopted at its creation, kept from then on whatever the
 * input says (the program may drop it, or still hold it after a rotation deleted that key).
 */
export function outputsOf(
  inputs: ApiKeyInputs,
  key: string,
  createdAt: string,
  live: LiveView | undefined,
  adoptKey: string | undefined,
): ApiKeyOutputs {
  const out: ApiKeyOutputs = {
    alias: live?.alias ?? inputs.alias,
    enabled: live?.enabled ?? inputs.enabled,
    securityConfig: live ? live.securityConfig : inputs.securityConfig,
    key,
    keyHint: maskKey(key),
    createdAt,
    stateVersion: API_KEY_STATE_VERSION,
  };
  if (live?.platformParts !== undefined) out.platformParts = live.platformParts;
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

/**
 * What a delete can identify in a key's state that does not parse: its key (unless a refresh found it deleted) and
 * previous key when they read as keys, whether the key itself could not be read, and its connection.
 */
export function deletableOf(state: Props): {
  keys: string[];
  unidentified: boolean;
  connection: ReturnType<typeof ConnectionInputSchema.safeParse>;
} {
  const key = KeySchema.safeParse(state.key);
  const previous = KeySchema.safeParse(state.previousKey);
  const current = state.rotationDue === KEY_DELETED ? [] : key.success ? [key.data] : [];
  return {
    keys: [...current, ...(previous.success ? [previous.data] : [])],
    unidentified: state.rotationDue !== KEY_DELETED && !key.success,
    connection: ConnectionInputSchema.safeParse(state.connection),
  };
}
