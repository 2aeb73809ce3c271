import { z } from "zod";
import { fromWire, toWire } from "../api/casing.js";
import { LlmAccountsError, NotFoundError } from "../client/errors.js";
import { fingerprint, maskKey } from "../api/redact.js";
import { AliasStringSchema, SecurityConfigSchema, type ApiKeyView, type SecurityConfig } from "../api/schemas/index.js";
import { adoptKeyFailure, AdoptKeySchema } from "./adoption.js";
import { connectionDiff, ConnectionInputSchema } from "./connection.js";
import { keptInState, type Props, type ReadOutcome } from "./contract.js";
import {
  KEY_DELETED,
  TRIGGERED,
  dueByAge,
  expiryOf,
  overlapHoursOf,
  previousExpiry,
  rotationReason,
  RotationSchema,
  triggersChanged,
  type RotationState,
} from "./rotation.js";
import type { Session, SessionClient } from "./session.js";
import { same } from "./canonical.js";
import { checkInputs, noKeysIn, optionalOrNull, type CheckFailure } from "./check.js";

/** A security config as users write it (camelCase), validated by the wire schema and kept in canonical form. */
const SecurityConfigInputSchema = z
  // Omitted, null and `{}` all mean "unrestricted": one form, so a program that did not change shows no diff.
  .preprocess(
    (value) => value ?? {},
    z.custom<object>((value) => value !== null && typeof value === "object" && !Array.isArray(value), {
      error: "must be an object { ip?, spendLimit?, geo?, models? }",
    }),
  )
  .transform((value) => toWire(value))
  .pipe(SecurityConfigSchema)
  .transform((wire) => fromWire(wire) as SecurityConfig);

/** What an ApiKey takes, as check validates it: one schema, defaults filled, security config in canonical form. */
export const ApiKeyInputsSchema = z
  .object({
    alias: AliasStringSchema,
    enabled: optionalOrNull(z.boolean({ error: "must be true or false" })).transform((enabled) => enabled ?? true),
    securityConfig: SecurityConfigInputSchema,
    adoptKey: AdoptKeySchema,
    connection: ConnectionInputSchema,
    rotation: optionalOrNull(RotationSchema),
  })
  .superRefine(noKeysIn(["alias", "securityConfig"]), { when: () => true });

/** Inputs of an ApiKey after check. */
export type ApiKeyInputs = z.output<typeof ApiKeyInputsSchema> & {
  /** Not declared by users: set by check (a changed trigger) and read (due by age, previous key expired). */
  rotationDue?: string;
};

/** What the state holds: every input echoed (so diff compares like with like) and what the platform adds. */
export type ApiKeyOutputs = ApiKeyInputs &
  RotationState & {
    /** The key itself: a secret output, carried forward because the platform never returns it again. */
    key: string;
    keyHint: string;
    createdAt: string;
  };

type LiveView = { alias: string; enabled: boolean; securityConfig: SecurityConfig };
/** A key the platform just issued, as declared or as close to it as it got. */
type Issued = { key: string; createdAt: string; view: LiveView };
type Client = SessionClient["client"];

/** Omitted, null and `{}` all mean "unrestricted": one form, so a program that did not change shows no diff. */
export function normalizeSecurityConfig(value: unknown): SecurityConfig {
  if (value === undefined || value === null) return {};
  return fromWire(toWire(value as SecurityConfig)) as SecurityConfig;
}

/**
 * Outputs as any version wrote them, in today's form: a state may lack `enabled` or hold its security config
 * in another spelling or as null. Read once, where old state comes in (diff, update, read).
 */
function fromState(old: ApiKeyOutputs): ApiKeyOutputs {
  return { ...old, enabled: old.enabled ?? true, securityConfig: normalizeSecurityConfig(old.securityConfig) };
}

/** A key's configuration as the platform answered it (a key without restrictions may answer null). */
function viewOf(answer: { alias: string; enabled: boolean; securityConfig?: SecurityConfig | null }): LiveView {
  return { alias: answer.alias, enabled: answer.enabled, securityConfig: answer.securityConfig ?? {} };
}

/**
 * The outputs of a key. `adoptKey` is the key the resource adopted at its creation, kept from then on whatever the
 * input says (the program may drop it, or still hold it after a rotation deleted that key).
 */
function outputsOf(inputs: ApiKeyInputs, key: string, createdAt: string, live: LiveView | undefined, adoptKey: string | undefined): ApiKeyOutputs {
  const out: ApiKeyOutputs = {
    alias: live?.alias ?? inputs.alias,
    enabled: live?.enabled ?? inputs.enabled,
    securityConfig: live ? live.securityConfig : inputs.securityConfig,
    key,
    keyHint: maskKey(key),
    createdAt,
  };
  if (adoptKey !== undefined) out.adoptKey = adoptKey;
  if (inputs.connection !== undefined) out.connection = inputs.connection;
  if (inputs.rotation !== undefined) out.rotation = inputs.rotation;
  return out;
}

/** The rotation state carried from one set of outputs to the next (a key not rotated yet has none). */
function rotationStateOf(old: RotationState): RotationState {
  const out: RotationState = {};
  if (old.rotatedAt !== undefined) out.rotatedAt = old.rotatedAt;
  if (old.previousKey !== undefined) {
    out.previousKey = old.previousKey;
    if (old.previousKeyExpiresAt !== undefined) out.previousKeyExpiresAt = old.previousKeyExpiresAt;
  }
  return out;
}

/** An error the engine records as "changed, but failed", keeping `properties` as the new outputs (contract.ts). */
function keptWithError(message: string, id: string, properties: ApiKeyOutputs): LlmAccountsError {
  return keptInState(new LlmAccountsError(message), id, properties);
}

/** The platform's view of a key with one get, or undefined when the key does not exist. */
async function find(client: Client, key: string): Promise<ApiKeyView | undefined> {
  try {
    return await client.apiKeys.get(key);
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/**
 * Brings a key from what it is (`live`) to what is declared: one edit when alias or security config differ, then
 * one status call when `enabled` differs; nothing when all match.
 */
async function converge(client: Client, key: string, live: LiveView, inputs: ApiKeyInputs): Promise<LiveView> {
  let view = live;
  if (view.alias !== inputs.alias || !same(view.securityConfig, inputs.securityConfig)) {
    const edited = viewOf(await client.apiKeys.edit({ key, alias: inputs.alias, securityConfig: inputs.securityConfig }));
    view = { ...view, alias: edited.alias, securityConfig: edited.securityConfig };
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
export async function diff(_id: string, state: ApiKeyOutputs, news: ApiKeyInputs): Promise<{ changes: boolean; replaces: string[]; deleteBeforeReplace: boolean }> {
  const olds = fromState(state);
  const notOurs = adoptKeyFailure(news.adoptKey, olds);
  if (notOurs !== undefined) throw new LlmAccountsError(notOurs);
  const replaces: string[] = [];
  const connection = connectionDiff(olds, news);
  if (connection.replace) replaces.push("connection");

  const changed =
    replaces.length > 0 ||
    olds.alias !== news.alias ||
    olds.enabled !== news.enabled ||
    !same(olds.securityConfig, news.securityConfig) ||
    connection.changed ||
    !same(olds.rotation ?? null, news.rotation ?? null) ||
    olds.rotationDue === KEY_DELETED ||
    rotationReason(olds, news, Date.now()) !== undefined ||
    previousExpiry(olds, Date.now()) !== undefined;
  return { changes: changed, replaces, deleteBeforeReplace: false };
}

/**
 * create: one `api-key/create`, plus one `api-key/status` only when the key is declared disabled. With
 * `adoptKey`: one get to verify the key, then only the calls that bring it to the declared configuration.
 */
export async function create(session: Session, inputs: ApiKeyInputs): Promise<{ id: string; outs: ApiKeyOutputs }> {
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
    const view = await converge(client, key, viewOf(live), inputs);
    const outs = outputsOf(inputs, key, live.createdAt, view, key);
    // A key already as old as `rotation.everyDays` rotates in the run that adopts it: one `up` converges.
    if (dueByAge(outs, inputs, Date.now()) !== undefined) return { id: fingerprint(key), outs: await rotate(session, fingerprint(key), outs, inputs) };
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

/** A create whose answer was lost: the key may exist, and the API cannot list keys; what the user can do. */
function adviseLostKey(err: unknown, alias: string): unknown {
  if (!(err instanceof LlmAccountsError) || !err.mayHaveSucceeded) return err;
  return err.withAdvice(
    `The API cannot list keys: look in the web console for a key with alias ${JSON.stringify(alias)} created just now, and delete it or adopt it with \`adoptKey\``,
  );
}

/**
 * One `api-key/create` with the declared alias and security config, plus one `api-key/status` only when the
 * key is declared disabled. A key that cannot be disabled is deleted again, so that state and platform agree
 * and a re-run starts clean; only if that fails too is it kept, through the error `kept` builds.
 */
async function issueKey(client: Client, inputs: ApiKeyInputs, kept: (issued: Issued, cause: Error) => Error): Promise<Issued> {
  const created = await client.apiKeys.create({ alias: inputs.alias, securityConfig: inputs.securityConfig }).catch((err: unknown) => {
    throw adviseLostKey(err, inputs.alias);
  });
  const issued: Issued = { key: created.key, createdAt: created.createdAt, view: viewOf(created) };
  if (issued.view.enabled === inputs.enabled) return issued;
  try {
    issued.view.enabled = await client.apiKeys.setStatus(created.key, inputs.enabled);
    return issued;
  } catch (err) {
    try {
      await client.apiKeys.delete([created.key]);
    } catch {
      throw kept(issued, err as Error);
    }
    throw new LlmAccountsError(
      `the key was created but could not be disabled, so it was deleted again; nothing is left behind, re-run to retry: ${(err as Error).message}`,
    );
  }
}

/**
 * A rotation: a key from an earlier rotation still in its overlap is deleted first (one previous key at most),
 * then one new key is issued with the declared configuration; the replaced key becomes `previousKey`, deleted
 * in this update when there is no overlap. The old key itself is left as it is.
 */
async function rotate(session: Session, id: string, old: ApiKeyOutputs, inputs: ApiKeyInputs): Promise<ApiKeyOutputs> {
  const { client, deletes } = session.client(inputs.connection);
  if (old.previousKey) await deletes.delete(old.previousKey);
  const withPrevious = (issued: Issued): ApiKeyOutputs => ({
    ...outputsOf(inputs, issued.key, issued.createdAt, issued.view, old.adoptKey),
    rotatedAt: issued.createdAt,
    previousKey: old.key,
    previousKeyExpiresAt: expiryOf(issued.createdAt, inputs.rotation),
  });
  const issued = await issueKey(client, inputs, (kept, cause) =>
    keptWithError(
      `the new key was created but could not be disabled (${cause.message}); both keys are kept in the state and the next update disables it`,
      id,
      withPrevious(kept),
    ),
  );
  const outs = withPrevious(issued);
  if (overlapHoursOf(inputs) > 0) return outs;
  try {
    await deletes.delete(old.key);
  } catch (err) {
    throw keptWithError(
      `the key was rotated, but the previous key ${maskKey(old.key)} could not be deleted (${(err as Error).message}); both keys are kept in the state and the next update deletes it`,
      id,
      outs,
    );
  }
  const { previousKey: _gone, previousKeyExpiresAt: _at, ...rest } = outs;
  return rest;
}

/**
 * A current key a refresh found deleted elsewhere, kept for its previous key (see read): one new key with the
 * declared configuration (+1 status when disabled). The previous key lives out its overlap as after any
 * rotation; it is deleted first, coalesced, when its overlap has passed or a rotation is due as well (one
 * previous key at most, as rotate does). The gone key itself is no previous key: nothing can use it.
 */
async function reissue(session: Session, id: string, old: ApiKeyOutputs, inputs: ApiKeyInputs): Promise<ApiKeyOutputs> {
  const own = session.client(inputs.connection);
  const client = own.client;
  const now = Date.now();
  const rotating = rotationReason(old, inputs, now) !== undefined;
  const drop = old.previousKey !== undefined && (rotating || previousExpiry(old, now) !== undefined);
  // Failing here changes nothing: the state still says the key is gone, and the next update retries.
  if (drop) await own.deletes.delete(old.previousKey!);
  const kept = rotationStateOf(old);
  if (drop) {
    delete kept.previousKey;
    delete kept.previousKeyExpiresAt;
  }
  const outsOf = (issued: Issued): ApiKeyOutputs => ({
    ...outputsOf(inputs, issued.key, issued.createdAt, issued.view, old.adoptKey),
    ...kept,
    ...(rotating ? { rotatedAt: issued.createdAt } : {}),
  });
  const issued = await issueKey(client, inputs, (made, cause) =>
    keptWithError(
      `the new key was created but could not be disabled (${cause.message}); it is kept in the state and the next update disables it`,
      id,
      outsOf(made),
    ),
  );
  return outsOf(issued);
}

/**
 * update: a current key a refresh found deleted is issued again (see reissue); a due rotation issues a new key
 * (see rotate). Otherwise only `enabled` changed: one status call; alias or securityConfig: one edit; both: edit
 * then status; and a previous key whose overlap has passed: one delete, coalesced with the other deletes of the
 * deployment.
 */
export async function update(session: Session, id: string, state: ApiKeyOutputs, inputs: ApiKeyInputs): Promise<{ outs: ApiKeyOutputs }> {
  const old = fromState(state);
  if (old.rotationDue === KEY_DELETED) return { outs: await reissue(session, id, old, inputs) };
  if (rotationReason(old, inputs, Date.now()) !== undefined) return { outs: await rotate(session, id, old, inputs) };
  const own = session.client(inputs.connection);
  const live = await converge(own.client, old.key, viewOf(old), inputs);
  const outs = { ...outputsOf(inputs, old.key, old.createdAt, live, old.adoptKey), ...rotationStateOf(old) };
  if (!old.previousKey || previousExpiry(old, Date.now()) === undefined) return { outs };
  try {
    await own.deletes.delete(old.previousKey);
  } catch (err) {
    throw keptWithError(`the previous key ${maskKey(old.previousKey)} could not be deleted (${(err as Error).message}); the next update retries`, id, outs);
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
export async function read(session: Session, id: string, state: ApiKeyOutputs): Promise<ReadOutcome<ApiKeyInputs, ApiKeyOutputs>> {
  const old = fromState(state);
  const client = session.client(old.connection).client;
  const live = await find(client, old.key);
  const previousLives = old.previousKey !== undefined && (await find(client, old.previousKey)) !== undefined;
  if (!live && !previousLives) return { id: "", props: {} };
  // A gone key keeps what the state recorded of it: the next update issues another.
  const view = live ? viewOf(live) : viewOf(old);
  const outs: ApiKeyOutputs = { ...outputsOf(old, old.key, live?.createdAt ?? old.createdAt, view, old.adoptKey), ...rotationStateOf(old) };
  if (!previousLives) {
    delete outs.previousKey;
    delete outs.previousKeyExpiresAt;
  }
  const due = live ? (dueByAge(outs, outs, Date.now()) ?? previousExpiry(outs, Date.now())) : KEY_DELETED;
  if (due !== undefined) outs.rotationDue = due;
  const drifted =
    view.alias !== old.alias || view.enabled !== old.enabled || !same(view.securityConfig, old.securityConfig) || due !== old.rotationDue;
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
export async function remove(session: Session, _id: string, old: ApiKeyOutputs): Promise<void> {
  const current = old.rotationDue === KEY_DELETED ? undefined : old.key;
  const keys = [current, old.previousKey].filter((k): k is string => typeof k === "string" && k !== "");
  if (keys.length === 0) return;
  const { deletes } = session.client(old.connection);
  await Promise.all(keys.map((k) => deletes.delete(k)));
}
