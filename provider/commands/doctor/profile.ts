import { KEPT_FORMS, type KeptForm } from "../../api/keptForms.js";
import { PROFILE_VERSION, ProfileSchema, type Profile, type Signature } from "../../api/profile.js";
import { otherForm } from "./checks/answers.js";
import type { Probe } from "./probe.js";
import type { DoctorRow } from "./report.js";
import type { Measured } from "./run.js";

/** The platform profile of what the probes measured (api/profile.ts), with the forms its `rows` found values kept in (`kept`). */
export function profileOf(probe: Probe, measured: Measured, rows: readonly DoctorRow[]): Profile {
  const kept = KEPT_FORMS.filter((f: KeptForm) => rows.some((r) => r.verdict === "handled" && r.reading === f));
  const transient: Signature[] = [{ status: 429 }];
  if (probe.transient)
    transient.push(
      probe.transient.code
        ? { status: probe.transient.status, code: probe.transient.code }
        : { status: probe.transient.status },
    );
  const form = probe.answers.map((a) => otherForm(a)).find((f) => f !== undefined);
  return ProfileSchema.parse({
    version: PROFILE_VERSION,
    done:
      probe.envelope.seen && probe.envelope.doneCode !== undefined
        ? { shape: "envelope", code: probe.envelope.doneCode }
        : { shape: "plain" },
    refused: unique(measured.refused),
    goneKey: unique(measured.goneKey),
    goneSubAccount: unique(measured.goneSubAccount),
    transient: unique(transient),
    unauthorised: unique([{ status: 401 }, ...measured.unauthorised]),
    ...(kept.length > 0 && { kept }),
    ...(form && { forms: { seen: form.slice(0, 120) } }),
    ...(Object.keys(measured.limits).length > 0 && { limits: measured.limits }),
  });
}

/** The meanings a profile lists, each with the group whose answers it classifies. */
const MEANINGS = [
  { meaning: "transient", groups: ["management", "sub-account"] },
  { meaning: "refused", groups: ["management", "sub-account"] },
  { meaning: "unauthorised", groups: ["management", "sub-account"] },
  { meaning: "goneKey", groups: ["management"] },
  { meaning: "goneSubAccount", groups: ["sub-account"] },
] as const;

/**
 * A row for each signature the profile lists under two meanings of one group (busy and gone both `{success: false}`
 * in a 200; one 400 for refused and for gone): the doctor does not choose one by a guess; the profile keeps both,
 * and the runtime decides each such answer by looking (a get of the key, a list by `sk`), so the point is
 * "decided by looking".
 */
export function clashRows(profile: Profile): DoctorRow[] {
  const rows: DoctorRow[] = [];
  MEANINGS.forEach((a, i) => {
    for (const b of MEANINGS.slice(i + 1)) {
      if (!a.groups.some((g) => (b.groups as readonly string[]).includes(g))) continue;
      for (const s of profile[a.meaning].filter((x) =>
        profile[b.meaning].some((y) => y.status === x.status && y.code === x.code),
      )) {
        const shape = `HTTP ${s.status}${s.code ? ` ${s.code}` : ""}`;
        rows.push({
          point: `one answer, two meanings (${a.meaning} and ${b.meaning})`,
          assumes: "each meaning answers in its own shape",
          observed: `${shape} means ${a.meaning} and ${b.meaning}: the profile lists it under both, and the runtime decides each such answer by looking (a get of the key, a list by sk), never by a guess`,
          verdict: "by looking",
        });
      }
    }
  });
  return rows;
}

/** The signatures without repeats. */
export function unique(signatures: Signature[]): Signature[] {
  const seen = new Set<string>();
  return signatures.filter((s) => !seen.has(JSON.stringify(s)) && seen.add(JSON.stringify(s)) !== undefined);
}
