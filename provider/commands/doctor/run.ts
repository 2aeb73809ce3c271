import type { Profile, Signature } from "../../api/profile.js";
import type { LlmAccountsClient } from "../../client/client.js";
import type { DoctorRow } from "./report.js";
import { type Probe, signatureOf, type Reading } from "./probe.js";
import type { Throwaways } from "./throwaways.js";

/** How long the doctor looks for a write that does not show yet, and how often. */
export const VISIBILITY_PROBE_MAX_MS = 60_000;
export const VISIBILITY_POLL_MS = 250;

/** What the probes measured for the profile. */
export interface Measured {
  refused: Signature[];
  goneKey: Signature[];
  goneSubAccount: Signature[];
  unauthorised: Signature[];
  /** Points whose answers could not be measured (transient, or two readings that differ), and why: nothing of them is saved. */
  unmeasured: { point: string; why: string }[];
  limits: NonNullable<Profile["limits"]>;
}

/** What one run of the doctor shares between its checks. */
export interface Run {
  probe: Probe;
  /** The package's own client, with the settings the environment gives: what `up` would read, read as `up` reads it. */
  client: LlmAccountsClient;
  /** The profile the environment already sets, if any (its limits count as obeyed). */
  profile?: Profile;
  /** The `lateWritesMs` setting the environment sets, if any: how long the runtime looks for a late write. */
  lateWritesMs?: number;
  usageField: string;
  measured: Measured;
  /** How the sub-account list is read: all at once, or by pages of 100 where page_size=-1 is refused. */
  paging: Record<string, number>;
  /** The throwaway objects of `--write`. */
  made: Throwaways;
  /** What `--write` saw of write answers: confirmed otherwise than the spec shows. */
  answers: { terse: boolean };
  /** How long a write took to show (ms; undefined: not within VISIBILITY_PROBE_MAX_MS), once measured. */
  lag?: number | undefined;
  /** The model names the model list answered (the pricing probes use its first two). */
  models: string[];
}

/** Milliseconds rounded up to the next 100. */
export const roundUp = (ms: number) => Math.max(100, Math.ceil(ms / 100) * 100);
/** Seconds, for a row. */
export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * How long a write took to show: `shows` is asked from the write's answer on, every VISIBILITY_POLL_MS, until it
 * does (0 when at once), at most VISIBILITY_PROBE_MAX_MS (then undefined).
 */
export async function lagOf(probe: Probe, shows: () => Promise<boolean>, what: string): Promise<number | undefined> {
  const from = probe.clock.now();
  if (await shows()) return 0;
  let said = 0;
  for (;;) {
    await probe.clock.sleep(VISIBILITY_POLL_MS);
    const waited = probe.clock.now() - from;
    if (await shows()) return waited;
    if (waited >= VISIBILITY_PROBE_MAX_MS) return undefined;
    // A plain line every few seconds on stderr: the wait may last a minute.
    if (waited - said >= PROGRESS_EVERY_MS) {
      said = waited;
      probe.stderr.write(
        `llm-accounts doctor: waiting for ${what} to show: ${seconds(waited)} of at most ${seconds(VISIBILITY_PROBE_MAX_MS)}\n`,
      );
    }
  }
}

/** How often a wait says how long it has waited. */
const PROGRESS_EVERY_MS = 5_000;

/**
 * Keeps a measured signature for the profile's `meaning` when its reading is steady (two agreeing, no transient);
 * otherwise records the point as not measured, with why, and keeps nothing. Whether it was kept.
 */
export function keep(
  run: Run,
  meaning: "refused" | "goneKey" | "goneSubAccount" | "unauthorised",
  point: string,
  reading: Reading,
): boolean {
  if (reading.steady) run.measured[meaning].push(signatureOf(reading.raw));
  else run.measured.unmeasured.push({ point, why: reading.why ?? "no steady answer" });
  return reading.steady;
}

/** The row of a point whose answer could not be measured: not checked, and why; nothing of it is saved. */
export function unmeasuredRow(point: string, assumes: string, why: string | undefined): DoctorRow {
  return {
    point,
    assumes,
    observed: `not measured: ${why ?? "no steady answer"}; nothing of it is saved in the profile`,
    verdict: "not checked",
  };
}
