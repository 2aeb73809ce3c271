/** pulumi-llm-accounts: API keys and sub-accounts of the LLM platform as Pulumi resources. */
import { nodeTooOld } from "./version.js";

// A program on a Node.js older than the package supports is told so in one line, and runs on: it may work,
// and refusing would end it with a stack trace.
const tooOld = nodeTooOld();
if (tooOld) process.stderr.write(`warning: ${tooOld}\n`);

export {
  ApiKey,
  type ApiKeyArgs,
  type ApiKeyState,
  type RotationArgs,
  type SecurityConfigArgs,
  type SecurityConfigOutput,
} from "./resources/ApiKey.js";
export {
  SubAccountBatch,
  type SubAccountBatchArgs,
  type SubAccountBatchState,
  type ModelPricingArgs,
  type SubAccountOutput,
} from "./resources/SubAccountBatch.js";
export {
  getModels,
  getModelsOutput,
  getBalance,
  getBalanceOutput,
  getUsage,
  getUsageOutput,
  getSubAccounts,
  getSubAccountsOutput,
  type DataSourceOptions,
  type DataSourceInvokeOptions,
  type DataSourceInvokeOutputOptions,
  type GetModelsArgs,
  type GetModelsOutputArgs,
  type GetModelsResult,
  type GetBalanceResult,
  type GetUsageArgs,
  type GetUsageOutputArgs,
  type GetUsageResult,
  type GetSubAccountsArgs,
  type GetSubAccountsOutputArgs,
  type GetSubAccountsResult,
} from "./resources/dataSources.js";
export type { ConnectionArgs } from "./client/config.js";
export type { Model, UsageRow, SubAccount, ModelPricing } from "./api/schemas/index.js";
export {
  LlmAccountsError,
  ApiError,
  BadRequestError,
  AuthenticationError,
  NotFoundError,
  RateLimitError,
  ServerError,
  ConnectionError,
  TimeoutError,
  ResponseValidationError,
  UnknownAnswerError,
  ResponseTooLargeError,
  ConfigurationError,
} from "./client/errors.js";
export { LlmAccountsClient } from "./client/client.js";
export { maskKey } from "./api/redact.js";
