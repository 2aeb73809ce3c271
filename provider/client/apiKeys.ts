import { API_KEY_DELETE_MAX } from "../api/assumptions.js";
import { fromWire, toWire } from "../api/casing.js";
import { ApiGroup } from "./apiGroup.js";
import { OPERATIONS } from "../api/operations.js";
import type * as s from "../api/schemas/index.js";

/** The management group's API key operations (spec 4.1 to 4.5). */
export class ApiKeysApi extends ApiGroup {
  /** Creates a key; the answer is the only time the key itself is returned. Never retried blindly. */
  async create(request: s.ApiKeyCreateRequest): Promise<s.ApiKeyCreated> {
    const res = await this.http.send({ op: OPERATIONS.createApiKey, body: toWire(request) });
    return fromWire(res);
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
    return res.enabled;
  }

  /** Deletes up to 1000 keys in one call; the platform rejects the whole batch if any key is bad. */
  async delete(keys: readonly string[]): Promise<number> {
    if (keys.length > API_KEY_DELETE_MAX) throw new RangeError(`at most ${API_KEY_DELETE_MAX} keys per delete call`);
    const res = await this.http.send({ op: OPERATIONS.deleteApiKeys, body: { keys: [...keys] } });
    return res.deleted;
  }
}
