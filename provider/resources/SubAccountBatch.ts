import * as pulumi from "@pulumi/pulumi";
import { toWire } from "../api/casing.js";
import type { ConnectionArgs } from "../client/config.js";
import type { z } from "zod";
import {
  pricingRule,
  type ModelPricing,
  type ModelPricingInput,
  type PricingFields,
  type SubAccount,
} from "../api/schemas/subAccounts.js";
import { type SubAccountBatchInputsSchema, identityMark } from "../runtime/subAccountBatch/index.js";
import type { ArgsOf, InputsOf } from "./args.js";
import { camelFieldNames } from "../runtime/engine/index.js";
import { isResourceOf, MODULE, RESOURCE_TYPES } from "./typeTokens.js";
import { claimedTokens, claimHeldTokens, type Owner } from "./ownership.js";
import { DynamicResource, givenInputs, providerText, withSecretOutputs } from "./shim.js";

/**
 * A permitted model and its price multiplier. The deprecated fields are accepted with a warning. The fields of the
 * request's pricing entry (ModelPricingInputSchema), declared again below only to carry their documentation.
 */
export interface ModelPricingArgs extends InputsOf<ModelPricingInput> {
  /** Name of the permitted model (unique within the batch). */
  model: pulumi.Input<string>;
  /** Price multiplier for this model, greater than 0 (1 = the list price). */
  pricingFactor?: pulumi.Input<number>;
  /** @deprecated use pricingFactor; `true` becomes factor 1. */
  autoFollowing?: pulumi.Input<boolean>;
  /** @deprecated not converted by the platform: set pricingFactor. */
  promptPrice?: pulumi.Input<number>;
  /** @deprecated not converted by the platform: set pricingFactor. */
  completionPrice?: pulumi.Input<number>;
}

/**
 * Inputs of a SubAccountBatch: the fields of SubAccountBatchInputsSchema, the schema check validates them by
 * (ArgsOf). Each is declared again below only to carry its documentation; a declaration that no longer fits the
 * schema fails the build.
 */
export interface SubAccountBatchArgs
  // `mark` is the class's own input (its identity, markOf), never a user's.
  extends ArgsOf<
    Omit<z.input<typeof SubAccountBatchInputsSchema>, "mark">,
    { modelPricing?: pulumi.Input<ModelPricingArgs>[]; connection?: ConnectionArgs }
  > {
  /** Alias of every sub-account of the batch. */
  alias: pulumi.Input<string>;
  /** Virtual balance of each sub-account. The API cannot change it later: a change replaces the batch. */
  balance: pulumi.Input<number>;
  /** How many sub-accounts. */
  count: pulumi.Input<number>;
  /** Permitted models; with none, the sub-accounts have no model permission. */
  modelPricing?: pulumi.Input<pulumi.Input<ModelPricingArgs>[]>;
  /**
   * Sub-accounts made elsewhere (their keys) that the batch manages instead of creating them; they count
   * towards `count` and keep their balances. Always stored as a secret. Once adopted they are owned like created
   * ones (one deleted elsewhere is recreated), and removing the list or `[]` changes nothing; a token taken out of
   * a non-empty list is released (it stays on the platform). Destroy deletes them too: use `retainOnDelete`.
   */
  adoptTokens?: pulumi.Input<pulumi.Input<string>[]>;
  /** Which account: names of environment variables, never key values. */
  connection?: pulumi.Input<ConnectionArgs>;
}

/** One sub-account of a batch: fields of the platform's sub-account (SubAccountSchema), typed from it. */
export interface SubAccountOutput {
  /** The platform's numeric id of the sub-account. */
  id: SubAccount["id"];
  /** The sub-account's key: secret. */
  token: SubAccount["token"];
  /** The alias, as the platform holds it. */
  alias: SubAccount["alias"];
  /** Whether the platform has the sub-account enabled (not managed: there is no endpoint to change it). */
  enabled: SubAccount["enabled"];
  /** Permitted models and their factors, as stored. */
  modelPricing: ModelPricing[];
  /** When the sub-account was created (ISO 8601). */
  createdAt: SubAccount["createdAt"];
}

/**
 * The state of a SubAccountBatch as a stack holds it, which `SubAccountBatch.get` registers for the provider's read:
 * the outputs of the resource (another stack's export of it, `pulumi stack export`). The read finds the batch's
 * sub-accounts by `tokens` (one list of the account) and needs `alias`, `balance` and `count` as every state holds
 * them; the rest is taken from the platform or kept as given.
 */
export interface SubAccountBatchState {
  /** The sub-account keys of the batch: secret. */
  tokens: pulumi.Input<pulumi.Input<string>[]>;
  /** Alias of every sub-account of the batch, as the state holds it. */
  alias: pulumi.Input<string>;
  /** Virtual balance each sub-account was created with. */
  balance: pulumi.Input<number>;
  /** How many sub-accounts the batch holds. */
  count: pulumi.Input<number>;
  /** Permitted models with their factors, as the state holds them. */
  modelPricing?: pulumi.Input<pulumi.Input<ModelPricingArgs>[]>;
  /** The sub-accounts as the state holds them (secret). */
  subAccounts?: pulumi.Input<SubAccountOutput[]>;
  /** Which account: names of environment variables, never key values. */
  connection?: pulumi.Input<ConnectionArgs>;
}

const provider = providerText("subAccountBatch");

/** The properties a new batch registers: the inputs given, its mark, and the outputs the provider answers. */
function inputProps(
  name: string,
  args: SubAccountBatchArgs,
  opts: pulumi.CustomResourceOptions | undefined,
  owner: Owner,
): pulumi.Inputs {
  return {
    alias: args.alias,
    balance: args.balance,
    count: args.count,
    modelPricing: args.modelPricing,
    ...givenInputs({
      adoptTokens: args.adoptTokens === undefined ? undefined : claimedTokens(owner, name, args.adoptTokens),
      connection: args.connection,
    }),
    mark: markOf(name, opts),
    subAccounts: undefined,
    tokens: undefined,
  };
}

/**
 * The properties a `get` registers: the state given (no mark: the batch's own, which would find what a killed `up`
 * of it left, is the stack's that manages it) and every output the read answers.
 */
function stateProps(state: SubAccountBatchState): pulumi.Inputs {
  const { tokens, alias, balance, count, modelPricing, subAccounts } = state;
  return { ...givenInputs({ connection: state.connection }), tokens, alias, balance, count, modelPricing, subAccounts };
}

/** Warnings at preview for input the platform accepts but users rarely mean. Never with a key in them. */
function warnAboutPricing(resource: pulumi.Resource, modelPricing: SubAccountBatchArgs["modelPricing"]): void {
  pulumi.output(modelPricing).apply((entries) => {
    const list = (entries ?? []) as ModelPricingArgs[];
    if (list.length === 0) {
      void pulumi.log.warn("modelPricing is empty: the sub-accounts will have no model permission", resource);
    }
    list.forEach((e, i) => {
      const rule = pricingRule(toWire(e) as PricingFields);
      const hint = "refused" in rule ? "set pricingFactor instead" : rule.deprecated;
      if (
        hint === undefined ||
        (e.autoFollowing === undefined && e.promptPrice === undefined && e.completionPrice === undefined)
      )
        return;
      void pulumi.log.warn(
        `modelPricing[${i}] (${String(e.model)}): autoFollowing/promptPrice/completionPrice are deprecated; ${camelFieldNames(hint)}`,
        resource,
      );
    });
  });
}

/**
 * The resource's mark (runtime/subAccountBatch/recovery.ts identityMark): from its project, stack, type and name, and its
 * parent's URN when it has a parent (two resources of one name under parents of other types are two resources).
 * The same at every run, so that the next run finds what a killed `up` created under it.
 */
function markOf(name: string, opts: pulumi.CustomResourceOptions | undefined): pulumi.Input<string> {
  const parts = [pulumi.getProject(), pulumi.getStack(), "SubAccountBatch", name];
  return opts?.parent ? opts.parent.urn.apply((urn) => identityMark([...parts, urn])) : identityMark(parts);
}

/** A batch of sub-accounts sharing alias, balance and model pricing (sub-account group). */
export class SubAccountBatch extends DynamicResource {
  /** The sub-accounts in creation order: secret, since each carries its token. */
  declare readonly subAccounts: pulumi.Output<SubAccountOutput[]>;
  /** The sub-account keys in the same order: secret. */
  declare readonly tokens: pulumi.Output<string[]>;
  /** Alias of every sub-account of the batch. */
  declare readonly alias: pulumi.Output<string>;
  /** Virtual balance each sub-account was created with. */
  declare readonly balance: pulumi.Output<number>;
  /** How many sub-accounts the batch holds now. */
  declare readonly count: pulumi.Output<number>;
  /** Permitted models with their factors, deprecated fields converted. */
  declare readonly modelPricing: pulumi.Output<ModelPricing[]>;

  /**
   * Gets an existing batch's state into the program by the resource's id and its state (`SubAccountBatchState`), as
   * every Pulumi resource's `get` does: the resource is registered with the `id` option, the provider reads the
   * sub-accounts from the platform at each run, and the stack neither updates nor deletes them (no other resource
   * claims them).
   */
  static get(
    name: string,
    id: pulumi.Input<pulumi.ID>,
    state: SubAccountBatchState,
    opts?: pulumi.CustomResourceOptions,
  ): SubAccountBatch {
    return new SubAccountBatch(name, state as unknown as SubAccountBatchArgs, { ...opts, id });
  }

  /** Whether `obj` is a SubAccountBatch, even one made by another copy of this package (by its type token). */
  static isInstance(obj: unknown): obj is SubAccountBatch {
    return isResourceOf(obj, RESOURCE_TYPES.SubAccountBatch);
  }

  constructor(name: string, args: SubAccountBatchArgs, opts?: pulumi.CustomResourceOptions) {
    // `get` (the `id` option): the arguments are the state to read.
    const reading = opts?.id !== undefined;
    const owner: Owner = {};
    super(
      provider,
      name,
      reading ? stateProps(args as unknown as SubAccountBatchState) : inputProps(name, args, opts, owner),
      withSecretOutputs(opts, ["subAccounts", "tokens", "adoptTokens"]),
      MODULE,
      "SubAccountBatch",
    );
    if (reading) return;
    warnAboutPricing(this, args.modelPricing);
    claimHeldTokens(owner, name, args.adoptTokens, this.tokens);
  }
}
