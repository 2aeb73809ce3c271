import { fromWire, toWire } from "../api/casing.js";
import { ApiGroup, type Sender } from "./masked.js";
import { OPERATIONS } from "../api/operations.js";
import type * as s from "../api/schemas/index.js";

/** Filters of the sub-account list. */
export interface SubAccountFilter {
  alias?: string;
  sk?: string;
}

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
   * `total`; then the rest page by page, at the size it answered with.
   */
  async list(filter: SubAccountFilter = {}): Promise<s.SubAccount[]> {
    const page = (body: { page_size: number; page?: number }) =>
      this.http.send({ op: OPERATIONS.listSubAccounts, body: { ...toWire(filter), ...body } });
    const first = await page({ page_size: -1 });
    const byToken = new Map(first.items.map((i) => [i.token, i]));
    const size = first.items.length;
    for (let n = 2; byToken.size < first.total && size > 0 && (n - 1) * size < first.total; n++) {
      for (const i of (await page({ page: n, page_size: size })).items) byToken.set(i.token, i);
    }
    return [...byToken.values()].map((i) => fromWire(i));
  }

  /** One page of the list, for callers that want paging themselves. */
  async listPage(filter: SubAccountFilter & { page: number; pageSize: number }): Promise<{ items: s.SubAccount[]; total: number }> {
    const res = await this.http.send({ op: OPERATIONS.listSubAccounts, body: toWire(filter) });
    return { items: res.items.map((i) => fromWire(i)), total: res.total };
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
