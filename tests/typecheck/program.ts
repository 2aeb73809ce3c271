// A program that uses every public name of the package; tests/typecheck.test.ts type-checks it against the
// built package, as a user's program would be.
import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

const config = new pulumi.Config();

const key = new llm.ApiKey("ci", {
  alias: "ci-runner",
  enabled: true,
  securityConfig: {
    ip: { allow: ["203.0.113.7"] },
    spendLimit: { monthly: 100 },
    geo: { countries: ["CN", "SG"] },
    models: { mode: "model", items: ["model-a"] },
  },
  connection: {
    baseUrl: "https://api.example.com",
    adminKeyEnv: "TEAM_A_ADMIN_KEY",
    accountKeyEnv: "TEAM_A_ACCOUNT_KEY",
  },
});
const adopted = new llm.ApiKey(
  "console",
  { alias: "console", adoptKey: config.requireSecret("consoleKey") },
  { retainOnDelete: true },
);

const team = new llm.SubAccountBatch("team-a", {
  alias: "team-a",
  balance: 50,
  count: 3,
  modelPricing: [
    { model: "model-a", pricingFactor: 1.2 },
    { model: "model-b", autoFollowing: true },
  ],
});

const key2: pulumi.Output<string> = key.key;
const hint: pulumi.Output<string> = key.keyHint;
const alias: pulumi.Output<string> = key.alias;
const enabled: pulumi.Output<boolean> = key.enabled;
const countries: pulumi.Output<string[] | undefined> = key.securityConfig.apply((s) => s.geo?.countries);
const createdAt: pulumi.Output<string> = key.createdAt;
const subAccounts: pulumi.Output<llm.SubAccountOutput[]> = team.subAccounts;
const firstToken: pulumi.Output<string> = team.subAccounts.apply((s) => s[0].token);
const tokens: pulumi.Output<string[]> = team.tokens;
const rotation: llm.RotationArgs = {
  everyDays: 90,
  triggers: [config.get("leakTicket") ?? "none", { n: 1 }],
  overlapHours: 24,
};
const rotating = new llm.ApiKey("rotating", { alias: "rotating", rotation });
const previousKey: pulumi.Output<string | undefined> = rotating.previousKey;
const previousKeyExpiresAt: pulumi.Output<string | undefined> = rotating.previousKeyExpiresAt;
const rotatedAt: pulumi.Output<string | undefined> = rotating.rotatedAt;
const rotationDue: pulumi.Output<string | undefined> = rotating.rotationDue;

async function dataSources(): Promise<void> {
  const models: llm.GetModelsResult = await llm.getModels({ category: "chat", vendor: "acme" });
  const price: string = models.models[0].pricing.textInputPrice;
  const balance: llm.GetBalanceResult = await llm.getBalance();
  const usage: llm.GetUsageResult = await llm.getUsage({
    start: "2026-01-01",
    end: "2026-01-31",
    key: "sk-x",
    withModel: true,
    withUsage: true,
  });
  const total: string = usage.totalCost;
  const rows: llm.UsageRow[] = usage.items;
  const subs: llm.GetSubAccountsResult = await llm.getSubAccounts({ alias: "team-a", sk: "sk-x" });
  const sub: llm.SubAccount = subs.subAccounts[0];
  void [price, balance, total, rows, sub];
}

const outputs = {
  models: llm.getModelsOutput({ category: "chat" }),
  balance: llm.getBalanceOutput(),
  usage: llm.getUsageOutput({ start: "2026-01-01", end: "2026-01-31" }),
  subAccounts: llm.getSubAccountsOutput({ alias: "team-a" }, { connection: { accountKeyEnv: "TEAM_A_ACCOUNT_KEY" } }),
};

// Pulumi's conventions: each field of an Output function's arguments an Input; Pulumi's invoke options beside the
// connection; the static get and isInstance of every generated resource.
const usageArgs: llm.GetUsageOutputArgs = {
  start: config.require("from"),
  end: pulumi.output("2026-01-31"),
  key: key.key,
  withModel: pulumi.output(true),
};
const modelArgs: llm.GetModelsOutputArgs = { category: config.require("category"), vendor: pulumi.output("acme") };
const subArgs: llm.GetSubAccountsOutputArgs = { alias: team.alias, sk: team.tokens.apply((t) => t[0]) };
const invokeOutputOptions: llm.DataSourceInvokeOutputOptions = {
  parent: key,
  dependsOn: [key, team],
  connection: { accountKeyEnv: "TEAM_A_ACCOUNT_KEY" },
};
const invokeOptions: llm.DataSourceInvokeOptions = {
  parent: key,
  provider: undefined,
  connection: { baseUrl: "https://api.example.com" },
};
const conventions = {
  usage: llm.getUsageOutput(usageArgs, invokeOutputOptions),
  models: llm.getModelsOutput(modelArgs, { dependsOn: team }),
  subAccounts: llm.getSubAccountsOutput(subArgs, { dependsOn: pulumi.output([key]) }),
  balance: llm.getBalanceOutput(invokeOutputOptions),
  plain: llm.getModels({ vendor: "acme" }, invokeOptions),
  plainBalance: llm.getBalance(invokeOptions),
};
const gotKey: llm.ApiKey = llm.ApiKey.get(
  "got-key",
  key.id,
  { key: key.key, alias: key.alias, createdAt: key.createdAt, connection: { baseUrl: "https://api.example.com" } },
  { parent: team },
);
const keyState: llm.ApiKeyState = {
  key: "sk-x",
  alias: "ci",
  createdAt: "2026-01-01T00:00:00Z",
  enabled: true,
  securityConfig: { geo: { countries: ["SG"] } },
};
const gotTeam: llm.SubAccountBatch = llm.SubAccountBatch.get("got-team", team.id, {
  tokens: team.tokens,
  alias: "team-a",
  balance: 50,
  count: team.count,
});
const batchState: llm.SubAccountBatchState = {
  tokens: ["sk-a"],
  alias: "team-a",
  balance: 50,
  count: 1,
  modelPricing: [{ model: "model-a", pricingFactor: 1.2 }],
};
function hintOf(r: pulumi.Resource): pulumi.Output<string> | pulumi.Output<string[]> | undefined {
  if (llm.ApiKey.isInstance(r)) return r.keyHint;
  if (llm.SubAccountBatch.isInstance(r)) return r.tokens;
  return undefined;
}

function handle(err: unknown): string {
  if (err instanceof llm.RateLimitError) return `wait ${err.retryAfterMs}`;
  if (err instanceof llm.NotFoundError || err instanceof llm.BadRequestError || err instanceof llm.AuthenticationError)
    return err.code ?? "";
  if (err instanceof llm.ServerError || err instanceof llm.ConnectionError || err instanceof llm.TimeoutError)
    return err.operation ?? "";
  if (
    err instanceof llm.ResponseValidationError ||
    err instanceof llm.ConfigurationError ||
    err instanceof llm.ApiError
  )
    return err.message;
  if (err instanceof llm.LlmAccountsError) return llm.maskKey("sk-abcdef1234");
  return "";
}

export const used = [
  key2,
  hint,
  alias,
  enabled,
  countries,
  createdAt,
  subAccounts,
  firstToken,
  tokens,
  adopted.keyHint,
  outputs,
  dataSources,
  handle,
  previousKey,
  previousKeyExpiresAt,
  rotatedAt,
  rotationDue,
  conventions,
  gotKey,
  keyState,
  gotTeam,
  batchState,
  hintOf,
];
