import type { SubAccount } from "../client/schemas/index.js";
import type { SubAccountFilter, SubAccountsApi } from "../client/subAccounts.js";
import { oncePer } from "./oncePer.js";

/** Turns read sharing off (one list per read): the benchmark's baseline. */
export const SHARING_SWITCH = "LLM_ACCOUNTS_READ_SHARING";

/**
 * When a shared list goes out. A refresh starts up to `--parallel` reads almost at once, so a list goes
 * once no read has arrived for `gapFactor` times the longest gap seen between them (at least `minQuietMs`, at
 * most `maxQuietMs`). While one list is on the wire, newer reads wait for the next: every read is answered
 * by a list sent after it arrived, so drift made a moment before a read is never missed.
 */
export const SHARE = { minQuietMs: 5, gapFactor: 4, maxQuietMs: 100 };

/** One list of the account, indexed by token for reads, as it came for every filter. */
export interface AccountSnapshot {
  all: SubAccount[];
  byToken: Map<string, SubAccount>;
}

interface Round {
  waiters: { resolve: (s: AccountSnapshot) => void; reject: (err: unknown) => void }[];
  lastArrival: number;
  longestGap: number;
  timer?: NodeJS.Timeout;
}

/**
 * Answers the sub-account reads of one process (SubAccountBatch refreshes, getSubAccounts) that arrive
 * together from ONE list of the whole account, so that refreshing N batches costs one list per window
 * instead of N lists of everything. A failed list fails only the reads that waited for it.
 */
export class SharedSubAccountList {
  private next: Round | undefined;
  private inFlight = false;

  constructor(
    private readonly api: SubAccountsApi,
    private readonly options: typeof SHARE & { enabled?: boolean; now?: () => number } = SHARE,
  ) {}

  /** Read at call time unless given, as the plugin reads every setting. */
  private get enabled(): boolean {
    return this.options.enabled ?? process.env[SHARING_SWITCH] !== "off";
  }

  /** Every sub-account of the account, from a list sent after this call. */
  snapshot(): Promise<AccountSnapshot> {
    if (!this.enabled) return this.api.list().then(indexed);
    const now = (this.options.now ?? Date.now)();
    return new Promise((resolve, reject) => {
      const round = (this.next ??= { waiters: [], lastArrival: now, longestGap: 0 });
      if (round.waiters.length > 0) round.longestGap = Math.max(round.longestGap, now - round.lastArrival);
      round.lastArrival = now;
      round.waiters.push({ resolve, reject });
      this.schedule(round);
    });
  }

  /** Sub-accounts that match a filter (getSubAccounts), filtered here from the shared list. */
  async list(filter: SubAccountFilter = {}): Promise<SubAccount[]> {
    const { all } = await this.snapshot();
    return all.filter((s) => (filter.alias === undefined || s.alias === filter.alias) && (filter.sk === undefined || s.token === filter.sk));
  }

  private schedule(round: Round): void {
    if (this.inFlight) return; // it goes when the list on the wire is answered
    const { minQuietMs, gapFactor, maxQuietMs } = this.options;
    clearTimeout(round.timer);
    round.timer = setTimeout(() => void this.send(round), Math.min(maxQuietMs, Math.max(minQuietMs, gapFactor * round.longestGap)));
  }

  private async send(round: Round): Promise<void> {
    this.next = undefined;
    this.inFlight = true;
    try {
      const snapshot = indexed(await this.api.list());
      for (const w of round.waiters) w.resolve(snapshot);
    } catch (err) {
      for (const w of round.waiters) w.reject(err);
    } finally {
      this.inFlight = false;
      if (this.next) this.schedule(this.next);
    }
  }
}

function indexed(all: SubAccount[]): AccountSnapshot {
  return { all, byToken: new Map(all.map((s) => [s.token, s])) };
}

/** The process-wide shared list of a client's sub-accounts. */
export const sharedListFor = oncePer((api: SubAccountsApi) => new SharedSubAccountList(api));
