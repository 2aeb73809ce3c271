import { AccountApi } from "./account.js";
import { ApiKeysApi } from "./apiKeys.js";
import { HttpTransport, type TransportOptions } from "./http.js";
import { SubAccountsApi } from "./subAccounts.js";

export type ClientOptions = TransportOptions;

/** A client for the whole account API: one object per API group, over one transport. */
export class LlmAccountsClient {
  readonly apiKeys: ApiKeysApi;
  readonly account: AccountApi;
  readonly subAccounts: SubAccountsApi;
  private readonly http: HttpTransport;

  constructor(options: ClientOptions) {
    this.http = new HttpTransport(options);
    this.apiKeys = new ApiKeysApi(this.http);
    this.account = new AccountApi(this.http);
    this.subAccounts = new SubAccountsApi(this.http);
  }

  /** The origin the client talks to. */
  get origin(): string {
    return this.http.origin;
  }

  /** Keeps keys out of `console.log(client)` and `util.inspect`. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return `LlmAccountsClient(${this.http.origin})`;
  }

  toJSON(): Record<string, string> {
    return { origin: this.http.origin };
  }
}
