import * as pulumi from "@pulumi/pulumi";
import type { ConnectionArgs } from "../client/config.js";
import { DynamicResource, providerText, withSecretOutputs } from "./shim.js";

/** A permitted model and its price multiplier. The deprecated fields are accepted with a warning. */
export interface ModelPricingArgs {
  model: pulumi.Input<string>;
  pricingFactor?: pulumi.Input<number>;
  /** @deprecated use pricingFactor; `true` becomes factor 1. */
  autoFollowing?: pulumi.Input<boolean>;
  /** @deprecated not converted by the platform: set pricingFactor. */
  promptPrice?: pulumi.Input<number>;
  /** @deprecated not converted by the platform: set pricingFactor. */
  completionPrice?: pulumi.Input<number>;
}

export interface SubAccountBatchArgs {
  /** Alias of every sub-account of the batch. */
  alias: pulumi.Input<string>;
  /** Virtual balance of each sub-account. The API cannot change it later: a change replaces the batch. */
  balance: pulumi.Input<number>;
  /** How many sub-accounts. */
  count: pulumi.Input<number>;
  /** Permitted models; with none, the sub-accounts have no model permission. */
  modelPricing?: pulumi.Input<pulumi.Input<ModelPricingArgs>[]>;
  connection?: pulumi.Input<ConnectionArgs>;
}

/** One sub-account of a batch. */
export interface SubAccountOutput {
  id: number;
  /** The sub-account's key: secret. */
  token: string;
  alias: string;
  enabled: boolean;
  modelPricing: { model: string; pricingFactor: number }[];
  createdAt: string;
}

const provider = providerText("subAccountBatch");

/** Warnings at preview for input the platform accepts but users rarely mean. Never with a key in them. */
function warnAboutPricing(resource: pulumi.Resource, modelPricing: SubAccountBatchArgs["modelPricing"]): void {
  pulumi.output(modelPricing).apply((entries) => {
    const list = (entries ?? []) as ModelPricingArgs[];
    if (list.length === 0) {
      void pulumi.log.warn("modelPricing is empty: the sub-accounts will have no model permission", resource);
    }
    list.forEach((e, i) => {
      if (e.autoFollowing !== undefined || e.promptPrice !== undefined || e.completionPrice !== undefined) {
        const hint =
          e.pricingFactor !== undefined
            ? "they are ignored because pricingFactor is set"
            : e.autoFollowing === true
              ? "autoFollowing: true is converted to pricingFactor 1"
              : "set pricingFactor instead";
        void pulumi.log.warn(
          `modelPricing[${i}] (${String(e.model)}): autoFollowing/promptPrice/completionPrice are deprecated; ${hint}`,
          resource,
        );
      }
    });
  });
}

/** A batch of sub-accounts sharing alias, balance and model pricing (sub-account group). */
export class SubAccountBatch extends DynamicResource {
  /** The sub-accounts in creation order: secret, since each carries its token. */
  declare readonly subAccounts: pulumi.Output<SubAccountOutput[]>;
  /** The sub-account keys in the same order: secret. */
  declare readonly tokens: pulumi.Output<string[]>;
  declare readonly alias: pulumi.Output<string>;
  declare readonly balance: pulumi.Output<number>;
  declare readonly count: pulumi.Output<number>;
  declare readonly modelPricing: pulumi.Output<{ model: string; pricingFactor: number }[]>;

  constructor(name: string, args: SubAccountBatchArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      provider,
      name,
      {
        alias: args.alias,
        balance: args.balance,
        count: args.count,
        modelPricing: args.modelPricing,
        connection: args.connection,
        subAccounts: undefined,
        tokens: undefined,
      },
      withSecretOutputs(opts, ["subAccounts", "tokens"]),
      "llm-accounts",
      "SubAccountBatch",
    );
    warnAboutPricing(this, args.modelPricing);
  }
}
