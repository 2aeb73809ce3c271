export * from "./common.js";
export * from "./answers.js";
export * from "./apiKeys.js";
export * from "./account.js";
export * from "./subAccounts.js";
