/**
 * The command wing: what one Pulumi command's provider process keeps across the resources it serves (the
 * session and its clients, the connection, who holds which key and sub-account, the shared list, the coalesced
 * deletes). It imports the engine wing only.
 */
export { clientFor, currentSession, Session, SessionClient, setClientOverrides, startFresh, type ClientOverrides, type SessionOptions } from "./session.js";
export { connectionDiff, ConnectionInputSchema, setStackConfig, stackConfig } from "./connection.js";
export {
  AdoptKeySchema,
  adoptKeyFailure,
  adoptedCountFailure,
  adoptedTokens,
  AdoptTokensSchema,
  findAdopted,
  joiningCountFailure,
  keepKeys,
  keysKeptByOthers,
  nextAdoption,
  releasedBy,
  takeKeyForCreate,
} from "./adoption.js";
export { createOwner, hold, holdKept, keptByOthers, notToTake, takeAdopted } from "./heldTokens.js";
export { justWritten, lookUntil, SHARE, SharedSubAccountList, SHARING_SWITCH, stillListedOrLate } from "./sharedList.js";
export { COALESCING_SWITCH, DeleteCoalescer } from "./deleteCoalescer.js";
