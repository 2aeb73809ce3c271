import { createHash, randomBytes } from "node:crypto";
import { ALIAS_MAX_LENGTH, CLOCK_SKEW_MS, CREATE_MARKER, FIT_MARK_MIN_LENGTH, type CreateMarkForm } from "../../api/assumptions.js";
import { type SubAccount, type SubAccountCreateRequest, compareIds } from "../../api/schemas/index.js";
import { BadRequestError, LlmAccountsError } from "../../client/errors.js";
import { SETTINGS } from "../../client/settings.js";
import { toMicros } from "../../api/money.js";
import { refusedSizeCap, type SubAccountsApi } from "../../client/subAccounts.js";
import { lookUntil } from "../command/index.js";

/** The alias cut to at most `length` characters, never between the halves of a surrogate pair. */
function cutTo(alias: string, length: number): string {
  let cut = Math.max(0, Math.min(alias.length, length));
  if (cut > 0 && cut < alias.length && /[\uD800-\uDBFF]/.test(alias[cut - 1])) cut--;
  return alias.slice(0, cut);
}

/**
 * The alias one create gives its sub-accounts: the declared alias with a marker no other create carries (random
 * hex), in the form `form` (assumptions.ts CREATE_MARK_FORMS): `tilde`, `<alias>~<hex>` cut to ALIAS_MAX_LENGTH;
 * `fit`, as long as the declared alias (FIT_MARK_MIN_LENGTH at least), of its characters and the hex digits. The
 * platform keeps it until the edit that follows the create sets the declared alias, so what a lost create made is
 * found by this alias alone, whatever another stack, process or earlier run created with the same alias and balance.
 */
export function markedAlias(alias: string, nonce: string = randomBytes(6).toString("hex"), form: CreateMarkForm = "tilde"): string {
  if (form === "fit") return `${cutTo(alias, Math.max(alias.length, FIT_MARK_MIN_LENGTH) - nonce.length)}${nonce}`;
  const suffix = `${CREATE_MARKER}${nonce}`;
  return `${cutTo(alias, ALIAS_MAX_LENGTH - suffix.length)}${suffix}`;
}

/**
 * The mark of one resource's creates: 12 hex digits of a hash of what names it in its stack (project, stack, type,
 * name, and its parent's URN when it has one), the same at every run. The SubAccountBatch class gives it as the
 * input `mark`; a killed `up`'s sub-accounts are found by it at the next run of the same resource, and no other
 * resource, stack or project has it (two stacks of one name and project on two backends would share it: name one).
 */
export function identityMark(parts: readonly string[]): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 12);
}

/**
 * Sub-accounts an earlier run of the resource made under its own mark and never recorded (an `up` killed between a
 * create and its edit): those of `listed` whose alias ends with the mark (in any form, under the alias declared
 * then, whatever it is now) and that have the batch's balance, not `known`.
 */
export function leftUnderMark(old: { balance: number; mark?: string }, listed: readonly SubAccount[], known: Known): SubAccount[] {
  const { mark } = old;
  if (mark === undefined) return [];
  return endingWith(listed, mark).filter((s) => !known.has(s.token) && madeBy(old, s));
}

/** Objects a recovery must leave: only asked whether it holds one. */
export type Known = Pick<ReadonlySet<string>, "has">;

/**
 * Listed sub-accounts by the end of their alias (its last `length` characters), built once per list: one shared
 * list serves every read of a command (command/sharedList.ts), and each read looks for its own mark in it, which
 * scanning the whole list would make quadratic in the size of the account. A list is never changed once answered.
 */
const BY_ALIAS_END = new WeakMap<readonly SubAccount[], Map<number, Map<string, SubAccount[]>>>();

/** Those of `listed` whose alias ends with `end`, in list order. */
function endingWith(listed: readonly SubAccount[], end: string): SubAccount[] {
  if (end === "") return [...listed];
  let byLength = BY_ALIAS_END.get(listed);
  if (!byLength) BY_ALIAS_END.set(listed, (byLength = new Map()));
  let index = byLength.get(end.length);
  if (!index) {
    index = new Map();
    for (const s of listed) {
      if (s.alias.length < end.length) continue;
      const key = s.alias.slice(-end.length);
      const group = index.get(key);
      if (group) group.push(s);
      else index.set(key, [s]);
    }
    byLength.set(end.length, index);
  }
  return index.get(end) ?? [];
}

/**
 * For states written before the marker: true when a listed sub-account (found by alias) can be what a create
 * request made, by its balance, which nothing can change afterwards.
 */
function madeBy(request: { balance: number }, s: SubAccount): boolean {
  // In millionths, as the platform keeps it: `1.1 + 2.2` is stored as "3.300000", which Number() reads as 3.3.
  return toMicros(s.balance) === toMicros(request.balance);
}

/** What to do about sub-accounts a lost create may have made: the runtime looks again at the next run. */
function lostSubAccountsAdvice(alias: string): string {
  return `List sub-accounts with alias ${JSON.stringify(alias)} (getSubAccounts({ alias })) to see them; the next run looks for them again and adopts what this create made`;
}

/**
 * A create whose answer was lost and whose recovery could not tell what it made: sub-accounts may exist
 * unrecorded, with the alias `marked` (that create's own, see markedAlias).
 */
export class UnconfirmedCreateError extends LlmAccountsError {
  constructor(
    message: string,
    operation: string | undefined,
    /** When the create was sent (our clock). */
    readonly since: number,
    /** The alias the create gave its sub-accounts: only it carries it. */
    readonly marked: string,
  ) {
    super(message, { operation, mayHaveSucceeded: true });
  }
}

/**
 * The sub-accounts a lost create recorded as `unconfirmedAlias` made: those that still carry its marked alias
 * (no other create carries it). States written before the marker have `unconfirmedSince` only: for them, as
 * then, the listed sub-accounts of the batch's alias and balance created since (allowing for the platform's
 * clock), not among the ids that existed before it (`unconfirmedExcept`) nor `known` (command/custody.ts).
 */
export function unconfirmedAmong(
  old: { alias: string; balance: number; unconfirmedAlias?: string; unconfirmedSince?: string; unconfirmedExcept?: number[] },
  listed: readonly SubAccount[],
  known: Known,
): SubAccount[] {
  if (old.unconfirmedAlias) return listed.filter((s) => s.alias === old.unconfirmedAlias && !known.has(s.token));
  if (!old.unconfirmedSince) return [];
  const since = Date.parse(old.unconfirmedSince) - CLOCK_SKEW_MS;
  const existed = new Set(old.unconfirmedExcept ?? []);
  return listed.filter(
    (s) => s.alias === old.alias && !known.has(s.token) && !(typeof s.id === "number" && existed.has(s.id)) && Date.parse(s.createdAt) >= since && madeBy(old, s),
  );
}

/**
 * What a batch's lost create made, by one list: of its marked alias, or (states before the marker) of its own
 * alias, then unconfirmedAmong.
 */
export async function listUnconfirmed(
  api: SubAccountsApi,
  old: Parameters<typeof unconfirmedAmong>[0],
  known: Known,
): Promise<SubAccount[]> {
  return unconfirmedAmong(old, await api.list({ alias: old.unconfirmedAlias ?? old.alias }), known);
}

/**
 * One batch create, its sub-accounts under a marked alias (markedAlias) that the caller then replaces with the
 * declared one in the edit that aligns the batch. Where the platform refuses the marked alias (a 400, or a refusal
 * that means one: aliases capped or restricted there), the create, which made nothing, is sent once more under the
 * `fit` form, and the client keeps that form; a refusal of both names the marker and the setting. Where it refuses
 * the `count` (its cap is below the package's assumption), the create is split into creates the platform takes,
 * all under the same mark, and the client keeps the cap: each part is what `left` is to the next.
 */
export async function createBatch(api: SubAccountsApi, request: SubAccountCreateRequest, mark?: string, left: readonly SubAccount[] = []): Promise<SubAccount[]> {
  let made = [...left];
  while (made.length < request.count) {
    const chunk = Math.min(api.countCap ?? request.count, request.count - made.length);
    try {
      const next = await createInForm(api, { ...request, count: made.length + chunk }, mark, made);
      if (next.length <= made.length) throw new LlmAccountsError(`a sub-account create of ${chunk} answered without the sub-accounts it made (alias ${JSON.stringify(request.alias)})`);
      made = next;
    } catch (err) {
      const cap = smallerCountCap(err, chunk);
      if (cap === undefined) throw made.length > 0 ? withMade(err, made) : err;
      api.countCap = cap;
    }
  }
  return made;
}

/** Where the error of a create that failed carries what it had made all the same (madeBefore). */
const MADE = Symbol("made before the failure");

/**
 * The error of a split create's later part (or of a create after a killed run's leftovers were taken), carrying the
 * sub-accounts the earlier parts made: the caller records them in the state with the failure, so that a re-run
 * aligns them and `destroy` deletes them. The message says how many, and under which alias.
 */
function withMade(err: unknown, made: SubAccount[]): unknown {
  if (!(err instanceof Error)) return err;
  Object.defineProperty(err, MADE, { value: made, configurable: true });
  const advice = `${made.length} sub-account(s) this create made before the failure (alias ${JSON.stringify(made[0].alias)}) are kept in the state: the next run aligns them and creates the rest, and destroy deletes them`;
  return err instanceof LlmAccountsError ? err.withAdvice(advice) : err;
}

/** The sub-accounts a failed createBatch made all the same (withMade); none for any other error. */
export function madeBefore(err: unknown): SubAccount[] {
  return (err instanceof Error && (err as Error & { [MADE]?: SubAccount[] })[MADE]) || [];
}

/**
 * The most sub-accounts one create may make, when `err` is a create of `chunk` refused for its `count` (a 400 naming
 * it: a platform whose cap is below the package's assumption): the number the refusal gives, else half the chunk.
 * Undefined for any other failure, or a chunk of 1.
 */
export function smallerCountCap(err: unknown, chunk: number): number | undefined {
  return refusedSizeCap(err, /\bcount\b/i, chunk);
}

/** One create of `request.count - left.length` sub-accounts under the client's mark form, falling back to `fit` (createBatch). */
async function createInForm(api: SubAccountsApi, request: SubAccountCreateRequest, mark: string | undefined, left: readonly SubAccount[]): Promise<SubAccount[]> {
  const form = api.markForm;
  try {
    return await createMarked(api, request, form, mark, left);
  } catch (err) {
    if (!(err instanceof BadRequestError) || err.mayHaveSucceeded || !mayMeanTheMark(err)) throw err;
    if (form === "fit") throw markerRefused(err, request.alias, ["fit"]);
    try {
      const made = await createMarked(api, request, "fit", mark, left);
      api.markForm = "fit";
      return made;
    } catch (again) {
      if (again instanceof BadRequestError && !again.mayHaveSucceeded) throw markerRefused(again, request.alias, ["tilde", "fit"]);
      throw again;
    }
  }
}

/** What a refusal says: its code and the platform's message (the whole message where the platform gave none). */
function refusalWords(err: BadRequestError): string {
  return `${err.code ?? ""} ${err.apiMessage ?? err.message}`;
}

/** Request fields of a batch create other than its alias, as a refusal's words may name them. */
const OTHER_CREATE_FIELDS = /\b(count|balance|model_pricing|modelPricing|pricing_factor|pricingFactor|model|models)\b/i;

/**
 * Whether a create's 400 may be a refusal of its marked alias: it names the alias, or no field at all (a platform
 * that says only "invalid parameter"). One that names another field of the request (a `count` above the platform's
 * cap, a model it does not know) is the user's to see as it is: sending it again under another mark would fail
 * the same way, and the advice would blame the marker.
 */
function mayMeanTheMark(err: BadRequestError): boolean {
  const words = refusalWords(err);
  return /alias/i.test(words) || !OTHER_CREATE_FIELDS.test(words);
}

/**
 * The error of a create refused under the package's marked alias: says that the alias sent was the package's marker
 * (not the declared alias), in which forms, and what to do.
 */
function markerRefused(err: BadRequestError, alias: string, forms: CreateMarkForm[]): BadRequestError {
  const sent = forms.map((f) => `${f}: ${JSON.stringify(markedAlias(alias, "0123456789ab", f))}`).join(", ");
  const s = SETTINGS.createMark;
  return err.withAdvice(
    `The create was sent under the package's marked alias, not ${JSON.stringify(alias)} itself (the edit that follows a create sets the declared alias; ` +
      `see docs/resources/sub-account-batch.md#lost-creates), in the form${forms.length > 1 ? "s" : ""} ${sent} (hex digits vary). ` +
      `If the platform refuses it for its length or characters, the declared alias may be refused too; if only the mark is, ` +
      `set ${s.env} or the stack config ${s.config} (\`llm-accounts doctor --write\` tries both forms)`,
  );
}

/**
 * One create under a marked alias of form `form`: the resource's own `mark` (its identity's hex, given by the
 * SubAccountBatch class), else a random one. `left`: what an earlier run of the same resource made under its mark
 * and never recorded (an `up` killed between a create and its edit; leftUnderMark, found by the caller): taken, and
 * only as many more are created. If the answer is lost (the create may have happened), a list of the marked alias
 * finds what it made (asked again after each of LATE_VISIBILITY_WAITS_MS while it shows fewer: a platform may show
 * a create late), which is adopted instead of being created twice; only a create nothing was found of is sent again: nothing else carries that alias, so nothing
 * another stack or an earlier run of another resource made is taken. When that list fails too, an
 * UnconfirmedCreateError names the marked alias, which the state keeps for the next run.
 */
async function createMarked(api: SubAccountsApi, request: SubAccountCreateRequest, form: CreateMarkForm, mark: string | undefined, left: readonly SubAccount[]): Promise<SubAccount[]> {
  const startedAt = Date.now();
  const alias = markedAlias(request.alias, mark, form);
  const marked = { ...request, alias, count: request.count - left.length };
  const unconfirmed = (message: string, operation: string | undefined) =>
    new UnconfirmedCreateError(message, operation, startedAt, marked.alias).withAdvice(lostSubAccountsAdvice(marked.alias));
  const leftTokens = new Set(left.map((s) => s.token));
  try {
    return [...left, ...(await api.create(marked))];
  } catch (err) {
    if (!(err instanceof LlmAccountsError) || !err.mayHaveSucceeded) throw err;
    let found: SubAccount[];
    try {
      // A list may lag behind the create (LATE_VISIBILITY_WAITS_MS): one that shows fewer than it asked for is asked again.
      const look = async () => (await api.list({ alias: marked.alias })).filter((s) => !leftTokens.has(s.token)).sort((a, b) => compareIds(a.id, b.id));
      found = await lookUntil(api, look, (f) => f.length >= marked.count);
    } catch (listErr) {
      // Without the list nobody knows whether the create happened: keep the create's warning, not just the list's error.
      throw unconfirmed(`${err.message}; looking for sub-accounts with alias "${marked.alias}" failed too: ${(listErr as Error).message}`, err.operation);
    }
    if (found.length === marked.count) return [...left, ...found];
    if (found.length === 0) {
      // Nothing was created: the request did not take effect, so sending it again cannot make a duplicate.
      try {
        return [...left, ...(await api.create(marked))];
      } catch (again) {
        // Its answer may be lost too: then the next run looks again.
        if (again instanceof LlmAccountsError && again.mayHaveSucceeded) throw unconfirmed(again.message, again.operation);
        throw again;
      }
    }
    throw unconfirmed(
      `the sub-account create may have partly happened: ${found.length} of ${marked.count} new sub-accounts with alias "${marked.alias}" were found; ` +
        `re-run: the next run adopts them and creates the rest`,
      err.operation,
    );
  }
}
