import { randomUUID } from "node:crypto";
import { z } from "zod";
import { fingerprint, redact } from "../api/redact.js";
import { apiKey, subAccountBatch } from "../runtime/index.js";
import { outputsOf as keyOutputsOf, viewOf } from "../runtime/apiKey/index.js";
import { identityMark, outputsOf as batchOutputsOf, view } from "../runtime/subAccountBatch/index.js";
import { providerText, type RuntimeExport } from "../resources/shim.js";
import { dynamicType, MODULE } from "../resources/typeTokens.js";
import { ImportError, type ImportedAccount, type ImportedBatch, type ImportedKey } from "./account.js";
import { same } from "../api/canonical.js";
import { runPulumi } from "../commands/pulumi.js";
import { nameOfUrn, parseStackExport, readConfig, StackStateError, type StackState } from "./stackState.js";

/**
 * Adoption through the stack's state (`llm-accounts import --into-state`, and any account whose keys do not fit in
 * the stack config): the adopted objects are written into the stack's state with `pulumi stack import`, the
 * deployment on its stdin, each secret as Pulumi's plaintext secret marker, which the CLI encrypts with the stack's
 * own secrets provider before the state is saved. Each resource is written as the package's own adopting create
 * would have left it (the runtime's outputsOf), under the inputs the generated program declares (no adoptKey, no
 * adoptTokens), so the first `pulumi up` finds every object in the state and makes no call.
 */

/** The signature Pulumi marks a secret value with in a deployment; `plaintext` is the value's JSON text. */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";
const SECRET_VALUE = "1b47061264138c4ac30d75fd1eb44270";

/** A value as a secret of a deployment, for the CLI to encrypt. */
const secret = (value: unknown) => ({ [SECRET_SIG]: SECRET_VALUE, plaintext: JSON.stringify(value) });

/** Outputs with the named ones made secrets (the resource classes' additionalSecretOutputs). */
function withSecrets(outputs: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(outputs).map(([k, v]) => [k, names.includes(k) && v !== undefined ? secret(v) : v]),
  );
}

/** What the resource classes declare secret among their outputs (resources/ApiKey.ts, SubAccountBatch.ts). */
const KEY_SECRETS = ["key", "adoptKey", "previousKey"] as const;
const BATCH_SECRETS = ["subAccounts", "tokens", "adoptTokens"] as const;

/** Where the resources go: the stack's project and name (as the program's pulumi.getProject() and getStack() say). */
export interface StackTarget {
  project: string;
  stack: string;
}

/** A resource of a deployment (apitype.ResourceV3), as far as this command writes one. */
type DeploymentResource = Record<string, unknown> & { urn: string };

function urnOf(target: StackTarget, type: string, name: string): string {
  return `urn:pulumi:${target.stack}::${target.project}::${type}::${name}`;
}

/** The stack's short name: what pulumi.getStack() returns for `org/project/stack`. */
export function shortStack(stack: string): string {
  return stack.split("/").pop()!;
}

/** An adopted ApiKey as its adopting create would have left it: inputs as the program declares them. */
async function keyResource(
  k: ImportedKey,
  common: Record<string, unknown>,
  target: StackTarget,
): Promise<DeploymentResource> {
  if (!k.live) throw new Error(`ApiKey ${k.name}: no live view to write into the state`);
  const declared = { alias: k.alias, enabled: k.enabled, securityConfig: k.securityConfig };
  const { inputs, failures } = await apiKey.check({}, { ...declared, adoptKey: k.key });
  if (failures.length > 0)
    throw new ImportError(
      `ApiKey ${k.name}: the package's check refuses it (${failures.map((f) => redact(f.reason)).join("; ")})`,
    );
  const outputs = keyOutputsOf(inputs, k.key, k.live.createdAt, viewOf(k.live), k.key);
  const provider = providerText("apiKey");
  const type = dynamicType(MODULE, "ApiKey");
  return {
    urn: urnOf(target, type, k.name),
    custom: true,
    id: fingerprint(k.key),
    type,
    inputs: { __provider: provider, ...declared },
    outputs: withSecrets({ __provider: provider, ...outputs }, KEY_SECRETS),
    additionalSecretOutputs: [...KEY_SECRETS],
    ...common,
  };
}

/** An adopted SubAccountBatch as its adopting create would have left it: inputs as the program declares them. */
async function batchResource(
  b: ImportedBatch,
  common: Record<string, unknown>,
  target: StackTarget,
): Promise<DeploymentResource> {
  const mark = identityMark([target.project, target.stack, "SubAccountBatch", b.name]);
  const declared = { alias: b.alias, balance: b.balance, count: b.count, mark, modelPricing: b.modelPricing };
  const { inputs, failures } = await subAccountBatch.check({}, { ...declared, adoptTokens: b.tokens });
  if (failures.length > 0)
    throw new ImportError(
      `SubAccountBatch ${b.name}: the package's check refuses it (${failures.map((f) => redact(f.reason)).join("; ")})`,
    );
  const members = (b.members ?? []).map(view);
  const outputs = batchOutputsOf(inputs, members, b.tokens);
  const provider = providerText("subAccountBatch" satisfies RuntimeExport);
  const type = dynamicType(MODULE, "SubAccountBatch");
  return {
    urn: urnOf(target, type, b.name),
    custom: true,
    id: `sab-${fingerprint(outputs.tokens[0] ?? b.alias)}`,
    type,
    inputs: { __provider: provider, ...declared },
    outputs: withSecrets({ __provider: provider, ...outputs }, BATCH_SECRETS),
    additionalSecretOutputs: [...BATCH_SECRETS],
    ...common,
  };
}

/** The stack's config as the engine gives the default provider its inputs: full key to value, secret ones marked. */
type ProviderConfig = Record<string, { value: string; secret: boolean }>;

/** The adopted keys, then batches, under the stack and the default provider (`common`). */
async function adoptedResources(
  account: ImportedAccount,
  target: StackTarget,
  common: Record<string, unknown>,
): Promise<DeploymentResource[]> {
  const resources: DeploymentResource[] = [];
  for (const k of account.keys) resources.push(await keyResource(k, common, target));
  for (const b of account.batches) resources.push(await batchResource(b, common, target));
  return resources;
}

/**
 * The resources of the deployment: the stack, the default provider of dynamic resources (its inputs the stack's
 * config, as the engine registers it: `config`, full key to value, secret ones marked), then every key and batch.
 */
export async function deploymentResources(
  account: ImportedAccount,
  target: StackTarget,
  config: ProviderConfig,
): Promise<DeploymentResource[]> {
  const stackUrn = urnOf(target, "pulumi:pulumi:Stack", `${target.project}-${target.stack}`);
  const providerUrn = urnOf(target, "pulumi:providers:pulumi-nodejs", "default");
  const providerId = randomUUID();
  const providerInputs = Object.fromEntries(
    Object.entries(config).map(([k, c]) => [k, c.secret ? secret(c.value) : c.value]),
  );
  const common = { parent: stackUrn, provider: `${providerUrn}::${providerId}` };
  return [
    { urn: stackUrn, custom: false, type: "pulumi:pulumi:Stack" },
    {
      urn: providerUrn,
      custom: true,
      id: providerId,
      type: "pulumi:providers:pulumi-nodejs",
      inputs: providerInputs,
      outputs: providerInputs,
    },
    ...(await adoptedResources(account, target, common)),
  ];
}

/** What this command reads of `pulumi stack export`: every other field let through. */
const ExportedSchema = z
  .object({
    deployment: z
      .object({
        resources: z.array(z.unknown()).nullish(),
        secrets_providers: z.record(z.string(), z.unknown()).nullish(),
      })
      .passthrough()
      .nullish(),
  })
  .passthrough();

/** Runs a `pulumi` command that answers JSON and parses it with `schema`, or fails naming the command (no secret shown). */
async function readCli<T>(args: string[], schema: z.ZodType<T>, dir: string, env: NodeJS.ProcessEnv): Promise<T> {
  const command = `pulumi ${args.filter((a) => a !== "--show-secrets" && a !== "--json").join(" ")}`;
  const r = await runPulumi(args, { cwd: dir, env });
  if (r === null || r.code !== 0)
    throw new ImportError(
      `${command} failed: ${redact(r?.stderr.trim() ?? "no pulumi CLI")}; nothing was written to the state`,
    );
  let value: unknown;
  try {
    value = JSON.parse(r.stdout);
  } catch {
    value = undefined;
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new ImportError(`${command} answered what this command cannot read; nothing was written to the state`);
  return parsed.data;
}

/** The secrets provider of the (new) stack, from `pulumi stack export`, which must show no resource yet. */
async function emptyStack(dir: string, stack: string, env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  const exported = await readCli(["stack", "export", "--stack", stack], ExportedSchema, dir, env);
  if ((exported.deployment?.resources ?? []).length > 0) {
    throw new ImportError(
      `stack ${stack} holds resources since the import read it: run the import again; nothing was written to the state`,
    );
  }
  const providers = exported.deployment?.secrets_providers;
  if (!providers)
    throw new ImportError(
      `stack ${stack} has no secrets provider to encrypt the adopted keys with; nothing was written to the state`,
    );
  return providers;
}

/** The stack's config (stackState.ts readConfig) as the engine gives it to the default provider: full key to text value, and whether secret. */
async function stackConfig(dir: string, stack: string, env: NodeJS.ProcessEnv): Promise<ProviderConfig> {
  const entries = await readConfig(dir, stack, env).catch((err: unknown) => {
    throw err instanceof StackStateError ? new ImportError(err.message) : err;
  });
  return Object.fromEntries(
    Object.entries(entries).flatMap(([k, c]) =>
      typeof c.value === "string" ? [[k, { value: c.value, secret: c.secret === true }]] : [],
    ),
  );
}

/**
 * Writes the adopted objects into the stack's state: one `pulumi stack import`, the deployment on its stdin (never
 * in a file), its secrets encrypted by the CLI with the stack's secrets provider. The stack must hold nothing yet.
 */
export async function importIntoState(
  account: ImportedAccount,
  target: StackTarget,
  stack: string,
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const secretsProviders = await emptyStack(dir, stack, env);
  const resources = await deploymentResources(account, target, await stackConfig(dir, stack, env));
  const deployment = JSON.stringify({ version: 3, deployment: { secrets_providers: secretsProviders, resources } });
  await stackImport(deployment, stack, dir, env);
}

/** `pulumi stack import` of `deployment` (JSON text) on its stdin, never in a file; fails naming the command (no secret shown). */
async function stackImport(deployment: string, stack: string, dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const r = await runPulumi(["stack", "import", "--stack", stack], { cwd: dir, env, stdin: deployment });
  if (r === null || r.code !== 0)
    throw new ImportError(
      `pulumi stack import --stack ${stack} failed: ${redact(r?.stderr.trim() ?? "no pulumi CLI")}`,
    );
}

/** A resource of an exported state, as far as adding to it needs. */
const HeldResourceSchema = z
  .object({ urn: z.string(), type: z.string(), id: z.string().optional(), delete: z.boolean().optional() })
  .passthrough();

/** The names of what a stack manages, sorted: what must not have changed between the import's read and its write. */
const namesOf = (s: Omit<StackState, "configKeys">): string[] =>
  [...s.keys.map((k) => `ApiKey ${k.name}`), ...s.batches.map((b) => `SubAccountBatch ${b.name}`), ...s.foreign].sort();

/**
 * Adds the objects a re-import adopts (those of `account` not `kept`) to the state of a stack that holds objects
 * already (`held`, as the import read it): its deployment is exported (secrets revealed, in memory), the new
 * resources appended under its stack and default provider, and the whole imported again on the CLI's stdin, every
 * secret encrypted by the stack's secrets provider. What the stack holds is written back as it was: the next `up`
 * deletes what the program no longer declares (--drop-unlisted), as through the config. Nothing is written when
 * nothing is new. Returns the number of objects added.
 */
export async function addIntoState(
  account: ImportedAccount,
  held: StackState,
  target: StackTarget,
  stack: string,
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const added: ImportedAccount = {
    ...account,
    keys: account.keys.filter((k) => !k.kept),
    batches: account.batches.filter((b) => !b.kept),
  };
  if (added.keys.length + added.batches.length === 0) return 0;
  const exported = await readCli(["stack", "export", "--show-secrets", "--stack", stack], ExportedSchema, dir, env);
  let now: string[];
  try {
    now = namesOf(parseStackExport(JSON.stringify(exported), stack));
  } catch (err) {
    throw new ImportError(`${redact((err as Error).message)}; nothing was written to the state`);
  }
  if (!same(now, namesOf(held)))
    throw new ImportError(
      `stack ${stack} changed since the import read it: run the import again; nothing was written to the state`,
    );
  const resources = (exported.deployment?.resources ?? []).map((r) => HeldResourceSchema.parse(r));
  const live = resources.filter((r) => !r.delete);
  const stackUrn = live.find((r) => r.type === "pulumi:pulumi:Stack")?.urn;
  const provider = live.find(
    (r) => r.type === "pulumi:providers:pulumi-nodejs" && nameOfUrn(r.urn) === "default" && r.id !== undefined,
  );
  if (stackUrn === undefined || provider === undefined) {
    throw new ImportError(
      `stack ${stack}'s state has no ${stackUrn === undefined ? "stack resource" : "default provider of dynamic resources"} to add the adopted objects under; nothing was written to the state`,
    );
  }
  const adding = await adoptedResources(added, target, {
    parent: stackUrn,
    provider: `${provider.urn}::${provider.id!}`,
  });
  const deployment = JSON.stringify({
    ...exported,
    deployment: { ...exported.deployment, resources: [...resources, ...adding] },
  });
  await stackImport(deployment, stack, dir, env);
  return adding.length;
}
