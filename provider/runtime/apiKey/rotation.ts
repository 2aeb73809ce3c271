import { z } from "zod";
import { DAY_MS, HOUR_MS, ROTATION_EVERY_DAYS_MAX, ROTATION_OVERLAP_HOURS_MAX } from "../../api/assumptions.js";
import { KeySchema, settingsObject } from "../../api/schemas/common.js";
import { same } from "../../api/canonical.js";
import { containsUnknown, optionalOrNull } from "../engine/index.js";

const EVERY_DAYS = "is not a positive whole number of days";
const OVERLAP_HOURS = "is not a number of hours >= 0";

/** True for a value JSON can carry as it is (no NaN, Infinity, undefined, function). */
function isJson(value: unknown): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJson);
  if (typeof value === "object") return Object.values(value).every(isJson);
  return false;
}

/** How a key rotates: by age, on a change of triggers, with an overlap during which the previous key stays valid. */
export const RotationSchema = settingsObject(
  {
    /** Rotate once the key is this many days old. */
    everyDays: optionalOrNull(
      z
        .number({ error: EVERY_DAYS })
        // Number.isInteger, not .int(): .int() also refuses 1e300 (past the safe integers), which the maximum names.
        .refine(Number.isInteger, EVERY_DAYS)
        .positive(EVERY_DAYS)
        .max(
          ROTATION_EVERY_DAYS_MAX,
          `is more than ${ROTATION_EVERY_DAYS_MAX} days (ten years), the longest rotation period`,
        ),
    ),
    /** Any JSON value: a change from one declared value to another rotates the key. */
    triggers: z
      .unknown()
      .refine((t) => containsUnknown(t) || isJson(t), {
        error: "must be JSON values (strings, numbers, booleans, null, arrays, objects)",
      })
      .optional(),
    /** How long the previous key stays valid after a rotation (0: deleted in the same update). */
    overlapHours: optionalOrNull(
      z
        .number({ error: OVERLAP_HOURS })
        .nonnegative(OVERLAP_HOURS)
        .max(
          ROTATION_OVERLAP_HOURS_MAX,
          `is more than ${ROTATION_OVERLAP_HOURS_MAX} hours (one year), the longest overlap`,
        ),
    ),
  },
  {
    notAnObject: "must be an object { everyDays?, triggers?, overlapHours? }",
    unknownField: "is not a rotation setting (everyDays, triggers, overlapHours)",
  },
).refine(
  (r) =>
    !(typeof r?.everyDays === "number" && typeof r.overlapHours === "number" && r.overlapHours >= r.everyDays * 24),
  {
    path: ["overlapHours"],
    when: () => true,
    error: (issue) => {
      const days = (issue.input as { everyDays: number }).everyDays;
      return `hours is not shorter than the rotation period (${days} days = ${days * 24} hours)`;
    },
  },
);
/** How a key rotates (see RotationSchema). */
export type Rotation = z.output<typeof RotationSchema>;

/** What the state holds about rotations besides the current key. */
export const RotationStateSchema = z.object({
  /** The key replaced by the last rotation, while it still exists on the platform: a secret output. */
  previousKey: KeySchema.optional(),
  /** When the previous key is deleted: the first update at or after this time deletes it. */
  previousKeyExpiresAt: z.string().optional(),
  /** The platform's `created_at` of the key issued by the last rotation. */
  rotatedAt: z.string().optional(),
});
/** What the state holds about rotations besides the current key (see RotationStateSchema). */
export type RotationState = z.output<typeof RotationStateSchema>;

/** The reason a preview shows when the triggers changed. */
export const TRIGGERED = "rotation triggered";

/**
 * The reason a refresh records when the current key is gone but the previous key still exists: the resource
 * stays (dropped, the previous key would be left on the platform in no state) and the next update issues a key.
 */
export const KEY_DELETED = "key deleted elsewhere: the next up issues a new one";

type Props = Record<string, unknown>;

function rotationOf(props: Props): Rotation | undefined {
  const r = props.rotation;
  return r !== null && typeof r === "object" && !Array.isArray(r) ? (r as Rotation) : undefined;
}

/**
 * True when the triggers changed. Adding triggers where there were none, or removing them, does not rotate:
 * only a change from one declared value to another does (a value not known yet may be such a change).
 */
export function triggersChanged(olds: Props, news: Props): boolean {
  const before = rotationOf(olds)?.triggers;
  const after = rotationOf(news)?.triggers;
  if (before === undefined || after === undefined) return false;
  return containsUnknown(after) || !same(before, after);
}

/** "rotation due: key issued 2026-08-01, every 90 days" once the current key is as old as the period, else undefined. */
export function dueByAge(olds: Props, news: Props, now: number): string | undefined {
  const days = rotationOf(news)?.everyDays;
  const issuedAt = typeof olds.createdAt === "string" ? Date.parse(olds.createdAt) : NaN;
  if (typeof days !== "number" || !(days > 0) || Number.isNaN(issuedAt)) return undefined;
  if (now < issuedAt + days * DAY_MS) return undefined;
  return `rotation due: key issued ${new Date(issuedAt).toISOString().slice(0, 10)}, every ${days} days`;
}

/** Why the next update must create a new key, or undefined when it must not. */
export function rotationReason(olds: Props, news: Props, now: number): string | undefined {
  return triggersChanged(olds, news) ? TRIGGERED : dueByAge(olds, news, now);
}

/** "previous key expires: overlap ended <time>" once the overlap has passed (the next update deletes it). */
export function previousExpiry(olds: Props, now: number): string | undefined {
  const state = olds as RotationState;
  if (!state.previousKey) return undefined;
  const at = state.previousKeyExpiresAt ? Date.parse(state.previousKeyExpiresAt) : NaN;
  // Without a readable time (a hand-edited state), the previous key is treated as expired: never kept by doubt.
  if (!Number.isNaN(at) && now < at) return undefined;
  return `previous key expires: overlap ended ${Number.isNaN(at) ? "(unknown)" : new Date(at).toISOString()}`;
}

/** The last instant a JavaScript date can hold. */
const LAST_DATE_MS = 8.64e15;

/**
 * When the key replaced by a rotation issued at `rotatedAt` is deleted. It runs after the new key exists, so it
 * cannot throw: check bounds the overlap, and a time past the last date a Date holds is that last date.
 */
export function expiryOf(rotatedAt: string, rotation: Rotation | undefined): string {
  const parsed = Date.parse(rotatedAt);
  const base = Number.isNaN(parsed) ? Date.now() : parsed;
  const hours = rotation?.overlapHours ?? 0;
  const at = base + (Number.isFinite(hours) ? hours : 0) * HOUR_MS;
  return new Date(Math.max(-LAST_DATE_MS, Math.min(LAST_DATE_MS, Number.isNaN(at) ? base : at))).toISOString();
}

/** The rotation settings' overlap in hours (0 when not declared). */
export function overlapHoursOf(props: Props): number {
  return rotationOf(props)?.overlapHours ?? 0;
}
