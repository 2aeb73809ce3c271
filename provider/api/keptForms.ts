/**
 * Values a platform may keep in another form than the one written (docs/decisions.md, "normalised values"): an alias
 * lower-cased or cut at a length, a pricing factor rounded, a pricing list in another order, an allowed address as
 * its range. A declared value and the platform's form of it are the same value, compared here the way such a
 * platform compares them, so that it shows no drift and gets no edit; any other difference is drift.
 */
import { isIP } from "node:net";
import { same } from "./canonical.js";
import { ALIAS_CUT_MIN_LENGTH, FACTOR_DECIMALS_MAX, FACTOR_DECIMALS_MIN } from "./assumptions.js";

/** A permitted model and its factor, as the runtime holds it. */
type Pricing = { model: string; pricingFactor: number };

/**
 * Whether `live` is the alias `declared` as a platform keeps it: the same, lower-cased, cut to its first
 * ALIAS_CUT_MIN_LENGTH characters or more, or lower-cased and cut. A shorter cut is drift: a platform that cuts
 * aliases so short is not known, and a rename to a short prefix is what a user does in the console.
 */
export function sameAlias(declared: string, live: string): boolean {
  if (live === declared) return true;
  const length = [...live].length;
  return [declared, declared.toLowerCase()].some(
    (form) => form === live || (length >= ALIAS_CUT_MIN_LENGTH && [...form].length > length && form.startsWith(live)),
  );
}

/**
 * Whether `live` is a create's marked alias `marked` (runtime/subAccountBatch/recovery.ts) as a platform keeps it with
 * its mark whole: the same, or lower-cased (the mark's hex is lower-case already). A cut is not: a cut that took the
 * mark leaves an alias another batch of the same alias may have, so nothing under it is claimed (cutMarked).
 */
export function sameMarked(marked: string, live: string): boolean {
  return live === marked || live === marked.toLowerCase();
}

/** Whether `live` is `marked` as a platform that cuts aliases keeps it, the cut into or past its mark (sameAlias, not sameMarked). */
export function cutMarked(marked: string, live: string): boolean {
  return sameAlias(marked, live) && !sameMarked(marked, live);
}

/** An IP allow-list entry as a range: a bare address is the range of one (`/32`, `/128`), the form some platforms keep. */
function asRange(entry: string): string {
  const [address, bits] = entry.split("/", 2);
  const version = isIP(address);
  if (version === 0) return entry;
  return `${address.toLowerCase()}/${bits ?? (version === 4 ? 32 : 128)}`;
}

/**
 * Whether two security configs restrict the same way, as the platform compares them: an address and the range of
 * that one address (`1.2.3.4`, `1.2.3.4/32`) are the same entry, so a platform that keeps and answers the range form
 * is no drift and no edit (readings.ts `normalised-values`). Everything else must match exactly.
 */
export function sameRestrictions(a: unknown, b: unknown): boolean {
  const ranges = (config: unknown): unknown => {
    const ip = (config as { ip?: { allow?: unknown } } | undefined)?.ip;
    if (!ip || !Array.isArray(ip.allow)) return config;
    return { ...(config as object), ip: { ...ip, allow: ip.allow.map((e: unknown) => (typeof e === "string" ? asRange(e) : e)) } };
  };
  return same(ranges(a), ranges(b));
}

/** Whether `x` has at most `decimals` decimals. */
function atMost(x: number, decimals: number): boolean {
  const scaled = x * 10 ** decimals;
  return Math.abs(scaled - Math.round(scaled)) < 1e-6;
}

/**
 * Whether `live` is the factor `declared` as a platform keeps it: the same, or kept at `d` decimals (rounded either
 * way: less than one unit of the last decimal apart) for some `d` from FACTOR_DECIMALS_MIN to FACTOR_DECIMALS_MAX
 * where `declared` has more decimals than that. A declared factor of `d` decimals or fewer must come back as it is.
 */
export function sameFactor(declared: number, live: number): boolean {
  if (declared === live) return true;
  for (let d = FACTOR_DECIMALS_MIN; d <= FACTOR_DECIMALS_MAX; d++) {
    if (atMost(live, d) && !atMost(declared, d) && Math.abs(declared - live) < 10 ** -d) return true;
  }
  return false;
}

/** Whether two pricing lists permit the same models at the same factors (sameFactor), in any order. */
export function samePricing(declared: readonly Pricing[], live: readonly Pricing[]): boolean {
  if (declared.length !== live.length) return false;
  const factors = new Map(live.map((m) => [m.model, m.pricingFactor]));
  return factors.size === live.length && declared.every((m) => factors.has(m.model) && sameFactor(m.pricingFactor, factors.get(m.model)!));
}

/**
 * The alias an edit that sent `declared` leaves, as far as it can be told: `before` when it is that alias as kept;
 * lower-cased when `before` (the platform's form of another alias sent, a create's marked one) shows the platform
 * lower-cases: no upper-case letter where `declared` has one, and the same first characters but for case; else
 * `declared`. A wrong guess costs a refresh that records the platform's form, never a write.
 */
export function aliasAsKept(declared: string, before: string): string {
  if (sameAlias(declared, before)) return before;
  const lowered = declared.toLowerCase();
  const head = Math.min(4, lowered.length);
  return declared !== lowered && before === before.toLowerCase() && before.slice(0, head) === lowered.slice(0, head) ? lowered : declared;
}

/**
 * The pricing an edit that sent `declared` leaves, as far as it can be told: each declared entry with the factor
 * `before` held for its model when that is the declared factor as kept (a create's answer shows the platform's
 * form), else as declared; in the order declared.
 */
export function pricingAsKept(declared: readonly Pricing[], before: readonly Pricing[]): Pricing[] {
  return declared.map((m) => {
    const held = before.find((b) => b.model === m.model);
    return held && sameFactor(m.pricingFactor, held.pricingFactor) ? { model: m.model, pricingFactor: held.pricingFactor } : { ...m };
  });
}

/**
 * The models `live` permits that `declared` does not list: what an edit that sent `declared` is to remove. Still
 * held after that edit, they show a platform whose pricing edit merges (`merged-pricing`): no edit removes a model.
 */
export function modelsBeyond(declared: readonly Pricing[], live: readonly Pricing[]): string[] {
  const listed = new Set(declared.map((m) => m.model));
  return live.filter((m) => !listed.has(m.model)).map((m) => m.model);
}
