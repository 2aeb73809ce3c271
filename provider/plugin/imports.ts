// What `pulumi import` of the provider's resources reads: the engine hands `read` an import id and no state. The
// id never holds a key (an id is shown by the CLI and stored in the state): an ApiKey's is `env:<VARIABLE>`, the
// name of an environment variable of the `pulumi` command that holds the key; a SubAccountBatch's is the ids of its
// sub-accounts (not secret), comma-separated. The resource is read as the package's own adopting create would have
// left it (the runtime's check and outputsOf, as `llm-accounts import --into-state` writes it) with one get or one
// list and no write, and its id is the one that create gives (a fingerprint of the key, of the first token).
import { LlmAccountsError } from "../client/errors.js";
import { fingerprint, looksLikeKey } from "../api/redact.js";
import { KeySchema } from "../api/schemas/index.js";
import { batchGroupOf } from "../commands/batchGroups.js";
import {
  apiKey,
  subAccountBatch,
  type ApiKeyInputs,
  type ApiKeyOutputs,
  type Session,
  type SubAccountBatchInputs,
  type SubAccountBatchOutputs,
} from "../runtime/index.js";
import { outputsOf as keyOutputsOf, viewOf } from "../runtime/apiKey/index.js";
import { batchIdOf, outputsOf as batchOutputsOf, view } from "../runtime/subAccountBatch/index.js";

/** What an import's read answers: the resource found (id, outputs and the inputs a program declares), or gone. */
export type Imported<I, O> = { id: string; props: O; inputs: I } | { id: ""; props: Record<string, never> };

const ENV_ID = /^env:([A-Za-z_][A-Za-z0-9_]*)$/;

/** An import id refused, with what a right one looks like; the id is quoted only when it cannot be a key. */
function badId(what: string, id: string, expected: string): LlmAccountsError {
  const shown = looksLikeKey(id)
    ? "looks like a key: a key is never an import id (the CLI shows and stores ids)"
    : `${JSON.stringify(id)} is not one`;
  return new LlmAccountsError(`the import id of ${what} is ${expected}; ${shown}`);
}

/** Failures of the runtime's check, as the import's error (their reasons are redacted by the check). */
function refused(what: string, failures: readonly { property: string; reason: string }[]): LlmAccountsError {
  return new LlmAccountsError(
    `${what}: the package's check refuses what the platform holds (${failures.map((f) => `${f.property}: ${f.reason}`).join("; ")})`,
  );
}

/** An ApiKey adopted by `env:<VARIABLE>`: one get, no write. */
export async function importKey(session: Session, importId: string): Promise<Imported<ApiKeyInputs, ApiKeyOutputs>> {
  const variable = ENV_ID.exec(importId)?.[1];
  if (variable === undefined)
    throw badId("an ApiKey", importId, "env:<VARIABLE>, the name of an environment variable holding the key");
  const key = process.env[variable]?.trim();
  if (!key) throw new LlmAccountsError(`import of an ApiKey: the environment variable ${variable} is not set`);
  if (!KeySchema.safeParse(key).success)
    throw new LlmAccountsError(
      `import of an ApiKey: the environment variable ${variable} does not hold a key (sk-...)`,
    );
  const live = await session.client(undefined).client.apiKeys.find(key);
  if (!live) return { id: "", props: {} };
  const declared = { alias: live.alias, enabled: live.enabled, securityConfig: live.securityConfig ?? {} };
  const { inputs, failures } = await apiKey.check({}, declared);
  if (failures.length > 0) throw refused(`import of the ApiKey in ${variable}`, failures);
  return { id: fingerprint(key), props: keyOutputsOf(inputs, key, live.createdAt, viewOf(live), key), inputs };
}

/** A SubAccountBatch adopted by the ids of its sub-accounts: one list, no write. `mark` is the resource's own. */
export async function importBatch(
  session: Session,
  importId: string,
  mark: string,
): Promise<Imported<SubAccountBatchInputs, SubAccountBatchOutputs>> {
  const ids = importId.split(",").map((id) => id.trim());
  if (ids.some((id) => !/^\d{1,30}$/.test(id)))
    throw badId("a SubAccountBatch", importId, "the ids of its sub-accounts, comma-separated (e.g. 101,102)");
  const listed = await session.client(undefined).subAccounts.list();
  const members = ids.map((id) => listed.find((s) => String(s.id) === id));
  const missing = ids.filter((_, i) => members[i] === undefined);
  if (missing.length === ids.length) return { id: "", props: {} };
  if (missing.length > 0)
    throw new LlmAccountsError(`import of a SubAccountBatch: no sub-account ${missing.join(", ")} in this account`);
  const found = members.filter((s) => s !== undefined);
  if (new Set(found.map(batchGroupOf)).size > 1) {
    throw new LlmAccountsError(
      `import of a SubAccountBatch: sub-accounts ${ids.join(", ")} differ in alias or pricing; a batch shares both (import each group apart)`,
    );
  }
  // A live balance may be below 0 (spent past zero): the batch's balance applies to the sub-accounts it creates later.
  const balance = Math.max(0, ...found.map((s) => Number(s.balance)));
  const declared = { alias: found[0].alias, balance, count: found.length, modelPricing: found[0].modelPricing, mark };
  const tokens = found.map((s) => s.token);
  const { inputs, failures } = await subAccountBatch.check({}, { ...declared, adoptTokens: tokens });
  if (failures.length > 0) throw refused(`import of SubAccountBatch ${importId}`, failures);
  const outputs = batchOutputsOf(inputs, found.map(view), tokens);
  const { adoptTokens: _adopted, ...declaredInputs } = inputs;
  return { id: batchIdOf(outputs.tokens[0], inputs.alias), props: outputs, inputs: declaredInputs };
}
