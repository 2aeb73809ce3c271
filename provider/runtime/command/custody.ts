import { canonical } from "../../api/canonical.js";
import { maskKey } from "../../api/redact.js";
import { LlmAccountsError } from "../../client/errors.js";
import { Transfers } from "./transfers.js";

/**
 * The one-owner error's text, for `taken` (one of `declared`, the list of the resource that asked), which another
 * resource keeps (`byCreate`: a create of this command took it).
 */
export type Refusal = (taken: string, byCreate: boolean, declared: readonly string[]) => string;

/**
 * Who keeps what, for one kind of object (keys, sub-account tokens), in one command: one object, one owner. The
 * session holds one per kind (runtime/command/session.ts), forgotten at startFresh as a new plugin process starts
 * with nothing. The engine deletes last, after every declared resource's diff, create and update in the same
 * process, so a delete sees what every other resource keeps.
 *   held       every object a resource holds or a create made: what a lost create's recovery may not take (a
 *              batch create made by another request has the same alias and balance, and only this process knows
 *              whose it is; subAccountBatch/recovery.ts)
 *   keepers    who keeps each: what another create or update may not take, and what a delete must leave (and
 *              when it must not go at all: a create that took it failed)
 *   transfers  the releases under way (a taker waits for its giver; transfers.ts)
 */
export class Custody {
  private readonly held = new Set<string>();
  /** Who keeps each object: a resource id, or a create's own name (its id is not known before it ends). */
  private readonly keepers = new Map<string, string>();
  private readonly creates = new Set<string>();
  /** Creates that failed with nothing recorded (createFailed). */
  private readonly failed = new Set<string>();
  /** Resource ids a diff of this command kept objects for (keep), with the state it diffed, and those whose diff plans a replacement (replaced). */
  private readonly diffed = new Map<string, string>();
  private readonly replacing = new Set<string>();
  /** Resource ids updated in this command (updated). */
  private readonly updating = new Set<string>();
  readonly transfers = new Transfers();

  /** `resource`: the class that keeps this kind (ApiKey, SubAccountBatch), as errors name it. */
  constructor(
    private readonly resource: string,
    private readonly refusal: Refusal,
  ) {}

  /** A name for one create, as the owner of what it takes. */
  createOwner(): string {
    const name = `create#${this.creates.size + 1}`;
    this.creates.add(name);
    return name;
  }

  /** A resource holds (or a create made) these: no lost create's recovery takes them. */
  hold(objects: Iterable<string>): void {
    for (const o of objects) this.held.add(o);
  }

  /**
   * Resource `owner` (its id) holds `objects` and keeps all but `released` (a diff: its state's objects, less what
   * its new inputs release, which another resource may take in the same deployment).
   */
  keep(owner: string, objects: Iterable<string | undefined>, released: Iterable<string> = [], state?: object): void {
    this.diffed.set(owner, canonical(state ?? null));
    const out = new Set(released);
    for (const o of objects) {
      if (o === undefined || o === "") continue;
      this.held.add(o);
      if (!out.has(o)) this.keepers.set(o, owner);
    }
  }

  /**
   * The objects a create or an update takes (`wanted`, among its `declared` list), taken for `owner` before anything
   * is read or written: fails with the one-owner error naming the first that another keeps (also for programs
   * that bypass the resource classes); else `owner` keeps them from now on.
   */
  take(owner: string, wanted: readonly string[], declared: readonly string[] = wanted): void {
    const taken = [...this.keptByOthers(owner, wanted)][0];
    if (taken !== undefined)
      throw new LlmAccountsError(this.refusal(taken, this.creates.has(this.keepers.get(taken)!), declared));
    for (const o of wanted) {
      this.held.add(o);
      this.keepers.set(o, owner);
    }
  }

  /** Resource `owner` is updated in this command: a delete of it is of this resource (an order only direct callers play). */
  updated(owner: string): void {
    this.updating.add(owner);
  }

  /** The diff of resource `owner` plans its replacement: the delete of `owner` that follows is this resource's own. */
  replaced(owner: string): void {
    this.replacing.add(owner);
  }

  /**
   * Create `owner` failed, and no state records what it took: its resource is in no state, so what it took is in
   * doubt (leftByDelete): its next run may take it again, or the program may drop it.
   */
  createFailed(owner: string): void {
    this.failed.add(owner);
  }

  /**
   * What `owner`'s delete must leave of the objects it would delete: those another resource keeps (keptByOthers).
   * Fails, naming the first masked, when a create that failed took one (createFailed): leaving it and dropping this
   * resource would leave it in no state, deleting it would delete what that resource's next run adopts.
   */
  leftByDelete(owner: string, objects: Iterable<string>, state?: object): Set<string> {
    const left = this.diffedElsewhere(owner, state)
      ? new Set([...objects].filter((o) => this.keepers.has(o)))
      : this.keptByOthers(owner, objects);
    const doubt = [...left].find((o) => this.failed.has(this.keepers.get(o)!));
    if (doubt !== undefined) {
      throw new LlmAccountsError(
        `this ${this.resource}'s delete would delete ${maskKey(doubt)}, which another ${this.resource} of this deployment adopts, but whose create failed: ` +
          `nothing was deleted, and this ${this.resource} stays in the state, so that one of them holds it. The next up retries that create ` +
          `(or, once that ${this.resource} is removed from the program, deletes this one with it)`,
      );
    }
    return left;
  }

  /**
   * Whether the delete of `owner` (its state `state`) is of another resource than the one a diff of this command kept
   * objects for under the same id: one removed from the program whose id a resource declared in its place has too (an
   * adoption gives the adopter the id of what it adopts), which an up --target of the new one left in the state
   * beside it; what that diff keeps is the new one's. The engine deletes a resource it diffed in the same command
   * only to replace it: planned by the diff (replaced), or forced (`up --replace`), where it diffed the very state it
   * deletes and created the replacement first.
   */
  private diffedElsewhere(owner: string, state: object | undefined): boolean {
    const diffed = this.diffed.get(owner);
    if (diffed === undefined || this.replacing.has(owner) || this.updating.has(owner)) return false;
    return diffed !== canonical(state ?? null) || this.creates.size === 0;
  }

  /**
   * Of the objects `owner`'s delete would delete, those another resource keeps: one its state still names after a
   * release a killed run never recorded, or one a create takes (a resource declared in its place, renamed without
   * an alias: its id may be this one's, but the engine never creates and deletes one resource in one command).
   */
  private keptByOthers(owner: string, objects: Iterable<string>): Set<string> {
    // A create's name is never a resource id.
    return new Set([...objects].filter((o) => this.keepers.has(o) && this.keepers.get(o) !== owner));
  }

  /** Whether a resource holds `object` or a create made it in this command (what notToTake copies). */
  holds(object: string): boolean {
    return this.held.has(object);
  }

  /** What a lost create's recovery must leave: the resource's own objects and every one held or made in this command. */
  notToTake(own: Iterable<string>): Set<string> {
    return new Set([...this.held, ...own]);
  }
}
