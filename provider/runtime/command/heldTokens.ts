import { maskKey } from "../../api/redact.js";
import { LlmAccountsError } from "../../client/errors.js";
import { QuietPeriod } from "./quietPeriod.js";

// What one command (one plugin process) knows of who holds which sub-account: the tokens batches hold or made
// (`hold`, for a lost create's recovery), who keeps each (`holdKept`, `takeAdopted`: one sub-account, one owner, and
// what a delete must leave), and the releases of adopted sub-accounts under way (`Transfers`: a taker waits for its
// giver). Keys have the same rules in command/adoption.ts (`keepKeys`, `takeKeyForCreate`, `keysKeptByOthers`).

/**
 * Sub-account tokens that batches hold or made, as this session saw them: the outputs diff and read get, what
 * create and update return, what a create's answer named. Needed only for a batch that an earlier version kept as
 * unconfirmed (`unconfirmedSince` without `unconfirmedAlias`: its lost create carried no marked alias, see
 * subAccountBatch/recovery.ts), whose recovery goes by alias, balance and time and never takes one of them: a
 * batch create made by another request (the batch that replaced a twin left pending, made after that twin's
 * lost create) has the same alias and balance and is newer, and only this process knows whose it is. The engine
 * deletes last, after every declared resource's diff, create and update in the same plugin process, so the
 * delete of a pending twin sees them all. The set is a companion of one client of the session
 * (`SessionClient.heldTokens`, runtime/command/session.ts), so forgotten at startFresh(), as a new plugin process starts
 * with nothing.
 */

/** A batch holds (or a create made) these tokens: no lost create's recovery takes them. */
export function hold(held: Set<string>, tokens: Iterable<string>): void {
  for (const t of tokens) held.add(t);
}

/** What a lost create's recovery must leave: the batch's own tokens and every token a batch holds or made. */
export function notToTake(held: ReadonlySet<string>, own: Iterable<string>): Set<string> {
  return new Set([...held, ...own]);
}

/**
 * Tokens a batch keeps in this command, by who keeps them: its own, less those its new `adoptTokens` releases (diff),
 * what a create or an update adopted. Beside the held set they belong to. What another batch's create or update may
 * not adopt, and what a batch's delete must leave (another batch of this command has it). A token released by one
 * batch may be adopted by another in the same deployment, so released ones are not kept.
 */
const keptBeside = new WeakMap<Set<string>, Map<string, string>>();

function keptOf(held: Set<string>): Map<string, string> {
  let kept = keptBeside.get(held);
  if (!kept) keptBeside.set(held, (kept = new Map()));
  return kept;
}

/** Who keeps what a create adopts: each create its own name (its id is not known before it ends). */
let creates = 0;

/** A name for one create, as the owner of what it adopts. */
export function createOwner(): string {
  return `create#${++creates}`;
}

/**
 * A batch (`owner`: its id) holds `tokens` and keeps all but `released` (diff: its state's tokens and what its new
 * input releases).
 */
export function holdKept(held: Set<string>, tokens: Iterable<string>, released: Iterable<string>, owner: string): void {
  const out = new Set(released);
  const kept = keptOf(held);
  for (const t of tokens) {
    held.add(t);
    if (!out.has(t)) kept.set(t, owner);
  }
}

/**
 * The tokens a create or an update adopts (`joining`, listed in its `adoptTokens`), taken for it (`owner`: an
 * update's batch id, a create's createOwner) before anything is read or written: fails, naming the first such token
 * masked, when another batch of this command keeps one (one sub-account, one owner, also for programs that bypass
 * the resource classes); else they are kept from now on.
 */
export function takeAdopted(held: Set<string>, adoptTokens: readonly string[], joining: readonly string[], owner: string): void {
  const kept = keptOf(held);
  const taken = joining.find((t) => kept.has(t) && kept.get(t) !== owner);
  if (taken !== undefined) {
    throw new LlmAccountsError(
      `adoptTokens[${adoptTokens.indexOf(taken)}] (${maskKey(taken)}) is held by another SubAccountBatch of this deployment: one sub-account has one owner, ` +
        "so only one resource may hold it; nothing was changed. Remove it from this batch's adoptTokens (or release it from the other by listing the tokens that one keeps)",
    );
  }
  holdKept(held, joining, [], owner);
}

/**
 * Of the tokens a batch's delete would delete (`owner`: its id), those another batch of this command keeps: its
 * state still names one it released in a run that never recorded the release (a killed `up`), or one that a create
 * adopts (a batch declared in its place, renamed without an alias: its id may be this one's, but the engine never
 * creates and deletes one resource in one command). Deleting it would delete what that one holds.
 */
export function keptByOthers(held: Set<string>, owner: string, tokens: Iterable<string>): Set<string> {
  const kept = keptOf(held);
  // A create's owner (createOwner) is never a batch id.
  return new Set([...tokens].filter((t) => kept.has(t) && kept.get(t) !== owner));
}

/** How long checks and diffs must be quiet before a taker looks for the releases diffs announce (see Transfers). */
export const REGISTRATIONS_QUIET = { minQuietMs: 20, gapFactor: 4, maxQuietMs: 250 };

/** A release of one batch in this command: announced by its diff, begun and ended by its update. */
interface Release {
  owner: string;
  begun: Promise<void>;
  ended: Promise<void>;
  begin: () => void;
  end: () => void;
}

function release(owner: string): Release {
  let begin!: () => void;
  let end!: () => void;
  const begun = new Promise<void>((resolve) => (begin = resolve));
  const ended = new Promise<void>((resolve) => (end = resolve));
  return { owner, begun, ended, begin, end };
}

/**
 * The releases of adopted sub-accounts in one command, and who waits for whom. A token one batch releases may be
 * adopted by another in the same deployment, but the release is recorded only when the releasing update ends: a
 * taker that went first, in a run killed before that end, would leave both states holding it. So a taker waits,
 * before it adopts, for a release its releaser's diff announced: until that update ends, once it has begun.
 *
 * The engine checks and diffs each resource as the program registers it, one after another, and starts a create or
 * an update at once: a taker registered before its giver may start before the giver's diff arrives. So a taker
 * first waits until no check or diff of any resource has arrived for a quiet period (QuietPeriod: `gapFactor` times
 * the longest gap seen between them, 20 to 250 ms), the engine being then done with what the program registered
 * so far. It waits at most `graceMs` for a giver's update that has not begun: the engine updates when one of its
 * `--parallel` slots is free, and under `--parallel 1` the taker holds the only one. A giver registered later than
 * that, or not begun in time, is not waited for; a delete then never removes what another batch keeps
 * (keptByOthers).
 */
export class Transfers {
  /** Checks and diffs arriving: the engine going through the program's registrations. */
  private readonly registrations = new QuietPeriod(REGISTRATIONS_QUIET);
  private lastArrival = 0;
  private readonly releases = new Map<string, Release>();
  /** Who waits for whom: by waiter, each batch it waits for and what ends that wait at once. */
  private readonly waiting = new Map<string, Map<string, () => void>>();

  constructor(private readonly graceMs = 1000) {}

  /** A check or a diff of any resource of the command arrived (runtime/index.ts). */
  arrived(now = Date.now()): void {
    this.registrations.arrive(now);
    this.lastArrival = now;
  }

  /** The diff of batch `owner` found that its update will release `tokens`. */
  announce(owner: string, tokens: readonly string[]): void {
    for (const t of tokens) if (this.releases.get(t)?.owner !== owner) this.releases.set(t, release(owner));
  }

  /** The update of batch `owner` that releases `tokens` begins; what it calls when it ends, however it ends. */
  begin(owner: string, tokens: readonly string[]): () => void {
    const mine = tokens.map((t) => {
      let r = this.releases.get(t);
      if (r?.owner !== owner) this.releases.set(t, (r = release(owner)));
      r.begin();
      return [t, r] as const;
    });
    return () => {
      for (const [t, r] of mine) {
        if (this.releases.get(t) === r) this.releases.delete(t);
        r.end();
      }
    };
  }

  /**
   * Before `by` (a batch id, or a create's own name) adopts `tokens`: waits for the releases of them by other batches
   * (see the class). Two batches that swap sub-accounts do not wait for each other: the second to ask ends the
   * first one's wait, and both go at once (no order makes a swap whole: the shorter the window, the better). A batch
   * that waits for `by` through others is not waited for.
   */
  async awaitReleases(by: string, tokens: readonly string[]): Promise<void> {
    if (tokens.length === 0) return;
    await this.registrationsSettled();
    const others = new Map<string, Release>();
    for (const t of tokens) {
      const r = this.releases.get(t);
      if (!r || r.owner === by) continue;
      const swap = this.waiting.get(r.owner)?.get(by);
      if (swap) swap();
      else if (!this.waitsFor(r.owner, by)) others.set(r.owner, r);
    }
    if (others.size === 0) return;
    const mine = new Map<string, () => void>();
    this.waiting.set(by, mine);
    try {
      await Promise.all(
        [...others].map(([owner, r]) => {
          const swapped = new Promise<void>((resolve) => mine.set(owner, resolve));
          return Promise.race([this.untilEnded(r), swapped]);
        }),
      );
    } finally {
      this.waiting.delete(by);
    }
  }

  /** Once no check or diff has arrived for the quiet period. */
  private async registrationsSettled(): Promise<void> {
    for (let wait = this.lastArrival + this.registrations.ms - Date.now(); wait > 0; wait = this.lastArrival + this.registrations.ms - Date.now()) {
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  private async untilEnded(r: Release): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), this.graceMs)));
    const begun = await Promise.race([r.begun.then(() => true), late]);
    clearTimeout(timer);
    if (begun) await r.ended;
  }

  /** Whether `from` waits, directly or through others, for `to`. */
  private waitsFor(from: string, to: string, seen = new Set<string>()): boolean {
    if (from === to) return true;
    if (seen.has(from)) return false;
    seen.add(from);
    return [...(this.waiting.get(from)?.keys() ?? [])].some((next) => this.waitsFor(next, to, seen));
  }
}
