/**
 * The ApiKey wing: the resource's lifecycle (check, diff, create, read, update, delete), its stored state, the
 * issuing of keys and the rotation policy. It imports the engine and command wings.
 */
export * as apiKeyLifecycle from "./lifecycle.js";
export {
  API_KEY_STATE,
  API_KEY_STATE_VERSION,
  ApiKeyInputsSchema,
  normalizeSecurityConfig,
  outputsOf,
  viewOf,
  type ApiKeyInputs,
  type ApiKeyOutputs,
} from "./state.js";
export { KEY_DELETED, RotationSchema, type Rotation } from "./rotation.js";
