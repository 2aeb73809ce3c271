/**
 * Values a platform may keep in another form than the one written (docs/decisions.md, "normalised values"): an alias
 * lower-cased or cut at a length, a pricing factor rounded, an allowed address as its range. A declared value and the
 * platform's form of it are the same value, compared here the way such a platform compares them, so that it shows
 * no drift and gets no edit; but only where the platform was measured keeping that form (KeptForms: the profile
 * `llm-accounts doctor --write --save` writes): elsewhere a declared change to such a form (an alias given a suffix,
 * a case change, a factor moved within its last decimal) is a change. Pricing lists compare in any order everywhere.
 */
import { isIP } from "node:net";
import { same } from "./canonical.js";
import { ALIAS_CUT_MIN_LENGTH, FACTOR_DECIMALS_MAX, FACTOR_DECIMALS_MIN } from "./assumptions.js";
import type { Profile } from "./profile.js";

/** The forms a platform may keep a value in, named as the emulator's readings that play them and the doctor's rows that find them. */
export const KEPT_FORMS = ["lowercase-aliases", "cut-aliases", "rounded-factors", "normalised-values"] as const;
export type KeptForm = (typeof KEPT_FORMS)[number];
/** The forms one platform was measured keeping values in. */
export type KeptForms = ReadonlySet<KeptForm>;
/** Every form: what the doctor judges an answer against, and what finds a lost create's marked alias however it was kept. */
export const EVERY_KEPT_FORM: KeptForms = new Set(KEPT_FORMS);

/** The forms a profile measured (`kept`, and `cut-aliases` where it records the length aliases are cut to, `limits.aliasCut`); none without a profile. */
export function keptFormsOf(profile: Pick<Profile, "kept" | "limits"> | undefined): KeptForms {
  const kept = new Set<KeptForm>(profile?.kept ?? []);
  if (profile?.limits?.aliasCut !== undefined) kept.add("cut-aliases");
  return kept;
}

/** A permitted model and its factor, as the runtime holds it. */
type Pricing = { model: string; pricingFactor: number };

/**
 * Whether `live` is the alias `declared` as a platform that keeps the forms `kept` keeps it: the same, lower-cased
 * (`lowercase-aliases`), cut to its first ALIAS_CUT_MIN_LENGTH characters or more (`cut-aliases`), or lower-cased and
 * cut. A shorter cut is drift: a platform that cuts aliases so short is not known, and a rename to a short prefix is
 * what a user does in the console.
 */
export function sameAlias(declared: string, live: string, kept: KeptForms): boolean {
  if (live === declared) return true;
  const length = [...live].length;
  const forms = kept.has("lowercase-aliases") ? [declared, declared.toLowerCase()] : [declared];
  const cuts = kept.has("cut-aliases");
  return forms.some(
    (form) =>
      form === live || (cuts && length >= ALIAS_CUT_MIN_LENGTH && [...form].length > length && form.startsWith(live)),
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
  return sameAlias(marked, live, EVERY_KEPT_FORM) && !sameMarked(marked, live);
}

/** An IP allow-list entry as a range: a bare address is the range of one (`/32`, `/128`), the form some platforms keep. */
function asRange(entry: string): string {
  const [address, bits] = entry.split("/", 2);
  const version = isIP(address);
  if (version === 0) return entry;
  return `${address.toLowerCase()}/${bits ?? (version === 4 ? 32 : 128)}`;
}

/**
 * Whether two security configs restrict the same way, as the platform compares them: on a platform measured keeping
 * an address as its range (`normalised-values`), an address and the range of that one address (`1.2.3.4`,
 * `1.2.3.4/32`) are the same entry, so the range form it answers is no drift and no edit. Everything else must match exactly.
 */
export function sameRestrictions(a: unknown, b: unknown, kept: KeptForms): boolean {
  if (!kept.has("normalised-values")) return same(a, b);
  const ranges = (config: unknown): unknown => {
    const ip = (config as { ip?: { allow?: unknown } } | undefined)?.ip;
    if (!ip || !Array.isArray(ip.allow)) return config;
    return {
      ...(config as object),
      ip: { ...ip, allow: ip.allow.map((e: unknown) => (typeof e === "string" ? asRange(e) : e)) },
    };
  };
  return same(ranges(a), ranges(b));
}

/** Whether `x` has at most `decimals` decimals. */
function atMost(x: number, decimals: number): boolean {
  const scaled = x * 10 ** decimals;
  return Math.abs(scaled - Math.round(scaled)) < 1e-6;
}

/**
 * Whether `live` is the factor `declared` as a platform keeps it: the same, or, on a platform measured rounding
 * factors (`rounded-factors`), kept at `d` decimals (rounded either way: less than one unit of the last decimal
 * apart) for some `d` from FACTOR_DECIMALS_MIN to FACTOR_DECIMALS_MAX where `declared` has more decimals than that. A
 * declared factor of `d` decimals or fewer must come back as it is.
 */
export function sameFactor(declared: number, live: number, kept: KeptForms): boolean {
  if (declared === live) return true;
  if (!kept.has("rounded-factors")) return false;
  for (let d = FACTOR_DECIMALS_MIN; d <= FACTOR_DECIMALS_MAX; d++) {
    if (atMost(live, d) && !atMost(declared, d) && Math.abs(declared - live) < 10 ** -d) return true;
  }
  return false;
}

/** Whether two pricing lists permit the same models at the same factors (sameFactor, under `kept`), in any order. */
export function samePricing(declared: readonly Pricing[], live: readonly Pricing[], kept: KeptForms): boolean {
  if (declared.length !== live.length) return false;
  const factors = new Map(live.map((m) => [m.model, m.pricingFactor]));
  return (
    factors.size === live.length &&
    declared.every((m) => factors.has(m.model) && sameFactor(m.pricingFactor, factors.get(m.model)!, kept))
  );
}

/**
 * The alias an edit that sent `declared` leaves, as far as it can be told from `before` (the platform's form of
 * another alias sent: a create's marked one, or the alias the edit replaces), under the forms `kept`: `before` when
 * it is that alias as kept; on a platform measured lower-casing, lower-cased when `before` shows the platform
 * lower-cases (no upper-case letter where `declared` has one, and the same first characters but for case); on a
 * platform measured cutting, cut to the length of `before` when `declared` is longer and `before` is as long as a
 * cut alias may be (a create's marked alias is made as long as the cut, limits.aliasCut); else `declared`. A wrong
 * guess costs a refresh that records the platform's form, never a write.
 */
export function aliasAsKept(declared: string, before: string, kept: KeptForms): string {
  if (sameAlias(declared, before, kept)) return before;
  const lowered = declared.toLowerCase();
  const head = Math.min(4, lowered.length);
  const lowers =
    kept.has("lowercase-aliases") &&
    declared !== lowered &&
    before === before.toLowerCase() &&
    before.slice(0, head) === lowered.slice(0, head);
  const form = lowers ? lowered : declared;
  const length = [...before].length;
  const cuts = kept.has("cut-aliases") && length >= ALIAS_CUT_MIN_LENGTH && [...form].length > length;
  return cuts ? [...form].slice(0, length).join("") : form;
}

/**
 * The pricing an edit that sent `declared` leaves, as far as it can be told: each declared entry with the factor
 * `before` held for its model when that is the declared factor as kept (a create's answer shows the platform's
 * form), else as declared; in the order declared.
 */
export function pricingAsKept(declared: readonly Pricing[], before: readonly Pricing[], kept: KeptForms): Pricing[] {
  return declared.map((m) => {
    const held = before.find((b) => b.model === m.model);
    return held && sameFactor(m.pricingFactor, held.pricingFactor, kept)
      ? { model: m.model, pricingFactor: held.pricingFactor }
      : { ...m };
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
