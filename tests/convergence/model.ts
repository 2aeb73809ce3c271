import type { Emulator } from "../../provider/emulator/index.js";
import { identityMark } from "../../provider/runtime/subAccountBatch/recovery.js";
import { dueByAge, rotationReason } from "../../provider/runtime/apiKey/rotation.js";
import type { HistoryReport, Plan, Program, StateView } from "./history.js";

// Objects made out of band (in the web console) and what a run may do to them, to keys in use and to previous
// keys: the resolution of a planned program's adoption references into real keys and tokens, as a user who
// copies them from the console would write them, and the checks made around every run (issue 22).

type Json = string;

/** How a key or sub-account looks to the invariant: what a run could change. */
function lookOfKey(emu: Emulator, key: string): Json | undefined {
  const k = emu.state.getKey(key);
  return k && JSON.stringify({ alias: k.alias, enabled: k.enabled, security: k.security_config ?? {} });
}

function lookOfSub(emu: Emulator, token: string): Json | undefined {
  const s = emu.state.getSubAccount(token);
  return s && JSON.stringify({ alias: s.alias, enabled: s.enabled, pricing: s.model_pricing, balance: s.balance });
}

/** Which resource (URN-like key) holds each key (current or previous) and each token of the state. */
export function holders(state: StateView): { keys: Map<string, string>; tokens: Map<string, string> } {
  const keys = new Map<string, string>();
  const tokens = new Map<string, string>();
  for (const [urn, e] of state) {
    if (e.type === "ApiKey") {
      for (const k of [e.outputs.key, e.outputs.previousKey]) if (typeof k === "string") keys.set(k, urn);
    } else {
      for (const t of (e.outputs.tokens as string[] | undefined) ?? []) tokens.set(t, urn);
    }
  }
  return { keys, tokens };
}

const HOUR_MS = 3_600_000;

/** The restriction the emulator has beyond the spec's four parts, as a person sets it in the console. */
const CONSOLE_HOURS = { from: "08:00", to: "18:00" };

/** Whether a key holds the console's hours restriction. */
function hasHours(emu: Emulator, key: string): boolean {
  return emu.state.getKey(key)?.security_config.hours !== undefined;
}

/** The project the histories' stacks belong to, as the mark of their batches names it. */
export const PROJECT = "histories";

/**
 * The `mark` the SubAccountBatch class gives batch `name` of stack `stack` (stack 0, 1, ...: `stack0`, `stack1`):
 * the same at every run of that resource, another for another stack or name.
 */
export function markOf(stack: number, name: string): string {
  return identityMark([PROJECT, `stack${stack}`, "SubAccountBatch", name]);
}

/**
 * Issue 21's day-two semantics: once a resource owns what it adopted, a program may drop `adoptKey` or
 * `adoptTokens` (or write `adoptTokens: []`) and nothing changes; an adopted sub-account deleted in the console
 * is recreated. On since they are on main; off, programs keep naming what they adopted and leave out the
 * tokens deleted in the console (the workaround the issue describes), which a runtime without them needs.
 */
export const DAY_TWO = { semantics: true };

/**
 * The out-of-band objects of one history and the rules a run must keep about them, about keys in use and
 * about previous keys. `before` is called with the state and the platform just before a run, `after` just
 * after it; a console step calls `consoleDone`.
 */
export class Watch {
  /** Out-of-band keys and tokens, in the order they were made (adoption references index these). */
  readonly oobKeys: string[] = [];
  readonly oobTokens: string[] = [];
  /** Out-of-band objects no resource holds, and how they must look (undefined: gone). */
  private readonly free = new Map<string, Json | undefined>();
  /** Out-of-band keys a resource has held: keys are never released, so they never become free again. */
  private readonly keysHeld = new Set<string>();
  /** The key each ApiKey adopted when it was created, by logical name, while the state holds it. */
  private readonly adoptedKeyOf = new Map<string, string>();
  /** Counts for the soak's figures (a transfer: released by one batch and adopted by another in one run). */
  readonly counts = { outOfBand: 0, adoptions: 0, releases: 0, transfers: 0, rotations: 0, adoptedGoneInConsole: 0 };

  private snapshot?: {
    state: Map<string, { type: string; outputs: Record<string, unknown> }>;
    held: ReturnType<typeof holders>;
    look: Map<string, Json | undefined>;
    program: Program;
    startedAt: number;
    /** Keys named for adoption already due by age, with no overlap: the adopting create rotates and deletes them. */
    dueOnAdoption: Set<string>;
  };

  constructor(private readonly report: HistoryReport) {}

  /** Makes objects in the console: `keys` keys and one group of `subAccounts` sub-accounts, made `ageDays` ago. */
  makeOutOfBand(
    emu: Emulator,
    made: { keys: number; subAccounts: number; balance: number; ageDays: number },
    clockOffsetMs: number,
  ): void {
    // Made by a person well before any run: their created_at must not fall in a lost create's 5-second window.
    emu.setClockOffset(clockOffsetMs - Math.max(1, made.ageDays * 24) * HOUR_MS);
    try {
      for (let i = 0; i < made.keys; i++) {
        // Every other console key holds a restriction the package does not know: no run may remove it (platformParts).
        const k = emu.state.createKey(
          `console-k${this.oobKeys.length}`,
          this.oobKeys.length % 2 === 0 ? { hours: CONSOLE_HOURS } : {},
        );
        this.oobKeys.push(k.key);
        this.free.set(k.key, lookOfKey(emu, k.key));
      }
      if (made.subAccounts > 0) {
        const subs = emu.state.createSubAccounts({
          alias: `console-s${this.oobTokens.length}`,
          balance: made.balance,
          modelPricing: [],
          count: made.subAccounts,
        });
        for (const s of subs) {
          this.oobTokens.push(s.token);
          this.free.set(s.token, lookOfSub(emu, s.token));
        }
      }
      this.counts.outOfBand += made.keys + made.subAccounts;
    } finally {
      emu.setClockOffset(clockOffsetMs);
    }
  }

  /** After a console edit: free objects look as the console left them (the console is the user). */
  consoleDone(emu: Emulator, state: StateView): void {
    for (const o of this.free.keys()) this.free.set(o, this.look(emu, o));
    const { tokens } = holders(state);
    for (const t of this.oobTokens)
      if (tokens.has(t) && !emu.state.hasSubAccount(t)) this.counts.adoptedGoneInConsole++;
  }

  /** How key or token `o` looks now, whoever made it (undefined: gone). */
  private look(emu: Emulator, o: string): Json | undefined {
    return emu.state.hasKey(o) ? lookOfKey(emu, o) : lookOfSub(emu, o);
  }

  /**
   * The program a user writes from a plan: adoption references become the out-of-band keys and tokens they
   * name, as far as a correct program may name them. An ApiKey that adopted keeps naming its key or drops it;
   * one that did not never gains `adoptKey`. A token is adopted by one batch at a time: one held elsewhere is
   * named only when its holder releases it in the same run (a non-empty `adoptTokens` without it). `count`
   * covers the batch's adopted set.
   */
  resolve(plan: Plan, state: StateView, emu: Emulator): Program {
    const { keys: heldKeys, tokens: heldTokens } = holders(state);
    const claimedKeys = new Set<string>();
    const keys = plan.keys.map(({ adopt, ...k }) => {
      const decl: Program["keys"][number] = { ...k };
      const current = state.get(`ApiKey::${k.name}`);
      if (current) {
        const adopted = this.adoptedKeyOf.get(k.name);
        if (adopted !== undefined && (adopt !== undefined || !DAY_TWO.semantics)) decl.adoptKey = adopted;
      } else if (adopt !== undefined && this.oobKeys.length > 0) {
        const key = this.oobKeys[adopt % this.oobKeys.length];
        if (emu.state.hasKey(key) && !heldKeys.has(key) && !this.keysHeld.has(key) && !claimedKeys.has(key)) {
          decl.adoptKey = key;
          claimedKeys.add(key);
        }
      }
      return decl;
    });

    const declared = new Set(plan.batches.map((b) => `SubAccountBatch::${b.name}`));
    const adoptedSet = (name: string) => {
      const urn = `SubAccountBatch::${name}`;
      return new Set(this.oobTokens.filter((t) => heldTokens.get(t) === urn));
    };
    const n = this.oobTokens.length;
    const raw = plan.batches.map((b): string[] | undefined => {
      if (b.adopt === undefined || (n === 0 && b.adopt.length > 0)) return undefined;
      return [...new Set(b.adopt.map((i) => this.oobTokens[i % n]))];
    });
    const claimed = new Set<string>();
    // First what each batch may name without anyone's release: its own adopted tokens, and free live ones.
    const lists = plan.batches.map((b, i) => {
      const own = adoptedSet(b.name);
      const list = raw[i]?.filter(
        (t) => own.has(t) || (emu.state.hasSubAccount(t) && !heldTokens.has(t) && !claimed.has(t)),
      );
      for (const t of list ?? []) claimed.add(t);
      return list;
    });
    // Then tokens that their holder releases in this run (its list is not empty and leaves them out).
    const releasing = new Map<string, string[] | undefined>(
      plan.batches.map((b, i) => [`SubAccountBatch::${b.name}`, lists[i]]),
    );
    plan.batches.forEach((_, i) => {
      for (const t of raw[i] ?? []) {
        if (lists[i]!.includes(t) || claimed.has(t) || !emu.state.hasSubAccount(t)) continue;
        const holder = heldTokens.get(t);
        const holderList = holder !== undefined && declared.has(holder) ? releasing.get(holder) : undefined;
        if (holderList && holderList.length > 0 && !holderList.includes(t)) {
          lists[i]!.push(t);
          claimed.add(t);
        }
      }
    });
    const batches = plan.batches.map(({ adopt, marked, ...b }, i) => {
      const decl: Program["batches"][number] = { ...b };
      // A program of this version (the class gives the mark), or of an earlier one (no mark: random marks).
      if (marked) decl.mark = markOf(0, b.name);
      let list = lists[i];
      if (!DAY_TWO.semantics) {
        const own = adoptedSet(b.name);
        if (own.size > 0 && (list === undefined || list.length === 0)) list = [...own];
        list = list?.filter((t) => !own.has(t) || emu.state.hasSubAccount(t));
      }
      if (list !== undefined) decl.adoptTokens = list;
      // An empty list counts as no list: the batch keeps what it adopted.
      const keeps = list && list.length > 0 ? list.length : adoptedSet(b.name).size;
      decl.count = Math.max(b.count, keeps, countForJoining(state.get(`SubAccountBatch::${b.name}`)?.outputs, list));
      return decl;
    });
    return { keys, batches };
  }

  /** Just before a run of `program`. */
  before(emu: Emulator, state: StateView, program: Program): void {
    const look = new Map<string, Json | undefined>();
    const held = holders(state);
    for (const o of [...this.oobKeys, ...this.oobTokens, ...held.keys.keys(), ...held.tokens.keys()])
      look.set(o, this.look(emu, o));
    const copy = new Map([...state].map(([urn, e]) => [urn, { type: e.type, outputs: { ...e.outputs } }]));
    const dueOnAdoption = new Set(
      program.keys.flatMap((k) =>
        k.adoptKey !== undefined &&
        (k.rotation?.overlapHours ?? 0) === 0 &&
        dueByAge({ createdAt: emu.state.getKey(k.adoptKey)?.created_at }, k, Date.now()) !== undefined
          ? [k.adoptKey]
          : [],
      ),
    );
    this.snapshot = { state: copy, held, look, program, startedAt: Date.now(), dueOnAdoption };
  }

  /** Just after the run (`killed`: its process died on the way, see stacks.ts): what it did to out-of-band objects, keys in use and previous keys. */
  after(emu: Emulator, state: StateView, errorFree: boolean, killed = false): void {
    const s = this.snapshot;
    if (!s) return;
    this.snapshot = undefined;
    const v = this.report.violations;
    const now = holders(state);
    const declared = new Set([
      ...s.program.keys.map((k) => `ApiKey::${k.name}`),
      ...s.program.batches.map((b) => `SubAccountBatch::${b.name}`),
    ]);
    const named = new Set<string>([
      ...s.program.keys.flatMap((k) => (k.adoptKey ? [k.adoptKey] : [])),
      ...s.program.batches.flatMap((b) => b.adoptTokens ?? []),
    ]);
    const existedBefore = (o: string) => s.look.get(o) !== undefined;
    const exists = (o: string) => this.look(emu, o) !== undefined;

    for (const o of [...this.oobKeys, ...this.oobTokens]) {
      const isKey = this.oobKeys.includes(o);
      const holderNow = isKey ? now.keys.get(o) : now.tokens.get(o);
      const holderBefore = isKey ? s.held.keys.get(o) : s.held.tokens.get(o);
      const what = isKey ? "an out-of-band key" : "an out-of-band sub-account";
      if (holderNow !== undefined) {
        if (holderBefore === undefined) this.counts.adoptions++;
        // Released by one batch and adopted by another in the same run.
        else if (holderBefore !== holderNow) this.counts.transfers++;
        if (isKey) this.keysHeld.add(o);
        this.free.delete(o);
        // An adopted object is never deleted while it exists (the state would hold a gone object). Except a key a
        // rotation with no overlap asked to delete, whose delete answers were all lost: the run fails and keeps it as
        // the previous key, since it may still exist (rotate's error says so); the next refresh or update drops it.
        // And an object of a resource the program removed (a replaced twin's resource still declared is not): its
        // delete, committed but every answer lost, fails the run, and the engine keeps the resource as it keeps any
        // whose delete failed; the next refresh drops it.
        const after = state.get(holderNow);
        // Or a killed run whose rotation of the holder (due) deleted its previous key first, as every rotation does
        // (one previous key at most), and died before the state could record that.
        const inDoubt =
          (isKey && killed && after?.outputs.previousKey === o && this.rotating(s, holderNow)) ||
          (isKey &&
            !errorFree &&
            after?.outputs.previousKey === o &&
            after.outputs.rotatedAt !== s.state.get(holderNow)?.outputs.rotatedAt &&
            (s.program.keys.find((k) => `ApiKey::${k.name}` === holderNow)?.rotation?.overlapHours ?? 0) === 0) ||
          (!errorFree && !declared.has(holderNow.replace(/#\d+$/, "")));
        if (existedBefore(o) && !exists(o) && !inDoubt)
          v.push(`${what} adopted by ${holderNow} was deleted by a run that kept it in the state`);
        continue;
      }
      if (holderBefore !== undefined) {
        if (!existedBefore(o)) {
          this.free.set(o, undefined);
          continue;
        }
        if (isKey) {
          // Keys leave the state only by their resource's removal or a rotation: both delete them.
          const was = s.state.get(holderBefore);
          const is = state.get(holderBefore);
          const rotatedAway =
            was?.outputs.previousKey === o ||
            (is !== undefined && is.outputs.rotatedAt !== undefined && is.outputs.rotatedAt !== was?.outputs.rotatedAt);
          if (exists(o)) v.push(`${what} adopted by ${holderBefore} left the state but still exists`);
          else if (declared.has(holderBefore) && !rotatedAway)
            v.push(`${what} adopted by ${holderBefore} was deleted without a rotation or the resource's removal`);
          this.free.set(o, undefined);
          continue;
        }
        const holderDecl = s.program.batches.find((b) => `SubAccountBatch::${b.name}` === holderBefore);
        const releasedByList =
          holderDecl?.adoptTokens !== undefined &&
          holderDecl.adoptTokens.length > 0 &&
          !holderDecl.adoptTokens.includes(o);
        if (!declared.has(holderBefore)) {
          if (exists(o)) v.push(`${what} adopted by ${holderBefore}, which the program removed, still exists`);
        } else if (releasedByList) {
          this.counts.releases++;
          if (!exists(o)) v.push(`${what} released by ${holderBefore} was deleted`);
          else if (!named.has(o) && this.look(emu, o) !== s.look.get(o))
            v.push(`${what} released by ${holderBefore} was changed: ${this.look(emu, o)}, was ${s.look.get(o)}`);
        } else {
          v.push(
            `${what} adopted by ${holderBefore} left the batch (${exists(o) ? "still exists" : "deleted"}) although the program kept it`,
          );
        }
        this.free.set(o, this.look(emu, o));
        continue;
      }
      // Free before the run, free after it.
      if (named.has(o)) {
        // A failed adoption may have aligned it; it must not have deleted it. A key adopted when already due
        // rotates in the same run: the program asked for its deletion (overlap 0) once the new key exists.
        const adopter = s.program.keys.find((k) => k.adoptKey === o);
        const after = adopter && state.get(`ApiKey::${adopter.name}`);
        const rotatedAway =
          isKey &&
          after !== undefined &&
          after.outputs.adoptKey === o &&
          after.outputs.rotatedAt !== undefined &&
          after.outputs.key !== o;
        if (rotatedAway && existedBefore(o)) {
          this.counts.adoptions++;
          this.keysHeld.add(o);
          this.free.delete(o);
          if ((adopter?.rotation?.overlapHours ?? 0) > 0)
            v.push(`${what} adopted and rotated with an overlap was deleted at once`);
          continue;
        }
        // Killed after that rotation's delete left for the platform: the key is gone, and the create's answer (the new
        // key, the kill's leftover) never reached the state.
        const killedRotating = killed && s.dueOnAdoption.has(o);
        if (existedBefore(o) && !exists(o) && !killedRotating)
          v.push(`${what} named for adoption by a run that failed to adopt it was deleted`);
        this.free.set(o, this.look(emu, o));
      } else if (this.look(emu, o) !== this.free.get(o)) {
        v.push(
          `${what} that no program adopted was changed: ${this.look(emu, o) ?? "deleted"}, was ${this.free.get(o) ?? "deleted"}`,
        );
        this.free.set(o, this.look(emu, o));
      }
    }

    for (const k of s.program.keys) {
      const urn = `ApiKey::${k.name}`;
      const e = state.get(urn);
      if (
        e &&
        k.adoptKey !== undefined &&
        !this.adoptedKeyOf.has(k.name) &&
        (e.outputs.key === k.adoptKey || e.outputs.adoptKey === k.adoptKey)
      ) {
        this.adoptedKeyOf.set(k.name, k.adoptKey);
      }
      if (!e) this.adoptedKeyOf.delete(k.name);
    }
    for (const name of [...this.adoptedKeyOf.keys()]) if (!state.has(`ApiKey::${name}`)) this.adoptedKeyOf.delete(name);

    this.checkKeysInUse(emu, state, s, errorFree, killed);
    this.checkConsoleRestrictions(emu, state, s);
  }

  /**
   * A restriction set in the console that the package does not know (`hours`) is never removed: a key that held it
   * before a run and still exists holds it after, and a key a resource rotated to from one that held it holds it too.
   */
  private checkConsoleRestrictions(emu: Emulator, state: StateView, s: NonNullable<Watch["snapshot"]>): void {
    const v = this.report.violations;
    const hadHours = (o: string) => (s.look.get(o) ?? "").includes('"hours"');
    for (const [o] of s.look)
      if (hadHours(o) && emu.state.hasKey(o) && !hasHours(emu, o))
        v.push(`a key's console restriction (hours) was removed by a run`);
    for (const [urn, is] of state) {
      const was = s.state.get(urn);
      const from = was?.outputs.key;
      if (is.type !== "ApiKey" || typeof from !== "string" || is.outputs.key === from || !hadHours(from)) continue;
      if (typeof is.outputs.key === "string" && emu.state.hasKey(is.outputs.key) && !hasHours(emu, is.outputs.key))
        v.push(`${urn}: the key it rotated to lacks the console restriction (hours) of the key it replaced`);
    }
  }

  /** Whether the run's program rotates key resource `urn` (a trigger changed, or its key is due by age). */
  private rotating(s: NonNullable<Watch["snapshot"]>, urn: string): boolean {
    const k = s.program.keys.find((d) => `ApiKey::${d.name}` === urn);
    const was = s.state.get(urn);
    return k !== undefined && was !== undefined && rotationReason(was.outputs, k, Date.now()) !== undefined;
  }

  /**
   * Keys in use are deleted only when the program asks; a previous key lives out its overlap, then goes. A killed run
   * whose rotation (due) deleted the previous key first, or the key in use after issuing its successor (no overlap),
   * leaves the state naming the gone key: the program asked for that delete, and the kill came before the state
   * could record it (the successor is the kill's leftover; docs/guides/rotation.md).
   */
  private checkKeysInUse(
    emu: Emulator,
    state: StateView,
    s: NonNullable<Watch["snapshot"]>,
    errorFree: boolean,
    killed: boolean,
  ): void {
    const v = this.report.violations;
    const live = (k: unknown) => typeof k === "string" && emu.state.hasKey(k);
    for (const k of s.program.keys) {
      const urn = `ApiKey::${k.name}`;
      const was = s.state.get(urn);
      const is = state.get(urn);
      if (!was || !is) continue;
      const current = was.outputs.key as string;
      if (is.outputs.key !== current) this.counts.rotations++;
      if (s.look.get(current) !== undefined) {
        const killedRotating = killed && (k.rotation?.overlapHours ?? 0) === 0 && this.rotating(s, urn);
        if ((is.outputs.key === current || is.outputs.previousKey === current) && !live(current) && !killedRotating) {
          v.push(`${urn}: its key in use was deleted by a run that kept it in the state`);
        } else if (is.outputs.key !== current && is.outputs.previousKey !== current && live(current)) {
          v.push(`${urn}: the key it rotated away from is neither its previous key nor deleted`);
        } else if (is.outputs.key !== current && is.outputs.previousKey !== current) {
          // rotatedAt is the issued key's created_at: two rotations in one second of a platform whose timestamps have
          // no fractions (other-forms) give the same one, so a due rotation that issued the key in use counts too.
          const issuedByRotation =
            is.outputs.rotatedAt !== undefined &&
            is.outputs.rotatedAt === is.outputs.createdAt &&
            this.rotating(s, urn);
          const rotated =
            (is.outputs.rotatedAt !== undefined && is.outputs.rotatedAt !== was.outputs.rotatedAt) || issuedByRotation;
          if (!rotated) v.push(`${urn}: its key in use was deleted by a replacement the program did not ask for`);
          else if ((k.rotation?.overlapHours ?? 0) > 0)
            v.push(
              `${urn}: its key in use was deleted at a rotation with an overlap of ${k.rotation?.overlapHours} hours`,
            );
        }
      }
      const previous = was.outputs.previousKey;
      const expiresAt = Date.parse(String(was.outputs.previousKeyExpiresAt ?? ""));
      if (typeof previous === "string" && s.look.get(previous) !== undefined && !live(previous)) {
        const displaced = is.outputs.key !== current;
        if (!displaced && expiresAt > Date.now() && !(killed && this.rotating(s, urn)))
          v.push(`${urn}: its previous key was deleted before its overlap ended`);
      }
      // A previous key this run made expires, by the platform's created_at, at the earliest at the next run.
      const kept = typeof is.outputs.previousKey === "string" && is.outputs.previousKey === was.outputs.previousKey;
      if (errorFree && kept && Date.parse(String(is.outputs.previousKeyExpiresAt)) <= s.startedAt) {
        v.push(`${urn}: its previous key outlived the first run after its overlap ended`);
      }
    }
  }

  /** Out-of-band objects no resource holds at the end: the keys among them, for the invariant's count. */
  freeObjects(): Set<string> {
    return new Set(this.free.keys());
  }
}

/**
 * The `count` a user sets when tokens join a batch, as the check's message asks: what the batch holds (its state's
 * tokens) less what the list releases, plus the tokens it does not hold yet. 0 for a new batch or no list.
 */
function countForJoining(outputs: Record<string, unknown> | undefined, list: readonly string[] | undefined): number {
  if (!outputs || !list || list.length === 0) return 0;
  const held = (outputs.tokens as string[] | undefined) ?? [];
  const adopted = (outputs.adoptTokens as string[] | undefined) ?? [];
  const listed = new Set(list);
  const holds = new Set(held);
  const released = adopted.filter((t) => !listed.has(t) && holds.has(t)).length;
  return held.length - released + list.filter((t) => !holds.has(t)).length;
}
