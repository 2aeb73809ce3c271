export * from "../api/assumptions.js";
export * from "../api/casing.js";
export * from "./errors.js";
export * from "../api/schemas/index.js";
export {
  OPERATIONS,
  describeOperation,
  type Operation,
  type OperationId,
  type RetryClass,
  type Group,
} from "../api/operations.js";
export { HttpTransport } from "./http.js";
export { RetryPolicy, DEFAULT_RETRY, type RetryOptions } from "./retry.js";
export { SYSTEM_CLOCK, type Clock } from "./clock.js";
export { LlmAccountsClient, type ClientOptions, type ClientSharing } from "./client.js";
export { ApiKeysApi } from "./apiKeys.js";
export { AccountApi, validateUsageQuery, type UsageQuery } from "./account.js";
export { SubAccountsApi, WriteCounter, type SubAccountFilter } from "./subAccounts.js";
export {
  parseBaseUrl,
  resolveClientOptions,
  STACK_CONFIG_KEYS,
  type ConnectionArgs,
  type TransportOptions,
} from "./config.js";
export {
  SETTINGS,
  readSetting,
  type Setting,
  type SettingName,
  type StackConfig,
  type RateLimitOptions,
} from "./settings.js";
export { maskKey, redact, fingerprint } from "../api/redact.js";
export { SlidingWindowLimiter, RateLimiters, PROCESS_LIMITERS, windowMarginMs } from "./limiter.js";
