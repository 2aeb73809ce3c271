import type { z } from "zod";
import * as s from "./schemas/index.js";

/** How an operation may be retried once the request may have reached the server. */
export type RetryClass =
  /** Reads: retried on 429, 5xx and network errors. */
  | "read"
  /** Writes that set a target state (edit, status, deletes): the same retries as reads. */
  | "idempotent"
  /** Creates: retried on 429 only, or when the request never left this machine. */
  | "create";

/** Which credential authenticates an operation (spec 5). */
export type Group = "management" | "sub-account";

export interface Operation {
  /** Stable name, used for rate limits, logs and the emulator's request log. */
  name: string;
  group: Group;
  method: "GET" | "POST" | "DELETE";
  path: string;
  retry: RetryClass;
  /** Request body (or query, for GETs) on the wire. */
  request: z.ZodType;
  /** Successful response body on the wire. */
  response: z.ZodType;
}

const MANAGEMENT = "/api/v1/management";
const SUB_ACCOUNT = "/api/v1/account/sub-account";

function op<const T extends Operation>(o: T): T {
  return o;
}

/** Every operation of spec sections 4.1 to 4.12: the client sends, and the emulator routes, from this table. */
export const OPERATIONS = {
  createApiKey: op({
    name: "api-key/create",
    group: "management",
    method: "POST",
    path: `${MANAGEMENT}/api-key/create`,
    retry: "create",
    request: s.ApiKeyCreateRequestSchema,
    response: s.ApiKeyCreatedAnswerSchema,
  }),
  getApiKey: op({
    name: "api-key/get",
    group: "management",
    method: "POST",
    path: `${MANAGEMENT}/api-key/get`,
    retry: "read",
    request: s.ApiKeyGetRequestSchema,
    response: s.ApiKeyViewSchema,
  }),
  editApiKey: op({
    name: "api-key/edit",
    group: "management",
    method: "POST",
    path: `${MANAGEMENT}/api-key/edit`,
    retry: "idempotent",
    request: s.ApiKeyEditRequestSchema,
    response: s.ApiKeyViewSchema,
  }),
  setApiKeyStatus: op({
    name: "api-key/status",
    group: "management",
    method: "POST",
    path: `${MANAGEMENT}/api-key/status`,
    retry: "idempotent",
    request: s.ApiKeyStatusRequestSchema,
    response: s.ApiKeyStatusResponseSchema,
  }),
  deleteApiKeys: op({
    name: "api-key/delete",
    group: "management",
    method: "POST",
    path: `${MANAGEMENT}/api-key/delete`,
    retry: "idempotent",
    request: s.ApiKeyDeleteRequestSchema,
    response: s.ApiKeyDeleteResponseSchema,
  }),
  balance: op({
    name: "account/balance",
    group: "management",
    method: "POST",
    path: `${MANAGEMENT}/account/balance`,
    retry: "read",
    request: s.EmptyRequestSchema,
    response: s.BalanceResponseSchema,
  }),
  usageSummary: op({
    name: "usage/summary",
    group: "management",
    method: "POST",
    path: `${MANAGEMENT}/usage/summary`,
    retry: "read",
    request: s.UsageSummaryRequestSchema,
    response: s.UsageSummaryResponseSchema,
  }),
  models: op({
    name: "models",
    group: "management",
    method: "GET",
    path: `${MANAGEMENT}/models`,
    retry: "read",
    request: s.EmptyRequestSchema,
    response: s.ModelsResponseSchema,
  }),
  listSubAccounts: op({
    name: "sub-account/list",
    group: "sub-account",
    method: "GET",
    path: `${SUB_ACCOUNT}/list`,
    retry: "read",
    request: s.SubAccountListQuerySchema,
    response: s.SubAccountListResponseSchema,
  }),
  createSubAccounts: op({
    name: "sub-account/create",
    group: "sub-account",
    method: "POST",
    path: `${SUB_ACCOUNT}/token`,
    retry: "create",
    request: s.SubAccountCreateRequestSchema,
    response: s.SubAccountCreateResponseSchema,
  }),
  editSubAccounts: op({
    name: "sub-account/edit",
    group: "sub-account",
    method: "POST",
    path: `${SUB_ACCOUNT}/token/info`,
    retry: "idempotent",
    request: s.SubAccountEditRequestSchema,
    response: s.SuccessResponseSchema,
  }),
  deleteSubAccounts: op({
    name: "sub-account/delete",
    group: "sub-account",
    method: "DELETE",
    path: `${SUB_ACCOUNT}/token`,
    retry: "idempotent",
    request: s.SubAccountDeleteRequestSchema,
    response: s.SuccessResponseSchema,
  }),
} as const;

export type OperationId = keyof typeof OPERATIONS;

/** `POST api-key/edit`: how errors and logs name an operation. */
export function describeOperation(o: Operation): string {
  return `${o.method} ${o.name}`;
}

/** One request: the operation and its body, typed from the operation's request schema. */
export interface Call<O extends Operation = Operation> {
  op: O;
  body?: z.input<O["request"]>;
}

/** What sends a call and returns its parsed answer (the client's `HttpTransport`). */
export type Send = <O extends Operation>(call: Call<O>) => Promise<z.output<O["response"]>>;
