import { parseArgs } from "node:util";
import { maskKey, redact } from "../api/redact.js";
import type { LlmAccountsClient } from "../client/client.js";
import { groupSubAccounts } from "../commands/batchGroups.js";
import { clientFromEnvironment, printable, readKeyList, readOptionFile, refusedCredential } from "../commands/kit.js";
import { NotFoundError } from "../client/errors.js";
import { LEVELS, parseOptions, PolicyConfigError, RULES, ruleUrl, type Finding, type Level, type Rule, type Severity } from "./rules.js";
import { batchFromLive, keyFromLive } from "./subjects.js";
import { UsageError } from "../usageError.js";

/** Help text of `llm-accounts audit`. */
export const AUDIT_USAGE = `Options of "audit" (credentials from LLM_ACCOUNTS_BASE_URL, LLM_ACCOUNTS_ADMIN_KEY, LLM_ACCOUNTS_ACCOUNT_KEY):
  --policy-config FILE  Levels and options of the rules: the JSON of pulumi's --policy-pack-config
  --keys FILE           API keys to audit, one per line (- reads them from stdin); the API cannot list keys
  --json                One JSON object on stdout instead of the table
  Exit code: 0 without mandatory findings, 3 with mandatory findings, 1 on errors, 2 on a misused command
  (--policy-config missing included). A stdout closed by its reader (| head) drops the rest of the output
  quietly, and the code stays the audit's own (0 or 3).
`;

/** Exit codes of `llm-accounts audit`. */
export const AUDIT_EXIT = { clean: 0, mandatory: 3 } as const;

/** Where the command reads and writes; the process's own streams unless a test gives others. */
export interface AuditIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** The time key ages are measured at. */
  now?: () => number;
}

/** A rule with the level and options the policy config gives it. */
interface Configured {
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
  if (value === "remediate") throw new PolicyConfigError(`${where}: "remediate" cannot apply: no rule of pulumi-llm-accounts remediates`);
  if (typeof value !== "string" || !(LEVELS as readonly string[]).includes(value)) {
    throw new PolicyConfigError(`${where}: ${redact(JSON.stringify(value) ?? String(value))} is not an enforcement level (${LEVELS.join(", ")})`);
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
    const where = takers.length ? `; give the option to the rule that takes it (${takers.join(", ")})` : " (no rule takes it)";
    throw new PolicyConfigError(`${source}: all: unknown option ${redact(JSON.stringify(option))}: \`all\` sets the level of every rule only${where}`);
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
    throw new PolicyConfigError(`${source}: must be a JSON object of rule name -> level or {enforcementLevel, ...options}`);
  }
  const entries = config as Record<string, unknown>;
  for (const name of Object.keys(entries)) {
    if (name !== "all" && !RULES.some((r) => r.name === name)) {
      throw new PolicyConfigError(`${source}: unknown rule ${redact(JSON.stringify(name))} (rules: ${RULES.map((r) => r.name).join(", ")})`);
    }
  }
  const base = allLevel(entries.all, source);
  return RULES.map((rule) => {
    const given = entries[rule.name];
    if (given === undefined) return { rule, level: base, options: parseOptions(rule, {}) };
    if (typeof given === "string") return { rule, level: levelOf(given, `${source}: ${rule.name}`), options: parseOptions(rule, {}) };
    if (given === null || typeof given !== "object" || Array.isArray(given)) {
      throw new PolicyConfigError(`${source}: ${rule.name}: must be a level or an object {enforcementLevel, ...options}`);
    }
    const { enforcementLevel, ...options } = given as Record<string, unknown>;
    const level = enforcementLevel === undefined ? base : levelOf(enforcementLevel, `${source}: ${rule.name}.enforcementLevel`);
    return { rule, level, options: parseOptions(rule, options) };
  });
}

/**
 * Reads what the rules look at: one list of every sub-account, one get per API key of the list, all gets
 * started at once and paced by the client's limiter (the platform's rate limits are never tripped).
 */
async function readLive(client: LlmAccountsClient, apiKeys: string[], now: number) {
  const subAccounts = await client.subAccounts.list().catch((err: unknown) => refusedCredential(err, "accountKey", PolicyConfigError));
  const keys = await Promise.all(
    apiKeys.map(async (key, i) => {
      try {
        return keyFromLive(key, await client.apiKeys.get(key), now);
      } catch (err) {
        if (err instanceof NotFoundError) throw new PolicyConfigError(`API key ${i + 1} of the list (${maskKey(key)}) does not exist on the platform`);
        return refusedCredential(err, "adminKey", PolicyConfigError);
      }
    }),
  );
  return { keys, batches: groupSubAccounts(subAccounts).map(batchFromLive), subAccounts: subAccounts.length };
}

/** Runs the configured rules over the live objects: the same rule code the policy pack runs. */
export function evaluate(configured: Configured[], live: Awaited<ReturnType<typeof readLive>>): AuditFinding[] {
  const findings: AuditFinding[] = [];
  for (const { rule, level, options } of configured) {
    if (level === "disabled") continue;
    let found: Finding[];
    if (rule.scope === "ApiKey") found = live.keys.flatMap((k) => rule.check(k, options));
    else if (rule.scope === "SubAccountBatch") found = live.batches.flatMap((b) => rule.check(b, options));
    else found = rule.check({ label: "the account", keys: live.keys, batches: live.batches }, options);
    for (const f of found) findings.push({ object: redact(f.object), rule: rule.name, level, severity: rule.severity, path: f.path, message: redact(f.message), url: ruleUrl(rule) });
  }
  return findings;
}

/** A cell as the table prints it: control, line-separator and bidi characters escaped (commands/kit.ts). */
const cell = printable;

function table(rows: string[][]): string {
  const widths = rows[0].map((_c, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  ")).join("\n") + "\n";
}

/**
 * `llm-accounts audit`: the package's rules over the live account, objects no program manages included.
 * Resolves with the exit code: AUDIT_EXIT.mandatory when a mandatory rule found something.
 */
export async function runAudit(args: string[], io: AuditIo): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: { "policy-config": { type: "string" }, keys: { type: "string" }, json: { type: "boolean" } },
  });
  const configFile = values["policy-config"];
  if (!configFile) throw new UsageError("--policy-config FILE is required: the rules' levels and options (the JSON of --policy-pack-config)");
  let config: unknown;
  try {
    config = JSON.parse(readOptionFile("policy-config", configFile, PolicyConfigError));
  } catch (err) {
    if (err instanceof PolicyConfigError) throw err;
    throw new PolicyConfigError(`--policy-config ${configFile}: not JSON (${(err as Error).message})`);
  }
  const configured = configureRules(config, configFile);
  const apiKeys = await readKeyList(values.keys, io.stdin, PolicyConfigError);

  const live = await readLive(clientFromEnvironment(io.env), apiKeys, (io.now ?? Date.now)());
  const findings = evaluate(configured, live);

  const mandatory = findings.filter((f) => f.level === "mandatory").length;
  const summary = {
    apiKeys: live.keys.length,
    subAccounts: live.subAccounts,
    groups: live.batches.length,
    findings: findings.length,
    mandatory,
    advisory: findings.length - mandatory,
    disabled: configured.filter((c) => c.level === "disabled").map((c) => c.rule.name),
  };
  if (values.json) {
    io.stdout.write(`${JSON.stringify({ findings, summary }, null, 2)}\n`);
  } else {
    if (findings.length > 0) {
      io.stdout.write(table([["OBJECT", "RULE", "LEVEL", "MESSAGE"], ...findings.map((f) => [f.object, f.rule, f.level, `${f.path} ${f.message}`].map(cell))]));
    }
    const disabled = summary.disabled.length ? `; disabled: ${summary.disabled.join(", ")}` : "";
    io.stdout.write(
      `${summary.findings} finding(s): ${mandatory} mandatory, ${summary.advisory} advisory, over ${summary.apiKeys} API key(s) and ` +
        `${summary.subAccounts} sub-account(s) in ${summary.groups} group(s)${disabled}.\n`,
    );
  }
  return mandatory > 0 ? AUDIT_EXIT.mandatory : AUDIT_EXIT.clean;
}
