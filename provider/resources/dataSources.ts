import * as pulumi from "@pulumi/pulumi";
import type { UsageQuery } from "../client/account.js";
import type { LlmAccountsClient } from "../client/client.js";
import { readStackConfig, type ConnectionArgs, type StackConfig } from "../client/config.js";
import { formatMicros, toMicros } from "../api/money.js";
import { fingerprint } from "../api/redact.js";
import type { Model, SubAccount, UsageRow } from "../api/schemas/index.js";
import type { SessionClient } from "../runtime/command/index.js";
import { sessionOfThisRun } from "./run.js";
import { canonical } from "../api/canonical.js";

/** Options every data source takes: which account. */
export interface DataSourceOptions {
  /** Which account: names of environment variables, never key values. */
  connection?: ConnectionArgs;
}

/** The stack config of the running program, read raw (no secret-access warnings, no Output). */
function programConfig(): StackConfig {
  return readStackConfig((key) => pulumi.runtime.getConfig(key));
}

/** One API call per distinct arguments in a run: later calls share the first one's answer. */
function once<T>(name: string, args: unknown, connection: ConnectionArgs | undefined, call: (c: LlmAccountsClient, own: SessionClient) => Promise<T>): Promise<T> {
  const own = sessionOfThisRun().client(connection, programConfig());
  const answers = own.answers;
  const memo = `${name}|${fingerprint(canonical(args ?? null))}`;
  let p = answers.get(memo) as Promise<T> | undefined;
  if (!p) {
    p = call(own.client, own);
    // A failure is not remembered: a later call may succeed.
    p.catch(() => answers.delete(memo));
    answers.set(memo, p);
  }
  return p;
}

/** Filters of getModels. */
export interface GetModelsArgs {
  /** Only models of this category. */
  category?: string;
  /** Only models of this vendor. */
  vendor?: string;
}
/** What getModels returns. */
export interface GetModelsResult {
  /** The matching models with their listed prices. */
  models: Model[];
}

/** The models this account can use, with the prices listed for it (display prices, not billing). */
export async function getModels(args: GetModelsArgs = {}, opts: DataSourceOptions = {}): Promise<GetModelsResult> {
  const all = await once("models", null, opts.connection, (c) => c.account.models());
  return {
    models: all.filter((m) => (args.category === undefined || m.category === args.category) && (args.vendor === undefined || m.vendor === args.vendor)),
  };
}

/** `getModels` for Output arguments. */
export function getModelsOutput(args: pulumi.Input<GetModelsArgs> = {}, opts: DataSourceOptions = {}): pulumi.Output<GetModelsResult> {
  return pulumi.output(args).apply((a) => getModels(a as GetModelsArgs, opts));
}

/** What getBalance returns. */
export interface GetBalanceResult {
  /** The balance as the API gives it: a decimal string. */
  balance: string;
}

/** The account balance. */
export async function getBalance(opts: DataSourceOptions = {}): Promise<GetBalanceResult> {
  return { balance: await once("balance", null, opts.connection, (c) => c.account.balance()) };
}

/** `getBalance` as an Output. */
export function getBalanceOutput(opts: DataSourceOptions = {}): pulumi.Output<GetBalanceResult> {
  return pulumi.output(getBalance(opts));
}

/** Arguments of getUsage: the date range, and optionally one key. */
export type GetUsageArgs = UsageQuery;
/** What getUsage returns. */
export interface GetUsageResult {
  /** Daily rows, all pages followed. Today's row is incomplete (the platform updates at T+1). */
  items: UsageRow[];
  /** Sum of `cost` over the rows, as a decimal string with six places. */
  totalCost: string;
}

/** The sum of the rows' `cost`, six decimal places (getUsage's totalCost). */
export function sumCost(rows: UsageRow[]): string {
  // Summed in whole millionths, so that six decimal places stay exact.
  return formatMicros(rows.reduce((sum, r) => sum + toMicros(r.cost), 0n));
}

/** Daily spend for a date range (account-wide, or one key), validated before any call. */
export async function getUsage(args: GetUsageArgs, opts: DataSourceOptions = {}): Promise<GetUsageResult> {
  const items = await once("usage", args, opts.connection, (c) => c.account.usage(args));
  return { items, totalCost: sumCost(items) };
}

/** `getUsage` for Output arguments; secret when the key given is. */
export function getUsageOutput(args: pulumi.Input<GetUsageArgs>, opts: DataSourceOptions = {}): pulumi.Output<GetUsageResult> {
  return pulumi.output(args).apply((a) => getUsage(a as GetUsageArgs, opts));
}

/** Filters of getSubAccounts. */
export interface GetSubAccountsArgs {
  /** Only sub-accounts with this alias. */
  alias?: string;
  /** A sub-account key to look up. */
  sk?: string;
}
/** What getSubAccounts returns. */
export interface GetSubAccountsResult {
  /** The matching sub-accounts, tokens included. */
  subAccounts: SubAccount[];
}

/** Sub-accounts of the main account, by alias or key. The result holds tokens: treat it as secret. */
export async function getSubAccounts(args: GetSubAccountsArgs = {}, opts: DataSourceOptions = {}): Promise<GetSubAccountsResult> {
  return { subAccounts: await once("subAccounts", args, opts.connection, (_c, own) => own.subAccounts.list(args)) };
}

/** `getSubAccounts` as a secret Output (the sub-accounts carry their tokens). */
export function getSubAccountsOutput(args: pulumi.Input<GetSubAccountsArgs> = {}, opts: DataSourceOptions = {}): pulumi.Output<GetSubAccountsResult> {
  return pulumi.secret(pulumi.output(args).apply((a) => getSubAccounts(a as GetSubAccountsArgs, opts)));
}
