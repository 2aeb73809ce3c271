import { z } from "zod";
import { maskKey } from "../../../api/redact.js";
import { ModelPricingSchema } from "../../../api/schemas/index.js";
import { EVERY_KEPT_FORM, modelsBeyond, sameFactor } from "../../../api/keptForms.js";
import { OPERATIONS } from "../../../api/operations.js";
import { describeRefusal, idempotent, itemsOf, refused } from "../probe.js";
import type { DoctorRow } from "../report.js";
import type { Run } from "../run.js";

/** A pricing factor of more decimals than a platform is known to keep (FACTOR_DECIMALS_MAX is 6). */
export const PROBE_FACTOR = 1.2345678;

/**
 * A pricing factor and a pricing edit as the platform keeps them: two edits of the doctor's first sub-account (the
 * model list's first two models at factor 1, then the first alone at PROBE_FACTOR), then one list of it. Judged as
 * the runtime compares (api/keptForms.ts): the factor by sameFactor, the model left out by modelsBeyond. Its own
 * edits, not the create: a platform that refuses a model there must not pass for one that refuses the create mark.
 */
export async function pricingRows(run: Run, token: string, alias: string): Promise<DoctorRow[]> {
  const factorRow = { point: "pricing factor as kept", assumes: "as sent" };
  const mergeRow = {
    point: "a pricing edit that leaves a model out",
    assumes: "the edit sets the whole list (spec 4.11): the model is removed",
  };
  const notChecked = (why: string): DoctorRow[] =>
    [factorRow, mergeRow].map((r) => ({ ...r, observed: `not checked: ${why}`, verdict: "not checked" }));
  if (run.models.length < 2) return notChecked("the model list names fewer than two models");
  const [model, other] = run.models;
  const sent = [{ model, pricingFactor: PROBE_FACTOR }];
  for (const pricing of [
    [model, other].map((m) => ({ model: m, pricing_factor: 1 })),
    [{ model, pricing_factor: PROBE_FACTOR }],
  ]) {
    const edit = await idempotent(run.probe, OPERATIONS.editSubAccounts, {
      sks: [token],
      alias,
      model_pricing: pricing,
    });
    if (refused(edit)) return notChecked(`a pricing edit was refused (${describeRefusal(edit)})`);
  }
  const items = itemsOf((await run.probe.send(OPERATIONS.listSubAccounts, { sk: token, ...run.paging })).body);
  const item =
    items.find((i) => i.token === token || i.token === maskKey(token)) ?? (items.length === 1 ? items[0] : undefined);
  const parsed = z.array(ModelPricingSchema).safeParse(item?.model_pricing);
  if (!parsed.success) return notChecked("the list did not show the sub-account's pricing");
  const live = parsed.data.map((m) => ({ model: m.model, pricingFactor: m.pricing_factor }));
  const factor = live.find((m) => m.model === model)?.pricingFactor;
  const kept = modelsBeyond(sent, live);
  const rows: DoctorRow[] = [];
  if (factor === undefined)
    rows.push({
      ...factorRow,
      observed: `${model} not listed after an edit that set it`,
      verdict: "setting",
      setting: "none exists: report this platform's pricing edit",
    });
  else if (factor === PROBE_FACTOR) rows.push({ ...factorRow, observed: "as sent", verdict: "holds" });
  else if (sameFactor(PROBE_FACTOR, factor, EVERY_KEPT_FORM)) {
    rows.push({
      ...factorRow,
      observed: `${PROBE_FACTOR} kept as ${factor}: the runtime takes it for the factor declared (no drift, no edit) and keeps the platform's form in the state`,
      verdict: "handled",
      reading: "rounded-factors",
    });
  } else {
    rows.push({
      ...factorRow,
      observed: `${PROBE_FACTOR} kept as ${factor}, not a rounding of it: the runtime reads another factor, drift at every gate`,
      verdict: "setting",
      setting: "none exists: report this platform's pricing form",
    });
  }
  rows.push(
    kept.length === 0
      ? { ...mergeRow, observed: "removed", verdict: "holds" }
      : {
          ...mergeRow,
          observed:
            `${kept.join(", ")} kept after an edit that left it out: the edit merges, so no edit removes a model; an update that removes one ` +
            "looks with one list and fails naming the model and the remedy (the console, or `pulumi up --replace`), the state holding what the platform kept: a removed permission is never silently kept",
          verdict: "handled",
          reading: "merged-pricing",
        },
  );
  return rows;
}
