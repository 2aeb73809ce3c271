import { QuietPeriod } from "./quietPeriod.js";

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
 * (Custody.leftByDelete).
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
    for (
      let wait = this.lastArrival + this.registrations.ms - Date.now();
      wait > 0;
      wait = this.lastArrival + this.registrations.ms - Date.now()
    ) {
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
