import type {
  Policies,
  ReportViolation,
  ResourceValidationArgs,
  ResourceValidationPolicy,
  StackValidationArgs,
  StackValidationPolicy,
} from "@pulumi/policy";
import { RESOURCE_TYPES } from "../resources/typeTokens.js";
import { configSchema, findingText, parseOptions, RULES, ruleUrl, type Rule } from "./rules.js";
import { batchFromProps, keyFromProps, type BatchSubject, type KeySubject } from "./subjects.js";

/** The options of a rule as the engine configured them (parsed). */
type OptionsOf = (rule: Rule, given: object) => Record<string, unknown>;

/**
 * Options of a rule as the engine configured them, parsed once per distinct configuration: a preview of many
 * resources calls each policy once per resource with the same configuration. The memo belongs to the policies
 * of one llmAccountsPolicies() call, not to the module.
 */
function parsedOnce(): OptionsOf {
  const parsed = new Map<Rule, { text: string; options: Record<string, unknown> }>();
  return (rule, given) => {
    const text = JSON.stringify(given);
    let cached = parsed.get(rule);
    if (cached?.text !== text) {
      cached = { text, options: parseOptions(rule, given) };
      parsed.set(rule, cached);
    }
    return cached.options;
  };
}

/** What every policy of a rule carries: its name, description, metadata for Pulumi's outputs, and configSchema. */
function metadata(rule: Rule) {
  return {
    name: rule.name,
    description: rule.description,
    enforcementLevel: "advisory" as const,
    severity: rule.severity,
    remediationSteps: rule.remediation,
    url: ruleUrl(rule),
    tags: [...rule.tags],
    configSchema: configSchema(rule),
  };
}

function resourcePolicy(
  rule: Rule & { scope: "ApiKey" | "SubAccountBatch" },
  optionsOf: OptionsOf,
): ResourceValidationPolicy {
  const type = RESOURCE_TYPES[rule.scope];
  const validate = (args: ResourceValidationArgs, report: ReportViolation) => {
    // Recognised by type token only: any other resource, whatever its properties, is not this rule's.
    if (args.type !== type) return;
    const options = optionsOf(rule, args.getConfig());
    const findings =
      rule.scope === "ApiKey"
        ? rule.check(keyFromProps(args.name, args.props), options)
        : rule.check(batchFromProps(args.name, args.props), options);
    for (const f of findings) report(findingText(rule, f));
  };
  // The mark @pulumi/policy's validateResourceOfType gives a function (`__pulumiType`): the server then answers
  // "not applicable" for a resource of another type without deserializing its properties for this policy, which
  // it otherwise does once per policy per resource. The check above stays for a @pulumi/policy that ignores it.
  return { ...metadata(rule), validateResource: Object.assign(validate, { __pulumiType: type }) };
}

function stackPolicy(rule: Rule & { scope: "stack" }, optionsOf: OptionsOf): StackValidationPolicy {
  return {
    ...metadata(rule),
    validateStack: (args: StackValidationArgs, report: ReportViolation) => {
      const options = optionsOf(rule, args.getConfig());
      const keys: KeySubject[] = [];
      const batches: BatchSubject[] = [];
      for (const r of args.resources) {
        if (r.type === RESOURCE_TYPES.ApiKey) keys.push(keyFromProps(r.name, r.props, r.urn));
        else if (r.type === RESOURCE_TYPES.SubAccountBatch) batches.push(batchFromProps(r.name, r.props, r.urn));
      }
      // A finding about the whole stack is reported on the stack's own resource, as a preview shows it anyway:
      // `pulumi policy analyze` of CLI 3.248.0 panics ("Urn is: ''") on a stack violation that names no URN.
      const stackUrn = args.resources.find((r) => r.type === "pulumi:pulumi:Stack")?.urn;
      for (const f of rule.check({ label: "the stack", keys, batches }, options))
        report(findingText(rule, f), f.urn ?? stackUrn);
    },
  };
}

/**
 * The package's policies for `new PolicyPack(name, { policies: llmAccountsPolicies() })`: every rule advisory
 * until the pack's config (`--policy-pack-config`, or the organisation's) sets its level and options. Plain
 * objects of @pulumi/policy's shapes: loading this module needs no @pulumi/policy.
 */
export function llmAccountsPolicies(): Policies {
  const optionsOf = parsedOnce();
  return RULES.map((rule) => (rule.scope === "stack" ? stackPolicy(rule, optionsOf) : resourcePolicy(rule, optionsOf)));
}
