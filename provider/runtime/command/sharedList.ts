import { CLOCK_SKEW_MS } from "../../api/assumptions.js";
import type { SubAccount } from "../../api/schemas/index.js";
import type { ApiGroup } from "../../client/apiGroup.js";
import { SYSTEM_CLOCK, type Clock } from "../../client/clock.js";
import { matchesFilter, type SubAccountFilter, type SubAccountsApi } from "../../client/subAccounts.js";
import { QuietPeriod } from "./quietPeriod.js";

/** Turns read sharing off (one list per read): the benchmark's baseline. */
export const SHARING_SWITCH = "LLM_ACCOUNTS_READ_SHARING";

/**
 * When a shared list goes out, and how long its answer serves. A refresh starts up to `--parallel` reads almost
 * at once, so a list goes once no read has arrived for `gapFactor` times the longest gap seen between them (at
 * least `minQuietMs`, at most `maxQuietMs`). The engine starts the next reads as these are answered: the answer
 * serves them too, and every read of the run after them, as long as it was sent at most `maxAgeMs` before the read
 * arrived and no sub-account was written by this session since it was sent (its clients share one WriteCounter). So a refresh of N batches makes one
 * list (one more for each `maxAgeMs` it lasts), whatever `--parallel`. A plugin process serves one `pulumi`
 * command and starts with nothing kept: every read sees what changed before the command began, and what the
 * command itself wrote; a console edit made while a refresh runs may show only at the next one, as it may with any
 * order of reads.
 */
export const SHARE = { minQuietMs: 5, gapFactor: 4, maxQuietMs: 100, maxAgeMs: 30_000 };

/** Past this many tokens missing from a shared list, one new list confirms them instead of one call each. */
export const CONFIRM_ONE_BY_ONE = 3;

/**
 * A sub-account missing from a list is not proof that it is gone (a list read while the account changed may skip
 * one): the platform is asked again. Up to CONFIRM_ONE_BY_ONE of them: one list filtered by token each (`sk`, one
 * call); more: one new list of the account, not the shared one. Nothing missing: no call. Returns those still there.
 */
export async function stillListed(api: SubAccountsApi, missing: readonly string[]): Promise<Map<string, SubAccount>> {
  if (missing.length === 0) return new Map();
  const wanted = new Set(missing);
  const found =
    missing.length <= CONFIRM_ONE_BY_ONE
      ? (await Promise.all(missing.map((sk) => api.list({ sk })))).flat()
      : (await api.list()).filter((s) => wanted.has(s.token));
  return new Map(found.filter((s) => wanted.has(s.token)).map((s) => [s.token, s]));
}

/**
 * Looks (`look`) until `seen` holds of what it found, or until what was written at `writtenAt` (the API group's clock;
 * now when not given: an answer just lost) can no longer be expected to show: the API group's waitsSince between looks
 * (LATE_VISIBILITY_WAITS_MS, then longer, until lateWritesMs after the write; a platform may make or show a write well
 * after it answered). Returns the last look's finding; one look when the first sees it. `first`: what a look the
 * caller made already found.
 */
export async function lookUntil<T>(
  api: Pick<ApiGroup, "wait" | "waitsSince" | "now">,
  look: () => Promise<T>,
  seen: (found: T) => boolean,
  options: { first?: { found: T }; writtenAt?: number } = {},
): Promise<T> {
  let found = options.first ? options.first.found : await look();
  for (const ms of api.waitsSince(options.writtenAt ?? api.now())) {
    if (seen(found)) break;
    await api.wait(ms);
    found = await look();
  }
  return found;
}

/** When an object created at `createdAt` (the platform's timestamp) was written; undefined for a timestamp that does not parse. */
export function writtenAt(createdAt: string | undefined): number | undefined {
  const at = createdAt === undefined ? NaN : Date.parse(createdAt);
  return Number.isFinite(at) ? at : undefined;
}

/**
 * Whether an object created at `createdAt` may not show yet: written (writtenAt) less than the API group's lateWritesMs
 * before now, allowing for the platform's clock being CLOCK_SKEW_MS behind ours.
 */
export function justWritten(api: Pick<ApiGroup, "lateWritesMs" | "now">, createdAt: string | undefined): boolean {
  const at = writtenAt(createdAt);
  return at !== undefined && api.now() - at < api.lateWritesMs + CLOCK_SKEW_MS;
}

/**
 * stillListed, for a read that must not take a lagging list for a delete: a token still missing whose sub-account
 * was just written (`recent`, justWritten; the newest written at `newest`) is looked for again (lookUntil: one list
 * of the account a look, until that write can no longer be expected to show) before it counts as gone. Nothing
 * recent missing: stillListed's calls only.
 */
export async function stillListedOrLate(
  api: SubAccountsApi,
  missing: readonly string[],
  recent: ReadonlySet<string>,
  newest?: number,
): Promise<Map<string, SubAccount>> {
  const alive = await stillListed(api, missing);
  const late = missing.filter((t) => recent.has(t) && !alive.has(t));
  if (late.length === 0) return alive;
  // Each look is one list of the account (a create shows whole or not at all: one call for all of them).
  const wanted = new Set(late);
  const look = async () =>
    new Map((await api.list()).filter((s) => wanted.has(s.token)).map((s) => [s.token, s] as const));
  const found = await lookUntil(api, look, (m) => m.size === late.length, {
    first: { found: new Map() },
    writtenAt: newest,
  });
  for (const [t, s] of found) alive.set(t, s);
  return alive;
}

/** One list of the account, indexed by token for reads, as it came for every filter. */
export interface AccountSnapshot {
  all: SubAccount[];
  byToken: Map<string, SubAccount>;
  /**
   * Those whose alias ends with `end`, in list order. Every read of a command looks for its batch's mark in the one
   * shared list: an index by alias end, built once per length, keeps that linear in the size of the account.
   */
  endingWith(end: string): SubAccount[];
}

/** A list's answer kept for the reads that come after it: when it was sent, and the write count then. */
interface Kept {
  snapshot: AccountSnapshot;
  sentAt: number;
  writes: number;
}

interface Round {
  waiters: { resolve: (s: AccountSnapshot) => void; reject: (err: unknown) => void }[];
  quiet: QuietPeriod;
}

/**
 * Answers the sub-account reads of one client of a session (SubAccountBatch refreshes, getSubAccounts; made by
 * `SessionClient.subAccounts`, runtime/command/session.ts) from ONE list of the whole account, shared by the reads that
 * arrive together and kept for those that follow (SHARE), so that refreshing N batches costs one list instead
 * of N lists of everything. A failed list fails only the reads that
 * waited for it, and is not kept.
 */
export class SharedSubAccountList {
  private next: Round | undefined;
  private inFlight = false;
  private kept: Kept | undefined;

  constructor(
    private readonly api: SubAccountsApi,
    private readonly options: typeof SHARE & {
      enabled?: boolean;
      clock?: Pick<Clock, "now" | "setTimeout" | "clearTimeout">;
    } = SHARE,
  ) {}

  /** Read at call time unless given, as the plugin reads every setting. */
  private get enabled(): boolean {
    return this.options.enabled ?? process.env[SHARING_SWITCH] !== "off";
  }

  private get clock(): Pick<Clock, "now" | "setTimeout" | "clearTimeout"> {
    return this.options.clock ?? SYSTEM_CLOCK;
  }

  private now(): number {
    return this.clock.now();
  }

  /**
   * The kept answer, if it may still serve a read arriving now: within its age and with no write of this session since
   * it was sent, or at any age and after any write for a caller that looks only for what an earlier run left
   * (`earlierRuns`).
   */
  private fresh(earlierRuns = false): AccountSnapshot | undefined {
    const k = this.kept;
    if (!k) return undefined;
    if (earlierRuns) return k.snapshot;
    return this.now() - k.sentAt <= this.options.maxAgeMs && this.api.writes.value === k.writes
      ? k.snapshot
      : undefined;
  }

  /**
   * Every sub-account of the account, from the kept answer (SHARE) or a list sent after this call. `earlierRuns`: for
   * a caller that looks only for what a run before this command left (a killed run of one batch, under that batch's
   * own mark), which no write of this session makes or removes and which any list of this command shows: the kept
   * answer serves it whatever its age, so that a destroy or an up of thousands of batches, however long, lists once.
   */
  snapshot(options: { earlierRuns?: boolean } = {}): Promise<AccountSnapshot> {
    if (!this.enabled) return this.api.list().then(snapshotOf);
    const kept = this.fresh(options.earlierRuns);
    if (kept) return Promise.resolve(kept);
    const now = this.now();
    return new Promise((resolve, reject) => {
      const round = (this.next ??= { waiters: [], quiet: new QuietPeriod(this.options, this.clock) });
      round.quiet.arrive(now);
      round.waiters.push({ resolve, reject });
      this.schedule(round);
    });
  }

  /**
   * The sub-accounts of `tokens` that exist, by token: from the shared list (snapshot), and for a token missing
   * from it, from the platform asked again, since a list read while the account changed may skip one (the care
   * read() takes): up to CONFIRM_ONE_BY_ONE missing tokens, one list filtered by token each (`sk`); more, one new
   * list of the account, not the shared one. A token absent from the answer is gone (or of another account).
   */
  async find(tokens: readonly string[]): Promise<Map<string, SubAccount>> {
    const { byToken } = await this.snapshot();
    const found = new Map(tokens.flatMap((t) => (byToken.has(t) ? [[t, byToken.get(t)!] as const] : [])));
    for (const [t, s] of await stillListed(
      this.api,
      tokens.filter((t) => !found.has(t)),
    ))
      found.set(t, s);
    return found;
  }

  /** Sub-accounts that match a filter (getSubAccounts), filtered here from the shared list. */
  async list(filter: SubAccountFilter = {}): Promise<SubAccount[]> {
    const { all } = await this.snapshot();
    return all.filter((s) => matchesFilter(s, filter));
  }

  private schedule(round: Round): void {
    if (this.inFlight) return; // it goes when the list on the wire is answered
    round.quiet.after(() => void this.send(round));
  }

  private async send(round: Round): Promise<void> {
    this.next = undefined;
    this.inFlight = true;
    const sentAt = this.now();
    const writes = this.api.writes.value;
    try {
      const snapshot = snapshotOf(await this.api.list());
      this.kept = { snapshot, sentAt, writes };
      for (const w of round.waiters) w.resolve(snapshot);
    } catch (err) {
      for (const w of round.waiters) w.reject(err);
    } finally {
      this.inFlight = false;
      this.serveWaiting();
    }
  }

  /**
   * Reads that arrived while a list was on the wire: its answer serves them if it may (sent before they arrived,
   * but within maxAgeMs and with no write since); else their own list goes.
   */
  private serveWaiting(): void {
    const waiting = this.next;
    if (!waiting) return;
    const kept = this.fresh();
    if (!kept) return this.schedule(waiting);
    this.next = undefined;
    waiting.quiet.end();
    for (const w of waiting.waiters) w.resolve(kept);
  }
}

/** A list's answer as the reads that share it use it (AccountSnapshot); never changed once made. */
export function snapshotOf(all: SubAccount[]): AccountSnapshot {
  const byLength = new Map<number, Map<string, SubAccount[]>>();
  const endingWith = (end: string): SubAccount[] => {
    if (end === "") return [...all];
    let index = byLength.get(end.length);
    if (!index) {
      index = new Map();
      for (const s of all) {
        if (s.alias.length < end.length) continue;
        const key = s.alias.slice(-end.length);
        const group = index.get(key);
        if (group) group.push(s);
        else index.set(key, [s]);
      }
      byLength.set(end.length, index);
    }
    return index.get(end) ?? [];
  };
  return { all, byToken: new Map(all.map((s) => [s.token, s])), endingWith };
}
