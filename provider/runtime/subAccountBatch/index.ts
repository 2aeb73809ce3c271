/**
 * The SubAccountBatch wing: the resource's lifecycle, its stored state, and the recovery of what a create made
 * when its answer was lost (the create's mark). It imports the engine and command wings.
 */
export * as subAccountBatchLifecycle from "./lifecycle.js";
export {
  BATCH_STATE,
  BATCH_STATE_VERSION,
  batchIdOf,
  normalizeModelPricing,
  outputsOf,
  SubAccountBatchInputsSchema,
  view,
  type SubAccountBatchInputs,
  type SubAccountBatchOutputs,
  type SubAccountView,
} from "./state.js";
export { identityMark, markedAlias, mayCarryCreateMark, smallerCountCap, unconfirmedAmong } from "./recovery.js";
