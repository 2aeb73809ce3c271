// The shape of a resource's state has a version, recorded in the state as `stateVersion`. A state written before
// versions were recorded (0.1.0 up to 2026-11-25) is version 0. Reading a state runs the small upgrade steps from
// its version to today's, one after the other (as terraform-provider-random's UpgradeState upgrades each prior
// schema version), so that each step knows only the shape before it and the shape after it.
//
// Adding a field, renaming one or changing its form: append one step to the resource's list (the version is the
// list's length) that brings a state of the previous version to the new shape, and a test of that step beside
// the others (tests/runtime/stateVersions.test.ts). A new optional field whose absence means "none" needs no step.

/** A state as the engine hands it back: whatever shape the version that wrote it gave it. */
export type StoredState = Record<string, unknown>;

/** One upgrade step: a state of version n in, the same state in the shape of version n + 1 out. */
export type UpgradeStep = (state: StoredState) => StoredState;

/** The field every state written since versions exist carries. */
export const STATE_VERSION = "stateVersion";

/** The version a state records: 0 when it records none (written before versions were recorded). */
export function versionOf(state: StoredState): number {
  const v = state[STATE_VERSION];
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : 0;
}

/**
 * A state of any earlier version in today's shape (version `steps.length`), recorded in it. A state that records
 * a later version (written by a newer package, then read by an older one) is read as it is: no step knows it.
 */
export function upgradeState(state: StoredState, steps: readonly UpgradeStep[]): StoredState {
  let out = state;
  for (let v = versionOf(state); v < steps.length; v += 1) out = steps[v](out);
  return { ...out, [STATE_VERSION]: Math.max(versionOf(state), steps.length) };
}
