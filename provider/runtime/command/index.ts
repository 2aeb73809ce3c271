/**
 * The command wing: what one Pulumi command's provider process keeps across the resources it serves (the
 * session and its clients, the connection, who keeps which key and sub-account (custody), the shared list, the coalesced
 * deletes). It imports the engine wing only.
 */
export {
  clientFor,
  currentSession,
  Session,
  SessionClient,
  setClientOverrides,
  startFresh,
  type ClientOverrides,
  type SessionOptions,
} from "./session.js";
export { connectionDiff, ConnectionInputSchema, keptForms, setStackConfig, stackConfig } from "./connection.js";
export {
  AdoptKeySchema,
  adoptKeyFailure,
  adoptedCountFailure,
  adoptedTokens,
  AdoptTokensSchema,
  findAdopted,
  joiningCountFailure,
  nextAdoption,
  releasedBy,
} from "./adoption.js";
export { Custody } from "./custody.js";
export {
  justWritten,
  lookUntil,
  writtenAt,
  SHARE,
  SharedSubAccountList,
  SHARING_SWITCH,
  snapshotOf,
  stillListedOrLate,
  type AccountSnapshot,
} from "./sharedList.js";
export { COALESCING_SWITCH, DeleteCoalescer } from "./deleteCoalescer.js";
export { DeleteSchedule } from "./deleteSchedule.js";
export { deleteTokens, SubAccountDeletes } from "./subAccountDeletes.js";
