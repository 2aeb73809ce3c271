import * as pulumi from "@pulumi/pulumi";
import type { ConnectionArgs } from "../client/config.js";
import type { SecurityConfig } from "../api/schemas/apiKeys.js";
import type { z } from "zod";
import type { ApiKeyInputsSchema, Rotation } from "../runtime/apiKey/index.js";
import type { ArgsOf, InputsOf } from "./args.js";
import { maskKey } from "../api/redact.js";
import { isResourceOf, MODULE, RESOURCE_TYPES } from "./typeTokens.js";
import { claimedKey, claimHeldKey, type Owner } from "./ownership.js";
import { DynamicResource, givenInputs, providerText, withSecretOutputs } from "./shim.js";

/**
 * Restrictions of a key; each part optional, an omitted part restricts nothing: `ip.allow` (IPv4/IPv6 addresses
 * or CIDR ranges), `spendLimit.monthly` (0 or more), `geo.countries` (two-letter upper-case codes), `models`
 * (`mode: "model"`, unique model names). The type of SecurityConfigSchema, the schema check validates it by.
 */
export type SecurityConfigArgs = InputsOf<SecurityConfig>;

/** Restrictions as the platform holds them: the type of SecurityConfigSchema. */
export type SecurityConfigOutput = SecurityConfig;

/**
 * When a key is replaced by a new one: `everyDays` (rotate at the first `pulumi up` once the current key, by the
 * platform's `created_at`, is this many days old; at most 3650), `triggers` (any JSON values: a change from one
 * value to another rotates at the next `pulumi up`, like keepers), `overlapHours` (how long the previous key
 * stays valid; shorter than the period, at most 8760; default 0, deleted at once). The type of RotationSchema.
 */
export type RotationArgs = InputsOf<Rotation>;

/**
 * Inputs of an ApiKey: the fields of ApiKeyInputsSchema, the schema check validates them by (ArgsOf). Each is
 * declared again below only to carry its documentation; a declaration that no longer fits the schema fails the build.
 */
export interface ApiKeyArgs
  extends ArgsOf<
    z.input<typeof ApiKeyInputsSchema>,
    { securityConfig?: SecurityConfigArgs; connection?: ConnectionArgs; rotation?: RotationArgs }
  > {
  /** Readable label of the key. */
  alias: pulumi.Input<string>;
  /** Whether the key is active. Default true. */
  enabled?: pulumi.Input<boolean>;
  /** Restrictions of the key; omitted, `null` and `{}` all mean unrestricted. */
  securityConfig?: pulumi.Input<SecurityConfigArgs>;
  /**
   * Take over a key made elsewhere (the web console) instead of creating one. Always stored as a secret.
   * It matters at creation: removing it later, or keeping it after a rotation deleted that key, changes
   * nothing; another key fails the preview. Destroying the resource deletes the key: use `retainOnDelete`.
   */
  adoptKey?: pulumi.Input<string>;
  /** Which account: names of environment variables, never key values. */
  connection?: pulumi.Input<ConnectionArgs>;
  /** Replace the key without downtime, as an update of this resource (same id, dependents updated). */
  rotation?: pulumi.Input<RotationArgs>;
}

/**
 * The state of an ApiKey as a stack holds it, which `ApiKey.get` registers for the provider's read: the outputs of
 * the resource (another stack's export of it, `pulumi stack export`). The read finds the key on the platform by
 * `key` (the platform looks a key up by the key itself; the id is only its fingerprint) and needs `alias` and
 * `createdAt` as every state holds them; the rest is taken from the platform or kept as given.
 */
export interface ApiKeyState {
  /** The key itself (`sk-...`): secret. */
  key: pulumi.Input<string>;
  /** Readable label of the key, as the state holds it. */
  alias: pulumi.Input<string>;
  /** When the key was created (ISO 8601). */
  createdAt: pulumi.Input<string>;
  /** Whether the key is active. */
  enabled?: pulumi.Input<boolean>;
  /** Restrictions as the state holds them. */
  securityConfig?: pulumi.Input<SecurityConfigArgs>;
  /** Which account: names of environment variables, never key values. */
  connection?: pulumi.Input<ConnectionArgs>;
  /** The rotation settings the state holds. */
  rotation?: pulumi.Input<RotationArgs>;
  /** The key replaced by the last rotation, while it is valid (secret). */
  previousKey?: pulumi.Input<string>;
  /** When the previous key is deleted. */
  previousKeyExpiresAt?: pulumi.Input<string>;
  /** When the current key was issued by a rotation. */
  rotatedAt?: pulumi.Input<string>;
}

const provider = providerText("apiKey");

/** The properties a new key registers: the inputs given, and every output the provider answers. */
function inputProps(name: string, args: ApiKeyArgs, owner: Owner): pulumi.Inputs {
  return {
    ...givenInputs({
      adoptKey: args.adoptKey === undefined ? undefined : claimedKey(owner, name, args.adoptKey),
      connection: args.connection,
      rotation: args.rotation,
    }),
    // Registered outputs, input or not (alias, enabled, securityConfig are both). What the program can
    // derive is not registered (ApiKey's constructor).
    alias: args.alias,
    enabled: args.enabled,
    securityConfig: args.securityConfig,
    key: undefined,
    createdAt: undefined,
    ...(args.rotation !== undefined
      ? { previousKey: undefined, previousKeyExpiresAt: undefined, rotatedAt: undefined, rotationDue: undefined }
      : {}),
  };
}

/** The properties a `get` registers: the state given, and every output the read answers. */
function stateProps(state: ApiKeyState): pulumi.Inputs {
  const { key, alias, createdAt, enabled, securityConfig, previousKey, previousKeyExpiresAt, rotatedAt } = state;
  return {
    ...givenInputs({ connection: state.connection, rotation: state.rotation }),
    ...{
      key,
      alias,
      createdAt,
      enabled,
      securityConfig,
      previousKey,
      previousKeyExpiresAt,
      rotatedAt,
      rotationDue: undefined,
    },
  };
}

/** An API key of the platform (management group). */
export class ApiKey extends DynamicResource {
  /** The key itself (`sk-...`): secret; the platform shows it only once, at creation. */
  declare readonly key: pulumi.Output<string>;
  /** The key masked (`sk-...1a2b`): safe to show. */
  declare readonly keyHint: pulumi.Output<string>;
  /** Readable label of the key, as the platform holds it. */
  declare readonly alias: pulumi.Output<string>;
  /** Whether the key is active. */
  declare readonly enabled: pulumi.Output<boolean>;
  /** Restrictions as the platform holds them. */
  declare readonly securityConfig: pulumi.Output<SecurityConfigOutput>;
  /** When the key was created (ISO 8601). */
  declare readonly createdAt: pulumi.Output<string>;
  /** The key replaced by the last rotation while it is still valid (secret), else undefined; undefined without `rotation`. */
  declare readonly previousKey: pulumi.Output<string | undefined>;
  /** When the previous key is deleted: at the first `pulumi up` from then on. */
  declare readonly previousKeyExpiresAt: pulumi.Output<string | undefined>;
  /** When the current key was issued by a rotation (the platform's `created_at`), else undefined. */
  declare readonly rotatedAt: pulumi.Output<string | undefined>;
  /**
   * Why the next `pulumi up` rotates, deletes the previous key, or issues a key for one deleted elsewhere during
   * the overlap, as the last refresh or preview saw it.
   */
  declare readonly rotationDue: pulumi.Output<string | undefined>;

  /**
   * Gets an existing key's state into the program by the resource's id and its state (`ApiKeyState`), as every
   * Pulumi resource's `get` does: the resource is registered with the `id` option, the provider reads the key
   * from the platform at each run, and the stack neither updates nor deletes it (no other resource claims it).
   */
  static get(
    name: string,
    id: pulumi.Input<pulumi.ID>,
    state: ApiKeyState,
    opts?: pulumi.CustomResourceOptions,
  ): ApiKey {
    return new ApiKey(name, state as unknown as ApiKeyArgs, { ...opts, id });
  }

  /** Whether `obj` is an ApiKey, even one made by another copy of this package (by its type token). */
  static isInstance(obj: unknown): obj is ApiKey {
    return isResourceOf(obj, RESOURCE_TYPES.ApiKey);
  }

  constructor(name: string, args: ApiKeyArgs, opts?: pulumi.CustomResourceOptions) {
    // `get` (the `id` option): the arguments are the state to read.
    const reading = opts?.id !== undefined;
    const rotating = reading || args.rotation !== undefined;
    const owner: Owner = {};
    super(
      provider,
      name,
      reading ? stateProps(args as unknown as ApiKeyState) : inputProps(name, args, owner),
      withSecretOutputs(opts, ["key", "adoptKey", "previousKey"]),
      MODULE,
      "ApiKey",
    );
    // Derived in the program instead of registered (a registered output costs the SDK about 0.5 ms per resource,
    // which is most of what `pulumi preview` of many keys spends beyond trivial resources). The state still
    // holds them, as the provider writes them. keyHint is the provider's own mask of the key.
    this.keyHint = pulumi.unsecret(this.key.apply((key) => (key ? maskKey(key) : key)));
    if (!reading) claimHeldKey(owner, name, this.key);
    if (!rotating) {
      // Without `rotation` there is no previous key to show. (One still in its overlap when `rotation` is
      // removed from the program stays in the state until the first `pulumi up` after it expires deletes it.)
      const none = this.createdAt.apply((): string | undefined => undefined);
      this.previousKey = pulumi.secret(none);
      this.previousKeyExpiresAt = none;
      this.rotatedAt = none;
      this.rotationDue = none;
    }
  }
}
