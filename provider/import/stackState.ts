import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { redact } from "../api/redact.js";
import { runPulumi } from "../commands/pulumi.js";
import { readStackConfig } from "../client/config.js";
import type { StackConfig } from "../client/settings.js";
import { RESOURCE_TYPES } from "../resources/typeTokens.js";
import { API_KEY_STATE, type ApiKeyOutputs } from "../runtime/apiKey/index.js";
import { BATCH_STATE, type SubAccountBatchOutputs, type SubAccountView } from "../runtime/subAccountBatch/index.js";

/**
 * What a stack already manages, read from its state (and config) before `import` writes a program over it, so
 * that every managed object keeps its resource name: the keys and tokens are secrets, read in memory from
 * `pulumi stack export --show-secrets` and never printed or written anywhere but the stack's encrypted config.
 */

/** Resource options the state records that a program sets: a re-import writes them again. */
export interface StateOptions {
  protect?: boolean;
  retainOnDelete?: boolean;
  /** The resource's URN when it has a parent: the program, which declares it at top level, aliases it to that URN. */
  parentedUrn?: string;
}

/** An ApiKey the state holds: the fields of its state (runtime/apiKey/state.ts) a program is written from. */
export type StateKey = Pick<
  ApiKeyOutputs,
  "key" | "previousKey" | "adoptKey" | "alias" | "enabled" | "securityConfig" | "rotation" | "connection"
> & {
  name: string;
  options: StateOptions;
};

/** A SubAccountBatch the state holds: the fields of its state (runtime/subAccountBatch/state.ts) a program is written from. */
export type StateBatch = Pick<
  SubAccountBatchOutputs,
  "alias" | "balance" | "count" | "modelPricing" | "connection" | "unconfirmedSince" | "unconfirmedAlias"
> & {
  name: string;
  /** The sub-accounts it holds, by id and token. */
  subAccounts: Pick<SubAccountView, "id" | "token">[];
  /** Its adopted set (every token it adopted and has not released). */
  adoptTokens: string[];
  options: StateOptions;
};

/** What the stack manages; `foreign` names (type and name) every other resource, which `import` cannot declare. */
export interface StackState {
  stack: string;
  keys: StateKey[];
  batches: StateBatch[];
  foreign: string[];
  /**
   * Keys and sub-account tokens of resources the engine still has to delete (a replaced resource, `delete: true`,
   * left by a failed run): the stack's next `up` deletes them, so no import may adopt them.
   */
  leaving?: { keys: string[]; tokens: string[] };
  /** API keys the stack's config holds for adoption (adoptKeys, and adoptKey-<name> of older programs), by name. */
  configKeys: { name: string; key: string }[];
  /** The `llm-accounts:` settings of the stack's config (baseUrl, adminKey...): the account its `up` acts on. */
  settings?: StackConfig;
}

/** The signature Pulumi marks a secret value with in an exported state. */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/** A state's values with every secret revealed (`--show-secrets` leaves them wrapped, their plaintext as JSON). */
function revealed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(revealed);
  if (value === null || typeof value !== "object") return value;
  const o = value as Record<string, unknown>;
  if (SECRET_SIG in o) {
    if (typeof o.plaintext !== "string")
      throw new Error("the exported state holds a secret without its plaintext (was --show-secrets honoured?)");
    return revealed(JSON.parse(o.plaintext));
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, revealed(v)]));
}

const ResourceSchema = z.object({
  urn: z.string(),
  type: z.string(),
  id: z.string().optional(),
  custom: z.boolean().optional(),
  delete: z.boolean().optional(),
  parent: z.string().optional(),
  protect: z.boolean().optional(),
  retainOnDelete: z.boolean().optional(),
  outputs: z.record(z.string(), z.unknown()).optional(),
});
const ExportSchema = z.object({
  deployment: z.object({ resources: z.array(ResourceSchema).nullish() }).nullish(),
});

/** The resource name of a URN (`urn:pulumi:stack::project::type::name`). */
export function nameOfUrn(urn: string): string {
  return urn.split("::").slice(3).join("::");
}

/** Types that are not objects of the account and that every stack has: the stack itself, providers. */
const isBookkeeping = (type: string): boolean => type === "pulumi:pulumi:Stack" || type.startsWith("pulumi:providers:");

function optionsOf(r: z.infer<typeof ResourceSchema>): StateOptions {
  const options: StateOptions = {};
  if (r.protect) options.protect = true;
  if (r.retainOnDelete) options.retainOnDelete = true;
  // A parent's type shows in the URN's type (`parent$type`); the stack itself is no parent that changes the URN.
  if (r.urn.split("::")[2]?.includes("$")) options.parentedUrn = r.urn;
  return options;
}

/** The keys and tokens a resource on its way out names (read leniently: whatever of them it holds). */
function leavingOf(r: z.output<typeof ResourceSchema>, leaving: { keys: string[]; tokens: string[] }): void {
  const outputs = r.outputs ?? {};
  const texts = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  if (r.type === RESOURCE_TYPES.ApiKey) {
    for (const k of [outputs.key, outputs.previousKey]) if (typeof k === "string") leaving.keys.push(k);
  } else if (r.type === RESOURCE_TYPES.SubAccountBatch) {
    const fromViews = Array.isArray(outputs.subAccounts)
      ? outputs.subAccounts.map((v) => (v as { token?: unknown } | null)?.token)
      : [];
    leaving.tokens.push(...texts(outputs.tokens), ...texts(fromViews));
  }
}

/** Reads an exported state (revealed in memory) as what it manages. Exported for tests of every shape of state. */
export function parseStackExport(text: string, stack: string): Omit<StackState, "configKeys"> {
  const parsed = ExportSchema.safeParse(revealed(JSON.parse(text)));
  if (!parsed.success) throw new Error(`the state of stack ${stack} is not a deployment this command can read`);
  const state: Omit<StackState, "configKeys"> = {
    stack,
    keys: [],
    batches: [],
    foreign: [],
    leaving: { keys: [], tokens: [] },
  };
  for (const r of parsed.data.deployment?.resources ?? []) {
    // A resource the engine still has to delete (a replaced one) is on its way out, not managed: what it names is
    // the next up's to delete, never another resource's to adopt.
    if (r.delete) {
      leavingOf(r, state.leaving!);
      continue;
    }
    if (isBookkeeping(r.type)) continue;
    const name = nameOfUrn(r.urn);
    if (r.type === RESOURCE_TYPES.ApiKey) {
      // Outputs of any version in today's shape, parsed once here by the provider's own state module.
      const o = API_KEY_STATE.safeParse(r.outputs ?? {});
      if (!o.success)
        throw new Error(`the state of stack ${stack}: ApiKey ${JSON.stringify(name)}: ${o.error.message}`);
      state.keys.push({
        name,
        key: o.data.key,
        ...(o.data.previousKey ? { previousKey: o.data.previousKey } : {}),
        ...(o.data.adoptKey ? { adoptKey: o.data.adoptKey } : {}),
        alias: o.data.alias,
        enabled: o.data.enabled,
        securityConfig: o.data.securityConfig,
        ...(o.data.rotation != null ? { rotation: o.data.rotation } : {}),
        ...(o.data.connection != null ? { connection: o.data.connection } : {}),
        options: optionsOf(r),
      });
    } else if (r.type === RESOURCE_TYPES.SubAccountBatch) {
      const o = BATCH_STATE.safeParse(r.outputs ?? {});
      if (!o.success)
        throw new Error(`the state of stack ${stack}: SubAccountBatch ${JSON.stringify(name)}: ${o.error.message}`);
      state.batches.push({
        name,
        alias: o.data.alias,
        balance: o.data.balance,
        count: o.data.count,
        modelPricing: o.data.modelPricing,
        subAccounts: o.data.subAccounts.map((s) => ({ id: s.id, token: s.token })),
        adoptTokens: o.data.adoptTokens ?? [],
        ...(o.data.unconfirmedSince !== undefined
          ? { unconfirmedSince: o.data.unconfirmedSince, unconfirmedAlias: o.data.unconfirmedAlias }
          : {}),
        ...(o.data.connection != null ? { connection: o.data.connection } : {}),
        options: optionsOf(r),
      });
    } else {
      state.foreign.push(`${r.type} ${JSON.stringify(name)}`);
    }
  }
  return state;
}

/** A stack's config as `pulumi config --show-secrets --json` gives it: each full key to its value (text) and whether secret. */
export type ConfigEntries = Record<string, { value?: unknown; secret?: boolean }>;
const ConfigSchema = z.record(
  z.string(),
  z.object({ value: z.unknown().optional(), secret: z.boolean().optional() }).passthrough(),
);

function parseConfig(text: string): ConfigEntries {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const parsed = ConfigSchema.safeParse(value);
  if (!parsed.success) throw new Error("pulumi config --show-secrets answered what this command cannot read");
  return parsed.data;
}

/** The API keys of a stack's config, as `pulumi config --show-secrets --json` gives them: adoptKeys, then adoptKey-<name>. */
export function parseConfigKeys(text: string): { name: string; key: string }[] {
  return configKeysOf(parseConfig(text));
}

function configKeysOf(config: ConfigEntries): { name: string; key: string }[] {
  const keys: { name: string; key: string }[] = [];
  for (const [fullKey, entry] of Object.entries(config)) {
    const key = fullKey.slice(fullKey.indexOf(":") + 1);
    if (typeof entry?.value !== "string") continue;
    if (key === "adoptKeys") {
      let value: unknown;
      try {
        value = JSON.parse(entry.value);
      } catch {
        throw new Error(`the stack config's adoptKeys is not a JSON object of resource name to key`);
      }
      if (value === null || typeof value !== "object" || Array.isArray(value))
        throw new Error(`the stack config's adoptKeys is not a JSON object of resource name to key`);
      for (const [name, k] of Object.entries(value)) if (typeof k === "string") keys.push({ name, key: k });
    } else if (key.startsWith("adoptKey-")) {
      keys.push({ name: key.slice("adoptKey-".length), key: entry.value });
    }
  }
  return keys;
}

/** The `llm-accounts:` settings of a stack's config, read as the provider reads them at `up`. */
function settingsOf(config: ConfigEntries): StackConfig {
  return readStackConfig((fullKey) => {
    const value = config[fullKey]?.value;
    return typeof value === "string" ? value : undefined;
  });
}

/** The stack config files of a project folder (`Pulumi.<stack>.yaml`). */
function stackFiles(dir: string): string[] {
  return readdirSync(dir).filter((f) => /^Pulumi\..+\.ya?ml$/.test(f));
}

/** An error of reading the state, for the user: what failed, redacted, and that nothing was written. */
export class StackStateError extends Error {}

/**
 * What the stack of a program folder manages: `stack` (--stack), or the folder's selected stack. Undefined when
 * there is nothing to read: no project in the folder yet, or no such stack (a new one). A project folder with
 * stacks and no Pulumi CLI to read them fails: a program written without knowing their state could delete.
 * One `pulumi stack export`, then one `pulumi config`, which `withConfig: false` leaves out: for a stack of another
 * project, whose config file is in that project's folder (the CLI run here would read this folder's file of the
 * same short name), only the state is read.
 */
export async function readStackState(
  dir: string,
  stack: string | undefined,
  env: NodeJS.ProcessEnv,
  { withConfig = true } = {},
): Promise<StackState | undefined> {
  if (!existsSync(join(dir, "Pulumi.yaml"))) return undefined;
  const stackArgs = stack ? ["--stack", stack] : [];
  const exported = await runPulumi(["stack", "export", "--show-secrets", ...stackArgs], { cwd: dir, env });
  if (exported === null) {
    const files = stackFiles(dir);
    if (files.length === 0) return undefined;
    throw new StackStateError(
      `${dir} has stacks (${files.join(", ")}) and no pulumi CLI is on PATH to read what they manage: ` +
        "a program written without their state could make the next up delete what they hold; run the import where the Pulumi CLI is; nothing was written",
    );
  }
  if (exported.code !== 0) {
    // A stack that does not exist yet (or none selected, without --stack) manages nothing.
    if (/no stack (named|selected)|no current stack|stack .* not found/i.test(exported.stderr)) return undefined;
    throw new StackStateError(
      `pulumi stack export${stack ? ` --stack ${stack}` : ""} failed, so what the stack manages cannot be kept: ${redact(exported.stderr.trim())}; nothing was written`,
    );
  }
  let state: Omit<StackState, "configKeys">;
  try {
    state = parseStackExport(exported.stdout, stack ?? "(selected)");
  } catch (err) {
    throw new StackStateError(`${redact((err as Error).message)}; nothing was written`);
  }
  return withConfig ? { ...state, ...configState(await readConfig(dir, stack, env)) } : { ...state, configKeys: [] };
}

/**
 * The stack's config, in one `pulumi config --show-secrets --json` run, kept in memory: what it adopts, the settings
 * that name the account its `up` acts on (a stack may keep them in its config, an environment, or its backend: the
 * CLI's answer covers all), and what the engine gives the default provider. The one read of a stack's config.
 */
export async function readConfig(
  dir: string,
  stack: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<ConfigEntries> {
  const r = await runPulumi(["config", "--show-secrets", "--json", ...(stack ? ["--stack", stack] : [])], {
    cwd: dir,
    env,
  });
  if (r === null || r.code !== 0) {
    throw new StackStateError(
      `pulumi config --show-secrets failed, so the account and the keys the stack's config names cannot be read: ${redact(r?.stderr.trim() ?? "no pulumi CLI")}; nothing was written`,
    );
  }
  try {
    return parseConfig(r.stdout);
  } catch (err) {
    throw new StackStateError(`${redact((err as Error).message)}; nothing was written`);
  }
}

/** The keys the stack's config adopts and the settings that name its account. */
function configState(config: ConfigEntries): Pick<StackState, "configKeys" | "settings"> {
  try {
    return { configKeys: configKeysOf(config), settings: settingsOf(config) };
  } catch (err) {
    throw new StackStateError(`${redact((err as Error).message)}; nothing was written`);
  }
}
