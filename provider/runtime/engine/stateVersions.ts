// The shape of a resource's state has a version, recorded in the state as `stateVersion`. A state written before
// versions were recorded (0.1.0 up to 2026-11-25) is version 0. Each version's shape is a zod schema, and each
// step from one version to the next is a typed function from one parsed shape to the next (as
// terraform-provider-random's UpgradeState keeps `passwordSchemaV0` .. `V3` and one upgrader between each two).
// A state is parsed once, against the schema of the version it records, then upgraded step by step: the provider's
// methods see the current shape only.
//
// Adding a field, renaming one or changing its form: append `.then(schemaOfTheNewVersion, upgrade)` to the
// resource's chain (apiKey/state.ts, subAccountBatch/state.ts) and a test of the step beside the others
// (tests/runtime/stateVersions.test.ts). A new optional field whose absence means "none" needs no new version.
import type { z } from "zod";
import { camelPath } from "../../api/casing.js";
import { LlmAccountsError } from "../../client/errors.js";

/** A state as the engine hands it back: whatever shape the version that wrote it gave it. */
export type StoredState = Record<string, unknown>;

/** The field every state written since versions exist carries. */
export const STATE_VERSION = "stateVersion";

/** The version a state records: 0 when it records none (written before versions were recorded). */
export function versionOf(state: unknown): number {
  const v = state !== null && typeof state === "object" ? (state as StoredState)[STATE_VERSION] : undefined;
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : 0;
}

/** What was wrong with a state, field by field: `tokens: expected array, received undefined`; never a value. */
function issuesText(issues: readonly z.core.$ZodIssue[]): string {
  const shown = issues
    .slice(0, 5)
    .map((i) => `${camelPath(i.path) || "(the whole state)"}: ${i.message.replace(/^Invalid input: /, "")}`);
  return shown.join("; ") + (issues.length > 5 ? `; and ${issues.length - 5} more` : "");
}

/** The fields that say which objects a state holds: emptied, a refresh takes the resource for deleted. */
const HOLDINGS = new Set(["tokens", "subAccounts", "key"]);
const HOLDINGS_ADVICE =
  '. Never empty it nor write `[]` or `""` in its place: a resource whose state holds nothing is taken for deleted by that refresh, and what it held stays on the platform, managed by nothing ' +
  "(a SubAccountBatch's `tokens` and `subAccounts[].token` name the same sub-accounts: where one of them is whole, the refresh reads them by it and writes the other back)";

/**
 * A stored state that does not parse against the schema of the version it records (edited by hand, or cut
 * short): it names the resource type, each field and what was expected, and what to do about it.
 */
export class StateError extends LlmAccountsError {
  constructor(
    readonly resource: string,
    readonly version: number,
    readonly issues: readonly z.core.$ZodIssue[],
    consequence = "nothing was changed",
  ) {
    super(
      `${resource}: the state (version ${version}) cannot be read: ${issuesText(issues)}; ${consequence}. ` +
        "Put the field back as it was with `pulumi state edit` (its last value is in `pulumi stack export --version N`, N from `pulumi stack history`; " +
        "or restore the state from a backup), then run `pulumi refresh` to read the rest back from the platform" +
        (issues.some((i) => HOLDINGS.has(String(i.path[0]))) ? HOLDINGS_ADVICE : ""),
    );
  }

  /** The same error, saying what was done instead of "nothing was changed" (a delete that did what it could). */
  after(consequence: string): StateError {
    return new StateError(this.resource, this.version, this.issues, consequence);
  }
}

type Parsed<T> = { success: true; data: T } | { success: false; error: StateError };

/** A state of the version each reader knows, read into the current shape; `version` is the state's own. */
type Reader<T> = (
  state: unknown,
  version: number,
) => { ok: true; value: T } | { ok: false; version: number; issues: readonly z.core.$ZodIssue[] };

function readWith<S extends z.ZodType>(schema: S, version: number): Reader<z.output<S>> {
  return (state) => {
    const parsed = schema.safeParse(state);
    return parsed.success ? { ok: true, value: parsed.data } : { ok: false, version, issues: parsed.error.issues };
  };
}

/**
 * Every version of one resource's state: the schema of each, and the upgrade from each to the next. Built with
 * `StateVersions.first(resource, schemaV0).then(schemaV1, upgrade0to1)...`; `current` is the version written today.
 */
export class StateVersions<T extends object> {
  private constructor(
    /** The resource type, as errors name it. */
    readonly resource: string,
    /** The version of the state this package writes. */
    readonly current: number,
    private readonly reader: Reader<T>,
  ) {}

  /** Version 0: states written before versions were recorded. */
  static first<S extends z.ZodType<object>>(resource: string, schema: S): StateVersions<z.output<S>> {
    return new StateVersions(resource, 0, readWith(schema, 0));
  }

  /** The next version: its schema, and the step that brings a parsed state of the version before to it. */
  then<S extends z.ZodType<object>>(schema: S, upgrade: (previous: T) => z.output<S>): StateVersions<z.output<S>> {
    const version = this.current + 1;
    const own = readWith(schema, version);
    const earlier = this.reader;
    return new StateVersions(this.resource, version, (state, stored) => {
      if (stored >= version) return own(state, stored);
      const before = earlier(state, stored);
      return before.ok ? { ok: true, value: upgrade(before.value) } : before;
    });
  }

  /**
   * A stored state in the current shape, with the version it was brought to recorded. A state that records a
   * later version (written by a newer package, then read by an older one) is read by the current schema.
   */
  safeParse(state: unknown): Parsed<T & { stateVersion: number }> {
    const stored = versionOf(state);
    const read = this.reader(state, stored);
    if (!read.ok) return { success: false, error: new StateError(this.resource, read.version, read.issues) };
    return { success: true, data: { ...read.value, stateVersion: Math.max(stored, this.current) } };
  }

  /** As safeParse, throwing the StateError. */
  parse(state: unknown): T & { stateVersion: number } {
    const parsed = this.safeParse(state);
    if (!parsed.success) throw parsed.error;
    return parsed.data;
  }
}
