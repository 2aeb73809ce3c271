import { LlmAccountsError } from "../../client/errors.js";
import { fingerprint, maskKey } from "../../api/redact.js";
import type { ApiKeyView } from "../../api/schemas/index.js";
import {
  adoptKeyFailure,
  connectionDiff,
  type Session,
  type SessionClient,
  justWritten,
  keptForms,
  lookUntil,
  writtenAt,
} from "../command/index.js";
import { issueKey, keptWithError, reissue, rotate } from "./issuing.js";
import {
  ApiKeyInputsSchema,
  deletableOf,
  outputsOf,
  rotationStateOf,
  viewOf,
  type ApiKeyInputs,
  type ApiKeyOutputs,
  type LiveView,
} from "./state.js";
import { type Props, type ReadOutcome, type StateError, checkInputs, type CheckFailure } from "../engine/index.js";
import { KEY_DELETED, TRIGGERED, dueByAge, previousExpiry, rotationReason, triggersChanged } from "./rotation.js";
import { same } from "../../api/canonical.js";
import { sameAlias, sameRestrictions } from "../../api/keptForms.js";

type Client = SessionClient["client"];

/** The platform's view of a key with one get, or undefined when the platform does not know the key (a 404, a 400 naming it). */
function find(client: Client, key: string): Promise<ApiKeyView | undefined> {
  return client.apiKeys.find(key);
}

/**
 * Brings a key from what it is (`live`, as the platform answered it or as the state recorded it) to what is
 * declared: one edit when alias or security config differ, after one get when `live` is the state's (an alias the
 * platform keeps in another form, lower-cased or cut, is the same alias: api/keptForms.ts) (the
 * parts of the config the package does not know sent back as the platform showed them), then one status call when
 * `enabled` differs; nothing when all match.
 */
async function converge(
  client: Client,
  key: string,
  live: LiveView,
  inputs: ApiKeyInputs,
  from: "platform" | "state",
): Promise<LiveView> {
  let view = live;
  const kept = keptForms();
  const differs = (v: LiveView) =>
    !sameAlias(inputs.alias, v.alias, kept) || !sameRestrictions(v.securityConfig, inputs.securityConfig, kept);
  // An edit replaces the whole config (spec 4.3: get, change, post back): a view from the state may lack what the
  // console set since the last refresh, which the edit would remove. One get first; a key it does not find is left
  // to the edit, whose refusal says so.
  if (from === "state" && differs(view)) {
    const now = await find(client, key);
    if (now) view = viewOf(now);
  }
  if (differs(view)) {
    const edited = viewOf(
      await client.apiKeys.edit({
        key,
        alias: inputs.alias,
        securityConfig: inputs.securityConfig,
        platformParts: view.platformParts,
      }),
    );
    view = { ...edited, enabled: view.enabled };
  }
  if (view.enabled !== inputs.enabled) view = { ...view, enabled: await client.apiKeys.setStatus(key, inputs.enabled) };
  return view;
}

/** check: every field validated by one schema, failures named by property path; unknown values (preview) pass. */
export async function check(olds: Props, news: Props): Promise<{ inputs: ApiKeyInputs; failures: CheckFailure[] }> {
  const { inputs, failures } = checkInputs(ApiKeyInputsSchema, news);
  const checked: ApiKeyInputs = { ...inputs };
  // The one reason a preview can name before anything is read: shown as `+ rotationDue: "rotation triggered"`.
  delete checked.rotationDue;
  if (failures.length === 0 && triggersChanged(olds, news)) checked.rotationDue = TRIGGERED;
  return { inputs: checked, failures };
}

/**
 * diff: replacement only for another platform; otherwise an update of what changed. A due rotation (triggers,
 * age), an expired previous key and a current key a refresh found deleted are updates of the same resource.
 * `adoptKey` after creation changes nothing (removed, or a key the resource holds or adopted); another key fails
 * here, at preview.
 */
export async function diff(
  session: Session,
  id: string,
  olds: ApiKeyOutputs,
  news: ApiKeyInputs,
): Promise<{ changes: boolean; replaces: string[]; deleteBeforeReplace: boolean }> {
  const notOurs = adoptKeyFailure(news.adoptKey, olds);
  if (notOurs !== undefined) throw new LlmAccountsError(notOurs);
  // What it holds, no other create of this command may adopt, and no other delete delete.
  session.custody.keys.keep(id, [olds.key, olds.previousKey], [], olds);
  const replaces: string[] = [];
  const connection = connectionDiff(olds, news);
  if (connection.replace) replaces.push("connection");

  const kept = keptForms();
  const changed =
    replaces.length > 0 ||
    !sameAlias(news.alias, olds.alias, kept) ||
    olds.enabled !== news.enabled ||
    !sameRestrictions(olds.securityConfig, news.securityConfig, kept) ||
    connection.changed ||
    !same(olds.rotation ?? null, news.rotation ?? null) ||
    olds.rotationDue === KEY_DELETED ||
    rotationReason(olds, news, Date.now()) !== undefined ||
    previousExpiry(olds, Date.now()) !== undefined;
  if (replaces.length > 0) session.custody.keys.replaced(id);
  return { changes: changed, replaces, deleteBeforeReplace: false };
}

/**
 * create: one `api-key/create`, plus one `api-key/status` only when the key is declared disabled. With
 * `adoptKey`: one get to verify the key, then only the calls that bring it to the declared configuration.
 */
export async function create(session: Session, inputs: ApiKeyInputs): Promise<{ id: string; outs: ApiKeyOutputs }> {
  const custody = session.custody.keys;
  const me = custody.createOwner();
  if (inputs.adoptKey) custody.take(me, [inputs.adoptKey]);
  try {
    return await createOrAdopt(session, inputs);
  } catch (err) {
    // Failed with no state: nothing holds what it took (an old key's delete must neither leave nor delete it).
    if (inputs.adoptKey && !(err instanceof Error && "properties" in err)) custody.createFailed(me);
    throw err;
  }
}

/** The body of `create`, once an `adoptKey` is taken for it. */
async function createOrAdopt(session: Session, inputs: ApiKeyInputs): Promise<{ id: string; outs: ApiKeyOutputs }> {
  const client = session.client(inputs.connection).client;

  if (inputs.adoptKey) {
    const key = inputs.adoptKey;
    const live = await find(client, key);
    if (!live) {
      throw new LlmAccountsError(
        `adoptKey: the key ${maskKey(key)} does not exist on the platform; nothing was changed. ` +
          "If this resource adopted it before and it was deleted since (a refresh found it gone), remove adoptKey: the next up creates a new key",
      );
    }
    const view = await converge(client, key, viewOf(live), inputs, "platform");
    const outs = outputsOf(inputs, key, live.createdAt, view, key);
    // A key already as old as `rotation.everyDays` rotates in the run that adopts it: one `up` converges.
    if (dueByAge(outs, inputs, Date.now()) !== undefined)
      return { id: fingerprint(key), outs: await rotate(session, fingerprint(key), outs, inputs, "platform") };
    return { id: fingerprint(key), outs };
  }

  const issued = await issueKey(client, inputs, (kept, cause) =>
    keptWithError(
      `the key was created but could not be disabled (${cause.message}); it is kept in the state and the next update disables it`,
      fingerprint(kept.key),
      outputsOf(inputs, kept.key, kept.createdAt, kept.view, undefined),
    ),
  );
  return { id: fingerprint(issued.key), outs: outputsOf(inputs, issued.key, issued.createdAt, issued.view, undefined) };
}

/**
 * update: a current key a refresh found deleted is issued again (see reissue); a due rotation issues a new key
 * (see rotate). Otherwise only `enabled` changed: one status call; alias or securityConfig: one edit; both: edit
 * then status; and a previous key whose overlap has passed: one delete, coalesced with the other deletes of the
 * deployment.
 */
export async function update(
  session: Session,
  id: string,
  old: ApiKeyOutputs,
  inputs: ApiKeyInputs,
): Promise<{ outs: ApiKeyOutputs }> {
  session.custody.keys.updated(id);
  if (old.rotationDue === KEY_DELETED) return { outs: await reissue(session, id, old, inputs) };
  if (rotationReason(old, inputs, Date.now()) !== undefined) return { outs: await rotate(session, id, old, inputs) };
  const own = session.client(inputs.connection);
  const live = await converge(own.client, old.key, viewOf(old), inputs, "state");
  const outs = { ...outputsOf(inputs, old.key, old.createdAt, live, old.adoptKey), ...rotationStateOf(old) };
  if (!old.previousKey || previousExpiry(old, Date.now()) === undefined) return { outs };
  try {
    await own.deletes.delete(old.previousKey);
  } catch (err) {
    throw keptWithError(
      `the previous key ${maskKey(old.previousKey)} could not be deleted (${(err as Error).message}); the next update retries`,
      id,
      outs,
    );
  }
  delete outs.previousKey;
  delete outs.previousKeyExpiresAt;
  return { outs };
}

/**
 * read (refresh): one get, and one more for a previous key (one deleted elsewhere drops out). Gone on the
 * platform: an empty id; but a current key gone while its previous key exists keeps the resource, with
 * `rotationDue` saying the next update issues a key (dropped, the previous key would be left on the platform in
 * no state, never deleted). The keys themselves are carried forward. Where the platform drifted from the outputs,
 * the inputs returned are its values, so that a preview after a refresh shows drift as `old => new`; a due
 * rotation or an expired previous key shows as `rotationDue` in both (nothing is rotated or deleted here).
 * Where nothing drifted, no inputs: the engine keeps those check stored, and a gate shows nothing.
 */
export async function read(
  session: Session,
  id: string,
  old: ApiKeyOutputs,
): Promise<ReadOutcome<ApiKeyInputs, ApiKeyOutputs>> {
  const client = session.client(old.connection).client;
  let live = await find(client, old.key);
  // A key the last command or this one just created may not answer its get yet (a platform that lags): asked again
  // until it may show (lateWritesMs after its created_at) before it counts as gone.
  if (!live && justWritten(client.apiKeys, old.createdAt)) {
    live = await lookUntil(
      client.apiKeys,
      () => find(client, old.key),
      (v) => v !== undefined,
      { first: { found: live }, writtenAt: writtenAt(old.createdAt) },
    );
  }
  const previousLives = old.previousKey !== undefined && (await find(client, old.previousKey)) !== undefined;
  if (!live && !previousLives) return { id: "", props: {} };
  // A gone key keeps what the state recorded of it: the next update issues another.
  const view = live ? viewOf(live) : viewOf(old);
  const outs: ApiKeyOutputs = {
    ...outputsOf(old, old.key, live?.createdAt ?? old.createdAt, view, old.adoptKey),
    ...rotationStateOf(old),
  };
  if (!previousLives) {
    delete outs.previousKey;
    delete outs.previousKeyExpiresAt;
  }
  const due = live ? (dueByAge(outs, outs, Date.now()) ?? previousExpiry(outs, Date.now())) : KEY_DELETED;
  if (due !== undefined) outs.rotationDue = due;
  const drifted =
    !sameAlias(old.alias, view.alias, keptForms()) ||
    view.enabled !== old.enabled ||
    !sameRestrictions(view.securityConfig, old.securityConfig, keptForms()) ||
    due !== old.rotationDue;
  if (!drifted) return { id, props: outs };
  // Never adoptKey: the engine keeps an input secret only when the one it held was, and the program may no
  // longer give it. Nothing reads it back from the inputs anyway: the outputs keep it.
  const inputs: ApiKeyInputs = { alias: outs.alias, enabled: outs.enabled, securityConfig: outs.securityConfig };
  if (old.connection !== undefined) inputs.connection = old.connection;
  if (old.rotation !== undefined) inputs.rotation = old.rotation;
  // In the inputs too: the previews that follow compare old inputs with new ones and show `- rotationDue: "..."`.
  if (due !== undefined) inputs.rotationDue = due;
  return { id, props: outs, inputs };
}

/**
 * delete: the key and a previous one, coalesced with the other key deletes of this process. A key a refresh
 * found deleted is not sent: a delete naming it would be refused and split to isolate it.
 */
export async function remove(session: Session, id: string, old: ApiKeyOutputs): Promise<void> {
  const current = old.rotationDue === KEY_DELETED ? undefined : old.key;
  const named = [current, old.previousKey].filter((k): k is string => typeof k === "string" && k !== "");
  // Not one that another ApiKey of this command holds or adopted: deleting it would delete what that one holds.
  const others = session.custody.keys.leftByDelete(id, named, old);
  const keys = named.filter((k) => !others.has(k));
  if (keys.length === 0) return;
  const { deletes } = session.client(old.connection);
  await Promise.all(keys.map((k) => deletes.delete(k)));
}

/**
 * delete of a state that does not parse (`error`): the key and previous key it names (deletableOf) are deleted as
 * `remove` deletes them; when its key cannot be read, the delete then fails, so that the resource stays in the
 * state: never a success for a delete that was not made.
 */
export async function removeUnreadable(session: Session, id: string, state: Props, error: StateError): Promise<void> {
  const found = deletableOf(state);
  if (!found.connection.success || found.keys.length === 0) {
    throw error.after(
      `this delete cannot tell ${found.connection.success ? "which key to delete" : "which account it is on"}, so nothing was deleted`,
    );
  }
  const { deletes } = session.client(found.connection.data);
  const others = session.custody.keys.leftByDelete(id, found.keys, state);
  await Promise.all(found.keys.filter((k) => !others.has(k)).map((k) => deletes.delete(k)));
  if (found.unidentified)
    throw error.after(
      "this delete deleted the previous key it names, but cannot read the key itself, so the resource stays in the state",
    );
}
