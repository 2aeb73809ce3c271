/**
 * The engine wing: what the Pulumi engine hands a dynamic provider and takes back (the method contract, the
 * check of inputs, the versions of a stored state, the slot of the stack's config). It imports no other wing.
 */
export { keptInState, type Props, type ReadFound, type ReadOutcome, type TypedProvider } from "./contract.js";
export {
  camelFieldNames,
  checkInputs,
  containsUnknown,
  NEVER_SHOWN,
  neverShown,
  noKeysIn,
  optionalOrNull,
  UNKNOWN,
  type CheckFailure,
} from "./check.js";
export { STATE_VERSION, StateError, StateVersions, versionOf, type StoredState } from "./stateVersions.js";
export { STACK_CONFIG_SLOT } from "./slot.js";
