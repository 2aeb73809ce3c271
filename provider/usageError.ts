/** A command of `llm-accounts` used wrongly (a missing or malformed option): exit 2, with that command's usage. */
export class UsageError extends Error {
  override name = "UsageError";
}
