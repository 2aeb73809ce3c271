import type { CreateMarkForm } from "../api/assumptions.js";
import { fromWire, toWire } from "../api/casing.js";
import { ApiGroup, type Sender } from "./apiGroup.js";
import { BadRequestError, LlmAccountsError } from "./errors.js";
import { isMasked, maskKey } from "../api/redact.js";
import { answerUnknown } from "./refusals.js";
import { sameAlias, sameFactor } from "../api/keptForms.js";
import { OPERATIONS } from "../api/operations.js";
import type { z } from "zod";
import type * as s from "../api/schemas/index.js";

/** Filters of the sub-account list. */
export interface SubAccountFilter {
  alias?: string;
  sk?: string;
}

/** How many times a paged list is read when the account changes while its pages are read, before it fails. */
export const LIST_READS = 3;

/**
 * The most items of a request field a platform takes, when `err` refused a request of `size` of them for that field
 * (a 400 whose code or message names it, `field`): the number below `size` the refusal gives, else half of `size`.
 * Undefined for any other failure, or a size of 1. The one rule for caps the spec does not show (`count`, `sks`).
 */
export function refusedSizeCap(err: unknown, field: RegExp, size: number): number | undefined {
  if (!(err instanceof BadRequestError) || err.mayHaveSucceeded || size <= 1) return undefined;
  const words = `${err.code ?? ""} ${err.apiMessage ?? err.message}`;
  if (!field.test(words)) return undefined;
  const given = (words.match(/\d+/g) ?? []).map(Number).filter((n) => n >= 1 && n < size);
  return given.length > 0 ? Math.max(...given) : Math.floor(size / 2);
}

/** A refusal that names the `sks` field of an edit or delete. */
const SKS_FIELD = /\bsks\b/i;

/** One sub-account as the list answers it. */
type WireSubAccount = z.infer<typeof s.ListedSubAccountSchema>;

/** Sub-accounts a page holds where the platform refuses `page_size=-1` (its largest page size is not shown). */
export const LIST_PAGE_SIZE = 100;

/** Whether a listed sub-account matches the filter exactly (a platform may match `alias` by prefix or not at all). */
export function matchesFilter(item: { alias: string; token: string }, filter: SubAccountFilter): boolean {
  return (
    (filter.alias === undefined || item.alias === filter.alias) && (filter.sk === undefined || item.token === filter.sk)
  );
}

/**
 * A number that changes whenever a sub-account write (create, edit, delete) through a client that counts on it
 * starts or ends: a copy of the list taken while it held one value may be stale once it holds another. Every
 * client of a runtime session counts on the session's counter (runtime/command/session.ts); a client made alone, on its
 * own.
 */
export class WriteCounter {
  private n = 0;

  /** The count now. */
  get value(): number {
    return this.n;
  }

  /** Runs a write, counted at its start and its end, whatever its outcome (a lost answer may still have written). */
  async counted<T>(write: () => Promise<T>): Promise<T> {
    this.n++;
    try {
      return await write();
    } finally {
      this.n++;
    }
  }
}

/** A token's mask as a message may show it: its form, without one character of it (`sk-xxxx****xxxx`). */
function maskForm(token: string): string {
  return token.replace(/[A-Za-z0-9]/g, "x").replace(/^xx-/, "sk-");
}

/**
 * The listed sub-accounts, when their tokens are whole. A list that masks them, in any form (isMasked), cannot tell
 * which sub-account is which (the package holds and names them by token): concluding from it would take every held
 * one for gone and create again, orphaning the first. It stops here instead, before anything is concluded or written
 * (docs/decisions.md), naming the form; a mask is never taken for a token.
 */
function unmasked(items: WireSubAccount[]): WireSubAccount[] {
  const masked = items.find((i) => isMasked(i.token));
  if (masked === undefined) return items;
  throw new LlmAccountsError(
    `GET sub-account/list: the platform answers sub-account tokens masked (in the form ${maskForm(masked.token)}), and the package needs ` +
      "them whole to find, edit and delete its sub-accounts: nothing was concluded or changed. This platform's list (the readings masked-tokens " +
      "and masked-forms, docs/decisions.md) is not supported; run `llm-accounts doctor`",
    { operation: "GET sub-account/list" },
  );
}

/** The sub-account group (spec 4.9 to 4.12), authenticated with the main account key. */
export class SubAccountsApi extends ApiGroup {
  constructor(
    http: Sender,
    /** Counts this group's writes, for the lists kept from it (runtime/command/sharedList.ts). */
    readonly writes: WriteCounter = new WriteCounter(),
  ) {
    super(http);
  }

  /**
   * Set once a list answered tokens masked (unmasked): a create's lost answer could not be looked for on this
   * platform, so creates stop before they are sent (runtime/subAccountBatch/recovery.ts), for the life of this client.
   */
  tokensMasked = false;

  /** Set once the platform refused `page_size=-1` (a 400): lists read by pages from then on. */
  private allRefused = false;

  /**
   * The form of the alias creates are marked with (assumptions.ts CREATE_MARK_FORMS): the setting's, else `tilde`;
   * `fit` once a create's marked alias was refused where `fit` passed (runtime/subAccountBatch/recovery.ts), for the life of
   * this client.
   */
  markForm: CreateMarkForm = this.http.platform?.createMark ?? "tilde";

  /**
   * The most sub-accounts one create makes on this platform: the platform profile's `createCap` (measured by
   * `llm-accounts doctor --write`), or once a create refused a larger `count` (the spec does not show the maximum;
   * the package assumes SUB_ACCOUNT_MAX_COUNT): creates are split to it (runtime/subAccountBatch/recovery.ts), for the life of
   * this client. Undefined until then.
   */
  countCap: number | undefined = this.http.platform?.profile?.limits?.createCap;

  /**
   * The longest alias the platform takes: the platform profile's `aliasMax` (measured by `llm-accounts doctor
   * --write` where longer ones are refused), else undefined (ALIAS_MAX_LENGTH). Checked at preview; a create's marked
   * alias fits it (markFits, below).
   */
  readonly aliasMax: number | undefined = this.http.platform?.profile?.limits?.aliasMax;

  /**
   * The length a create's marked alias must fit in for its mark to be kept: the shorter of the profile's `aliasMax`
   * (longer is refused) and `aliasCut` (longer is kept cut, cut-aliases: both measured by `llm-accounts doctor --write`).
   */
  readonly markFits: number | undefined = minOf(this.aliasMax, this.http.platform?.profile?.limits?.aliasCut);

  /**
   * The most sub-account keys one edit or delete names on this platform, once one was refused for its `sks` (a 400
   * naming it: the spec does not show the maximum; the package assumes SUB_ACCOUNT_MAX_SKS): edits and deletes are
   * split to it, for the life of this client. Undefined until then.
   */
  sksCap: number | undefined;

  /**
   * Every sub-account that matches: one call (`page_size=-1`), unless the platform caps that answer; then the rest
   * page by page, by offset (`page`) or by the cursor it gives (`next`, sent back as `cursor`), at the size it
   * answered with, until `has_more` says no more, the pages add up to `total`, or, with neither, a page comes back
   * short. A paged read is kept only when it is consistent: every page gave the same `total`, no item came twice, and
   * the items add up to `total`. A change between two pages (a console delete shifts the offsets, so a live
   * sub-account would be skipped) makes it read again, at most LIST_READS times, then fail: a partial list is never
   * answered, as callers take a sub-account missing from it for gone. A read whose pages came in another order with
   * the same number of items (sub-accounts of equal `created_at`, whose order a platform may change at every request)
   * is merged with the next such read until the set is stable: as many sub-accounts as each read counted, at most
   * TIE_READS reads, then fail (before anything is concluded or written).
   *
   * Readings of the spec's open points (docs/decisions.md): a platform that answers without `total` is read on as
   * above; one that refuses `page_size=-1` (a 400) is read in pages of LIST_PAGE_SIZE from then on; one whose filters
   * match more than exactly (a prefix, a substring, or no filter at all) has its answer filtered here, so that `alias`
   * and `sk` always match exactly; a filtered answer's `total` is not trusted (it may count the whole account).
   */
  async list(filter: SubAccountFilter = {}): Promise<s.SubAccount[]> {
    let torn = 0;
    let merged: { items: Map<string, WireSubAccount>; returned: number } | undefined;
    for (let read = 1; ; read++) {
      const pass = await this.readPass(filter);
      const stable =
        pass.kind === "whole" ? pass : pass.kind === "ties" ? (merged = mergeTies(merged, pass)) : undefined;
      if (stable && stable.items.size === stable.returned) {
        const items = [...stable.items.values()];
        this.tokensMasked ||= items.some((i) => isMasked(i.token));
        return unmasked(items)
          .filter((i) => matchesFilter(i, filter))
          .map((i) => fromWire(i));
      }
      if (pass.kind === "problem") throw listFailure(pass.problem);
      if (pass.kind === "torn" && ++torn >= LIST_READS) {
        throw listFailure(
          `the account changed while its ${pass.pages} pages were read, ${LIST_READS} times in a row (the platform pages by offset, so a changed list can skip a sub-account)`,
        );
      }
      if (read >= TIE_READS) {
        throw listFailure(
          `${TIE_READS} reads gave no stable set of sub-accounts (the platform answers sub-accounts of equal created_at in another order at every request, or the account kept changing)`,
        );
      }
    }
  }

  /** One read of every page (see list). */
  private async readPass(filter: SubAccountFilter): Promise<Pass> {
    const page = (body: PageRequest) =>
      this.http.send({ op: OPERATIONS.listSubAccounts, body: { ...toWire(filter), ...body } });
    const first = (await this.firstPage(page)).answer;
    const answered = first.total;
    if (answered !== undefined && first.items.length >= answered && first.has_more !== true) return whole(first.items);
    // A filtered answer shorter than its `total`: the platform may count the whole account there (its filters
    // ignored by `total`), so the items decide, read on until a short page as without `total`.
    const filtered = filter.alias !== undefined || filter.sk !== undefined;
    const total = filtered ? undefined : answered;
    const size = first.items.length;
    if (size === 0) return total === undefined || total === 0 ? whole([]) : { kind: "torn", pages: 1 };
    const byToken = new Map(first.items.map((i) => [i.token, i]));
    let [returned, twice, last] = [size, false, first];
    for (let n = 2; more(last, n, size, total); n++) {
      const before = last;
      const cursor =
        before.next === null || before.next === undefined || before.next === "" ? {} : { cursor: String(before.next) };
      last = await page({ page: n, page_size: size, ...cursor });
      if (last.total !== answered) return { kind: "torn", pages: n };
      // The page before again, item for item: the platform reads neither the page's number nor its cursor.
      if (
        last.items.length > 0 &&
        last.items.length === before.items.length &&
        last.items.every((i, k) => i.token === before.items[k].token)
      ) {
        return {
          kind: "problem",
          problem: `page ${n} answered the items of page ${n - 1} again: the platform reads neither \`page\` nor \`cursor\`, so a list longer than one answer cannot be read (see docs/decisions.md)`,
        };
      }
      returned += last.items.length;
      for (const i of last.items) twice ||= byToken.has(i.token);
      for (const i of last.items) byToken.set(i.token, i);
    }
    if (total !== undefined && returned !== total) return { kind: "torn", pages: Math.ceil(total / size) };
    return twice ? { kind: "ties", items: byToken, returned } : whole([...byToken.values()]);
  }

  /**
   * The first page: everything at once (`page_size=-1`), or, on a platform that refused that once (a 400), a page
   * of LIST_PAGE_SIZE; the refusal is remembered for the life of this client, so it costs one call once.
   */
  private async firstPage(
    page: (body: PageRequest) => Promise<ListAnswer>,
  ): Promise<{ answer: ListAnswer; pageSize: number }> {
    if (!this.allRefused) {
      try {
        return { answer: await page({ page_size: -1 }), pageSize: -1 };
      } catch (err) {
        if (!(err instanceof BadRequestError)) throw err;
        this.allRefused = true;
      }
    }
    return { answer: await page({ page: 1, page_size: LIST_PAGE_SIZE }), pageSize: LIST_PAGE_SIZE };
  }

  /** Creates `count` sub-accounts in one call; returns them with their new tokens. Never retried blindly. */
  async create(request: s.SubAccountCreateRequest): Promise<s.SubAccount[]> {
    const res = await this.writes.counted(() =>
      this.http.send({ op: OPERATIONS.createSubAccounts, body: toWire(request) }),
    );
    return res.items.map((i) => fromWire(i));
  }

  /**
   * Sets alias and model pricing of every listed sub-account (in parts of `sksCap`, once the platform stated one). An
   * answer that is not the platform's is confirmed by one list (listedAfter): done when every one shows the alias and
   * the pricing sent, else it fails naming those that do not.
   */
  async edit(request: s.SubAccountEditRequest): Promise<void> {
    try {
      await this.inParts(request.sks, (sks) =>
        this.writes.counted(() =>
          this.http.send({ op: OPERATIONS.editSubAccounts, body: toWire({ ...request, sks }) }),
        ),
      );
    } catch (err) {
      if (!answerUnknown(err)) throw err;
      const byToken = new Map((await this.listedAfter(err, request.sks)).map((i) => [i.token, i]));
      const sent = (i: s.SubAccount | undefined) =>
        i !== undefined &&
        sameAlias(request.alias, i.alias, this.keptForms) &&
        request.modelPricing.every((m) =>
          i.modelPricing.some(
            (l) =>
              l.model === m.model &&
              (l.pricingFactor === m.pricingFactor ||
                (l.pricingFactor !== undefined &&
                  m.pricingFactor !== undefined &&
                  sameFactor(m.pricingFactor, l.pricingFactor, this.keptForms))),
          ),
        );
      const stale = request.sks.filter((t) => !sent(byToken.get(t)));
      if (stale.length > 0)
        throw new LlmAccountsError(`${err.message}; the sub-account list shows ${named(stale)} not edited`, {
          operation: err.operation,
          status: err.status,
        });
    }
  }

  /**
   * The sub-accounts a look after a write to `tokens` answered with `err` finds: the list filtered by `sk` for one
   * token, the whole list (one call) for more. A list that cannot tell, after an answer that could not be read
   * (answerUnknown), stops naming both answers; after another answer, its error is thrown as it came.
   */
  async listedAfter(err: unknown, tokens: readonly string[]): Promise<s.SubAccount[]> {
    try {
      return await this.list(tokens.length === 1 ? { sk: tokens[0] } : {});
    } catch (looked) {
      if (!answerUnknown(err)) throw looked;
      const said = looked instanceof Error ? looked.message : String(looked);
      throw new LlmAccountsError(
        `${err.message}; looking (the sub-account list) could not tell either: ${said}. Nothing was concluded of this write`,
        { operation: err.operation },
      );
    }
  }

  /** Deletes the listed sub-accounts (in parts of `sksCap`, once the platform stated one). */
  async delete(sks: readonly string[]): Promise<void> {
    await this.inParts(sks, (part) =>
      this.writes.counted(() => this.http.send({ op: OPERATIONS.deleteSubAccounts, body: { sks: part } })),
    );
  }

  /**
   * Sends `write` for `sks` in parts of at most `sksCap`; a part refused for its `sks` (refusedSizeCap: a 400 made
   * nothing) lowers the cap, which this client keeps, and is sent again in smaller parts. A part's other failure
   * ends the write: the parts before it are done (an edit or delete sent again is the same edit or delete).
   */
  private async inParts(sks: readonly string[], write: (part: string[]) => Promise<unknown>): Promise<void> {
    if (sks.length === 0) return void (await write([]));
    for (let done = 0; done < sks.length; ) {
      const part = sks.slice(done, done + (this.sksCap ?? sks.length));
      try {
        await write(part);
        done += part.length;
      } catch (err) {
        const cap = refusedSizeCap(err, SKS_FIELD, part.length);
        if (cap === undefined) throw err;
        this.sksCap = cap;
      }
    }
  }
}

/** A page's request: by number, and by the cursor the page before gave (if any). */
type PageRequest = { page_size: number; page?: number; cursor?: string };
/** A list answer as the schema reads it. */
type ListAnswer = z.output<typeof s.SubAccountListResponseSchema>;

/**
 * One read of every page: whole (consistent); `ties` (as many items as the pages counted, some twice: an order that
 * changed between requests); `torn` (the account changed between pages); or a `problem` no read again can mend.
 */
type Pass =
  | { kind: "whole" | "ties"; items: Map<string, WireSubAccount>; returned: number }
  | { kind: "torn"; pages: number }
  | { kind: "problem"; problem: string };

/** How many reads of a list whose ties change order are merged before it fails (list). */
export const TIE_READS = 8;

/** A consistent read: each sub-account once. */
function whole(items: WireSubAccount[]): Pass {
  const byToken = new Map(items.map((i) => [i.token, i]));
  return { kind: "whole", items: byToken, returned: byToken.size };
}

/** Whether a further page is to be read after `last` (page n - 1): as `has_more` says, else up to `total`, else until a short page. */
function more(last: ListAnswer, n: number, size: number, total: number | undefined): boolean {
  if (last.has_more !== undefined) return last.has_more && last.items.length > 0;
  if (total !== undefined) return (n - 1) * size < total;
  return last.items.length >= size;
}

/** A read of ties merged into the reads before it of the same count (a read of another count starts anew). */
function mergeTies(
  merged: { items: Map<string, WireSubAccount>; returned: number } | undefined,
  pass: { items: Map<string, WireSubAccount>; returned: number },
): { items: Map<string, WireSubAccount>; returned: number } {
  if (merged === undefined || merged.returned !== pass.returned)
    return { items: new Map(pass.items), returned: pass.returned };
  for (const [t, i] of pass.items) merged.items.set(t, i);
  return merged;
}

/** A list that cannot be read whole: nothing is concluded from a partial one. */
function listFailure(why: string): LlmAccountsError {
  return new LlmAccountsError(
    `GET sub-account/list: ${why}: nothing was concluded from a partial list; run the command again`,
    { operation: "GET sub-account/list" },
  );
}

/** Tokens named masked in a message: the first five, and how many more. */
export function named(tokens: readonly string[]): string {
  return tokens.slice(0, 5).map(maskKey).join(", ") + (tokens.length > 5 ? ` and ${tokens.length - 5} more` : "");
}

/** The smaller of the numbers given, undefined when none is. */
function minOf(...values: (number | undefined)[]): number | undefined {
  const given = values.filter((v): v is number => v !== undefined);
  return given.length === 0 ? undefined : Math.min(...given);
}
