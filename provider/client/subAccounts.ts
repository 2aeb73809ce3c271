import { fromWire, toWire } from "../api/casing.js";
import { ApiGroup, type Sender } from "./apiGroup.js";
import { LlmAccountsError } from "./errors.js";
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

/** One sub-account as the list answers it. */
type WireSubAccount = z.infer<typeof s.SubAccountSchema>;

/**
 * A number that changes whenever a sub-account write (create, edit, delete) through a client that counts on it
 * starts or ends: a copy of the list taken while it held one value may be stale once it holds another. Every
 * client of a runtime session counts on the session's counter (runtime/session.ts); a client made alone, on its
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

/** The sub-account group (spec 4.9 to 4.12), authenticated with the main account key. */
export class SubAccountsApi extends ApiGroup {
  constructor(
    http: Sender,
    /** Counts this group's writes, for the lists kept from it (runtime/sharedList.ts). */
    readonly writes: WriteCounter = new WriteCounter(),
  ) {
    super(http);
  }

  /**
   * Every sub-account that matches: one call (`page_size=-1`), unless the platform caps that answer below
   * `total`; then the rest page by page (by offset), at the size it answered with. A paged read is kept only when
   * it is consistent: every page gave the same `total`, no item came twice, and the items add up to `total`. A
   * change between two pages (a console delete shifts the offsets, so a live sub-account would be skipped) makes
   * it read again, at most LIST_READS times, then fail: a partial list is never answered, as callers take a
   * sub-account missing from it for gone.
   */
  async list(filter: SubAccountFilter = {}): Promise<s.SubAccount[]> {
    for (let read = 1; ; read++) {
      const whole = await this.readWhole(filter);
      if (whole.items) return whole.items.map((i) => fromWire(i));
      if (read >= LIST_READS) {
        throw new LlmAccountsError(
          `POST sub-account/list: the account changed while its ${whole.pages} pages were read, ${LIST_READS} times in a row ` +
            "(the platform pages by offset, so a changed list can skip a sub-account): nothing was concluded from a partial list; run the command again",
          { operation: "POST sub-account/list" },
        );
      }
    }
  }

  /** One read of every page; `items` only when the read is consistent (see list). */
  private async readWhole(filter: SubAccountFilter): Promise<{ items?: WireSubAccount[]; pages: number }> {
    const page = (body: { page_size: number; page?: number }) =>
      this.http.send({ op: OPERATIONS.listSubAccounts, body: { ...toWire(filter), ...body } });
    const first = await page({ page_size: -1 });
    if (first.items.length >= first.total) return { items: first.items, pages: 1 };
    const size = first.items.length;
    if (size === 0) return { pages: 1 };
    const byToken = new Map(first.items.map((i) => [i.token, i]));
    const pages = Math.ceil(first.total / size);
    for (let n = 2; n <= pages; n++) {
      const next = await page({ page: n, page_size: size });
      if (next.total !== first.total) return { pages: n };
      for (const i of next.items) {
        if (byToken.has(i.token)) return { pages: n };
        byToken.set(i.token, i);
      }
    }
    return byToken.size === first.total ? { items: [...byToken.values()], pages } : { pages };
  }

  /** Creates `count` sub-accounts in one call; returns them with their new tokens. Never retried blindly. */
  async create(request: s.SubAccountCreateRequest): Promise<s.SubAccount[]> {
    const res = await this.writes.counted(() => this.http.send({ op: OPERATIONS.createSubAccounts, body: toWire(request) }));
    return res.items.map((i) => fromWire(i));
  }

  /** Sets alias and model pricing of every listed sub-account. */
  async edit(request: s.SubAccountEditRequest): Promise<void> {
    await this.writes.counted(() => this.http.send({ op: OPERATIONS.editSubAccounts, body: toWire(request) }));
  }

  /** Deletes the listed sub-accounts. */
  async delete(sks: readonly string[]): Promise<void> {
    await this.writes.counted(() => this.http.send({ op: OPERATIONS.deleteSubAccounts, body: { sks: [...sks] } }));
  }
}
