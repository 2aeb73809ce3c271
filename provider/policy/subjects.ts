import { maskKey, redact } from "../api/redact.js";
import { DAY_MS } from "../api/assumptions.js";
import { toWire } from "../api/casing.js";
import { pricingRule, type PricingFields } from "../api/schemas/subAccounts.js";
import { UNKNOWN } from "../runtime/engine/index.js";

/** A value the engine does not know yet (preview): never a violation. */
export const UNKNOWN_VALUE: unique symbol = Symbol("not known until the update");
export type Unknown = typeof UNKNOWN_VALUE;
/** A value, or one not known yet. */
export type May<T> = T | Unknown;

/** True when the value is known (not a preview placeholder). */
export function known<T>(value: May<T>): value is T {
  return value !== UNKNOWN_VALUE;
}

/**
 * The engine's placeholders for values not known yet, one per type (the string one is the one the dynamic
 * provider sees, runtime/engine/check.ts). @pulumi/policy throws on reading one through its props proxy instead.
 */
const PLACEHOLDERS = new Set([
  UNKNOWN,
  "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",
  "3eeb2bf0-c639-47a8-9e75-3b44932eb421",
  "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",
  "030794c1-ac77-496b-92df-f27374a8bd58",
  "e48ece36-62e2-4504-bad9-02848725956a",
  "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",
]);

/**
 * A property of a resource as plain data, with every value not known yet as UNKNOWN_VALUE. @pulumi/policy hands
 * policies a proxy whose property reads throw for such values (and would turn the rule into an advisory "can't
 * run during preview" notice): each read is made here once, so that the rules see data, never a throw.
 */
export function plain(value: unknown): unknown {
  if (typeof value === "string" && PLACEHOLDERS.has(value)) return UNKNOWN_VALUE;
  if (value === null || typeof value !== "object") return value;
  const read = (k: string | number): unknown => {
    try {
      return plain((value as Record<string | number, unknown>)[k]);
    } catch {
      // The proxy's read of a placeholder: the one thing that throws here.
      return UNKNOWN_VALUE;
    }
  };
  if (Array.isArray(value)) return Array.from({ length: value.length }, (_v, i) => read(i));
  return Object.fromEntries(Object.keys(value).map((k) => [k, read(k)]));
}

/** An API key as the rules see it: declared in a program, or read from the platform. */
export interface KeySubject {
  /** How messages name it: `ApiKey "ci"` (a resource) or `API key sk-...1a2b` (live). */
  label: string;
  /** The Pulumi URN for a resource (stack policies report by it); none for a live key. */
  urn?: string;
  alias: May<string>;
  /** `securityConfig.ip.allow`; undefined when not set. */
  ipAllow?: May<May<string>[]>;
  /** `securityConfig.spendLimit.monthly`. */
  monthlyLimit?: May<number>;
  /** `securityConfig.models.items`. */
  models?: May<May<string>[]>;
  /** `securityConfig.geo.countries`. */
  countries?: May<May<string>[]>;
  /** `rotation.everyDays` and `rotation.overlapHours` (declared keys only). */
  rotationEveryDays?: May<number>;
  rotationOverlapHours?: May<number>;
  /** Days since the platform's `created_at` (live keys only: the platform keeps no rotation setting). */
  ageDays?: number;
}

/** One sub-account of a live group, named masked. */
export interface Member {
  label: string;
  /** The platform's six-place decimal string, kept as it came: money is compared in millionths (api/money.ts). */
  balance: string;
}

/** A batch of sub-accounts: a SubAccountBatch of a program, or live sub-accounts of one alias and pricing. */
export interface BatchSubject {
  label: string;
  urn?: string;
  alias: May<string>;
  /** Permitted models and their factors (deprecated pricing fields already converted). */
  pricing: May<{ model: May<string>; factor: May<number> }[]>;
  /** Declared: the balance of each sub-account it creates, and how many it holds. */
  declared?: { balance: May<number>; count: May<number> };
  /** Live: each sub-account with its own balance. */
  members?: Member[];
}

type Obj = Record<string, unknown>;

function field(parent: unknown, name: string): unknown {
  if (parent === UNKNOWN_VALUE) return UNKNOWN_VALUE;
  if (parent === null || typeof parent !== "object" || Array.isArray(parent)) return undefined;
  return (parent as Obj)[name];
}

function num(v: unknown): May<number> | undefined {
  if (v === UNKNOWN_VALUE) return v;
  return typeof v === "number" ? v : undefined;
}

function str(v: unknown): May<string> {
  if (v === UNKNOWN_VALUE) return v;
  return typeof v === "string" ? v : "";
}

function strings(v: unknown): May<May<string>[]> | undefined {
  if (v === UNKNOWN_VALUE) return v;
  if (!Array.isArray(v)) return undefined;
  return v.map((x) => (x === UNKNOWN_VALUE ? x : String(x)));
}

/** A resource's name for messages: the class and the name the program gave it. */
function resourceLabel(kind: "ApiKey" | "SubAccountBatch", name: string): string {
  return redact(`${kind} ${JSON.stringify(name)}`);
}

/** An ApiKey resource's properties (inputs or outputs: both carry the declared fields) as a subject. */
export function keyFromProps(name: string, props: unknown, urn?: string): KeySubject {
  const p = plain(props);
  const sc = field(p, "securityConfig");
  const rotation = field(p, "rotation");
  return {
    label: resourceLabel("ApiKey", name),
    urn,
    alias: str(field(p, "alias")),
    ipAllow: strings(field(field(sc, "ip"), "allow")),
    monthlyLimit: num(field(field(sc, "spendLimit"), "monthly")),
    models: strings(field(field(sc, "models"), "items")),
    countries: strings(field(field(sc, "geo"), "countries")),
    rotationEveryDays: num(field(rotation, "everyDays")),
    rotationOverlapHours: num(field(rotation, "overlapHours")),
  };
}

/** The factor a declared pricing entry stands for: spec 2.5's rule (deprecated fields converted). */
function factorOf(entry: unknown): May<number> {
  if (entry === UNKNOWN_VALUE) return entry;
  const factor = field(entry, "pricingFactor");
  if (factor === UNKNOWN_VALUE || typeof factor === "number") return factor;
  const e = entry as Obj;
  if (Object.values(e).some((v) => v === UNKNOWN_VALUE)) return UNKNOWN_VALUE;
  const rule = pricingRule(toWire(e) as PricingFields);
  // An entry the provider's check refuses has no factor: check reports it, not the policy.
  return "factor" in rule ? rule.factor : UNKNOWN_VALUE;
}

/** A SubAccountBatch resource's properties as a subject. */
export function batchFromProps(name: string, props: unknown, urn?: string): BatchSubject {
  const p = plain(props);
  const pricing = field(p, "modelPricing");
  return {
    label: resourceLabel("SubAccountBatch", name),
    urn,
    alias: str(field(p, "alias")),
    pricing:
      pricing === UNKNOWN_VALUE
        ? pricing
        : (Array.isArray(pricing) ? pricing : []).map((e) => ({ model: str(field(e, "model")), factor: factorOf(e) })),
    declared: { balance: num(field(p, "balance")) ?? 0, count: num(field(p, "count")) ?? 0 },
  };
}

/** A live key's label: masked, as every message shows a key. */
export function liveKeyLabel(key: string): string {
  return `API key ${maskKey(key)}`;
}

/** A live key (the platform's answer to a get) as a subject; its age from `created_at` at `now`. */
export function keyFromLive(
  key: string,
  live: { alias: string; securityConfig?: unknown; createdAt: string },
  now: number,
): KeySubject {
  const subject = keyFromProps("", { alias: live.alias, securityConfig: live.securityConfig });
  return { ...subject, label: liveKeyLabel(key), ageDays: (now - Date.parse(live.createdAt)) / DAY_MS };
}

/** `ids 3, 4, 5` for a label, at most five of them. */
function idList(ids: (number | string)[]): string {
  const shown = ids.slice(0, 5).join(", ");
  return ids.length > 5 ? `ids ${shown} and ${ids.length - 5} more` : `id${ids.length > 1 ? "s" : ""} ${shown}`;
}

/** Live sub-accounts of one alias and pricing (one batch, as `llm-accounts import` groups them) as a subject. */
export function batchFromLive(
  members: {
    id: number | string;
    token: string;
    alias: string;
    balance: string;
    modelPricing: { model: string; pricingFactor: number }[];
  }[],
): BatchSubject {
  const first = members[0];
  return {
    // The alias quoted as every value of a message is (JSON): a console alias may hold any character.
    label: redact(`sub-accounts ${JSON.stringify(first.alias)} (${idList(members.map((m) => m.id))})`),
    alias: first.alias,
    pricing: first.modelPricing.map((m) => ({ model: m.model, factor: m.pricingFactor })),
    members: members.map((m) => ({ label: `sub-account ${m.id} (${maskKey(m.token)})`, balance: m.balance })),
  };
}
