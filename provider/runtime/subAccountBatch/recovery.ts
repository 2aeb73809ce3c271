import { createHash, randomBytes } from "node:crypto";
import {
  ALIAS_MAX_LENGTH,
  CLOCK_SKEW_MS,
  CREATE_MARKER,
  FIT_MARK_MIN_LENGTH,
  type CreateMarkForm,
} from "../../api/assumptions.js";
import { type SubAccount, type SubAccountCreateRequest, compareIds } from "../../api/schemas/index.js";
import { BadRequestError, LlmAccountsError } from "../../client/errors.js";
import { SETTINGS } from "../../client/settings.js";
import { toMicros } from "../../api/money.js";
import { cutMarked, sameMarked } from "../../api/keptForms.js";
import { maskKey } from "../../api/redact.js";
import { refusedSizeCap, type SubAccountsApi } from "../../client/subAccounts.js";
import { lookUntil, type AccountSnapshot } from "../command/index.js";

/** The alias cut to at most `length` characters, never between the halves of a surrogate pair. */
function cutTo(alias: string, length: number): string {
  let cut = Math.max(0, Math.min(alias.length, length));
  if (cut > 0 && cut < alias.length && /[\uD800-\uDBFF]/.test(alias[cut - 1])) cut--;
  return alias.slice(0, cut);
}

/**
 * The alias one create gives its sub-accounts: the declared alias with a marker no other create carries (random
 * hex), in the form `form` (assumptions.ts CREATE_MARK_FORMS): `tilde`, `<alias>~<hex>` cut to ALIAS_MAX_LENGTH;
 * `fit`, as long as the declared alias (FIT_MARK_MIN_LENGTH at least), of its characters and the hex digits. Either
 * is cut to `max` (the profile's aliasMax or aliasCut, SubAccountsApi.markFits) on the alias's side, so that a platform that cuts longer aliases keeps the
 * mark. The platform keeps it until the edit that follows the create sets the declared alias, so what a lost create
 * made is found by this alias alone, whatever another stack, process or earlier run created with the same alias and balance.
 */
export function markedAlias(
  alias: string,
  nonce: string = randomBytes(6).toString("hex"),
  form: CreateMarkForm = "tilde",
  max: number = ALIAS_MAX_LENGTH,
): string {
  const longest = Math.min(max, ALIAS_MAX_LENGTH);
  if (form === "fit")
    return `${cutTo(alias, Math.min(Math.max(alias.length, FIT_MARK_MIN_LENGTH), longest) - nonce.length)}${nonce}`;
  const suffix = `${CREATE_MARKER}${nonce}`;
  return `${cutTo(alias, longest - suffix.length)}${suffix}`;
}

/** The hex digits of a create's mark (identityMark's, or random), as markedAlias writes them and a platform that lower-cases keeps them. */
const MARK_HEX = /[0-9a-f]{12}$/;

/**
 * Whether `alias` may be a create's marked alias, in any form markedAlias writes (CREATE_MARK_FORMS): `tilde`,
 * CREATE_MARKER and 12 hex digits at its end; `fit`, FIT_MARK_MIN_LENGTH characters or more ending with 12 hex digits
 * of which some are digits and some letters (a hash's are, but for about 1 in 280 of them: all digits; a label's often
 * are not: a date and time, `aaaa...`). What a killed create left under it is its batch's to adopt at its next run,
 * never anyone else's. A declared alias that ends with such 12 hex digits itself (`deploy-3f09b2c41d7e`) cannot be
 * told from a `fit` mark: it is taken for one.
 */
export function mayCarryCreateMark(alias: string): boolean {
  if (!MARK_HEX.test(alias)) return false;
  const hex = alias.slice(-12);
  if (alias.slice(0, -12).endsWith(CREATE_MARKER)) return true;
  return [...alias].length >= FIT_MARK_MIN_LENGTH && /[0-9]/.test(hex) && /[a-f]/.test(hex);
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
export function leftUnderMark(
  old: { balance: number; mark?: string },
  listed: Pick<AccountSnapshot, "endingWith">,
  known: Known,
): SubAccount[] {
  const { mark } = old;
  if (mark === undefined) return [];
  return listed.endingWith(mark).filter((s) => !known.has(s.token) && madeBy(old, s));
}

/** Objects a recovery must leave: only asked whether it holds one. */
export type Known = Pick<ReadonlySet<string>, "has">;

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
 * The sub-accounts a lost create recorded as `unconfirmedAlias` made: those that still carry its marked alias, as
 * the platform keeps it (sameMarked: lower-cased too); no other create carries it. States written before the marker
 * have `unconfirmedSince` only: for them, as then, the listed sub-accounts of the batch's alias and balance created
 * since (allowing for the platform's clock), not among the ids that existed before it (`unconfirmedExcept`) nor
 * `known` (command/custody.ts).
 */
export function unconfirmedAmong(
  old: {
    alias: string;
    balance: number;
    unconfirmedAlias?: string;
    unconfirmedSince?: string;
    unconfirmedExcept?: number[];
  },
  listed: readonly SubAccount[],
  known: Known,
): SubAccount[] {
  const marked = old.unconfirmedAlias;
  if (marked) return listed.filter((s) => sameMarked(marked, s.alias) && !known.has(s.token));
  if (!old.unconfirmedSince) return [];
  const since = Date.parse(old.unconfirmedSince) - CLOCK_SKEW_MS;
  const existed = new Set(old.unconfirmedExcept ?? []);
  return listed.filter(
    (s) =>
      s.alias === old.alias &&
      !known.has(s.token) &&
      !(typeof s.id === "number" && existed.has(s.id)) &&
      Date.parse(s.createdAt) >= since &&
      madeBy(old, s),
  );
}

/**
 * What a batch's lost create made, by one list: of the account (a platform may keep the marked alias in another
 * case, which a filter of it may miss), or (states before the marker) of its own alias, then unconfirmedAmong.
 */
export async function listUnconfirmed(
  api: SubAccountsApi,
  old: Parameters<typeof unconfirmedAmong>[0],
  known: Known,
): Promise<SubAccount[]> {
  return unconfirmedAmong(old, await api.list(old.unconfirmedAlias ? {} : { alias: old.alias }), known);
}

/**
 * One batch create, its sub-accounts under a marked alias (markedAlias) that the caller then replaces with the
 * declared one in the edit that aligns the batch. Where the platform refuses the marked alias (a 400, or a refusal
 * that means one: aliases capped or restricted there), the create, which made nothing, is sent once more under the
 * `fit` form, and the client keeps that form; a refusal of both names the marker and the setting. Where it refuses
 * the `count` (its cap is below the package's assumption), the create is split into creates the platform takes,
 * all under the same mark, and the client keeps the cap: each part is what `left` is to the next. Where a list of
 * this client answered tokens masked (masked-tokens), nothing is sent: a lost answer could not be looked for.
 */
export async function createBatch(
  api: SubAccountsApi,
  request: SubAccountCreateRequest,
  mark?: string,
  left: readonly SubAccount[] = [],
  known: ReadonlySet<string> = new Set(),
): Promise<SubAccount[]> {
  if (api.tokensMasked) throw tokensMaskedStop(request.alias);
  let made = [...left];
  while (made.length < request.count) {
    const chunk = Math.min(api.countCap ?? request.count, request.count - made.length);
    try {
      const next = await createInForm(api, { ...request, count: made.length + chunk }, mark, made, known);
      if (next.length <= made.length)
        throw new LlmAccountsError(
          `a sub-account create of ${chunk} answered without the sub-accounts it made (alias ${JSON.stringify(request.alias)})`,
        );
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
async function createInForm(
  api: SubAccountsApi,
  request: SubAccountCreateRequest,
  mark: string | undefined,
  left: readonly SubAccount[],
  known: ReadonlySet<string>,
): Promise<SubAccount[]> {
  const form = api.markForm;
  try {
    return await createMarked(api, request, form, mark, left, known);
  } catch (err) {
    if (!(err instanceof BadRequestError) || err.mayHaveSucceeded || !mayMeanTheMark(err)) throw err;
    if (form === "fit") throw markerRefused(err, request.alias, ["fit"], api.markFits);
    try {
      const made = await createMarked(api, request, "fit", mark, left, known);
      api.markForm = "fit";
      return made;
    } catch (again) {
      if (again instanceof BadRequestError && !again.mayHaveSucceeded)
        throw markerRefused(again, request.alias, ["tilde", "fit"], api.markFits);
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
function markerRefused(
  err: BadRequestError,
  alias: string,
  forms: CreateMarkForm[],
  max: number | undefined,
): BadRequestError {
  const sent = forms.map((f) => `${f}: ${JSON.stringify(markedAlias(alias, "0123456789ab", f, max))}`).join(", ");
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
 * only as many more are created. If the answer is lost (the create may have happened), a list of the account finds
 * what it made under the marked alias as the platform keeps it (sameMarked; asked again while it shows fewer, until
 * lateWritesMs after the answer was lost: a platform may finish a create after a gateway gave up, or show it late), which is adopted instead of
 * being created twice; only a create nothing was found of is sent again: nothing else carries that alias, so nothing
 * another stack or an earlier run of another resource made is taken. Where the platform cut the mark off (cutMarked:
 * some listed alias is the marked one cut, not one of `known`), what it made cannot be told from another batch's:
 * nothing is taken nor sent again (an UnconfirmedCreateError showing them). When that list fails too, an
 * UnconfirmedCreateError names the marked alias, which the state keeps for the next run.
 */
async function createMarked(
  api: SubAccountsApi,
  request: SubAccountCreateRequest,
  form: CreateMarkForm,
  mark: string | undefined,
  left: readonly SubAccount[],
  known: ReadonlySet<string>,
): Promise<SubAccount[]> {
  const startedAt = Date.now();
  const alias = markedAlias(request.alias, mark, form, api.markFits);
  const marked = { ...request, alias, count: request.count - left.length };
  const unconfirmed = (message: string, operation: string | undefined) =>
    new UnconfirmedCreateError(message, operation, startedAt, marked.alias).withAdvice(
      lostSubAccountsAdvice(marked.alias),
    );
  const leftTokens = new Set(left.map((s) => s.token));
  try {
    return [...left, ...(await api.create(marked))];
  } catch (err) {
    if (!(err instanceof LlmAccountsError) || !err.mayHaveSucceeded) throw err;
    let found: SubAccount[];
    let cut: SubAccount[];
    try {
      // The platform may still be making what the create asked for, or a list may lag behind it: one that shows fewer
      // than it asked for is asked again until lateWritesMs after the answer was lost (lookUntil), and only then sent again.
      const look = async () => {
        const listed = (await api.list()).filter((s) => !leftTokens.has(s.token) && !known.has(s.token));
        return {
          found: listed.filter((s) => sameMarked(marked.alias, s.alias)).sort((a, b) => compareIds(a.id, b.id)),
          cut: listed.filter((s) => cutMarked(marked.alias, s.alias)),
        };
      };
      ({ found, cut } = await lookUntil(api, look, (f) => f.found.length >= marked.count));
    } catch (listErr) {
      // Without the list nobody knows whether the create happened: keep the create's warning, not just the list's error.
      throw unconfirmed(
        `${err.message}; looking for sub-accounts with alias "${marked.alias}" failed too: ${(listErr as Error).message}`,
        err.operation,
      );
    }
    if (found.length === marked.count) return [...left, ...found];
    if (cut.length > 0) throw markCut(err, marked.alias, cut, startedAt);
    if (found.length === 0) {
      // Nothing was created: the request did not take effect, so sending it again cannot make a duplicate.
      try {
        return [...left, ...(await api.create(marked))];
      } catch (again) {
        // Its answer may be lost too: then the next run looks again.
        if (again instanceof LlmAccountsError && again.mayHaveSucceeded)
          throw unconfirmed(again.message, again.operation);
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

/**
 * The error of a lost create on a platform that cut its marked alias into the mark (cutMarked): the sub-accounts
 * listed under the cut alias are shown (masked) and none is taken, as they cannot be told from another batch's of
 * the same alias; the create is not sent again, as it may have made them. The profile's aliasCut places the mark within the cut.
 */
function markCut(
  err: LlmAccountsError,
  marked: string,
  cut: readonly SubAccount[],
  since: number,
): UnconfirmedCreateError {
  const shown =
    cut
      .slice(0, 3)
      .map((s) => `${maskKey(s.token)} ${JSON.stringify(s.alias)}`)
      .join(", ") + (cut.length > 3 ? ` and ${cut.length - 3} more` : "");
  return new UnconfirmedCreateError(
    `${err.message}; the sub-account list shows ${cut.length} sub-account(s) under the marked alias "${marked}" as this platform cut it (${shown}): ` +
      "the cut took the create's mark, so what the create made cannot be told from another batch's of the same alias. None was taken and the create was not sent again",
    err.operation,
    since,
    marked,
  ).withAdvice(
    "Run `llm-accounts doctor --write --save`: it measures the length this platform cuts aliases at into the profile's limits.aliasCut (`llm-accounts:profile`, docs/doctor.md), so that a create's mark fits within it; " +
      "then adopt what this create made (adoptTokens) or delete it in the console",
  );
}

/** The stop of a create on a platform whose list masks tokens (SubAccountsApi.tokensMasked), before it is sent. */
function tokensMaskedStop(alias: string): LlmAccountsError {
  return new LlmAccountsError(
    `a sub-account create of alias ${JSON.stringify(alias)} was not sent: this platform's list masks sub-account tokens (a list earlier in this command showed them masked), ` +
      "so a create whose answer is lost could not be looked for and what it made would be orphaned; nothing was created. This platform's list (the reading masked-tokens, docs/decisions.md) " +
      "is not supported; run `llm-accounts doctor`",
    { operation: "POST sub-account/create" },
  );
}
