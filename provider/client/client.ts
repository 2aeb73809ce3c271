import { AccountApi } from "./account.js";
import { ApiKeysApi } from "./apiKeys.js";
import type { TransportOptions } from "./config.js";
import { HttpTransport } from "./http.js";
import { ShowsOriginOnly } from "./masked.js";
import { SubAccountsApi } from "./subAccounts.js";

export type ClientOptions = TransportOptions;

/** A client for the whole account API: one object per API group, over one transport. */
export class LlmAccountsClient extends ShowsOriginOnly {
  readonly apiKeys: ApiKeysApi;
  readonly account: AccountApi;
  readonly subAccounts: SubAccountsApi;
  private readonly http: HttpTransport;

  constructor(options: ClientOptions) {
    super();
    this.http = new HttpTransport(options);
    this.apiKeys = new ApiKeysApi(this.http);
    this.account = new AccountApi(this.http);
    this.subAccounts = new SubAccountsApi(this.http);
  }

  /** The origin the client talks to. */
  get origin(): string {
    return this.http.origin;
  }
}
