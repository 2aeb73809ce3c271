import { ALIAS_MAX_LENGTH, FIT_MARK_MIN_LENGTH } from "../../../api/assumptions.js";
import { EVERY_KEPT_FORM, sameAlias } from "../../../api/keptForms.js";
import { printable } from "../../kit.js";
import { OPERATIONS } from "../../../api/operations.js";
import { SETTINGS } from "../../../client/settings.js";
import { subCreate } from "./subAccounts.js";
import {
  describeRefusal,
  describeShape,
  idempotent,
  itemsOf,
  refused,
  steadiness,
  transient,
  type Raw,
} from "../probe.js";
import type { DoctorRow } from "../report.js";
import { keep, type Run } from "../run.js";

/** An alias as a row shows it: at most 40 characters, printable. */
export const shortAlias = (alias: string) => printable(alias.length > 40 ? `${alias.slice(0, 40)}...` : alias);

/**
 * The row of an alias the platform answered (`live`) for one it was sent, judged as the runtime compares them
 * (api/keptForms.ts sameAlias): as sent; a form of it the platform keeps (`changed`: lower-cased, cut), which the
 * runtime takes for the alias declared; or another alias, which it takes for drift.
 */
export function keptAliasRow(
  point: string,
  assumes: string,
  sent: string,
  live: string,
  changed: { shows: boolean; what: string; reading: string; also: string },
): DoctorRow {
  if (!sameAlias(sent, live, EVERY_KEPT_FORM)) {
    return {
      point,
      assumes,
      observed: `"${shortAlias(sent)}" kept as "${shortAlias(live)}", not a form of it the runtime knows: it reads another alias, drift at every gate and an edit at every up`,
      verdict: "setting",
      setting: "none exists: report this platform's alias form",
    };
  }
  if (!changed.shows)
    return {
      point,
      assumes,
      observed: live === sent ? "as sent" : "as sent but for its case (alias case as kept)",
      verdict: "holds",
    };
  return {
    point,
    assumes,
    observed: `${changed.what}: the runtime takes it for the alias declared (no drift, no edit) and keeps the platform's form in the state; ${changed.also}`,
    verdict: "handled",
    reading: changed.reading,
  };
}

/**
 * One sub-account create under `alias`, read twice where refused (a refusal is kept for the profile only when the
 * same create is refused alike again; a one-off refusal followed by a create is no refusal). A create that stays
 * transient after the runtime's retries stops the doctor: nothing after it can be measured now.
 */
async function markedCreate(run: Run, alias: string): Promise<Raw> {
  const first = await subCreate(run, alias);
  if (transient(first))
    throw new Error(
      `a sub-account create answered ${describeShape(first)} after the runtime's retries: the platform cannot be measured now; run the doctor again`,
    );
  if (!refused(first)) return first;
  const again = await subCreate(run, alias);
  if (!refused(again)) return again;
  keep(run, "refused", "create mark", steadiness(first, again));
  return first;
}

/** The create mark: the tilde form, short then as long as the package allows; the fit form where it is refused. */
export async function markRow(run: Run, hex: string): Promise<{ alias: string; row: DoctorRow }> {
  const { measured } = run;
  const tildeShort = `doctor~${hex}`;
  const short = await markedCreate(run, tildeShort);
  if (refused(short)) {
    const fitted = await markedCreate(run, `doct${hex}`);
    measured.limits.createMark = "fit";
    const row: DoctorRow = refused(fitted)
      ? {
          point: "create mark",
          assumes: "<alias>~<hex> accepted",
          observed: `refused in both forms (${describeRefusal(fitted)})`,
          verdict: "setting",
          setting: "none exists: the platform refuses both marks",
        }
      : {
          point: "create mark",
          assumes: "<alias>~<hex> accepted",
          observed: "`~` refused; the fit form accepted",
          verdict: "handled",
          setting: `${SETTINGS.createMark.config}=fit (saves one call a run)`,
          reading: "restricted-aliases",
        };
    return { alias: `doct${hex}`, row };
  }
  const long = await markedCreate(run, `${"doctor".padEnd(ALIAS_MAX_LENGTH - 13, "-")}~${hex}`);
  if (!refused(long))
    return {
      alias: tildeShort,
      row: {
        point: "create mark",
        assumes: `<alias>~<hex>, up to ${ALIAS_MAX_LENGTH} characters`,
        observed: "accepted",
        verdict: "holds",
      },
    };
  measured.limits.createMark = "fit";
  return {
    alias: tildeShort,
    row: {
      point: "create mark",
      assumes: `aliases of up to ${ALIAS_MAX_LENGTH} characters`,
      observed: "a long marked alias refused (aliases are capped shorter)",
      verdict: "handled",
      setting: `${SETTINGS.createMark.config}=fit (saves one call a run)`,
      reading: "short-aliases",
    },
  };
}

/**
 * The longest alias the platform takes (limits.aliasMax), where it refuses one of ALIAS_MAX_LENGTH: found by edits
 * of the doctor's first sub-account, letters and digits only, halving the range each time (about 7 edits). The
 * create mark's row says it.
 */
export async function measureAliasMax(
  run: Run,
  hex: string,
  token: string,
  mark: DoctorRow,
): Promise<DoctorRow | undefined> {
  const aliasOf = (n: number) => `doct${hex}`.padEnd(n, "x");
  const takes = async (n: number) =>
    !refused(
      await idempotent(run.probe, OPERATIONS.editSubAccounts, { sks: [token], alias: aliasOf(n), model_pricing: [] }),
    );
  if (await takes(ALIAS_MAX_LENGTH)) return undefined;
  if (!(await takes(FIT_MARK_MIN_LENGTH))) return undefined;
  let [lo, hi] = [FIT_MARK_MIN_LENGTH, ALIAS_MAX_LENGTH - 1];
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (await takes(mid)) lo = mid;
    else hi = mid - 1;
  }
  run.measured.limits.aliasMax = lo;
  mark.observed += `; the longest alias taken: ${lo} characters`;
  // Where `~` is refused too (restricted-aliases), the short cap shows only here.
  if (mark.reading !== "short-aliases")
    return {
      point: "longest alias",
      assumes: `${ALIAS_MAX_LENGTH} characters`,
      observed: `${lo} characters (measured by edits)`,
      verdict: "handled",
      reading: "short-aliases",
    };
  return undefined;
}

/** Alias filter: a prefix of the doctor's alias must match nothing (listed as the client lists). */
export async function aliasFilterRow(run: Run, alias: string): Promise<DoctorRow> {
  const prefix = await run.probe.send(OPERATIONS.listSubAccounts, { alias: alias.slice(0, -3), ...run.paging });
  const point = "alias filter of the list";
  if (refused(prefix))
    return {
      point,
      assumes: "exact",
      observed: `not checked: the filtered list was refused (${describeRefusal(prefix)})`,
      verdict: "not checked",
    };
  const matched = itemsOf(prefix.body).length;
  return {
    point,
    assumes: "exact",
    observed: matched > 0 ? "matches a prefix" : "exact",
    verdict: matched > 0 ? "handled" : "holds",
    reading: matched > 0 ? "alias-filter-prefix" : undefined,
  };
}
