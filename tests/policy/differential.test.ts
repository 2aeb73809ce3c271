import { describe, expect, test } from "@jest/globals";
import type {
  PolicyResource,
  ReportViolation,
  ResourceValidationArgs,
  ResourceValidationPolicy,
  StackValidationArgs,
  StackValidationPolicy,
} from "@pulumi/policy";
import fc from "fast-check";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { Emulator } from "../../provider/emulator/index.js";
import { runAudit } from "../../provider/commands/audit.js";
import type { AuditFinding } from "../../provider/policy/audit.js";
import { llmAccountsPolicies, RESOURCE_TYPES } from "../../provider/policy/index.js";
import {
  apiKey,
  subAccountBatch,
  type ApiKeyOutputs,
  type SubAccountBatchOutputs,
} from "../../provider/runtime/index.js";
import { useRuntimeEmulator } from "../support/emulator.js";

/**
 * One rule set in three places, differentially: for generated accounts and programs, the violations of the pack
 * at preview (the resources' checked inputs, some values not known yet), of the pack on the stored state (what
 * `pulumi policy analyze` hands it: the resources' outputs after create) and of `llm-accounts audit` on the live
 * account are the same set of (resource, rule), except the documented differences:
 *   - a value not known at preview is never a violation: the preview's set is a subset, and every pair it lacks
 *     involves a value it did not know (a `count` or `balance` not known lets account-budget pass at preview);
 *   - api-key-rotation checks the program's rotation setting in the pack and the key's age on the live account
 *     (the platform keeps no rotation setting): it is left out here.
 * The rule code runs in-process, on the same path as in the pack (subjects.ts from resource properties, through
 * @pulumi/policy's unknown-checking proxy) and in the audit (runAudit over the emulator's HTTP API).
 */

let emu: Emulator;
useRuntimeEmulator((e) => (emu = e));

const require = createRequire(import.meta.url);
const proxy = require("@pulumi/policy/proxy") as {
  unknownCheckingProxy<T extends object>(o: T): T;
  unknownNumberValue: string;
  unknownArrayValue: string;
  unknownObjectValue: string;
};

const policies = llmAccountsPolicies();
const RANGES = ["10.1.2.3", "10.2.0.0/16", "192.168.0.1", "203.0.113.7"];
const MODELS = ["model-a", "model-b", "model-x"];
const COUNTRIES = ["CN", "SG", "US"];

interface KeySpec {
  alias: string;
  ip?: string[];
  monthly?: number;
  models?: string[];
  countries?: string[];
  /** Which of its values the preview does not know yet. */
  unknown: ("ip" | "monthly" | "models" | "securityConfig")[];
}
interface BatchSpec {
  balance: number;
  count: number;
  pricing: { model: string; pricingFactor: number }[];
  unknown: ("balance" | "count" | "modelPricing")[];
}

const optionalList = (values: string[]) => fc.option(fc.subarray(values), { nil: undefined });
const keySpec: fc.Arbitrary<KeySpec> = fc.record({
  alias: fc.constantFrom("a", "b", "c", "d"),
  ip: optionalList(RANGES),
  monthly: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined }),
  models: optionalList(MODELS),
  countries: optionalList(COUNTRIES),
  unknown: fc.subarray(["ip", "monthly", "models", "securityConfig"] as const),
});
const batchSpec: fc.Arbitrary<BatchSpec> = fc.record({
  // Six-place decimals, as money is.
  balance: fc.integer({ min: 0, max: 150_000_000 }).map((micros) => micros / 1e6),
  count: fc.integer({ min: 1, max: 3 }),
  pricing: fc.uniqueArray(
    fc.record({ model: fc.constantFrom(...MODELS), pricingFactor: fc.constantFrom(0.5, 0.8, 1, 1.2, 2) }),
    { minLength: 1, maxLength: 2, selector: (p) => p.model },
  ),
  unknown: fc.subarray(["balance", "count", "modelPricing"] as const),
});
const account = fc.record({
  keys: fc.array(keySpec, { maxLength: 4 }),
  batches: fc.array(batchSpec, { maxLength: 3 }),
  // Sometimes exactly the total (the budget's edge), else any cap.
  cap: fc.oneof(
    fc.constant("exact" as const),
    fc.integer({ min: 0, max: 600_000_000 }).map((m) => m / 1e6),
  ),
});

function config(maxTotalBalance: number) {
  return {
    "api-key-ip-allowlist": { enforcementLevel: "mandatory", allowedRanges: ["10.0.0.0/8"] },
    "api-key-spend-limit": { enforcementLevel: "mandatory", maxMonthly: 500 },
    "api-key-models": { enforcementLevel: "mandatory", approvedModels: ["model-a", "model-b"] },
    "api-key-geo": { enforcementLevel: "mandatory", approvedCountries: ["CN", "SG"] },
    "api-key-rotation": "disabled",
    "sub-account-pricing-floor": { enforcementLevel: "mandatory", minFactor: 1 },
    "sub-account-models": { enforcementLevel: "mandatory", approvedModels: ["model-a", "model-b"] },
    "sub-account-balance": { enforcementLevel: "mandatory", maxBalance: 100 },
    "account-budget": { enforcementLevel: "mandatory", maxTotalBalance },
    "api-key-unique-aliases": "mandatory",
  } as Record<string, string | Record<string, unknown>>;
}

function keyProps(k: KeySpec) {
  const securityConfig: Record<string, unknown> = {};
  if (k.ip) securityConfig.ip = { allow: k.ip };
  if (k.monthly !== undefined) securityConfig.spendLimit = { monthly: k.monthly };
  if (k.models) securityConfig.models = { mode: "model", items: k.models };
  if (k.countries) securityConfig.geo = { countries: k.countries };
  return { alias: k.alias, securityConfig };
}

/** A resource as the preview sees it: its checked inputs, with the values it does not know yet replaced. */
function previewKey(inputs: Record<string, unknown>, k: KeySpec): Record<string, unknown> {
  if (k.unknown.includes("securityConfig")) return { ...inputs, securityConfig: proxy.unknownObjectValue };
  const sc = { ...(inputs.securityConfig as Record<string, unknown>) };
  if (k.unknown.includes("ip") && sc.ip) sc.ip = { allow: proxy.unknownArrayValue };
  if (k.unknown.includes("monthly") && sc.spendLimit) sc.spendLimit = { monthly: proxy.unknownNumberValue };
  if (k.unknown.includes("models") && sc.models)
    sc.models = { ...(sc.models as object), items: proxy.unknownArrayValue };
  return { ...inputs, securityConfig: sc };
}
function previewBatch(inputs: Record<string, unknown>, b: BatchSpec): Record<string, unknown> {
  const out = { ...inputs };
  if (b.unknown.includes("balance")) out.balance = proxy.unknownNumberValue;
  if (b.unknown.includes("count")) out.count = proxy.unknownNumberValue;
  if (b.unknown.includes("modelPricing")) out.modelPricing = proxy.unknownArrayValue;
  return out;
}

interface Resource {
  type: string;
  name: string;
  props: Record<string, unknown>;
}

/** The pack's violations over resources, as `resource rule` pairs (the stack's own findings as `scope rule`). */
function packPairs(resources: Resource[], levels: Record<string, string | Record<string, unknown>>): Set<string> {
  const pairs = new Set<string>();
  for (const p of policies) {
    const given = levels[p.name];
    if (given === "disabled") continue;
    const options =
      typeof given === "object"
        ? Object.fromEntries(Object.entries(given).filter(([k]) => k !== "enforcementLevel"))
        : {};
    const report: ReportViolation = (message) => {
      const object =
        /^(ApiKey|SubAccountBatch) "([^"]+)":/.exec(message)?.[2] ??
        (message.startsWith("the stack:") ? "scope" : `?${message}`);
      pairs.add(`${object} ${p.name}`);
    };
    if ("validateResource" in p) {
      for (const r of resources) {
        const args = {
          type: r.type,
          name: r.name,
          urn: `urn:${r.name}`,
          props: proxy.unknownCheckingProxy(r.props),
          getConfig: () => options,
        };
        void (
          (p as ResourceValidationPolicy).validateResource as (a: ResourceValidationArgs, r: ReportViolation) => void
        )(args as unknown as ResourceValidationArgs, report);
      }
    } else {
      const rs = resources.map((r) => ({
        ...r,
        urn: `urn:${r.name}`,
        props: proxy.unknownCheckingProxy(r.props),
      })) as unknown as PolicyResource[];
      void (p as StackValidationPolicy).validateStack(
        { resources: rs, getConfig: () => options } as unknown as StackValidationArgs,
        report,
      );
    }
  }
  return pairs;
}

/** `llm-accounts audit --json` over the live account, its findings mapped back to the resources that made the objects. */
async function auditPairs(
  dir: string,
  levels: object,
  keys: { name: string; outs: ApiKeyOutputs }[],
  batches: { name: string; outs: SubAccountBatchOutputs }[],
): Promise<Set<string>> {
  const file = join(dir, "config.json");
  writeFileSync(file, JSON.stringify(levels));
  const stdin = new PassThrough();
  stdin.end(keys.map((k) => k.outs.key).join("\n"));
  const stdout = new PassThrough();
  let out = "";
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  const env = {
    LLM_ACCOUNTS_BASE_URL: emu.baseUrl,
    LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
    LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
  };
  await runAudit(["--policy-config", file, "--keys", "-", "--json"], {
    stdin,
    stdout,
    stderr: new PassThrough(),
    env,
    stderrIsTty: false,
  });
  const byHint = new Map(keys.map((k) => [`API key ${k.outs.keyHint}`, k.name]));
  const byId = new Map(batches.flatMap((b) => b.outs.subAccounts.map((s) => [s.id, b.name] as const)));
  const { findings } = JSON.parse(out) as { findings: AuditFinding[] };
  return new Set(
    findings.map((f) => {
      const id = /\bids? (\d+)/.exec(f.object)?.[1] ?? /^sub-account (\d+)/.exec(f.object)?.[1];
      const object =
        f.object === "the account"
          ? "scope"
          : (byHint.get(f.object) ?? (id === undefined ? undefined : byId.get(Number(id))) ?? `?${f.object}`);
      return `${object} ${f.rule}`;
    }),
  );
}

/** The pairs the preview may lack, and only those: each involves a value it did not know yet. */
function excusedAtPreview(pair: string, keys: KeySpec[], batches: BatchSpec[]): boolean {
  const [object, rule] = pair.split(" ");
  if (object === "scope")
    return (
      rule === "account-budget" && batches.some((b) => b.unknown.includes("balance") || b.unknown.includes("count"))
    );
  const index = Number(object.slice(1));
  if (object.startsWith("k")) {
    const u = keys[index].unknown;
    const field = {
      "api-key-ip-allowlist": "ip",
      "api-key-spend-limit": "monthly",
      "api-key-models": "models",
      "api-key-geo": "securityConfig",
    }[rule];
    return u.includes("securityConfig") || (field !== undefined && u.includes(field as KeySpec["unknown"][number]));
  }
  const u = batches[index].unknown;
  return rule === "sub-account-balance" ? u.includes("balance") : u.includes("modelPricing");
}

describe("the pack at preview, the pack on the stored state, and the audit of the live account agree", () => {
  test("generated accounts: the same (resource, rule) set, apart from the documented differences", async () => {
    const dir = mkdtempSync(join(tmpdir(), "llm-differential-"));
    let cases = 0;
    let withFindings = 0;
    let previewLacked = 0;
    try {
      await fc.assert(
        fc.asyncProperty(account, async ({ keys, batches, cap }) => {
          const made: {
            keys: { name: string; outs: ApiKeyOutputs; id: string }[];
            batches: { name: string; outs: SubAccountBatchOutputs; id: string }[];
          } = { keys: [], batches: [] };
          try {
            const preview: Resource[] = [];
            const stored: Resource[] = [];
            for (const [i, k] of keys.entries()) {
              const { inputs, failures } = await apiKey.check({}, keyProps(k));
              expect(failures).toEqual([]);
              const { id, outs } = await apiKey.create(inputs);
              made.keys.push({ name: `k${i}`, outs, id });
              preview.push({
                type: RESOURCE_TYPES.ApiKey,
                name: `k${i}`,
                props: previewKey(inputs as unknown as Record<string, unknown>, k),
              });
              stored.push({
                type: RESOURCE_TYPES.ApiKey,
                name: `k${i}`,
                props: outs as unknown as Record<string, unknown>,
              });
            }
            // Distinct aliases: the audit groups live sub-accounts by alias and pricing, one group per batch.
            for (const [i, b] of batches.entries()) {
              const { inputs, failures } = await subAccountBatch.check(
                {},
                {
                  alias: `team-${i}`,
                  balance: b.balance,
                  count: b.count,
                  modelPricing: b.pricing.map((p) => ({ ...p })),
                },
              );
              expect(failures).toEqual([]);
              const { id, outs } = await subAccountBatch.create(inputs);
              made.batches.push({ name: `b${i}`, outs, id });
              preview.push({
                type: RESOURCE_TYPES.SubAccountBatch,
                name: `b${i}`,
                props: previewBatch(inputs as unknown as Record<string, unknown>, b),
              });
              stored.push({
                type: RESOURCE_TYPES.SubAccountBatch,
                name: `b${i}`,
                props: outs as unknown as Record<string, unknown>,
              });
            }
            // Masked keys name the audit's findings: two keys ending alike could not be told apart.
            fc.pre(new Set(made.keys.map((k) => k.outs.keyHint)).size === made.keys.length);
            const total = batches.reduce((sum, b) => sum + Math.round(b.balance * 1e6) * b.count, 0) / 1e6;
            const levels = config(cap === "exact" ? total : cap);

            const atPreview = packPairs(preview, levels);
            const onState = packPairs(stored, levels);
            const live = await auditPairs(dir, levels, made.keys, made.batches);

            expect([...onState].sort()).toEqual([...live].sort());
            const lacked = [...onState].filter((p) => !atPreview.has(p));
            expect([...atPreview].filter((p) => !onState.has(p))).toEqual([]);
            expect(lacked.filter((p) => !excusedAtPreview(p, keys, batches))).toEqual([]);
            cases++;
            if (onState.size > 0) withFindings++;
            if (lacked.length > 0) previewLacked++;
          } finally {
            for (const k of made.keys) await apiKey.delete(k.id, k.outs);
            for (const b of made.batches) await subAccountBatch.delete(b.id, b.outs);
          }
        }),
        { numRuns: 60, seed: 20261125 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // The property was exercised: most cases have findings, and some lacked one at preview for an unknown value.
    expect(cases).toBeGreaterThanOrEqual(50);
    expect(withFindings).toBeGreaterThan(cases / 2);
    expect(previewLacked).toBeGreaterThan(0);
  }, 300_000);
});
