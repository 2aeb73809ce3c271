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

/** The package's own option of every data source: which account. */
export interface DataSourceOptions {
  /** Which account: names of environment variables, never key values. */
  connection?: ConnectionArgs;
}

/**
 * Options of the plain data sources (`getModels`...): Pulumi's invoke options and the connection. The data sources
 * run in the program, not through a provider plugin: `parent`, `provider`, `version` and `pluginDownloadURL` are
 * accepted as every Pulumi function takes them and change nothing.
 */
export interface DataSourceInvokeOptions extends pulumi.InvokeOptions, DataSourceOptions {}

/**
 * Options of the Output data sources (`getModelsOutput`...): Pulumi's invoke output options and the connection.
 * With `dependsOn`, the call waits for those resources (their ids; unknown at a preview while one is to be created,
 * as Pulumi's own invokes are).
 */
export interface DataSourceInvokeOutputOptions extends pulumi.InvokeOutputOptions, DataSourceOptions {}

/** An Output that resolves once every resource of `dependsOn` is created (their ids; a component's URN). */
function afterDependencies(dependsOn: pulumi.InvokeOutputOptions["dependsOn"]): pulumi.Output<unknown[]> {
  return pulumi.output(dependsOn ?? []).apply((given) => {
    const resources = (Array.isArray(given) ? given : [given]) as pulumi.Resource[];
    return pulumi.all(resources.map((r) => (pulumi.CustomResource.isInstance(r) ? r.id : r.urn)));
  });
}

/** `call` with the arguments resolved, once the resources `opts.dependsOn` names are created. */
function outputOf<A, R>(
  args: A,
  opts: DataSourceInvokeOutputOptions,
  call: (args: pulumi.Unwrap<A>, opts: DataSourceOptions) => Promise<R>,
): pulumi.Output<R> {
  const own: DataSourceOptions = opts.connection === undefined ? {} : { connection: opts.connection };
  const created = afterDependencies(opts.dependsOn);
  return pulumi.output(args).apply((a) => created.apply(() => call(a, own)));
}

/** The stack config of the running program, read raw (no secret-access warnings, no Output). */
function programConfig(): StackConfig {
  return readStackConfig((key) => pulumi.runtime.getConfig(key));
}

/** One API call per distinct arguments in a run: later calls share the first one's answer. */
function once<T>(
  name: string,
  args: unknown,
  connection: ConnectionArgs | undefined,
  call: (c: LlmAccountsClient, own: SessionClient) => Promise<T>,
): Promise<T> {
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

/** getModelsOutput's filters: each an Input. */
export interface GetModelsOutputArgs {
  /** Only models of this category. */
  category?: pulumi.Input<string>;
  /** Only models of this vendor. */
  vendor?: pulumi.Input<string>;
}

/** The models this account can use, with the prices listed for it (display prices, not billing). */
export async function getModels(
  args: GetModelsArgs = {},
  opts: DataSourceInvokeOptions = {},
): Promise<GetModelsResult> {
  const all = await once("models", null, opts.connection, (c) => c.account.models());
  return {
    models: all.filter(
      (m) =>
        (args.category === undefined || m.category === args.category) &&
        (args.vendor === undefined || m.vendor === args.vendor),
    ),
  };
}

/** `getModels` for Output arguments. */
export function getModelsOutput(
  args: GetModelsOutputArgs = {},
  opts: DataSourceInvokeOutputOptions = {},
): pulumi.Output<GetModelsResult> {
  return outputOf(args, opts, getModels);
}

/** What getBalance returns. */
export interface GetBalanceResult {
  /** The balance as the API gives it: a decimal string. */
  balance: string;
}

/** The account balance. */
export async function getBalance(opts: DataSourceInvokeOptions = {}): Promise<GetBalanceResult> {
  return { balance: await once("balance", null, opts.connection, (c) => c.account.balance()) };
}

/** `getBalance` as an Output. */
export function getBalanceOutput(opts: DataSourceInvokeOutputOptions = {}): pulumi.Output<GetBalanceResult> {
  return outputOf(null, opts, (_none, own) => getBalance(own));
}

/** Arguments of getUsage: the date range, and optionally one key. */
export type GetUsageArgs = UsageQuery;
/** getUsageOutput's arguments: the fields of GetUsageArgs, each an Input. */
export type GetUsageOutputArgs = { [K in keyof GetUsageArgs]: pulumi.Input<GetUsageArgs[K]> };
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
export async function getUsage(args: GetUsageArgs, opts: DataSourceInvokeOptions = {}): Promise<GetUsageResult> {
  const items = await once("usage", args, opts.connection, (c) => c.account.usage(args));
  return { items, totalCost: sumCost(items) };
}

/** `getUsage` for Output arguments; secret when the key given is. */
export function getUsageOutput(
  args: GetUsageOutputArgs,
  opts: DataSourceInvokeOutputOptions = {},
): pulumi.Output<GetUsageResult> {
  return outputOf(args, opts, getUsage);
}

/** Filters of getSubAccounts. */
export interface GetSubAccountsArgs {
  /** Only sub-accounts with this alias. */
  alias?: string;
  /** A sub-account key to look up. */
  sk?: string;
}
/** getSubAccountsOutput's filters: each an Input. */
export interface GetSubAccountsOutputArgs {
  /** Only sub-accounts with this alias. */
  alias?: pulumi.Input<string>;
  /** A sub-account key to look up. */
  sk?: pulumi.Input<string>;
}
/** What getSubAccounts returns. */
export interface GetSubAccountsResult {
  /** The matching sub-accounts, tokens included. */
  subAccounts: SubAccount[];
}

/** Sub-accounts of the main account, by alias or key. The result holds tokens: treat it as secret. */
export async function getSubAccounts(
  args: GetSubAccountsArgs = {},
  opts: DataSourceInvokeOptions = {},
): Promise<GetSubAccountsResult> {
  return { subAccounts: await once("subAccounts", args, opts.connection, (_c, own) => own.subAccounts.list(args)) };
}

/** `getSubAccounts` as a secret Output (the sub-accounts carry their tokens). */
export function getSubAccountsOutput(
  args: GetSubAccountsOutputArgs = {},
  opts: DataSourceInvokeOutputOptions = {},
): pulumi.Output<GetSubAccountsResult> {
  return pulumi.secret(outputOf(args, opts, getSubAccounts));
}
