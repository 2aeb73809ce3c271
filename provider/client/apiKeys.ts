import { API_KEY_DELETE_MAX } from "../api/assumptions.js";
import { fromWire, toWire } from "../api/casing.js";
import { ApiGroup } from "./apiGroup.js";
import { OPERATIONS } from "../api/operations.js";
import type * as s from "../api/schemas/index.js";

/** The management group's API key operations (spec 4.1 to 4.5). */
export class ApiKeysApi extends ApiGroup {
  /**
   * Creates a key; the answer is the only time the key itself is returned. Never retried blindly. Only the key is
   * needed of the answer: a field it lacks (or holds in a form no schema reads) is taken from the request, as the
   * spec's create makes it (enabled, the alias and restrictions sent), so that a key the platform made is never
   * lost for another field of its answer. The next read shows the platform's values.
   */
  async create(request: s.ApiKeyCreateRequest): Promise<s.ApiKeyCreated> {
    const res = await this.http.send({ op: OPERATIONS.createApiKey, body: toWire(request) });
    const sent = toWire(request);
    return fromWire({
      key: res.key,
      alias: res.alias ?? sent.alias,
      enabled: res.enabled ?? true,
      security_config: res.security_config === undefined ? sent.security_config : res.security_config,
      created_at: res.created_at ?? new Date().toISOString(),
    });
  }

  /** Reads a key's configuration (never the key). */
  async get(key: string): Promise<s.ApiKeyView> {
    const res = await this.http.send({ op: OPERATIONS.getApiKey, body: { key } });
    return fromWire(res);
  }

  /** Replaces alias and security configuration as a whole; `enabled` is left as it is. */
  async edit(request: s.ApiKeyEditRequest): Promise<s.ApiKeyView> {
    const res = await this.http.send({ op: OPERATIONS.editApiKey, body: toWire(request) });
    return fromWire(res);
  }

  /** Enables or disables a key; returns the confirmed state. */
  async setStatus(key: string, enabled: boolean): Promise<boolean> {
    const res = await this.http.send({ op: OPERATIONS.setApiKeyStatus, body: { key, enabled } });
    // A 2xx that is no refusal (client/refusals.ts) without `enabled` confirms the state asked for.
    return res.enabled ?? enabled;
  }

  /** Deletes up to 1000 keys in one call; the platform rejects the whole batch if any key is bad. */
  async delete(keys: readonly string[]): Promise<number> {
    if (keys.length > API_KEY_DELETE_MAX) throw new RangeError(`at most ${API_KEY_DELETE_MAX} keys per delete call`);
    const res = await this.http.send({ op: OPERATIONS.deleteApiKeys, body: { keys: [...keys] } });
    // The batch is all or nothing (spec 4.5): a 2xx that is no refusal without a count deleted them all.
    return res.deleted ?? keys.length;
  }
}
