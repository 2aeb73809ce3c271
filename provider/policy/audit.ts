import { redact } from "../api/redact.js";
import {
  LEVELS,
  parseOptions,
  PolicyConfigError,
  RULES,
  ruleUrl,
  type Finding,
  type Level,
  type Rule,
  type Severity,
} from "./rules.js";
import type { BatchSubject, KeySubject } from "./subjects.js";

/**
 * The audit's engine (`llm-accounts audit`, provider/commands/audit.ts): the rules as a policy config sets them, run
 * over the live objects with the same rule code the policy pack runs.
 */

/** What the rules look at on the live account: the listed keys, the sub-accounts grouped as batches. */
export interface LiveAccount {
  keys: KeySubject[];
  batches: BatchSubject[];
  /** How many sub-accounts the list gave. */
  subAccounts: number;
}

/** A rule with the level and options the policy config gives it. */
export interface Configured {
  rule: Rule;
  level: Level;
  options: Record<string, unknown>;
}

/** One finding of the audit: what a table row or a JSON entry shows. */
export interface AuditFinding {
  object: string;
  rule: string;
  level: Exclude<Level, "disabled">;
  /** The rule's severity, as the pack reports it to Pulumi. */
  severity: Severity;
  path: string;
  message: string;
  /** Where the rule is documented, as the pack reports it to Pulumi. */
  url: string;
}

function levelOf(value: unknown, where: string): Level {
  if (value === "remediate")
    throw new PolicyConfigError(`${where}: "remediate" cannot apply: no rule of pulumi-llm-accounts remediates`);
  if (typeof value !== "string" || !(LEVELS as readonly string[]).includes(value)) {
    throw new PolicyConfigError(
      `${where}: ${redact(JSON.stringify(value) ?? String(value))} is not an enforcement level (${LEVELS.join(", ")})`,
    );
  }
  return value as Level;
}

/**
 * The level `all` sets (advisory when absent). `all` carries a level only: an option under it is refused, naming
 * the rules that take it, for CrossGuard reads nothing but the level there and would check nothing of it.
 */
function allLevel(all: unknown, source: string): Level {
  if (all === undefined) return "advisory";
  if (all === null || typeof all !== "object" || Array.isArray(all)) return levelOf(all, `${source}: all`);
  const { enforcementLevel, ...options } = all as Record<string, unknown>;
  for (const option of Object.keys(options)) {
    const takers = RULES.filter((r) => option in r.options.shape).map((r) => r.name);
    const where = takers.length
      ? `; give the option to the rule that takes it (${takers.join(", ")})`
      : " (no rule takes it)";
    throw new PolicyConfigError(
      `${source}: all: unknown option ${redact(JSON.stringify(option))}: \`all\` sets the level of every rule only${where}`,
    );
  }
  return enforcementLevel === undefined ? "advisory" : levelOf(enforcementLevel, `${source}: all.enforcementLevel`);
}

/**
 * The rules as a pack config (`--policy-pack-config`'s JSON) sets them: rule name -> level, or {enforcementLevel,
 * ...options}; `all` sets every rule's level (and nothing else), a rule's own level wins. Unlike CrossGuard, which ignores a name it
 * does not know, an unknown rule or option is refused: a typo would otherwise silently check nothing.
 */
export function configureRules(config: unknown, source: string): Configured[] {
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    throw new PolicyConfigError(
      `${source}: must be a JSON object of rule name -> level or {enforcementLevel, ...options}`,
    );
  }
  const entries = config as Record<string, unknown>;
  for (const name of Object.keys(entries)) {
    if (name !== "all" && !RULES.some((r) => r.name === name)) {
      throw new PolicyConfigError(
        `${source}: unknown rule ${redact(JSON.stringify(name))} (rules: ${RULES.map((r) => r.name).join(", ")})`,
      );
    }
  }
  const base = allLevel(entries.all, source);
  return RULES.map((rule) => {
    const given = entries[rule.name];
    if (given === undefined) return { rule, level: base, options: parseOptions(rule, {}) };
    if (typeof given === "string")
      return { rule, level: levelOf(given, `${source}: ${rule.name}`), options: parseOptions(rule, {}) };
    if (given === null || typeof given !== "object" || Array.isArray(given)) {
      throw new PolicyConfigError(
        `${source}: ${rule.name}: must be a level or an object {enforcementLevel, ...options}`,
      );
    }
    const { enforcementLevel, ...options } = given as Record<string, unknown>;
    const level =
      enforcementLevel === undefined ? base : levelOf(enforcementLevel, `${source}: ${rule.name}.enforcementLevel`);
    return { rule, level, options: parseOptions(rule, options) };
  });
}

/** Runs the configured rules over the live objects: the same rule code the policy pack runs. */
export function evaluate(configured: Configured[], live: LiveAccount): AuditFinding[] {
  const findings: AuditFinding[] = [];
  for (const { rule, level, options } of configured) {
    if (level === "disabled") continue;
    let found: Finding[];
    if (rule.scope === "ApiKey") found = live.keys.flatMap((k) => rule.check(k, options));
    else if (rule.scope === "SubAccountBatch") found = live.batches.flatMap((b) => rule.check(b, options));
    else found = rule.check({ label: "the account", keys: live.keys, batches: live.batches }, options);
    for (const f of found)
      findings.push({
        object: redact(f.object),
        rule: rule.name,
        level,
        severity: rule.severity,
        path: f.path,
        message: redact(f.message),
        url: ruleUrl(rule),
      });
  }
  return findings;
}
