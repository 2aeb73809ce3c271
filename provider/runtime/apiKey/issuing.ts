// How an ApiKey gets a new key: the one issuing rule (create + status, undone when it cannot finish), a
// rotation (rotate) and a key issued again after a refresh found it deleted (reissue). What is due and when
// lives in apiKey/rotation.ts; the lifecycle that calls these, in apiKey/lifecycle.ts.
import { deleteTookEffect, LlmAccountsError, NotFoundError } from "../../client/errors.js";
import { KeysNotConfirmedError } from "../../client/apiKeys.js";
import { maskKey } from "../../api/redact.js";
import { outputsOf, rotationStateOf, viewOf, type ApiKeyInputs, type ApiKeyOutputs, type LiveView } from "./state.js";
import { keptInState } from "../engine/index.js";
import { expiryOf, overlapHoursOf, previousExpiry, rotationReason } from "./rotation.js";
import type { Session, SessionClient } from "../command/index.js";

type Client = SessionClient["client"];
/** A key the platform just issued, as declared or as close to it as it got. */
export type Issued = { key: string; createdAt: string; view: LiveView };

/** An error the engine records as "changed, but failed", keeping `properties` as the new outputs (engine/contract.ts). */
export function keptWithError(message: string, id: string, properties: ApiKeyOutputs): LlmAccountsError {
  return keptInState(new LlmAccountsError(message), id, properties);
}

/** A create whose answer was lost: the key may exist, and the API cannot list keys; what the user can do. */
function adviseLostKey(err: unknown, alias: string): unknown {
  if (!(err instanceof LlmAccountsError) || !err.mayHaveSucceeded) return err;
  return err.withAdvice(
    `The API cannot list keys: look in the web console for a key with alias ${JSON.stringify(alias)} created just now, and delete it or adopt it with \`adoptKey\``,
  );
}

/**
 * One `api-key/create` with the declared alias and security config (and the restrictions the package does not know
 * that the key it succeeds held, `platformParts`), plus one `api-key/status` only when the key is declared disabled.
 * A key that cannot be disabled is deleted again, so that state and platform agree and a re-run starts clean; only
 * if it may still exist after that (deletedAgain) is it kept, through the error `kept` builds.
 */
export async function issueKey(
  client: Client,
  inputs: ApiKeyInputs,
  kept: (issued: Issued, cause: Error) => Error,
  platformParts?: string,
): Promise<Issued> {
  const created = await client.apiKeys
    .create({ alias: inputs.alias, securityConfig: inputs.securityConfig, platformParts })
    .catch((err: unknown) => {
      throw adviseLostKey(err, inputs.alias);
    });
  const issued: Issued = { key: created.key, createdAt: created.createdAt, view: viewOf(created) };
  if (issued.view.enabled === inputs.enabled) return issued;
  try {
    issued.view.enabled = await client.apiKeys.setStatus(created.key, inputs.enabled);
    return issued;
  } catch (err) {
    if (!(await deletedAgain(client, created.key))) throw kept(issued, err as Error);
    throw new LlmAccountsError(
      `the key was created but could not be disabled, so it was deleted again; nothing is left behind, re-run to retry: ${(err as Error).message}`,
    );
  }
}

/**
 * Deletes a key just issued that could not be finished; whether it is gone. A delete answered 2xx in the platform's
 * JSON whose field cannot be read took effect (deleteTookEffect), and one answered 404 names a key that is not there;
 * one whose answer is not the platform's was looked at already (ApiKeysApi.delete: KeysNotConfirmedError, still
 * there); one refused otherwise or unanswered is asked about with one get (ApiKeysApi.find: gone). A key the get
 * cannot place is kept: the state must not lose one that may exist, nor hold one that does not.
 */
async function deletedAgain(client: Client, key: string): Promise<boolean> {
  try {
    await client.apiKeys.delete([key]);
    return true;
  } catch (err) {
    // 404: the only key it names is not there (a retry after a lost answer that had taken effect, for one).
    if (deleteTookEffect(err) || err instanceof NotFoundError) return true;
    if (err instanceof KeysNotConfirmedError) return false;
    return client.apiKeys.find(key).then(
      (view) => view === undefined,
      () => false,
    );
  }
}

/**
 * A rotation: a key from an earlier rotation still in its overlap is deleted first (one previous key at most),
 * the old key's restrictions the package does not know are read (one get, unless `from` says `old` was just read),
 * then one new key is issued with the declared configuration; the replaced key becomes `previousKey`, deleted
 * in this update when there is no overlap. The old key itself is left as it is.
 */
export async function rotate(
  session: Session,
  id: string,
  old: ApiKeyOutputs,
  inputs: ApiKeyInputs,
  from: "platform" | "state" = "state",
): Promise<ApiKeyOutputs> {
  const { client, deletes } = session.client(inputs.connection);
  if (old.previousKey) await deletes.delete(old.previousKey);
  // The successor takes the restrictions the old key holds now (one get when the state may be older than the
  // console's last change); a key the get does not find gives those the state recorded.
  const platformParts =
    from === "state" ? ((await client.apiKeys.find(old.key)) ?? old).platformParts : old.platformParts;
  const withPrevious = (issued: Issued): ApiKeyOutputs => ({
    ...outputsOf(inputs, issued.key, issued.createdAt, issued.view, old.adoptKey),
    rotatedAt: issued.createdAt,
    previousKey: old.key,
    previousKeyExpiresAt: expiryOf(issued.createdAt, inputs.rotation),
  });
  const issued = await issueKey(
    client,
    inputs,
    (kept, cause) =>
      keptWithError(
        `the new key was created but could not be disabled (${cause.message}); both keys are kept in the state and the next update disables it`,
        id,
        withPrevious(kept),
      ),
    platformParts,
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
export async function reissue(
  session: Session,
  id: string,
  old: ApiKeyOutputs,
  inputs: ApiKeyInputs,
): Promise<ApiKeyOutputs> {
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
  const issued = await issueKey(
    client,
    inputs,
    (made, cause) =>
      keptWithError(
        `the new key was created but could not be disabled (${cause.message}); it is kept in the state and the next update disables it`,
        id,
        outsOf(made),
      ),
    old.platformParts,
  );
  return outsOf(issued);
}
