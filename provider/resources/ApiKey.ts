import * as pulumi from "@pulumi/pulumi";
import type { ConnectionArgs } from "../client/config.js";
import { DynamicResource, providerText, withSecretOutputs } from "./shim.js";

/** Restrictions of a key; each part optional, an omitted part restricts nothing. */
export interface SecurityConfigArgs {
  ip?: pulumi.Input<{ allow: pulumi.Input<pulumi.Input<string>[]> }>;
  spendLimit?: pulumi.Input<{ monthly: pulumi.Input<number> }>;
  geo?: pulumi.Input<{ countries: pulumi.Input<pulumi.Input<string>[]> }>;
  models?: pulumi.Input<{ mode: pulumi.Input<"model">; items: pulumi.Input<pulumi.Input<string>[]> }>;
}

/** Restrictions as the platform holds them. */
export interface SecurityConfigOutput {
  ip?: { allow: string[] };
  spendLimit?: { monthly: number };
  geo?: { countries: string[] };
  models?: { mode: "model"; items: string[] };
}

export interface ApiKeyArgs {
  /** Readable label of the key. */
  alias: pulumi.Input<string>;
  /** Whether the key is active. Default true. */
  enabled?: pulumi.Input<boolean>;
  securityConfig?: pulumi.Input<SecurityConfigArgs>;
  /**
   * Take over a key made elsewhere (the web console) instead of creating one. Always stored as a secret.
   * Destroying the resource deletes the key: use `retainOnDelete` to keep it.
   */
  adoptKey?: pulumi.Input<string>;
  /** Which account: names of environment variables, never key values. */
  connection?: pulumi.Input<ConnectionArgs>;
}

const provider = providerText("apiKey");

/** An API key of the platform (management group). */
export class ApiKey extends DynamicResource {
  /** The key itself (`sk-...`): secret; the platform shows it only once, at creation. */
  declare readonly key: pulumi.Output<string>;
  /** The key masked (`sk-...1a2b`): safe to show. */
  declare readonly keyHint: pulumi.Output<string>;
  declare readonly alias: pulumi.Output<string>;
  declare readonly enabled: pulumi.Output<boolean>;
  declare readonly securityConfig: pulumi.Output<SecurityConfigOutput>;
  declare readonly createdAt: pulumi.Output<string>;

  constructor(name: string, args: ApiKeyArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      provider,
      name,
      {
        alias: args.alias,
        enabled: args.enabled,
        securityConfig: args.securityConfig,
        adoptKey: args.adoptKey === undefined ? undefined : pulumi.secret(args.adoptKey),
        connection: args.connection,
        key: undefined,
        keyHint: undefined,
        createdAt: undefined,
      },
      withSecretOutputs(opts, ["key", "adoptKey"]),
      "llm-accounts",
      "ApiKey",
    );
  }
}
