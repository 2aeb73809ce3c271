import { SUB_ACCOUNT_MAX_COUNT } from "../api/assumptions.js";
import { maskKey } from "../api/redact.js";
import { type SubAccount, compareIds, type AnswerId } from "../api/schemas/index.js";
import { same } from "../api/canonical.js";
import { sameMarked } from "../api/keptForms.js";
import { batchGroupOf } from "../commands/batchGroups.js";
import { printable } from "../commands/kit.js";
import { subAccountBatch } from "../runtime/index.js";
import { mayCarryCreateMark, unconfirmedAmong } from "../runtime/subAccountBatch/index.js";
import type { ImportedAccount, ImportedBatch, ReimportOptions } from "./account.js";
import { ImportError } from "./importError.js";
import { byName, heldElsewhere, holderName, ofThisAccount, refusals, slug, uniqueNames } from "./names.js";
import type { StackState, StateBatch } from "./stackState.js";

// The sub-accounts of an import: grouped into batches anew, or declared as the batches of the stack's state that hold
// them (with what a lost create of theirs left under its mark), and those left out (another stack's, a replaced batch's).

/**
 * The other stack whose batch's lost create left `s` under its marked alias, if any: that batch's next run adopts it.
 * The alias as the platform keeps it (sameMarked: lower-cased too), as the batch's own recovery looks for it.
 */
function markedElsewhere(options: ReimportOptions, s: { alias: string }): string | undefined {
  const holder = options.elsewhere?.find(
    (o) => o.markedAliases !== undefined && [...o.markedAliases].some((marked) => sameMarked(marked, s.alias)),
  );
  return holder && holderName(holder);
}

/** `ids 3, 4, 5` for a message, at most ten of them. */
function idList(ids: AnswerId[]): string {
  const shown = ids.slice(0, 10).join(", ");
  return ids.length > 10 ? `ids ${shown} and ${ids.length - 10} more` : `id${ids.length > 1 ? "s" : ""} ${shown}`;
}

/**
 * Sub-accounts grouped by alias and pricing, ordered by their oldest member, split into batches of at most the
 * package's largest `count`. A sub-account the package's check refuses as it is (an alias that is a key, empty,
 * with outer spaces or too long) is left out and named by id: declared otherwise, the first `up` would write.
 */
async function batchesOf(
  subAccounts: SubAccount[],
  leftOut: string[],
  taken: Iterable<string>,
): Promise<ImportedBatch[]> {
  const batches: ImportedBatch[] = [];
  /** The batch still filling, per alias and pricing. */
  const open = new Map<string, ImportedBatch>();
  const refused = new Map<string, AnswerId[]>();
  for (const s of [...subAccounts].sort((a, b) => compareIds(a.id, b.id))) {
    const modelPricing = s.modelPricing.map((m) => ({ model: m.model, pricingFactor: m.pricingFactor }));
    // A live balance may be below 0 (spent past zero); it is no input of the declaration, which adopts the
    // sub-account as it is: a batch's `balance` only applies to the sub-accounts it creates later.
    const declared = {
      alias: s.alias,
      balance: Math.max(0, Number(s.balance)),
      count: 1,
      modelPricing,
      adoptTokens: [s.token],
    };
    const why = refusals((await subAccountBatch.check({}, declared)).failures);
    if (why) {
      refused.set(why, [...(refused.get(why) ?? []), s.id]);
      continue;
    }
    const group = batchGroupOf(s);
    let batch = open.get(group);
    if (!batch || batch.ids.length === SUB_ACCOUNT_MAX_COUNT) {
      batch = { name: "", alias: s.alias, modelPricing, balance: 0, count: 0, ids: [], tokens: [], members: [] };
      batches.push(batch);
      open.set(group, batch);
    }
    batch.ids.push(s.id);
    batch.tokens.push(s.token);
    batch.members!.push(s);
    batch.count = batch.ids.length;
    batch.balance = Math.max(batch.balance, declared.balance);
  }
  for (const [why, ids] of refused) leftOut.push(`sub-account ${idList(ids)}: ${why}`);
  uniqueNames(
    batches.map((b) => slug(b.alias, "sub-accounts")),
    taken,
  ).forEach((name, i) => (batches[i].name = name));
  return batches;
}

/**
 * A SubAccountBatch the state holds, declared under its resource name with the count, balance and adopted set it
 * has (a lower count could delete, another balance replace a batch that created its sub-accounts): alias and
 * pricing as the platform has them when every sub-account it holds agrees and the check accepts them (the state
 * is then behind: `drifted`), else as the state holds them. Its sub-accounts whose alias or pricing differ from
 * what it is declared with are named (masked, the alias escaped as audit prints it) in `notes`, and the batch in
 * `reverted`: the next `up --refresh` gives them back the batch's.
 */
async function keptBatch(
  held: StateBatch,
  liveByToken: Map<string, SubAccount>,
  drifted: string[],
  notes: string[],
  lost = 0,
  reverted: string[] = [],
): Promise<ImportedBatch> {
  const members = held.subAccounts.flatMap((s) => liveByToken.get(s.token) ?? []);
  const adopted = held.adoptTokens.flatMap((t) => liveByToken.get(t) ?? []).sort((a, b) => compareIds(a.id, b.id));
  const statePricing = held.modelPricing;
  const pricingOf = (s: SubAccount) => s.modelPricing.map((m) => ({ model: m.model, pricingFactor: m.pricingFactor }));
  const first = members[0];
  const agree =
    first !== undefined && members.every((s) => s.alias === first.alias && same(pricingOf(s), pricingOf(first)));
  const declare = async (alias: string, modelPricing: unknown) =>
    subAccountBatch.check(
      {},
      {
        alias,
        balance: held.balance,
        count: held.count + lost,
        modelPricing,
        ...(adopted.length > 0 ? { adoptTokens: adopted.map((s) => s.token) } : {}),
        ...(held.connection !== undefined ? { connection: held.connection } : {}),
      },
    );
  let { inputs, failures } = agree
    ? await declare(first.alias, pricingOf(first))
    : await declare(held.alias, statePricing);
  const refused = agree && failures.length > 0;
  if (refused) {
    notes.push(
      `SubAccountBatch ${held.name}: declared with the alias and pricing the state holds, since the package's check refuses them as they are (${refusals(failures)}): the next up writes them back`,
    );
    ({ inputs, failures } = await declare(held.alias, statePricing));
  }
  if (failures.length > 0)
    throw new ImportError(
      `SubAccountBatch ${held.name} of the stack's state cannot be declared as it is (${refusals(failures)}); nothing was written`,
    );
  if (inputs.alias !== held.alias || !same(inputs.modelPricing, statePricing)) drifted.push(held.name);
  const apart = members.filter((s) => s.alias !== inputs.alias || !same(pricingOf(s), inputs.modelPricing));
  if (apart.length > 0) reverted.push(held.name);
  if (apart.length > 0 && !refused) {
    const shown = apart.slice(0, 10).map((s) => {
      const how = [
        ...(s.alias !== inputs.alias ? [`named ${printable(JSON.stringify(s.alias))}`] : []),
        ...(!same(pricingOf(s), inputs.modelPricing) ? ["priced otherwise"] : []),
      ];
      return `${maskKey(s.token)} (id ${s.id}) ${how.join(" and ")}`;
    });
    notes.push(
      `SubAccountBatch ${held.name}: ${apart.length} of its sub-accounts changed alone in the console, ${shown.join(", ")}${apart.length > 10 ? ` and ${apart.length - 10} more` : ""}: ` +
        `declared as the batch (alias ${printable(JSON.stringify(inputs.alias))}); the next up --refresh gives ${apart.length > 1 ? "them" : "it"} back the batch's alias and pricing (one edit), deleting nothing`,
    );
  }
  return {
    name: held.name,
    alias: inputs.alias,
    modelPricing: inputs.modelPricing,
    balance: held.balance,
    count: held.count + lost,
    ids: adopted.map((s) => s.id),
    tokens: adopted.map((s) => s.token),
    kept: true,
    ...(held.connection !== undefined ? { connection: held.connection } : {}),
    options: held.options,
  };
}

/**
 * Each batch the state holds, with the sub-accounts it holds (by token) and those a lost create of it left under
 * its mark (subAccountBatch/recovery.ts: its next run adopts them); dropped by --drop-unlisted when nothing of it is live.
 */
export async function declareHeldBatches(
  state: StackState | undefined,
  subAccounts: SubAccount[],
  options: ReimportOptions,
  account: ImportedAccount,
): Promise<void> {
  const liveByToken = new Map(subAccounts.map((s) => [s.token, s]));
  const claimed = claimedTokens(state);
  const here = ofThisAccount(options);
  for (const held of [...(state?.batches ?? [])].sort(byName)) {
    if (!here(held)) {
      account.notes.push(
        `SubAccountBatch ${held.name}: held on another account (its connection): kept as the state holds it, not read here and never dropped`,
      );
      account.batches.push(await keptBatch(held, new Map(), account.drifted, account.notes));
      continue;
    }
    const lost = unconfirmedAmong(held, subAccounts, claimed);
    for (const s of lost) claimed.add(s.token);
    if (options.dropUnlisted && lost.length === 0 && !held.subAccounts.some((s) => liveByToken.has(s.token))) {
      account.dropped.push(
        `SubAccountBatch ${held.name}: none of the ${held.subAccounts.length} sub-account(s) it holds is on the platform (nothing live is deleted)`,
      );
      continue;
    }
    if (lost.length > 0) {
      account.pending.push(held.name);
      account.notes.push(
        `SubAccountBatch ${held.name}: ${lost.length} sub-account(s) made by its create whose answer was lost carry its mark (alias ${JSON.stringify(lost[0].alias)}): ` +
          `declared with count ${held.count + lost.length}; the next up adopts them and gives them the batch's alias (one edit), deleting nothing`,
      );
    }
    account.batches.push(
      await keptBatch(held, liveByToken, account.drifted, account.notes, lost.length, account.reverted),
    );
  }
}

/**
 * The tokens the state's batches hold and, with `lostOf` (the account's list and the reimport's options), those the
 * lost creates of its batches of this account left under their marks: never grouped anew.
 */
function claimedTokens(
  state: StackState | undefined,
  lostOf?: { subAccounts: SubAccount[]; options: ReimportOptions },
): Set<string> {
  const held = [...(state?.batches ?? [])].sort(byName);
  const claimed = new Set<string>(held.flatMap((b) => b.subAccounts.map((s) => s.token)));
  if (!lostOf) return claimed;
  for (const b of held.filter(ofThisAccount(lostOf.options)))
    for (const s of unconfirmedAmong(b, lostOf.subAccounts, claimed)) claimed.add(s.token);
  return claimed;
}

/**
 * The sub-accounts no batch of the state holds, grouped anew, except those a replaced batch leaves (the stack's next
 * up deletes them), another stack holds or marked (its batch adopts them), or a killed create left under a mark.
 */
export async function declareUnheldBatches(
  state: StackState | undefined,
  subAccounts: SubAccount[],
  options: ReimportOptions,
  account: ImportedAccount,
): Promise<void> {
  const claimed = claimedTokens(state, { subAccounts, options });
  const leaving = new Set(state?.leaving?.tokens ?? []);
  const outgoing: SubAccount[] = [];
  const theirs = new Map<string, string[]>();
  const unheld: SubAccount[] = [];
  const marked: SubAccount[] = [];
  for (const s of subAccounts) {
    if (claimed.has(s.token)) continue;
    if (leaving.has(s.token)) {
      outgoing.push(s);
      continue;
    }
    const other = heldElsewhere(options, s.token, "tokens") ?? markedElsewhere(options, s);
    if (other !== undefined) theirs.set(other, [...(theirs.get(other) ?? []), maskKey(s.token)]);
    else if (mayCarryCreateMark(s.alias)) marked.push(s);
    else unheld.push(s);
  }
  if (marked.length > 0) {
    account.leftOut.push(
      `${marked.length} sub-account(s) under the mark of a create whose up was killed before it recorded them (${marked
        .slice(0, 5)
        .map((s) => `${maskKey(s.token)} ${printable(s.alias)}`)
        .join(", ")}${marked.length > 5 ? ", ..." : ""}): ` +
        "not adopted, since the batch that made them (of this or another stack or project) adopts them at its next up (one object, one owner); " +
        "if no stack will, give them another alias in the console and import again",
    );
  }
  if (outgoing.length > 0) {
    account.leftOut.push(
      `${outgoing.length} sub-account(s) of a replaced batch the stack deletes at its next up (${outgoing.map((s) => maskKey(s.token)).join(", ")}): not adopted`,
    );
  }
  for (const [other, tokens] of theirs) {
    account.leftOut.push(
      `${tokens.length} sub-account(s) held by ${other} (${tokens.slice(0, 5).join(", ")}${tokens.length > 5 ? ", ..." : ""}): not adopted (one object, one owner)`,
    );
  }
  account.batches.push(
    ...(await batchesOf(
      unheld,
      account.leftOut,
      (state?.batches ?? []).map((b) => b.name),
    )),
  );
}
