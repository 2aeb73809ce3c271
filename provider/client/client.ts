import { AccountApi } from "./account.js";
import { ApiKeysApi } from "./apiKeys.js";
import type { TransportOptions } from "./config.js";
import { HttpTransport } from "./http.js";
import { ShowsOriginOnly } from "./apiGroup.js";
import type { RateLimiters } from "./limiter.js";
import { SubAccountsApi, type WriteCounter } from "./subAccounts.js";

export type ClientOptions = TransportOptions;

/** What a client may share with other clients: rate limiters, and the count of sub-account writes. */
export interface ClientSharing {
  limiters?: RateLimiters;
  writes?: WriteCounter;
}

/** A client for the whole account API: one object per API group, over one transport. */
export class LlmAccountsClient extends ShowsOriginOnly {
  readonly apiKeys: ApiKeysApi;
  readonly account: AccountApi;
  readonly subAccounts: SubAccountsApi;
  private readonly http: HttpTransport;

  /**
   * `shared`: what the client shares with others (a runtime session's clients share both): the rate limiters
   * (PROCESS_LIMITERS when not given) and the counter of sub-account writes (its own when not given).
   */
  constructor(options: ClientOptions, shared: ClientSharing = {}) {
    super();
    this.http = new HttpTransport(options, shared.limiters);
    this.apiKeys = new ApiKeysApi(this.http);
    this.account = new AccountApi(this.http);
    this.subAccounts = new SubAccountsApi(this.http, shared.writes);
  }

  /** The origin the client talks to. */
  get origin(): string {
    return this.http.origin;
  }
}
