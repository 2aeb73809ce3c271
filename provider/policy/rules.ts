import { z } from "zod";
import { showMicros, toMicros } from "../api/money.js";
import { redact } from "../api/redact.js";
import { insideRange, parseRange } from "./cidr.js";
import { known, type BatchSubject, type KeySubject, type May } from "./subjects.js";

/**
 * The package's policy rules, once: pure functions over subjects (subjects.ts), which the CrossGuard pack
 * (pack.ts) builds from a program's resources and the live audit (audit.ts) from the platform's objects. A value
 * not known yet (preview) is never a violation; a message names the object, the property path and the rule, and
 * never a key or token (objects are named by resource name, or masked).
 */

/** Enforcement levels a pack config may give a rule (CrossGuard's, without "remediate": no rule here remediates). */
export const LEVELS = ["advisory", "mandatory", "disabled"] as const;
export type Level = (typeof LEVELS)[number];

/** One violation: the object (resource or live object, masked), the property path and what is wrong. */
export interface Finding {
  object: string;
  /** The resource's URN, when a stack rule reports a resource of a program. */
  urn?: string;
  path: string;
  message: string;
}

/** The objects a stack rule sees: every key and batch of the stack, or of the account. */
export interface Scope {
  /** How a finding about the whole scope names it: `the stack` or `the account`. */
  label: string;
  keys: KeySubject[];
  batches: BatchSubject[];
}

/** CrossGuard's severities: how bad a violation is, whatever its enforcement level. */
export type Severity = "low" | "medium" | "high" | "critical";

/**
 * The page that documents every rule: each rule has a heading of its own name there, so `${POLICY_DOCS_URL}#<rule>`
 * is a stable anchor (GitHub's anchor of a heading `api-key-spend-limit` is `#api-key-spend-limit`).
 */
export const POLICY_DOCS_URL =
  "https://github.com/pulumi-llm-accounts/pulumi-llm-accounts/blob/main/docs/guides/policy.md";

/** Where a rule is documented: the pack's `url` and each audit finding's. */
export function ruleUrl(rule: { name: string }): string {
  return `${POLICY_DOCS_URL}#${rule.name}`;
}

type Options = z.ZodObject;
interface Base<O extends Options> {
  name: string;
  description: string;
  /** How bad a violation is (CrossGuard's `severity`). */
  severity: Severity;
  /** What to change to comply (CrossGuard's `remediationSteps`), as a program's author reads it. */
  remediation: string;
  /** Short topics (CrossGuard's `tags`): what the rule protects. */
  tags: readonly string[];
  /** The rule's options: a strict zod object, from which the pack's configSchema is generated. */
  options: O;
}
/** A rule over one API key. */
export interface KeyRule<O extends Options = Options> extends Base<O> {
  scope: "ApiKey";
  check(key: KeySubject, options: z.output<O>): Finding[];
}
/** A rule over one batch of sub-accounts. */
export interface BatchRule<O extends Options = Options> extends Base<O> {
  scope: "SubAccountBatch";
  check(batch: BatchSubject, options: z.output<O>): Finding[];
}
/** A rule over every key and batch together. */
export interface StackRule<O extends Options = Options> extends Base<O> {
  scope: "stack";
  check(scope: Scope, options: z.output<O>): Finding[];
}
export type Rule = KeyRule | BatchRule | StackRule;

// Rules are declared through these so that each `check` is typed by its own options schema.
const keyRule = <O extends Options>(r: KeyRule<O>): Rule => r as unknown as Rule;
const batchRule = <O extends Options>(r: BatchRule<O>): Rule => r as unknown as Rule;
const stackRule = <O extends Options>(r: StackRule<O>): Rule => r as unknown as Rule;

const cap = (what: string) => z.number().nonnegative(`must be 0 or more`).describe(what);
const names = (what: string) => z.array(z.string().min(1, "must not be empty")).describe(what);

/** A value as a message shows it: strings quoted, keys masked. */
function shown(value: unknown): string {
  return redact(typeof value === "string" ? JSON.stringify(value) : String(value));
}

function list(values: readonly string[]): string {
  return values.map(shown).join(", ");
}

/** "1 batch", "3 batches". */
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** Findings for a list that must be set and, when an approved list is given, only hold approved entries. */
function restrictedList(
  subject: KeySubject,
  path: string,
  entries: May<May<string>[]> | undefined,
  unset: string,
  approved: { option: string; values: readonly string[] } | undefined,
): Finding[] {
  const at = (p: string, message: string): Finding => ({ object: subject.label, path: p, message });
  if (entries === undefined) return [at(path, `is not set: ${unset}`)];
  if (!known(entries)) return [];
  if (entries.length === 0) return [at(path, `is empty: ${unset}`)];
  if (approved === undefined) return [];
  const allowed = new Set(approved.values);
  return entries.flatMap((e, i) =>
    known(e) && !allowed.has(e)
      ? [at(`${path}[${i}]`, `${shown(e)} is not in ${approved.option} (${list(approved.values)})`)]
      : [],
  );
}

const ipAllowlist = keyRule({
  name: "api-key-ip-allowlist",
  description:
    "API keys restrict the IP addresses they can be used from (securityConfig.ip.allow), inside the allowed ranges.",
  severity: "high",
  remediation:
    "Set securityConfig.ip.allow on the key to the addresses or CIDR ranges its clients use, each inside the allowedRanges of the pack config.",
  tags: ["api-key", "network", "access"],
  scope: "ApiKey",
  options: z
    .object({
      allowedRanges: z
        .array(
          z
            .string()
            .regex(/^[0-9A-Fa-f:.]+(\/\d{1,3})?$/, "must be an IP address or CIDR range")
            .refine((r) => parseRange(r) !== undefined, "must be an IP address or CIDR range"),
        )
        .describe("CIDR ranges (or addresses) every allowed entry must lie inside")
        .optional(),
    })
    .strict(),
  check(key, { allowedRanges }) {
    const path = "securityConfig.ip.allow";
    const base = restrictedList(key, path, key.ipAllow, "the key can be used from any IP address", undefined);
    if (base.length > 0 || allowedRanges === undefined || key.ipAllow === undefined || !known(key.ipAllow)) return base;
    const ranges = allowedRanges.map((r) => parseRange(r)!);
    return key.ipAllow.flatMap((entry, i) => {
      if (!known(entry)) return [];
      const parsed = parseRange(entry);
      if (parsed && ranges.some((r) => insideRange(parsed, r))) return [];
      return [
        {
          object: key.label,
          path: `${path}[${i}]`,
          message: `${shown(entry)} is outside allowedRanges (${list(allowedRanges)})`,
        },
      ];
    });
  },
});

const spendLimit = keyRule({
  name: "api-key-spend-limit",
  description: "API keys set a monthly spend limit (securityConfig.spendLimit.monthly), at most the cap.",
  severity: "high",
  remediation: "Set securityConfig.spendLimit.monthly on the key, at most the maxMonthly of the pack config.",
  tags: ["api-key", "cost"],
  scope: "ApiKey",
  options: z.object({ maxMonthly: cap("the highest monthly spend limit a key may have").optional() }).strict(),
  check(key, { maxMonthly }) {
    const path = "securityConfig.spendLimit.monthly";
    const monthly = key.monthlyLimit;
    if (monthly === undefined)
      return [{ object: key.label, path, message: "is not set: the key's monthly spend is unlimited" }];
    if (!known(monthly) || maxMonthly === undefined || monthly <= maxMonthly) return [];
    return [{ object: key.label, path, message: `${monthly} is above maxMonthly ${maxMonthly}` }];
  },
});

const keyModels = keyRule({
  name: "api-key-models",
  description: "API keys list the models they may call (securityConfig.models.items), only approved ones.",
  severity: "medium",
  remediation:
    "Set securityConfig.models.items on the key to the models it needs, each in the approvedModels of the pack config.",
  tags: ["api-key", "access"],
  scope: "ApiKey",
  options: z.object({ approvedModels: names("the models a key may be allowed to call").optional() }).strict(),
  check(key, { approvedModels }) {
    const approved = approvedModels && { option: "approvedModels", values: approvedModels };
    return restrictedList(key, "securityConfig.models.items", key.models, "the key may call every model", approved);
  },
});

const geo = keyRule({
  name: "api-key-geo",
  description:
    "API keys restrict the countries they can be used from (securityConfig.geo.countries), only approved ones.",
  severity: "medium",
  remediation:
    "Set securityConfig.geo.countries on the key to the countries it is used from, each in the approvedCountries of the pack config.",
  tags: ["api-key", "network", "access"],
  scope: "ApiKey",
  options: z
    .object({
      approvedCountries: z
        .array(z.string().regex(/^[A-Z]{2}$/, "must be a two-letter upper-case country code"))
        .describe("two-letter country codes a key may be allowed in")
        .optional(),
    })
    .strict(),
  check(key, { approvedCountries }) {
    const approved = approvedCountries && { option: "approvedCountries", values: approvedCountries };
    return restrictedList(
      key,
      "securityConfig.geo.countries",
      key.countries,
      "the key can be used from any country",
      approved,
    );
  },
});

const rotation = keyRule({
  name: "api-key-rotation",
  description:
    "API keys rotate by age (rotation.everyDays) at most every maxAgeDays, with at least minOverlapHours of overlap.",
  severity: "medium",
  remediation:
    "Set rotation.everyDays on the key (at most maxAgeDays) and rotation.overlapHours (at least minOverlapHours); on the live account, rotate a key older than maxAgeDays.",
  tags: ["api-key", "rotation", "credentials"],
  scope: "ApiKey",
  options: z
    .object({
      maxAgeDays: z.number().positive("must be greater than 0").describe("the longest a key may live").optional(),
      minOverlapHours: cap("the shortest overlap during which the previous key stays valid").optional(),
    })
    .strict(),
  check(key, { maxAgeDays, minOverlapHours }) {
    const at = (path: string, message: string): Finding[] => [{ object: key.label, path, message }];
    // A live key: the platform keeps no rotation setting, only when the key was made.
    if (key.ageDays !== undefined) {
      return maxAgeDays !== undefined && key.ageDays > maxAgeDays
        ? at("createdAt", `the key is ${Math.floor(key.ageDays)} days old, older than maxAgeDays ${maxAgeDays}`)
        : [];
    }
    const days = key.rotationEveryDays;
    if (days === undefined) return at("rotation.everyDays", "is not set: the key is never rotated by age");
    const findings: Finding[] = [];
    if (known(days) && maxAgeDays !== undefined && days > maxAgeDays) {
      findings.push(...at("rotation.everyDays", `${days} is above maxAgeDays ${maxAgeDays}`));
    }
    const overlap = key.rotationOverlapHours ?? 0;
    if (known(overlap) && minOverlapHours !== undefined && overlap < minOverlapHours) {
      findings.push(
        ...at(
          "rotation.overlapHours",
          `${overlap} is below minOverlapHours ${minOverlapHours}: clients get no time to switch keys`,
        ),
      );
    }
    return findings;
  },
});

const pricingFloor = batchRule({
  name: "sub-account-pricing-floor",
  description: "Sub-accounts are never priced below cost: every pricingFactor is at least minFactor (default 1).",
  severity: "high",
  remediation: "Raise every modelPricing[].pricingFactor of the batch to at least minFactor (1 sells at cost).",
  tags: ["sub-account", "cost", "pricing"],
  scope: "SubAccountBatch",
  options: z
    .object({
      minFactor: z.number().positive("must be greater than 0").default(1).describe("the lowest pricingFactor allowed"),
    })
    .strict(),
  check(batch, { minFactor }) {
    if (!known(batch.pricing)) return [];
    return batch.pricing.flatMap((entry, i) =>
      known(entry.factor) && entry.factor < minFactor
        ? [
            {
              object: batch.label,
              path: `modelPricing[${i}].pricingFactor`,
              message: `${entry.factor} for ${known(entry.model) ? shown(entry.model) : "a model not known yet"} is below minFactor ${minFactor}`,
            },
          ]
        : [],
    );
  },
});

const subAccountModels = batchRule({
  name: "sub-account-models",
  description: "Sub-accounts are priced only for approved models (every modelPricing[].model is in approvedModels).",
  severity: "medium",
  remediation:
    "Price the batch only for models in the approvedModels of the pack config: remove the other modelPricing entries.",
  tags: ["sub-account", "access", "pricing"],
  scope: "SubAccountBatch",
  options: z.object({ approvedModels: names("the models sub-accounts may be permitted").optional() }).strict(),
  check(batch, { approvedModels }) {
    if (approvedModels === undefined || !known(batch.pricing)) return [];
    const allowed = new Set(approvedModels);
    return batch.pricing.flatMap((entry, i) =>
      known(entry.model) && !allowed.has(entry.model)
        ? [
            {
              object: batch.label,
              path: `modelPricing[${i}].model`,
              message: `${shown(entry.model)} is not in approvedModels (${list(approvedModels)})`,
            },
          ]
        : [],
    );
  },
});

const balance = batchRule({
  name: "sub-account-balance",
  description: "Each sub-account's balance is at most maxBalance.",
  severity: "medium",
  remediation: "Lower the balance of the batch (or of the live sub-account) to at most maxBalance.",
  tags: ["sub-account", "cost"],
  scope: "SubAccountBatch",
  options: z.object({ maxBalance: cap("the highest balance of one sub-account").optional() }).strict(),
  check(batch, { maxBalance }) {
    if (maxBalance === undefined) return [];
    const max = toMicros(maxBalance);
    const above = (b: bigint) => `${showMicros(b)} is above maxBalance ${maxBalance}`;
    if (batch.members) {
      return batch.members.flatMap((m) => {
        const b = toMicros(m.balance);
        return b > max ? [{ object: m.label, path: "balance", message: above(b) }] : [];
      });
    }
    const declared = batch.declared?.balance;
    if (declared === undefined || !known(declared) || !Number.isFinite(declared)) return [];
    const b = toMicros(declared);
    return b > max ? [{ object: batch.label, path: "balance", message: above(b) }] : [];
  },
});

const budget = stackRule({
  name: "account-budget",
  description: "The balances of all sub-accounts together (count x balance of each batch) are at most maxTotalBalance.",
  severity: "high",
  remediation:
    "Lower the balance or count of the batches until the total balance of all sub-accounts is at most maxTotalBalance.",
  tags: ["sub-account", "cost", "budget"],
  scope: "stack",
  options: z.object({ maxTotalBalance: cap("the highest total balance of all sub-accounts").optional() }).strict(),
  check(scope, { maxTotalBalance }) {
    if (maxTotalBalance === undefined) return [];
    // Money in the platform's six-place decimals, as whole millionths: exact where floating point is not
    // (3 x 0.1 is 0.3). Balances and counts are never negative: the known part of the sum is a lower bound, so it
    // alone can prove the budget exceeded while other values are not known yet.
    let total = 0n;
    let subAccounts = 0;
    for (const b of scope.batches) {
      if (b.members) {
        total += b.members.reduce((sum, m) => sum + toMicros(m.balance), 0n);
        subAccounts += b.members.length;
      } else if (b.declared && known(b.declared.balance) && known(b.declared.count)) {
        const { balance: each, count } = b.declared;
        // A count or balance the provider's check refuses (fractional, negative, not finite) is its finding, not ours.
        if (!Number.isSafeInteger(count) || count < 0 || !Number.isFinite(each)) continue;
        total += toMicros(each) * BigInt(count);
        subAccounts += count;
      }
    }
    if (total <= toMicros(maxTotalBalance)) return [];
    const batches = scope.batches.length;
    return [
      {
        object: scope.label,
        // Live sub-accounts are summed by their real balances; declared batches by count x balance.
        path: scope.batches.every((b) => b.members) ? "balance" : "count x balance",
        message: `of ${plural(subAccounts, "sub-account")} in ${plural(batches, "batch", "batches")} comes to ${showMicros(total)}, above maxTotalBalance ${maxTotalBalance}`,
      },
    ];
  },
});

const uniqueAliases = stackRule({
  name: "api-key-unique-aliases",
  description: "No two API keys share an alias (a key whose create was lost is found again by its alias).",
  severity: "medium",
  remediation: "Give each API key an alias of its own: a key whose create was lost is found again by its alias.",
  tags: ["api-key", "operations"],
  scope: "stack",
  options: z.object({}).strict(),
  check(scope) {
    const byAlias = new Map<string, KeySubject[]>();
    for (const k of scope.keys) {
      if (known(k.alias)) byAlias.set(k.alias, [...(byAlias.get(k.alias) ?? []), k]);
    }
    return [...byAlias.entries()].flatMap(([alias, keys]) =>
      keys.length < 2
        ? []
        : keys.map((k) => ({
            object: k.label,
            urn: k.urn,
            path: "alias",
            message: `${shown(alias)} is also the alias of ${keys
              .filter((o) => o !== k)
              .map((o) => o.label)
              .join(", ")}`,
          })),
    );
  },
});

/** Every rule, in the order the table of docs/guides/policy.md lists them. */
export const RULES: readonly Rule[] = [
  ipAllowlist,
  spendLimit,
  keyModels,
  geo,
  rotation,
  pricingFloor,
  subAccountModels,
  balance,
  budget,
  uniqueAliases,
];

/** A finding as one line: object, property path, what is wrong, and the rule. Keys masked, whatever they came from. */
export function findingText(rule: Rule, f: Finding): string {
  return redact(`${f.object}: ${f.path} ${f.message} (${rule.name})`);
}

/** The options of a rule, parsed: defaults filled; a bad option is an error naming the rule and the option. */
export function parseOptions(rule: Rule, given: unknown): Record<string, unknown> {
  const parsed = rule.options.safeParse(given ?? {});
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    if (issue.code === "unrecognized_keys") {
      const known = Object.keys(rule.options.shape);
      return `unknown option${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => JSON.stringify(k)).join(", ")} (${known.length ? `options: ${known.join(", ")}` : "it takes none"})`;
    }
    const path = issue.path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i ? "." : ""}${String(p)}`)).join("");
    return `${path}: ${issue.message}`;
  });
  throw new PolicyConfigError(redact(`${rule.name}: ${problems.join("; ")}`));
}

/** A policy configuration that cannot be used: names the rule and the option. */
export class PolicyConfigError extends Error {
  override name = "PolicyConfigError";
}

/** The rule's options as the JSON schema of CrossGuard's `configSchema` (the engine validates the pack config with it). */
export function configSchema(rule: Rule): { properties: Record<string, object> } {
  const schema = z.toJSONSchema(rule.options, { target: "draft-7", io: "input" }) as {
    properties?: Record<string, object>;
  };
  return { properties: schema.properties ?? {} };
}
