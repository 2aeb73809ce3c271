/**
 * A platform profile: how one platform answers, measured once by `llm-accounts doctor --write` and saved in the
 * stack config (`llm-accounts:profile`, plain JSON, no secret). With a profile, the client classifies each answer
 * by the profile's signatures (status and code) only, never by words (client/refusals.ts, docs/doctor.md).
 */
import { z } from "zod";
import { CREATE_MARK_FORMS, LATE_VISIBILITY_WINDOW_MS } from "./assumptions.js";
import { KEPT_FORMS } from "./keptForms.js";

/** The profile format this package writes and reads. */
export const PROFILE_VERSION = 1;

/**
 * How an answer looks: its HTTP status, and its code when it has one: the platform's own (`key_not_found`, `1001`),
 * or a marker of the body's shape when it has none (PROFILE_MARKERS). No code matches an answer of that status
 * whatever its code is.
 */
const SignatureSchema = z.strictObject({
  status: z.number().int().min(200).max(599),
  code: z.string().min(1).max(100).optional(),
});
export type Signature = z.output<typeof SignatureSchema>;

/** The code given to a refusal without a code of its own, by its shape: `{success: false}`, `{error: "text"}`, or no JSON body. */
export const PROFILE_MARKERS = { successFalse: "success:false", errorText: "error", noBody: "no-body" } as const;

const signatures = z.array(SignatureSchema).max(20);
const positiveWhole = z.number().int().positive();

/** How a done answer looks: as the spec shows it, wrapped in an envelope whose code says done, or flagged `success: true`. */
export const DONE_SHAPES = ["plain", "envelope", "success-flag"] as const;

export const ProfileSchema = z
  .strictObject({
    version: z.literal(PROFILE_VERSION),
    /** How "done" looks; an envelope's code that means done (`0`). */
    done: z.strictObject({ shape: z.enum(DONE_SHAPES), code: z.string().min(1).max(100).optional() }),
    /** Not made: the request was refused (a bad alias, a count over the cap). */
    refused: signatures,
    /** The API key named does not exist (management group). */
    goneKey: signatures,
    /** A sub-account named does not exist (sub-account group). */
    goneSubAccount: signatures,
    /** Not processed now; try again (a rate limit, "busy"). */
    transient: signatures,
    /** The credential was refused. */
    unauthorised: signatures,
    /**
     * The forms the platform was measured keeping written values in (api/keptForms.ts KEPT_FORMS): only under these
     * does the runtime take such a form for the value declared; elsewhere a declared change to one is a change.
     */
    kept: z.array(z.enum(KEPT_FORMS)).max(KEPT_FORMS.length).optional(),
    /** The value forms measured (`created_at: "2026-11-25 21:00:00+08:00"`): for the reader of the profile. */
    forms: z.record(z.string().max(40), z.string().max(120)).optional(),
    /**
     * Limits and readings measured: the longest alias, the largest create, the usage paging field, the create mark,
     * and how long a write took to show (milliseconds; the runtime's looks for a late write last at least as long).
     */
    limits: z
      .strictObject({
        aliasMax: positiveWhole.optional(),
        /** The length a platform cuts a longer alias to, without refusing it (cut-aliases): a create's mark is placed within it. */
        aliasCut: positiveWhole.optional(),
        createCap: positiveWhole.optional(),
        usagePageField: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "is not a field name")
          .optional(),
        createMark: z.enum(CREATE_MARK_FORMS).optional(),
        visibilityMs: positiveWhole.max(LATE_VISIBILITY_WINDOW_MS).optional(),
      })
      .optional(),
  })
  .refine((p) => p.done.shape !== "envelope" || p.done.code !== undefined, {
    path: ["done", "code"],
    message: "an envelope's done code is needed",
  });

/** A platform profile (see ProfileSchema). */
export type Profile = z.output<typeof ProfileSchema>;

/** The meanings a profile lists signatures for, in the order a match is looked for. */
export const PROFILE_MEANINGS = ["transient", "unauthorised", "goneKey", "goneSubAccount", "refused"] as const;
export type ProfileMeaning = (typeof PROFILE_MEANINGS)[number];
