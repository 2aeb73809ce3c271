import { fromWire, toWire } from "../client/casing.js";
import type { ConnectionArgs } from "../client/config.js";
import { LlmAccountsError, NotFoundError } from "../client/errors.js";
import { fingerprint, maskKey } from "../client/redact.js";
import { ApiKeyCreateRequestSchema, KeySchema, type SecurityConfig } from "../client/schemas/index.js";
import { clientFor, connectionDiff, connectionFailures } from "./connection.js";
import type { Props, ReadOutcome } from "./contract.js";
import { coalescerFor } from "./deleteCoalescer.js";
import { UNKNOWN, same, schemaFailures, type CheckFailure } from "./values.js";

/** Inputs of an ApiKey after check: defaults filled, security config in canonical form. */
export type ApiKeyInputs = {
  alias: string;
  enabled: boolean;
  securityConfig: SecurityConfig;
  adoptKey?: string;
  connection?: ConnectionArgs;
};

/** What the state holds: every input echoed (so diff compares like with like) and what the platform adds. */
export type ApiKeyOutputs = ApiKeyInputs & {
  /** The key itself: a secret output, carried forward because the platform never returns it again. */
  key: string;
  keyHint: string;
  createdAt: string;
};

/** Omitted, null and `{}` all mean "unrestricted": one form, so a program that did not change shows no diff. */
export function normalizeSecurityConfig(value: unknown): SecurityConfig {
  if (value === undefined || value === null) return {};
  return fromWire(toWire(value as SecurityConfig)) as SecurityConfig;
}

function outputsOf(inputs: ApiKeyInputs, key: string, createdAt: string, live?: { alias: string; enabled: boolean; securityConfig: SecurityConfig }): ApiKeyOutputs {
  const out: ApiKeyOutputs = {
    alias: live?.alias ?? inputs.alias,
    enabled: live?.enabled ?? inputs.enabled,
    securityConfig: normalizeSecurityConfig(live ? live.securityConfig : inputs.securityConfig),
    key,
    keyHint: maskKey(key),
    createdAt,
  };
  if (inputs.adoptKey !== undefined) out.adoptKey = inputs.adoptKey;
  if (inputs.connection !== undefined) out.connection = inputs.connection;
  return out;
}

/** check: every field validated, failures named by property path; unknown values (preview) pass. */
export async function check(_olds: Props, news: Props): Promise<{ inputs: ApiKeyInputs; failures: CheckFailure[] }> {
  const failures: CheckFailure[] = [];
  const inputs: Props = { ...news };

  if (news.enabled === undefined || news.enabled === null) inputs.enabled = true;
  else if (news.enabled !== UNKNOWN && typeof news.enabled !== "boolean") {
    failures.push({ property: "enabled", reason: "must be true or false" });
  }

  const sc = news.securityConfig;
  if (sc === undefined || sc === null) inputs.securityConfig = {};
  else if (sc !== UNKNOWN && (typeof sc !== "object" || Array.isArray(sc))) {
    failures.push({ property: "securityConfig", reason: "must be an object { ip?, spendLimit?, geo?, models? }" });
  } else if (sc !== UNKNOWN) {
    inputs.securityConfig = normalizeSecurityConfig(sc);
  }
  const wire = { alias: news.alias, ...(sc && typeof sc === "object" ? { security_config: toWire(sc) } : {}) };
  failures.push(...schemaFailures(ApiKeyCreateRequestSchema, wire));

  if (news.adoptKey !== undefined && news.adoptKey !== null && news.adoptKey !== UNKNOWN) {
    if (!KeySchema.safeParse(news.adoptKey).success) {
      // Never echo the value: it is meant to be a key.
      failures.push({ property: "adoptKey", reason: "must be an API key that begins with sk- (not an admin key)" });
    }
  }
  failures.push(...connectionFailures(news.connection));
  // Typed once failures is empty; the engine uses the inputs of a failed check for nothing.
  return { inputs: inputs as ApiKeyInputs, failures };
}

/** diff: replacement only for another key or another platform; otherwise an update of what changed. */
export async function diff(_id: string, olds: ApiKeyOutputs, news: ApiKeyInputs): Promise<{ changes: boolean; replaces: string[]; deleteBeforeReplace: boolean }> {
  const replaces: string[] = [];
  const adoptOld = olds.adoptKey;
  const adoptNew = news.adoptKey;
  if (adoptNew === UNKNOWN || (adoptOld ?? null) !== (adoptNew ?? null)) replaces.push("adoptKey");
  const connection = connectionDiff(olds, news);
  if (connection.replace) replaces.push("connection");

  const changed =
    replaces.length > 0 ||
    olds.alias !== news.alias ||
    (olds.enabled ?? true) !== (news.enabled ?? true) ||
    !same(normalizeSecurityConfig(olds.securityConfig), normalizeSecurityConfig(news.securityConfig)) ||
    connection.changed;
  return { changes: changed, replaces, deleteBeforeReplace: false };
}

/**
 * create: one `api-key/create`, plus one `api-key/status` only when the key is declared disabled. With
 * `adoptKey`: one get to verify the key, then only the calls that bring it to the declared configuration.
 */
export async function create(inputs: ApiKeyInputs): Promise<{ id: string; outs: ApiKeyOutputs }> {
  const client = clientFor(inputs.connection);
  const config = { alias: inputs.alias, securityConfig: normalizeSecurityConfig(inputs.securityConfig) };

  if (inputs.adoptKey) {
    const key = inputs.adoptKey;
    let live;
    try {
      live = await client.apiKeys.get(key);
    } catch (err) {
      if (err instanceof NotFoundError) {
        throw new LlmAccountsError(`adoptKey: the key ${maskKey(key)} does not exist on the platform; nothing was changed`);
      }
      throw err;
    }
    let view = { alias: live.alias, enabled: live.enabled, securityConfig: normalizeSecurityConfig(live.securityConfig) };
    if (view.alias !== config.alias || !same(view.securityConfig, config.securityConfig)) {
      const edited = await client.apiKeys.edit({ key, ...config });
      view = { ...view, alias: edited.alias, securityConfig: normalizeSecurityConfig(edited.securityConfig) };
    }
    if (view.enabled !== inputs.enabled) view.enabled = await client.apiKeys.setStatus(key, inputs.enabled);
    return { id: fingerprint(key), outs: outputsOf(inputs, key, live.createdAt, view) };
  }

  const created = await client.apiKeys.create(config);
  let enabled = created.enabled;
  if (enabled !== inputs.enabled) {
    try {
      enabled = await client.apiKeys.setStatus(created.key, inputs.enabled);
    } catch (err) {
      // The key exists but is not as declared. Remove it so that state and platform agree and a re-run
      // starts clean; only if that fails too is the key kept, recorded as created-but-failed.
      try {
        await client.apiKeys.delete([created.key]);
      } catch {
        const failed = new LlmAccountsError(
          `the key was created but could not be disabled (${(err as Error).message}); it is kept in the state and the next update disables it`,
        );
        // The engine records a create that fails with an id as created-but-failed, keeping these outputs
        // (the key among them stays a secret output). Not enumerable: JSON.stringify(error) must not show them.
        Object.defineProperty(failed, "id", { value: fingerprint(created.key), enumerable: false });
        Object.defineProperty(failed, "properties", {
          value: { ...outputsOf(inputs, created.key, created.createdAt), enabled: created.enabled },
          enumerable: false,
        });
        Object.defineProperty(failed, "reasons", { value: [failed.message], enumerable: false });
        throw failed;
      }
      throw new LlmAccountsError(
        `the key was created but could not be disabled, so it was deleted again; nothing is left behind, re-run to retry: ${(err as Error).message}`,
      );
    }
  }
  return {
    id: fingerprint(created.key),
    outs: outputsOf(inputs, created.key, created.createdAt, {
      alias: created.alias,
      enabled,
      securityConfig: normalizeSecurityConfig(created.securityConfig),
    }),
  };
}

/** update: only `enabled` changed: one status call; alias or securityConfig: one edit; both: edit then status. */
export async function update(_id: string, old: ApiKeyOutputs, inputs: ApiKeyInputs): Promise<{ outs: ApiKeyOutputs }> {
  const client = clientFor(inputs.connection);
  const key = old.key;
  const desired = { alias: inputs.alias, securityConfig: normalizeSecurityConfig(inputs.securityConfig) };
  let live = { alias: old.alias, enabled: old.enabled, securityConfig: normalizeSecurityConfig(old.securityConfig) };
  if (live.alias !== desired.alias || !same(live.securityConfig, desired.securityConfig)) {
    const edited = await client.apiKeys.edit({ key, ...desired });
    live = { ...live, alias: edited.alias, securityConfig: normalizeSecurityConfig(edited.securityConfig) };
  }
  if (live.enabled !== inputs.enabled) live.enabled = await client.apiKeys.setStatus(key, inputs.enabled);
  return { outs: outputsOf(inputs, key, old.createdAt, live) };
}

/**
 * read (refresh): one get. Gone on the platform: an empty id. The key itself is carried forward. The inputs
 * returned are the platform's values, so that a preview after a refresh shows drift as `old => new`.
 */
export async function read(id: string, old: ApiKeyOutputs): Promise<ReadOutcome<ApiKeyInputs, ApiKeyOutputs>> {
  const client = clientFor(old.connection);
  try {
    const live = await client.apiKeys.get(old.key);
    const outs = outputsOf(old, old.key, live.createdAt, { ...live, securityConfig: normalizeSecurityConfig(live.securityConfig) });
    const inputs: ApiKeyInputs = { alias: outs.alias, enabled: outs.enabled, securityConfig: outs.securityConfig };
    if (old.adoptKey !== undefined) inputs.adoptKey = old.adoptKey;
    if (old.connection !== undefined) inputs.connection = old.connection;
    return { id, props: outs, inputs };
  } catch (err) {
    if (err instanceof NotFoundError) return { id: "", props: {} };
    throw err;
  }
}

/** delete: coalesced with the other key deletes of this process; resolves once the platform confirmed. */
export async function remove(_id: string, old: ApiKeyOutputs): Promise<void> {
  if (!old.key) return;
  const client = clientFor(old.connection);
  await coalescerFor(client.apiKeys).delete(old.key);
}
