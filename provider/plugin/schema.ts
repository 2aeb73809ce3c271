// The package schema of the `llm-accounts` provider plugin (`pulumi package get-schema`, `pulumi package gen-sdk`):
// the resources the runtime serves, their inputs and outputs, the functions and the provider's configuration. The
// descriptions of the inputs are the notes of the docs' argument tables (docs/resources/*.md), word for word but
// for links (tests/plugin/schema.test.ts holds them equal); the configuration's come from the settings table.
import { SETTINGS, type SettingName } from "../client/settings.js";
import { PACKAGE } from "../version.js";

/** The provider's package name: the plugin is `pulumi-resource-<name>`, its types `<name>:index:<Type>`. */
export const PROVIDER_NAME = "llm-accounts";

/** The type token of a resource or function of the provider. */
export const token = (name: string): string => `${PROVIDER_NAME}:index:${name}`;

/** The resources the provider serves, by the runtime export that serves each (runtime/index.ts). */
export const RESOURCES = { ApiKey: "apiKey", SubAccountBatch: "subAccountBatch" } as const;

/** What each resource's outputs hold secret: the same names the dynamic resources declare (resources/*.ts). */
export const SECRET_OUTPUTS: Readonly<Record<keyof typeof RESOURCES, readonly string[]>> = {
  ApiKey: ["key", "adoptKey", "previousKey"],
  SubAccountBatch: ["subAccounts", "tokens", "adoptTokens"],
};

type Property = Record<string, unknown>;
const str = (description: string, extra: Property = {}): Property => ({ type: "string", description, ...extra });
const ref = (type: string, description = ""): Property => ({
  $ref: `#/types/${token(type)}`,
  ...(description && { description }),
});
const list = (items: Property, description: string, extra: Property = {}): Property => ({
  type: "array",
  items,
  description,
  ...extra,
});
const ANY = { $ref: "pulumi.json#/Any" };

/** The docs' notes of ApiKey's arguments (docs/resources/api-key.md), links reduced to their text. */
export const API_KEY_INPUTS: Record<string, Property> = {
  alias: str("required, non-empty, no leading or trailing spaces"),
  enabled: { type: "boolean", description: "default `true`" },
  securityConfig: ref("SecurityConfig", "each part optional; omitted, `null` and `{}` all mean unrestricted"),
  adoptKey: str("take over a key made in the web console instead of creating one; see Adoption", { secret: true }),
  connection: ref("Connection", "see Credentials"),
  rotation: ref("Rotation", "see Rotating keys"),
};

/** The docs' notes of SubAccountBatch's arguments (docs/resources/sub-account-batch.md), links reduced to their text. */
export const BATCH_INPUTS: Record<string, Property> = {
  alias: str("of every sub-account of the batch"),
  balance: {
    type: "number",
    description:
      "virtual balance of each, finite and `>= 0`; the API cannot change it, so a change replaces the batch (preview shows `~ balance` on a replace)",
  },
  count: { type: "integer", description: "1 to 100" },
  modelPricing: list(
    ref("ModelPricing"),
    "factor `> 0`, models unique; empty means no model permission (a warning says so)",
  ),
  adoptTokens: list({ type: "string" }, "manage existing sub-accounts instead of creating them; see Adoption", {
    secret: true,
  }),
  connection: ref("Connection", "see Credentials"),
};

const API_KEY_OUTPUTS: Record<string, Property> = {
  ...API_KEY_INPUTS,
  key: str("The key itself (secret): the platform shows it once, at its creation.", { secret: true }),
  keyHint: str("The key masked (`sk-...1a2b`): safe to show."),
  createdAt: str("When the platform created the key."),
  platformParts: str(
    "Restrictions the key holds that the package does not know (set in the web console), as JSON text.",
  ),
  previousKey: str("With rotation: the key before the last rotation, valid until previousKeyExpiresAt (secret).", {
    secret: true,
  }),
  previousKeyExpiresAt: str("With rotation: when the previous key is deleted."),
  rotatedAt: str("With rotation: when the key was last rotated."),
  rotationDue: str("With rotation: why the next update rotates the key."),
};

const BATCH_OUTPUTS: Record<string, Property> = {
  ...BATCH_INPUTS,
  subAccounts: list(ref("SubAccount"), "The sub-accounts in creation order (secret: each carries its token).", {
    secret: true,
  }),
  tokens: list({ type: "string" }, "The sub-account keys in the same order (secret).", { secret: true }),
};

function object(description: string, properties: Record<string, Property>, required: string[] = []): Property {
  return { type: "object", description, properties, ...(required.length > 0 && { required }) };
}

const TYPES: Record<string, Property> = {
  [token("SecurityConfig")]: object("A key's security restrictions; each part optional.", {
    ip: ref("IpRestriction", "Addresses allowed to use the key."),
    spendLimit: ref("SpendLimit", "Spending allowed per month."),
    geo: ref("GeoRestriction", "Countries allowed to use the key."),
    models: ref("ModelRestriction", "Models the key may call."),
  }),
  [token("IpRestriction")]: object(
    "",
    { allow: list({ type: "string" }, "IPv4 or IPv6 addresses or CIDR ranges, at most 200.") },
    ["allow"],
  ),
  [token("SpendLimit")]: object("", { monthly: { type: "number", description: "Finite and `>= 0`." } }, ["monthly"]),
  [token("GeoRestriction")]: object(
    "",
    { countries: list({ type: "string" }, "Two-letter upper-case country codes.") },
    ["countries"],
  ),
  [token("ModelRestriction")]: object(
    "",
    { mode: str("`model`."), items: list({ type: "string" }, "Model names, unique.") },
    ["mode", "items"],
  ),
  [token("Rotation")]: object("When a key is rotated (docs/guides/rotation.md).", {
    everyDays: { type: "integer", description: "Rotate once the key is this many days old." },
    triggers: { ...ANY, description: "Any JSON value: a change from one declared value to another rotates the key." },
    overlapHours: {
      type: "number",
      description: "How long the previous key stays valid after a rotation (0: deleted in the same update).",
    },
  }),
  [token("Connection")]: object(
    "Where a resource finds its account: names of environment variables, never key values.",
    {
      baseUrl: str("Base URL of the platform (not a secret)."),
      adminKeyEnv: str("Name of the environment variable that holds the admin key."),
      accountKeyEnv: str("Name of the environment variable that holds the main account key."),
    },
  ),
  [token("ModelPricing")]: object(
    "A permitted model and its pricing factor.",
    { model: str("Model name."), pricingFactor: { type: "number", description: "`> 0`." } },
    ["model", "pricingFactor"],
  ),
  [token("SubAccount")]: object("One sub-account of a batch.", {
    id: { ...ANY, description: "The platform's id (a number or a string of digits)." },
    token: str("The sub-account's key (secret).", { secret: true }),
    alias: str("Its alias."),
    enabled: { type: "boolean", description: "Whether it is enabled." },
    modelPricing: list(ref("ModelPricing"), "Its permitted models."),
    createdAt: str("When it was created."),
  }),
};

function resource(
  description: string,
  inputs: Record<string, Property>,
  outputs: Record<string, Property>,
  required: string[],
  outRequired: string[],
): Property {
  return { description, inputProperties: inputs, requiredInputs: required, properties: outputs, required: outRequired };
}

const fn = (description: string, inputs: Record<string, Property>, outputs: Record<string, Property>): Property => ({
  description,
  ...(Object.keys(inputs).length > 0 && { inputs: object("", inputs) }),
  outputs: object("", outputs, Object.keys(outputs)),
});

const FUNCTIONS: Record<string, Property> = {
  [token("getModels")]: fn(
    "The models this account can use, with the prices listed for it (display prices, not billing).",
    { category: str("Only models of this category."), vendor: str("Only models of this vendor.") },
    { models: list(ANY, "The matching models with their listed prices.") },
  ),
  [token("getBalance")]: fn(
    "The account balance.",
    {},
    { balance: str("The balance as the API gives it: a decimal string.") },
  ),
  [token("getUsage")]: fn(
    "Daily spend for a date range (account-wide, or one key).",
    {
      start: str("First day (`YYYY-MM-DD`, UTC), within the last year."),
      end: str("Last day (`YYYY-MM-DD`, UTC), not before `start` nor after today."),
      key: str("Only this key's usage (secret).", { secret: true }),
      withModel: { type: "boolean", description: "One row per day and model instead of per day." },
      withUsage: { type: "boolean", description: "Include token counts in each row." },
    },
    {
      items: list(ANY, "Daily rows, all pages followed."),
      totalCost: str("Sum of `cost` over the rows, six decimal places."),
    },
  ),
  [token("getSubAccounts")]: fn(
    "Sub-accounts of the main account, by alias or key (secret: they carry their tokens).",
    { alias: str("Only sub-accounts with this alias."), sk: str("A sub-account key to look up.", { secret: true }) },
    { subAccounts: list(ANY, "The matching sub-accounts, tokens included (secret).", { secret: true }) },
  ),
};

/** The provider configuration: every setting of the package (client/settings.ts), keys secret. */
function configProperties(): Record<string, Property> {
  const secret = new Set<SettingName>(["adminKey", "accountKey"]);
  return Object.fromEntries(
    (Object.keys(SETTINGS) as SettingName[]).map((name) => [
      name,
      str(
        `${SETTINGS[name].expects}; or the environment variable ${SETTINGS[name].env}.`,
        secret.has(name) ? { secret: true } : {},
      ),
    ]),
  );
}

/** The package schema, as `pulumi package get-schema` prints it. */
export function packageSchema(): Record<string, unknown> {
  const config = configProperties();
  return {
    name: PROVIDER_NAME,
    displayName: "LLM accounts",
    version: PACKAGE.version,
    description:
      "The API keys and sub-accounts of an LLM API platform, served from the pulumi-llm-accounts npm package.",
    keywords: ["llm", "api-keys", "category/utility"],
    license: "Apache-2.0",
    config: { variables: config },
    provider: {
      description: "The account the resources and functions use.",
      inputProperties: config,
      properties: config,
    },
    types: TYPES,
    resources: {
      [token("ApiKey")]: resource(
        "An API key of the platform (management group): its alias, whether it is enabled, and its security restrictions. Import: `env:<VARIABLE>` names an environment variable holding the key.",
        API_KEY_INPUTS,
        API_KEY_OUTPUTS,
        ["alias"],
        ["alias", "enabled", "securityConfig", "key", "keyHint", "createdAt"],
      ),
      [token("SubAccountBatch")]: resource(
        "A batch of sub-accounts sharing alias, balance and model pricing. Import: the sub-accounts' ids, comma-separated.",
        BATCH_INPUTS,
        BATCH_OUTPUTS,
        ["alias", "balance", "count"],
        ["alias", "balance", "count", "modelPricing", "subAccounts", "tokens"],
      ),
    },
    functions: FUNCTIONS,
    // The Go import path is a name for the generated module, not a published one: docs/provider.md says to `replace` it.
    language: {
      go: {
        importBasePath: "github.com/pulumi-llm-accounts/pulumi-llm-accounts/sdk/go/llmaccounts",
        generateResourceContainerTypes: true,
      },
      nodejs: { packageName: "@pulumi-llm-accounts/llm-accounts" },
      python: { packageName: "pulumi_llm_accounts" },
      csharp: { rootNamespace: "PulumiLlmAccounts" },
    },
  };
}
