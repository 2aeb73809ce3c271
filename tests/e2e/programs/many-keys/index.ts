// Many ApiKey resources, shaped by stack config (all optional):
//   count        number of keys (default 300)
//   aliasPrefix  aliases are `<aliasPrefix>-<i>` (default "key")
//   enabled      whether the keys are enabled (default true)
//   spendLimit   a monthly spend limit on every key (default none)
//   subAccounts  also declare one SubAccountBatch of this many sub-accounts (default 0: none)
//   batches      also declare this many SubAccountBatch resources of 5 sub-accounts, aliases `<aliasPrefix>-team-<i>`
//                (default 0: none)
//   restricted   every key restricted in every way and rotated every 30 days (what the policy pack's rules ask for)
//   trivial      declare the same resources as trivial dynamic resources that call no API (the baseline of
//                the benchmark's preview overhead)
//   footprint    declare the keys as trivial dynamic resources whose state holds what an ApiKey's holds (the
//                same outputs, the key secret) and whose stored provider is a short text like the package's: the
//                baseline of the benchmark's memory and state per key
import * as pulumi from "@pulumi/pulumi";
import type * as Llm from "pulumi-llm-accounts";

const config = new pulumi.Config();
const count = config.getNumber("count") ?? 300;
const aliasPrefix = config.get("aliasPrefix") ?? "key";
const enabled = config.getBoolean("enabled") ?? true;
const spendLimit = config.getNumber("spendLimit");
const subAccounts = config.getNumber("subAccounts") ?? 0;
const batches = config.getNumber("batches") ?? 0;
const footprint = config.getBoolean("footprint") ?? false;
const trivial = (config.getBoolean("trivial") ?? false) || footprint;
const restricted = config.getBoolean("restricted") ?? false;

// Loaded only when used: the trivial variant is the same program without the package at all.
const llm: typeof Llm | undefined = trivial ? undefined : require("pulumi-llm-accounts");

/** A dynamic provider that calls nothing: create echoes the inputs. */
const nothing: pulumi.dynamic.ResourceProvider = {
  async create(inputs) {
    return { id: `trivial-${inputs.alias}`, outs: inputs };
  },
};

class Trivial extends pulumi.dynamic.Resource {
  constructor(name: string, args: Record<string, unknown>) {
    super(nothing, name, args, undefined, "trivial", "Trivial");
  }
}

/**
 * The footprint baseline's provider, stored in the state as text (as the package stores its own, about 300
 * bytes): create answers what an ApiKey's create answers, with a made-up key, and calls nothing.
 */
const FOOTPRINT_PROVIDER =
  'exports.handler=()=>({create:async i=>{const k="sk-"+require("crypto").randomBytes(24).toString("base64url");' +
  'return{id:require("crypto").createHash("sha256").update(k).digest("hex").slice(0,24),' +
  'outs:{...i,securityConfig:i.securityConfig??{},key:k,keyHint:"sk-..."+k.slice(-4),createdAt:new Date().toISOString()}}}});';

class Footprint extends pulumi.CustomResource {
  constructor(name: string, args: Record<string, unknown>) {
    const given = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
    super(
      "pulumi-nodejs:dynamic/trivial:Trivial",
      name,
      { ...given, __provider: FOOTPRINT_PROVIDER },
      { additionalSecretOutputs: ["key"] },
    );
  }
}

const securityConfig = restricted
  ? {
      ip: { allow: ["10.1.2.3"] },
      spendLimit: { monthly: spendLimit ?? 100 },
      geo: { countries: ["SG"] },
      models: { mode: "model" as const, items: ["model-a"] },
    }
  : spendLimit === undefined
    ? undefined
    : { spendLimit: { monthly: spendLimit } };
const rotation = restricted ? { everyDays: 30, overlapHours: 24 } : undefined;
for (let i = 0; i < count; i++) {
  const args = { alias: `${aliasPrefix}-${i}`, enabled, securityConfig, ...(rotation ? { rotation } : {}) };
  if (footprint) new Footprint(`key-${i}`, args);
  else if (trivial) new Trivial(`key-${i}`, args);
  else new llm!.ApiKey(`key-${i}`, args);
}
if (subAccounts > 0 && llm) {
  new llm.SubAccountBatch("team", {
    alias: `${aliasPrefix}-team`,
    balance: 10,
    count: subAccounts,
    modelPricing: [{ model: "model-a", pricingFactor: 1 }],
  });
}

for (let i = 0; i < batches && llm; i++) {
  new llm.SubAccountBatch(`team-${i}`, {
    alias: `${aliasPrefix}-team-${i}`,
    balance: 10,
    count: 5,
    modelPricing: [{ model: "model-a", pricingFactor: 1 }],
  });
}

export const keys = count;
