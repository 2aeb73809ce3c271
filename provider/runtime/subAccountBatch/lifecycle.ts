import { AuthenticationError, LlmAccountsError } from "../../client/errors.js";
import { fingerprint, maskKey, redact } from "../../api/redact.js";
import type { ModelPricing, SubAccount } from "../../api/schemas/index.js";
import type { SubAccountsApi } from "../../client/subAccounts.js";
import { readSetting, SETTINGS } from "../../client/settings.js";
import {
  justWritten,
  keptForms,
  stillListedOrLate,
  writtenAt,
  adoptedCountFailure,
  adoptedTokens,
  findAdopted,
  joiningCountFailure,
  nextAdoption,
  releasedBy,
  connectionDiff,
  type Session,
  type SessionClient,
  stackConfig,
  deleteTokens,
} from "../command/index.js";
import {
  createBatch,
  leftUnderMark,
  listUnconfirmed,
  madeBefore,
  unconfirmedAmong,
  UnconfirmedCreateError,
  type Known,
} from "./recovery.js";
import { toMicros } from "../../api/money.js";
import {
  keptInState,
  type Props,
  type ReadOutcome,
  type StateError,
  checkInputs,
  containsUnknown,
  type CheckFailure,
} from "../engine/index.js";
import {
  aliasAsKept,
  modelsBeyond,
  pricingAsKept,
  sameAlias,
  samePricing,
  type KeptForms,
} from "../../api/keptForms.js";
import {
  byId,
  deletableOf,
  outputsOf,
  SubAccountBatchInputsSchema,
  view,
  type SubAccountBatchInputs,
  type SubAccountBatchOutputs,
  type SubAccountView,
} from "./state.js";

/**
 * check: every field validated by one schema, failures named by property path; deprecated pricing converted. An
 * alias longer than the platform profile's aliasMax fails too: the platform would refuse or cut it (the value is
 * not shown: a key pasted as an alias must not be).
 */
export async function check(
  _olds: Props,
  news: Props,
): Promise<{ inputs: SubAccountBatchInputs; failures: CheckFailure[] }> {
  const checked = checkInputs(SubAccountBatchInputsSchema, news);
  const { alias } = checked.inputs;
  const max = profileAliasMax();
  if (
    max !== undefined &&
    typeof alias === "string" &&
    !containsUnknown(alias) &&
    [...alias].length > max &&
    !checked.failures.some((f) => f.property === "alias")
  ) {
    checked.failures.push({
      property: "alias",
      reason: `is ${[...alias].length} characters: this platform keeps at most ${max} (limits.aliasMax of the platform profile, ${SETTINGS.profile.config})`,
    });
  }
  return checked;
}

/** The platform profile's aliasMax, where the stack config or the environment gives a profile; a bad profile is the client's to report. */
function profileAliasMax(): number | undefined {
  try {
    return readSetting("profile", stackConfig(), process.env)?.limits?.aliasMax;
  } catch {
    return undefined;
  }
}

/**
 * diff: balance (which the API cannot change after creation) or another platform: replacement. A batch that
 * adopts is never replaced for its balance or its `adoptTokens`: the replacement's create would adopt the
 * same sub-accounts that the old batch's delete then removes. Its balance applies to sub-accounts it creates.
 * `adoptTokens` removed or `[]` after adoption changes nothing; a `count` below the adopted sub-accounts held
 * fails here, at preview, and so does a `count` too low for the tokens newly listed to join without a delete.
 * A held sub-account whose alias or pricing differs from the declared ones is a change (update's edit aligns it).
 */
export async function diff(
  session: Session,
  id: string,
  olds: SubAccountBatchOutputs,
  news: SubAccountBatchInputs,
): Promise<{ changes: boolean; replaces: string[]; deleteBeforeReplace: boolean }> {
  const released = releasedBy(olds, news);
  session.custody.subAccounts.keep(id, olds.tokens, released, olds);
  // What its update will release, for a batch that adopts it in this deployment (at preview, nothing: unknown).
  if (!containsUnknown(news.adoptTokens)) session.custody.subAccounts.transfers.announce(id, released);
  const replaces: string[] = [];
  const adopted = adoptedTokens(olds);
  const adoptUnknown = containsUnknown(news.adoptTokens);
  const next = adoptUnknown ? undefined : nextAdoption(adopted, adoptedTokens(news));
  if (next) {
    const keep = new Set(next.set);
    const tooLow = adoptedCountFailure(news.count, olds.subAccounts.filter((s) => keep.has(s.token)).length);
    if (tooLow !== undefined) throw new LlmAccountsError(tooLow);
    // Tokens the batch does not hold yet join it; the released ones leave it.
    const holds = new Set(olds.tokens);
    const released = new Set(next.released);
    const staying = olds.subAccounts.filter((s) => !released.has(s.token)).length;
    const joining = joiningCountFailure(news.count, staying, next.added.filter((t) => !holds.has(t)).length);
    if (joining !== undefined) throw new LlmAccountsError(joining);
  }
  const adopting = adoptUnknown || adopted.length > 0 || adoptedTokens(news).length > 0;
  if (olds.balance !== news.balance && !adopting) replaces.push("balance");
  const connection = connectionDiff(olds, news);
  if (connection.replace) replaces.push("connection");
  // Each sub-account held, not only the batch's alias and pricing: a batch may hold some that differ (one left under
  // its create's marked alias by an edit that failed, one renamed in the console) while the alias and pricing its
  // outputs give (one value for the batch, which a refresh takes from one sub-account) match the declared ones.
  const kept = keptForms();
  const differs = differsFrom(news, kept);
  const stray = olds.subAccounts.some(differs);
  const changed =
    replaces.length > 0 ||
    stray ||
    !sameAlias(news.alias, olds.alias, kept) ||
    olds.balance !== news.balance ||
    olds.count !== news.count ||
    next === undefined ||
    next.added.length > 0 ||
    next.released.length > 0 ||
    !samePricing(news.modelPricing, olds.modelPricing, kept) ||
    connection.changed;
  if (replaces.length > 0) session.custody.subAccounts.replaced(id);
  return { changes: changed, replaces, deleteBeforeReplace: false };
}

/**
 * Whether a sub-account's alias or pricing differs from `declared`'s: what align's one edit brings it to, and what
 * diff, read and a failure's outputs must see. Compared as the platform compares (api/keptForms.ts): an alias
 * lower-cased or cut, a factor rounded, the models in another order are the declared values as it keeps them.
 */
function differsFrom(
  declared: { alias: string; modelPricing: ModelPricing[] },
  kept: KeptForms = keptForms(),
): (s: { alias: string; modelPricing: ModelPricing[] }) => boolean {
  return (s) => !sameAlias(declared.alias, s.alias, kept) || !samePricing(declared.modelPricing, s.modelPricing, kept);
}

/**
 * Outputs for a failure the engine records with properties: the sub-accounts as they are, and, when one of them
 * does not have the declared alias or pricing yet (made under a marked alias, or not aligned yet), the alias and
 * pricing it has, so that the next `up` sees the difference and its update aligns them.
 */
function outputsAsFound(
  inputs: SubAccountBatchInputs,
  subAccounts: SubAccountView[],
  adopted: readonly string[],
): SubAccountBatchOutputs {
  const differs = subAccounts.find(differsFrom(inputs));
  return outputsOf(
    differs ? { ...inputs, alias: differs.alias, modelPricing: differs.modelPricing } : inputs,
    subAccounts,
    adopted,
  );
}

/**
 * The error the engine records as created-but-failed, for a lost create (subAccountBatch/recovery.ts): the state keeps what
 * is known plus `unconfirmedSince` and the create's marked alias, so that the next read, update or delete finds
 * what the lost create made instead of leaving it orphaned. Another error that carries sub-accounts the create made
 * before it failed (madeBefore: a split create's earlier parts) is recorded with them; any other is left as it is.
 */
function keepUnconfirmed(
  err: unknown,
  id: string,
  inputs: SubAccountBatchInputs,
  current: SubAccountView[],
  adopted: readonly string[],
): unknown {
  // What the create made before it failed (a split create's earlier parts): held by the state like the rest.
  const found = [...current, ...madeBefore(err).map(view)].sort(byId);
  if (!(err instanceof UnconfirmedCreateError))
    return err instanceof Error && found.length > current.length
      ? keptInState(err, id, outputsAsFound(inputs, found, adopted))
      : err;
  const properties: SubAccountBatchOutputs = {
    ...outputsAsFound(inputs, found, adopted),
    unconfirmedSince: new Date(err.since).toISOString(),
    unconfirmedAlias: err.marked,
  };
  return keptInState(err, id, properties);
}

/**
 * One batch create of `count` more sub-accounts with the declared balance and pricing, under the create's marked
 * alias (subAccountBatch/recovery.ts): the caller's `align` gives them the declared alias. `held`: what the batch
 * holds; `left`: what a killed run of this batch left under its mark (leftByKilledRun), taken first and returned
 * with what is made.
 */
async function createMore(
  session: Session,
  own: SessionClient,
  inputs: SubAccountBatchInputs,
  count: number,
  held: readonly SubAccountView[],
  left: readonly SubAccount[],
): Promise<SubAccountView[]> {
  // `known`: what the command holds, never taken for a lost create's (its own sub-accounts, their alias cut alike).
  const known = session.custody.subAccounts.notToTake(held.map((s) => s.token));
  const made = await createBatch(
    own.client.subAccounts,
    { alias: inputs.alias, balance: inputs.balance, modelPricing: inputs.modelPricing, count },
    inputs.mark,
    left,
    known,
  ).catch((err: unknown) => {
    session.custody.subAccounts.hold(madeBefore(err).map((s) => s.token));
    throw err;
  });
  session.custody.subAccounts.hold(made.map((s) => s.token));
  return made.map(view);
}

/**
 * What an earlier run of this resource created under its mark and never recorded (a killed `up`): from the command's
 * shared list of the account (command/sharedList.ts: one list for the creates, deletes and reads that arrive together), not
 * what a batch of this command holds or made, nor `known`. None, and no list, for a batch without a mark.
 */
async function leftByKilledRun(
  session: Session,
  own: SessionClient,
  batch: { balance: number; mark?: string },
  known: readonly string[],
): Promise<SubAccount[]> {
  if (batch.mark === undefined) return [];
  // Only this batch's runs write under its mark, and what an earlier one left is in every list of this command.
  const listed = await own.subAccounts.snapshot({ earlierRuns: true });
  return leftUnderMark(batch, listed, session.custody.subAccounts.notToTake(known));
}

/**
 * `align`, after sub-accounts were created: if it fails, they exist (under their marked alias) and the state must
 * hold them, so the error is recorded with them (the next update aligns them); with nothing created, it is left
 * as it is.
 */
async function alignMade(
  api: SubAccountsApi,
  inputs: SubAccountBatchInputs,
  subAccounts: SubAccountView[],
  made: number,
  id: string,
  adopted: readonly string[],
): Promise<SubAccountView[]> {
  try {
    return await align(api, inputs, subAccounts);
  } catch (err) {
    if (err instanceof PricingKeptError) throw keptInState(err, id, outputsAsFound(inputs, err.subAccounts, adopted));
    if (made === 0 || !(err instanceof Error)) throw err;
    throw keptInState(err, id, outputsAsFound(inputs, subAccounts, adopted));
  }
}

/**
 * Brings sub-accounts to the declared alias and pricing: one edit of those whose alias or pricing differ (the
 * others are left out of it), none when all match. What the edit left is recorded as the platform keeps it where
 * that can be told (api/keptForms.ts: an alias or factor it held in its own form of the declared one). An edit that
 * removes a model is looked at with one list (keptModels): a platform whose pricing edit merges keeps it.
 */
async function align(
  api: SubAccountsApi,
  inputs: SubAccountBatchInputs,
  subAccounts: SubAccountView[],
): Promise<SubAccountView[]> {
  const kept = keptForms();
  const differs = differsFrom(inputs, kept);
  const stale = subAccounts.filter(differs);
  if (stale.length === 0) return subAccounts;
  await api.edit({ sks: stale.map((s) => s.token), alias: inputs.alias, modelPricing: inputs.modelPricing });
  // One that held the declared values already holds them as the platform keeps them: the edited ones now do too.
  const settled = subAccounts.find((s) => !differs(s));
  const aligned = subAccounts.map((s) =>
    differs(s)
      ? {
          ...s,
          alias: settled?.alias ?? aliasAsKept(inputs.alias, s.alias, kept),
          modelPricing: pricingAsKept(inputs.modelPricing, (settled ?? s).modelPricing, kept),
        }
      : s,
  );
  const removing = stale.filter((s) => modelsBeyond(inputs.modelPricing, s.modelPricing).length > 0);
  return removing.length === 0
    ? aligned
    : keptModels(api, aligned, new Set(removing.map((s) => s.token)), inputs.modelPricing);
}

/** An edit that could not remove models the declared pricing no longer lists: the platform merges pricing edits. */
class PricingKeptError extends LlmAccountsError {
  /** The sub-accounts as the list showed them after the edit: not enumerable, so never in the error's JSON (tokens). */
  declare readonly subAccounts: SubAccountView[];

  constructor(message: string, subAccounts: SubAccountView[]) {
    super(message);
    Object.defineProperty(this, "subAccounts", { value: subAccounts, enumerable: false });
  }
}

/**
 * After an edit that removed models from `removing` (their tokens): one list of the account. The spec's edit sets
 * the pricing whole (4.11), but a platform may merge what it is sent into what a sub-account holds, and then no edit
 * removes a model: that gap fails the update, naming the models and sub-accounts, with the sub-accounts as listed
 * (PricingKeptError, recorded in the state by alignMade), so that the state and the gate show what the platform
 * kept instead of a permission silently left in place. Otherwise the sub-accounts as listed.
 */
async function keptModels(
  api: SubAccountsApi,
  aligned: SubAccountView[],
  removing: Set<string>,
  declared: readonly ModelPricing[],
): Promise<SubAccountView[]> {
  const listed = new Map((await api.list()).map((s) => [s.token, view(s)]));
  const after = aligned.map((s) => {
    const shown = listed.get(s.token);
    return shown ? { ...s, alias: shown.alias, modelPricing: shown.modelPricing } : s;
  });
  const stuck = after.filter((s) => removing.has(s.token) && modelsBeyond(declared, s.modelPricing).length > 0);
  if (stuck.length === 0) return after;
  const models = [...new Set(stuck.flatMap((s) => modelsBeyond(declared, s.modelPricing)))];
  const named =
    stuck
      .slice(0, 3)
      .map((s) => maskKey(s.token))
      .join(", ") + (stuck.length > 3 ? ` and ${stuck.length - 3} more` : "");
  throw new PricingKeptError(
    `the platform kept model(s) ${models.join(", ")} on ${stuck.length} sub-account(s) (${named}) after an edit that sent the declared modelPricing without them: ` +
      "its pricing edit merges what it is sent into what a sub-account holds, so no edit can remove a model (the spec's edit replaces the whole list, 4.11). " +
      `The state records the pricing as the platform kept it. Remove ${models.join(", ")} from these sub-accounts in the web console, or declare ${models.length > 1 ? "them" : "it"} again; ` +
      "`pulumi up --replace <urn of this batch>` creates the batch anew with exactly the declared pricing (new tokens)",
    after,
  );
}

/**
 * create: one batch create, under a marked alias (subAccountBatch/recovery.ts), then one edit that gives the sub-accounts the
 * declared alias. With `adoptTokens`: one list verifies every token before anything is written, one create makes
 * the rest of `count`, and the one edit also aligns the adopted sub-accounts whose alias or pricing differ.
 */
export async function create(
  session: Session,
  inputs: SubAccountBatchInputs,
): Promise<{ id: string; outs: SubAccountBatchOutputs }> {
  const own = session.client(inputs.connection);
  const adopt = adoptedTokens(inputs);
  const custody = session.custody.subAccounts;
  const me = custody.createOwner();
  custody.take(me, adopt);
  try {
    return await createTaking(session, own, inputs, adopt, me);
  } catch (err) {
    // Failed with no state: nothing holds what it took (an old batch's delete must neither leave nor delete it).
    if (!(err instanceof Error && "properties" in err)) custody.createFailed(me);
    throw err;
  }
}

/** The body of `create`, once what it adopts (`adopt`) is taken for it (`me`). */
async function createTaking(
  session: Session,
  own: SessionClient,
  inputs: SubAccountBatchInputs,
  adopt: string[],
  me: string,
): Promise<{ id: string; outs: SubAccountBatchOutputs }> {
  const api = own.client.subAccounts;
  const custody = session.custody.subAccounts;
  // One that another batch of this deployment releases joins once that batch's update has ended (command/transfers.ts).
  await custody.transfers.awaitReleases(me, adopt);
  const adopted = (await findAdopted(own.subAccounts, adopt, adopt)).map(view);
  custody.hold(adopted.map((s) => s.token));
  const first = [...adopted].sort(byId)[0]?.token;
  let created: SubAccountView[] = [];
  if (inputs.count > adopted.length) {
    try {
      // Not what the batch holds already: a sub-account an edit left under the mark is held, not left behind.
      const left = await leftByKilledRun(
        session,
        own,
        inputs,
        adopted.map((s) => s.token),
      );
      created = await createMore(session, own, inputs, inputs.count - adopted.length, adopted, left);
    } catch (err) {
      // The id a success would have had: of the first sub-account held, made ones included.
      const firstHeld = [...adopted, ...madeBefore(err).map(view)].sort(byId)[0]?.token;
      throw keepUnconfirmed(err, `sab-${fingerprint(firstHeld ?? first ?? inputs.alias)}`, inputs, adopted, adopt);
    }
  }
  const all = [...adopted, ...created].sort(byId);
  const id = `sab-${fingerprint(all[0]?.token ?? inputs.alias)}`;
  const outs = outputsOf(inputs, await alignMade(api, inputs, all, created.length, id, adopt), adopt);
  return { id, outs };
}

/**
 * update: count down: one delete of the newest surplus, never of an adopted sub-account; count up: one create of
 * the difference (adopted sub-accounts deleted elsewhere included) under a marked alias; then one edit of the
 * sub-accounts whose alias or pricing differ from the declared ones (those just created among them), none when
 * all match. Tokens added to a non-empty `adoptTokens` are
 * verified with one list and adopted; tokens taken out of it are released: they leave the batch and stay on the
 * platform untouched (another batch may adopt them in the same deployment: it waits for this update to end, and
 * a failure of this one records the release all the same).
 */
export async function update(
  session: Session,
  id: string,
  old: SubAccountBatchOutputs,
  inputs: SubAccountBatchInputs,
): Promise<{ outs: SubAccountBatchOutputs }> {
  session.custody.subAccounts.updated(id);
  const own = session.client(inputs.connection);
  const adoption = nextAdoption(adoptedTokens(old), adoptedTokens(inputs));
  // A batch that adopts what this one releases in the same deployment waits for it to end (command/transfers.ts).
  const end = session.custody.subAccounts.transfers.begin(id, adoption.released);
  try {
    return { outs: await changeBatch(session, own, id, old, inputs, adoption) };
  } catch (err) {
    throw keepReleased(err, id, old, adoption.released);
  } finally {
    end();
  }
}

/** The body of `update`, with the adoption it makes (nextAdoption). */
async function changeBatch(
  session: Session,
  own: SessionClient,
  id: string,
  old: SubAccountBatchOutputs,
  inputs: SubAccountBatchInputs,
  adoption: ReturnType<typeof nextAdoption>,
): Promise<SubAccountBatchOutputs> {
  const api = own.client.subAccounts;
  const declared = adoptedTokens(inputs);
  const keep = new Set(adoption.set);
  const released = new Set(adoption.released);
  let current = old.subAccounts.filter((s) => !released.has(s.token));
  const held = new Set(current.map((s) => s.token));
  // Only a token never adopted by this batch must exist: one adopted before and gone since is recreated below.
  const joining = adoption.added.filter((t) => !held.has(t));
  const custody = session.custody.subAccounts;
  custody.take(id, joining, declared);
  // One that another batch of this deployment releases joins once that batch's update has ended (command/transfers.ts).
  await custody.transfers.awaitReleases(id, joining);
  const added = await findAdopted(own.subAccounts, declared, joining);
  current = [...current, ...added.map(view)].sort(byId);
  if (old.unconfirmedSince) {
    current = [
      ...current,
      ...(await listUnconfirmed(api, old, custody.notToTake(current.map((s) => s.token)))).map(view),
    ].sort(byId);
  }
  // What a killed run of this batch left under its mark joins it before the count applies (a surplus is deleted).
  // A scale-up looks anyway; an update that creates nothing looks only when no refresh or delete of its state
  // could find it: the state names no mark (written before it) or another mark or balance than its creates'.
  const unseen =
    inputs.mark !== undefined && (old.mark !== inputs.mark || toMicros(old.balance) !== toMicros(inputs.balance));
  const left =
    unseen || inputs.count > current.length
      ? await leftByKilledRun(
          session,
          own,
          inputs,
          current.map((s) => s.token),
        )
      : [];
  custody.hold(left.map((s) => s.token));
  current = [...current, ...left.map(view)].sort(byId);

  if (inputs.count < current.length) {
    const deletable = current.filter((s) => !keep.has(s.token));
    const surplus = new Set(deletable.slice(deletable.length - (current.length - inputs.count)).map((s) => s.token));
    await deleteTokens(api, [...surplus]);
    current = current.filter((s) => !surplus.has(s.token));
  }
  // What was taken from a killed run counts as made: if the edit fails, the state must still hold it.
  const taken = new Set(left.map((s) => s.token));
  let made = current.filter((s) => taken.has(s.token)).length;
  if (inputs.count > current.length) {
    try {
      // What the kill left is in `current` already (taken above).
      const more = await createMore(session, own, inputs, inputs.count - current.length, current, []);
      made += more.length;
      current = [...current, ...more];
    } catch (err) {
      throw keepUnconfirmed(err, id, inputs, current, adoption.set);
    }
  }
  // One edit: what was created (under its marked alias) and what differs from the declared alias or pricing.
  current = await alignMade(api, inputs, current, made, id, adoption.set);
  custody.hold(current.map((s) => s.token));
  return outputsOf(inputs, current, adoption.set);
}

/**
 * An update's failure, where the batch releases adopted sub-accounts: a release touches nothing on the platform, so
 * the state records it whatever failed (else a batch that adopted them in the same deployment and this one would
 * both hold them). A failure that carries outputs already (sub-accounts created) records it in them.
 */
function keepReleased(err: unknown, id: string, old: SubAccountBatchOutputs, released: readonly string[]): unknown {
  if (released.length === 0 || !(err instanceof Error) || "properties" in err) return err;
  const out = new Set(released);
  const subAccounts = old.subAccounts.filter((s) => !out.has(s.token));
  const adopted = adoptedTokens(old).filter((t) => !out.has(t));
  const { adoptTokens: _released, ...rest } = old;
  const properties: SubAccountBatchOutputs = {
    ...rest,
    subAccounts,
    tokens: old.tokens.filter((t) => !out.has(t)),
    count: subAccounts.length,
  };
  if (adopted.length > 0) properties.adoptTokens = adopted;
  return keptInState(err, id, properties);
}

/**
 * The sub-accounts a state names, by token: in `tokens` or in `subAccounts` (a state edited by hand may name one in
 * one list only: `tokens: []` written where a state error named `tokens` still leaves them named in `subAccounts`).
 * What a read looks for and a delete deletes.
 */
function namedBy(old: Pick<SubAccountBatchOutputs, "tokens" | "subAccounts">): string[] {
  return [...new Set([...old.tokens, ...old.subAccounts.map((s) => s.token)])];
}

/**
 * A refresh of a state that counts sub-accounts and names none (both lists emptied by hand): it cannot tell them gone,
 * and taking the batch for deleted would leave them on the platform in no state.
 */
function namesNothing(count: number): LlmAccountsError {
  return new LlmAccountsError(
    `SubAccountBatch: the state counts ${count} sub-account(s) and names none (its tokens and subAccounts are empty, an edit by hand): ` +
      "a refresh cannot tell them gone, so nothing was changed. Put back what it held with `pulumi state edit` (the earlier values are in " +
      "`pulumi stack history` and `pulumi stack export --version N`), then run `pulumi refresh`",
  );
}

/**
 * read (refresh): one list call, shared with the other reads of the command (command/sharedList.ts). Sub-accounts
 * missing from it are confirmed gone first (stillListed: one call per missing one, up to three; one new list
 * past that; none when nothing is missing). Sub-accounts deleted elsewhere drop out (the next update recreates them, adopted ones included); alias and pricing drift
 * show. Where the platform drifted, the inputs returned are its values, so that a preview after a refresh shows
 * drift as `old => new`; where nothing drifted, no inputs: the engine keeps those check stored. A batch that
 * adopted is never reported gone, even with every sub-account deleted: its next update creates `count` anew
 * (a create would look for the adopted tokens, which are gone).
 */
export async function read(
  session: Session,
  id: string,
  old: SubAccountBatchOutputs,
): Promise<ReadOutcome<SubAccountBatchInputs, SubAccountBatchOutputs>> {
  const own = session.client(old.connection);
  const adopted = adoptedTokens(old);
  const custody = session.custody.subAccounts;
  const named = namedBy(old);
  if (named.length === 0 && old.count > 0) throw namesNothing(old.count);
  custody.hold(named);
  // One list of the whole account, shared with the other reads of the command: it finds our sub-accounts even
  // when their alias was changed elsewhere, and what a create whose answer was lost made.
  const listed = await own.subAccounts.snapshot();
  const { all, byToken } = listed;
  // One the last command or this one just made may not show yet (a list that lags): looked for again before it counts
  // as gone. Not when the list shows another of the same create (the same created_at): a create shows whole or not at all.
  const shown = new Set(old.subAccounts.filter((s) => byToken.has(s.token)).map((s) => s.createdAt));
  const api = own.client.subAccounts;
  const late = old.subAccounts.filter((s) => justWritten(api, s.createdAt) && !shown.has(s.createdAt));
  const newest = late.reduce((at, s) => Math.max(at, writtenAt(s.createdAt)!), -Infinity);
  const alive = await stillListedOrLate(
    api,
    named.filter((t) => !byToken.has(t)),
    new Set(late.map((s) => s.token)),
    newest,
  );
  const ours = named.flatMap((t) => byToken.get(t) ?? alive.get(t) ?? []);
  // Asked, not copied: every read of a refresh would copy what the command holds (the whole account, at its end).
  const mine = new Set(named);
  const known: Known = { has: (t) => custody.holds(t) || mine.has(t) };
  const lost = unconfirmedAmong(old, all, known);
  const lostTokens = new Set(lost.map((s) => s.token));
  // What a killed `up` of this resource left under its mark: adopted, as a lost create's are.
  const left = leftUnderMark(old, listed, { has: (t) => known.has(t) || lostTokens.has(t) });
  const live = [...ours, ...lost, ...left].map(view);
  custody.hold(live.map((s) => s.token));
  if (live.length === 0 && adopted.length === 0) return { id: "", props: {} };
  const drifted = live.find(differsFrom(old));
  const inputs: SubAccountBatchInputs = {
    ...old,
    alias: drifted?.alias ?? old.alias,
    modelPricing: drifted?.modelPricing ?? old.modelPricing,
  };
  const outs = outputsOf(inputs, live, adopted);
  if (!drifted && outs.count === old.count) return { id, props: outs };
  // Never adoptTokens: the engine keeps an input secret only when the one it held was, and the program may no
  // longer give it. Nothing reads it back from the inputs anyway: the outputs keep the adopted set.
  const liveInputs: SubAccountBatchInputs = {
    alias: outs.alias,
    balance: outs.balance,
    count: outs.count,
    modelPricing: outs.modelPricing,
  };
  if (old.connection !== undefined) liveInputs.connection = old.connection;
  if (old.mark !== undefined) liveInputs.mark = old.mark;
  return { id, props: outs, inputs: liveInputs };
}

/**
 * delete: one batch delete of every sub-account of the batch (after one list when a create's answer was lost, or the
 * batch has a mark a killed run may have left sub-accounts under), shared with the other batch deletes that arrive
 * together (SubAccountDeletes), except one that another batch of this command keeps (its state named it after a
 * release that a killed run never recorded, or a batch declared in its place adopts it). What the state holds is
 * deleted by its tokens, whether or not the list can be read (leftoversOf): a list the package cannot read only
 * leaves what it would have found unlooked for, which the delete then reports.
 */
export async function remove(session: Session, id: string, old: SubAccountBatchOutputs): Promise<void> {
  const own = session.client(old.connection);
  // Not one another batch of this command keeps (Custody.keptByOthers): deleting it would delete what that batch holds.
  const named = namedBy(old);
  const others = session.custody.subAccounts.leftByDelete(id, named, old);
  const tokens = named.filter((t) => !others.has(t));
  const leftovers = await leftoversOf(session, own, old, named);
  await own.batchDeletes.delete([...tokens, ...leftovers.found]);
  if (leftovers.unlooked === undefined) return;
  const what = `the ${tokens.length} sub-account(s) its state holds were deleted, but ${leftovers.unlooked}`;
  // A lost create the state records: what it made may be live, so the resource stays in the state to be looked for again.
  if (old.unconfirmedSince)
    throw new LlmAccountsError(
      `${what}; the batch stays in the state: run the destroy again once the list can be read`,
    );
  reportUnlooked(`SubAccountBatch ${id}: ${what}`);
}

/**
 * What a delete looks for besides what the state holds, by one list: what a lost create may have made (nobody else
 * knows of it; not what another batch holds or made in this command, though: the batch that replaced this one back
 * may have its alias and balance, command/custody.ts), and what a killed `up` of this resource left under its mark.
 * A list that cannot be read (a form the package cannot read, a list that never settles, an unreadable answer) finds
 * nothing and says what was not looked for (`unlooked`); a refused credential still stops the delete.
 */
async function leftoversOf(
  session: Session,
  own: SessionClient,
  old: SubAccountBatchOutputs,
  named: string[],
): Promise<{ found: string[]; unlooked?: string }> {
  const custody = session.custody.subAccounts;
  try {
    const unconfirmed = old.unconfirmedSince
      ? await listUnconfirmed(own.client.subAccounts, old, custody.notToTake(named))
      : [];
    const left = await leftByKilledRun(session, own, old, [...named, ...unconfirmed.map((s) => s.token)]);
    return { found: [...unconfirmed, ...left].map((s) => s.token) };
  } catch (caught) {
    const err = unreadableList(caught);
    const sought = old.unconfirmedSince
      ? `what its lost create may have made (alias ${JSON.stringify(old.unconfirmedAlias ?? old.alias)}) could not be looked for`
      : `what a killed run of it may have left (alias ending with its mark ${old.mark}) could not be looked for`;
    return { found: [], unlooked: `${sought}: the sub-account list could not be read (${err.message})` };
  }
}

/** A list's failure as a delete takes it: the error, to report what was not looked for; a refused credential stops the delete. */
function unreadableList(err: unknown): Error {
  if (err instanceof AuthenticationError || !(err instanceof Error)) throw err;
  return err;
}

/** Says, on stderr, what a delete that succeeded could not look for: the Pulumi CLI shows it as a warning under Diagnostics. */
function reportUnlooked(message: string): void {
  process.stderr.write(`warning: ${redact(message)}\n`);
}

/**
 * delete of a state that does not parse (`error`): the sub-accounts it names (deletableOf) are deleted as `remove`
 * deletes them; when it names some it cannot read, or none at all, the delete then fails, so that the resource
 * stays in the state: never a success for a delete that was not made.
 */
export async function removeUnreadable(session: Session, id: string, state: Props, error: StateError): Promise<void> {
  const found = deletableOf(state);
  if (!found.connection.success || (found.tokens.length === 0 && found.unidentified > 0)) {
    throw error.after(
      `this delete cannot tell ${found.connection.success ? "which sub-accounts to delete" : "which account they are on"}, so nothing was deleted`,
    );
  }
  const own = session.client(found.connection.data);
  const api = own.client.subAccounts;
  const custody = session.custody.subAccounts;
  // A list that cannot be read leaves the lost create's sub-accounts unlooked for, never the ones the state names.
  const lost = found.lostCreate
    ? await listUnconfirmed(api, found.lostCreate, custody.notToTake(found.tokens)).then((l) => l, unreadableList)
    : [];
  const unconfirmed = lost instanceof Error ? [] : lost;
  const others = custody.leftByDelete(id, found.tokens, state);
  await own.batchDeletes.delete([...found.tokens.filter((t) => !others.has(t)), ...unconfirmed.map((s) => s.token)]);
  if (found.unidentified > 0 || found.lostCreate === null || lost instanceof Error) {
    const unlooked = `the sub-accounts of a lost create cannot be looked for${lost instanceof Error ? ` (the sub-account list could not be read: ${lost.message})` : ""}`;
    const rest =
      found.unidentified > 0 ? `${found.unidentified} more entries name no sub-account it can read` : unlooked;
    throw error.after(
      `this delete deleted the ${found.tokens.length} sub-account(s) it names, but ${rest}, so the resource stays in the state`,
    );
  }
}
