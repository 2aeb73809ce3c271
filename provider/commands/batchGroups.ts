import { type SubAccount, compareIds } from "../api/schemas/index.js";
import { canonical } from "../api/canonical.js";

/** Which batch a sub-account belongs to: sub-accounts of one alias and one pricing are declared together. */
export function batchGroupOf(s: Pick<SubAccount, "alias" | "modelPricing">): string {
  return canonical([s.alias, s.modelPricing.map((m) => ({ model: m.model, pricingFactor: m.pricingFactor }))]);
}

/**
 * Sub-accounts grouped as `import` groups them (batchGroupOf), for `llm-accounts audit`: each group in id order,
 * groups ordered by their oldest member, so that the same account always groups the same way.
 */
export function groupSubAccounts<S extends Pick<SubAccount, "id" | "alias" | "modelPricing">>(
  subAccounts: readonly S[],
): S[][] {
  const groups = new Map<string, S[]>();
  for (const s of [...subAccounts].sort((a, b) => compareIds(a.id, b.id))) {
    const id = batchGroupOf(s);
    const group = groups.get(id);
    if (group) group.push(s);
    else groups.set(id, [s]);
  }
  return [...groups.values()];
}
