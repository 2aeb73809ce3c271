import type { z } from "zod";
import type { ModelPricingSchema } from "../api/schemas/index.js";
import { decimal6, isoUtc, isoWithOffset } from "./format.js";
import type { ApiKeyRecordSchema, StateFile, StateSnapshot, SubAccountRecordSchema } from "./persistence.js";
import { newKey } from "./random.js";

/** An API key as the emulator stores it (wire form, the key value included). */
export type ApiKeyRecord = z.infer<typeof ApiKeyRecordSchema>;
/** A sub-account as the emulator stores and returns it (wire form). */
export type SubAccountRecord = z.infer<typeof SubAccountRecordSchema>;
type ModelPricing = z.infer<typeof ModelPricingSchema>;

/** The balance a new account starts with. */
export const DEFAULT_BALANCE = 10_000;
const FIRST_SUB_ACCOUNT_ID = 1;
const FIRST_USER_ID = 100_001;

/**
 * The data behind the emulator: API keys, sub-accounts and the balance. The HTTP handlers use it, and tests
 * may read or change it directly (out of band); every change is saved to the state file when there is one.
 * Records are returned as copies.
 */
export class EmulatorState {
  private readonly keys = new Map<string, ApiKeyRecord>();
  private readonly subAccounts = new Map<string, SubAccountRecord>();
  private nextSubAccountId = FIRST_SUB_ACCOUNT_ID;
  private nextUserId = FIRST_USER_ID;
  private balanceAmount = DEFAULT_BALANCE;
  private pending: Promise<void> = Promise.resolve();
  private changes = 0;
  /** Makes each new API key and sub-account token (the reading `unprefixed-keys` issues them without `sk-`). */
  issueKey: () => string = newKey;

  constructor(
    /** The credential of the management group. */
    readonly adminKey: string,
    /** The main account key: the credential of the sub-account group. */
    readonly accountKey: string,
    private readonly clock: () => number = Date.now,
    private readonly file?: StateFile,
    snapshot?: StateSnapshot,
  ) {
    if (snapshot) this.restore(snapshot);
  }

  /** Counts the changes made so far: a request that moved it has something to save. */
  get revision(): number {
    return this.changes;
  }

  /** Resolves when every change made so far is in the state file (at once when there is no file). */
  flush(): Promise<void> {
    return this.pending;
  }

  /** The whole state, as the state file holds it. */
  snapshot(): StateSnapshot {
    return {
      version: 1,
      admin_key: this.adminKey,
      account_key: this.accountKey,
      balance: this.balance(),
      next_sub_account_id: this.nextSubAccountId,
      next_user_id: this.nextUserId,
      api_keys: this.listKeys(),
      sub_accounts: this.listSubAccounts(),
    };
  }

  /** The account balance as the API answers it (`"10000.000000"`). */
  balance(): string {
    return decimal6(this.balanceAmount);
  }

  /** Sets the account balance. */
  setBalance(amount: number): void {
    this.balanceAmount = amount;
    this.changed();
  }

  // --- API keys -------------------------------------------------------------------------------------------

  /** Creates an enabled key; the returned record is the only place its value is handed out by the API. */
  createKey(alias: string, securityConfig: ApiKeyRecord["security_config"] = {}): ApiKeyRecord {
    const record: ApiKeyRecord = {
      key: this.issueKey(),
      alias,
      enabled: true,
      security_config: structuredClone(securityConfig),
      created_at: isoUtc(this.clock()),
    };
    this.keys.set(record.key, record);
    this.changed();
    return structuredClone(record);
  }

  /** The key's record, or undefined when it does not exist. */
  getKey(key: string): ApiKeyRecord | undefined {
    const record = this.keys.get(key);
    return record && structuredClone(record);
  }

  /** True when the key exists. */
  hasKey(key: string): boolean {
    return this.keys.has(key);
  }

  /** Every key, oldest first. */
  listKeys(): ApiKeyRecord[] {
    return [...this.keys.values()].map((r) => structuredClone(r));
  }

  /** Replaces alias and security config as a whole; `enabled` stays. Undefined when the key does not exist. */
  editKey(key: string, alias: string, securityConfig: ApiKeyRecord["security_config"] = {}): ApiKeyRecord | undefined {
    const record = this.keys.get(key);
    if (!record) return undefined;
    record.alias = alias;
    record.security_config = structuredClone(securityConfig);
    this.changed();
    return structuredClone(record);
  }

  /** Enables or disables a key; false when it does not exist. */
  setKeyEnabled(key: string, enabled: boolean): boolean {
    const record = this.keys.get(key);
    if (!record) return false;
    record.enabled = enabled;
    this.changed();
    return true;
  }

  /** Disables a key out of band (as someone in the web console would); false when it does not exist. */
  disableKey(key: string): boolean {
    return this.setKeyEnabled(key, false);
  }

  /**
   * Keys in use (locked), which `api-key/delete` refuses, with whether its refusal names the key: what a platform
   * does with a key a running job holds. Set out of band (lockKey), in memory only.
   */
  private readonly locked = new Map<string, boolean>();

  /** Locks a key out of band: a delete naming it is refused whole (400 `key_in_use`), naming it when `named`; `false` unlocks. */
  lockKey(key: string, locked = true, named = true): void {
    if (locked) this.locked.set(key, named);
    else this.locked.delete(key);
  }

  /** The first locked key among `keys`, and whether a refusal names it. */
  lockedAmong(keys: readonly string[]): { key: string; named: boolean } | undefined {
    const key = keys.find((k) => this.locked.has(k));
    return key === undefined ? undefined : { key, named: this.locked.get(key)! };
  }

  /** Deletes a key out of band; false when it does not exist. */
  deleteKey(key: string): boolean {
    return this.deleteKeys([key]) === 1;
  }

  /** Deletes the keys that exist among those given; returns how many were deleted. */
  deleteKeys(keys: readonly string[]): number {
    let deleted = 0;
    for (const key of keys) if (this.keys.delete(key)) deleted++;
    if (deleted > 0) this.changed();
    return deleted;
  }

  // --- Sub-accounts ---------------------------------------------------------------------------------------

  /** Creates `count` enabled sub-accounts, each with its own token and user id. */
  createSubAccounts(request: {
    alias: string;
    balance: number;
    modelPricing: readonly ModelPricing[];
    count: number;
  }): SubAccountRecord[] {
    const now = isoWithOffset(this.clock());
    const created: SubAccountRecord[] = [];
    for (let i = 0; i < request.count; i++) {
      const record: SubAccountRecord = {
        id: this.nextSubAccountId++,
        user_id: this.nextUserId++,
        token: this.issueKey(),
        token_type: "slave",
        alias: request.alias,
        enabled: true,
        model_pricing: structuredClone([...request.modelPricing]),
        balance: decimal6(request.balance),
        monthly_cost: decimal6(0),
        created_at: now,
        updated_at: now,
      };
      this.subAccounts.set(record.token, record);
      created.push(structuredClone(record));
    }
    this.changed();
    return created;
  }

  /** The sub-account with this token, or undefined. */
  getSubAccount(token: string): SubAccountRecord | undefined {
    const record = this.subAccounts.get(token);
    return record && structuredClone(record);
  }

  /**
   * Sets a sub-account's balance as usage leaves it (the platform lets one spend past zero: a negative balance,
   * which no request can set); returns false when there is no such sub-account.
   */
  setSubAccountBalance(token: string, amount: number): boolean {
    const record = this.subAccounts.get(token);
    if (!record) return false;
    record.balance = decimal6(amount);
    this.changed();
    return true;
  }

  /** True when a sub-account has this token. */
  hasSubAccount(token: string): boolean {
    return this.subAccounts.has(token);
  }

  /** Every sub-account, by id. */
  listSubAccounts(): SubAccountRecord[] {
    return [...this.subAccounts.values()].sort((a, b) => a.id - b.id).map((r) => structuredClone(r));
  }

  /** Sets alias and model pricing of the sub-accounts that exist among those given; returns how many. */
  editSubAccounts(tokens: readonly string[], alias: string, modelPricing: readonly ModelPricing[]): number {
    const now = isoWithOffset(this.clock());
    let edited = 0;
    for (const token of new Set(tokens)) {
      const record = this.subAccounts.get(token);
      if (!record) continue;
      record.alias = alias;
      record.model_pricing = structuredClone([...modelPricing]);
      record.updated_at = now;
      edited++;
    }
    if (edited > 0) this.changed();
    return edited;
  }

  /** Enables or disables a sub-account out of band (the API shows no way to); false when it does not exist. */
  setSubAccountEnabled(token: string, enabled: boolean): boolean {
    const record = this.subAccounts.get(token);
    if (!record) return false;
    record.enabled = enabled;
    record.updated_at = isoWithOffset(this.clock());
    this.changed();
    return true;
  }

  /** Deletes a sub-account out of band; false when it does not exist. */
  deleteSubAccount(token: string): boolean {
    return this.deleteSubAccounts([token]) === 1;
  }

  /** Deletes the sub-accounts that exist among those given; returns how many were deleted. */
  deleteSubAccounts(tokens: readonly string[]): number {
    let deleted = 0;
    for (const token of tokens) if (this.subAccounts.delete(token)) deleted++;
    if (deleted > 0) this.changed();
    return deleted;
  }

  private restore(snapshot: StateSnapshot): void {
    for (const key of snapshot.api_keys) this.keys.set(key.key, { ...key, security_config: key.security_config ?? {} });
    for (const sub of snapshot.sub_accounts) this.subAccounts.set(sub.token, sub);
    this.nextSubAccountId = snapshot.next_sub_account_id;
    this.nextUserId = snapshot.next_user_id;
    this.balanceAmount = Number(snapshot.balance);
  }

  /** Schedules a save of the state file; failures surface through flush(). */
  changed(): void {
    this.changes++;
    if (!this.file) return;
    const saved = this.file.save(() => this.snapshot());
    saved.catch(() => undefined);
    this.pending = saved;
  }
}
