/** pulumi-llm-accounts/policy: the package's CrossGuard policies, and the rules they and `llm-accounts audit` share. */
export { llmAccountsPolicies } from "./pack.js";
export {
  RULES,
  LEVELS,
  POLICY_DOCS_URL,
  PolicyConfigError,
  type Level,
  type Rule,
  type Finding,
  type Severity,
} from "./rules.js";
export { RESOURCE_TYPES } from "../resources/typeTokens.js";
