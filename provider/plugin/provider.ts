// The `llm-accounts` provider: what `@pulumi/pulumi/provider`'s `main` serves. Each resource method is the runtime's
// own (runtime/index.ts: the state parsed at entry, the session of the process), the one lifecycle the dynamic
// resources call; this file only routes by type token, reveals and conceals secrets at the protocol's boundary,
// gives a batch its mark from its URN, and reads an import (imports.ts). No lifecycle is written here.
import type * as pulumiProvider from "@pulumi/pulumi/provider/index.js";
import type { UsageQuery } from "../client/account.js";
import { LlmAccountsError } from "../client/errors.js";
import { redact } from "../api/redact.js";
import { sumCost } from "../resources/dataSources.js";
import { apiKey, currentSession, subAccountBatch, type Props, type TypedProvider } from "../runtime/index.js";
import { identityMark } from "../runtime/subAccountBatch/index.js";
import { importBatch, importKey } from "./imports.js";
import {
  API_KEY_INPUTS,
  BATCH_INPUTS,
  PROVIDER_NAME,
  RESOURCES,
  SECRET_OUTPUTS,
  packageSchema,
  token,
} from "./schema.js";
import { conceal, reveal } from "./secrets.js";
import { PACKAGE } from "../version.js";

type Kind = keyof typeof RESOURCES;
type Runtime = TypedProvider<unknown, object>;

/** The runtime's methods of each resource: the same objects the dynamic resources' stored provider loads. */
const RUNTIME: Record<Kind, Runtime> = {
  ApiKey: apiKey as unknown as Runtime,
  SubAccountBatch: subAccountBatch as unknown as Runtime,
};

/** The inputs each resource keeps secret, from the schema (adoptKey, adoptTokens). */
const SECRET_INPUTS: Record<Kind, string[]> = {
  ApiKey: Object.keys(API_KEY_INPUTS).filter((k) => API_KEY_INPUTS[k].secret === true),
  SubAccountBatch: Object.keys(BATCH_INPUTS).filter((k) => BATCH_INPUTS[k].secret === true),
};

/** A URN's parts: `urn:pulumi:<stack>::<project>::<qualified type>::<name>`. */
function partsOf(urn: string): { stack: string; project: string; qualifiedType: string; name: string } {
  const [head, project, qualifiedType, ...name] = urn.split("::");
  return { stack: head.replace(/^urn:pulumi:/, ""), project, qualifiedType, name: name.join("::") };
}

/** Which resource a URN names, or an error naming the type this provider does not serve. */
function kindOf(urn: string): Kind {
  const type = partsOf(urn).qualifiedType.split("$").pop() ?? "";
  const kind = (Object.keys(RESOURCES) as Kind[]).find((k) => token(k) === type);
  if (kind === undefined)
    throw new LlmAccountsError(`the ${PROVIDER_NAME} provider serves no resource of type ${type}`);
  return kind;
}

/**
 * A batch's mark (runtime/subAccountBatch/recovery.ts identityMark) from its URN: the parts the SubAccountBatch class
 * marks with (project, stack, type, name), so that a batch keeps its mark when it moves from the dynamic resource;
 * under a parent, the parent's types too (the URN does not name the parent itself).
 */
export function markOf(urn: string): string {
  const { stack, project, qualifiedType, name } = partsOf(urn);
  const parts = [project, stack, "SubAccountBatch", name];
  return identityMark(qualifiedType.includes("$") ? [...parts, qualifiedType] : parts);
}

/** The names a resource's properties keep secret: its secret outputs and inputs, and whatever arrived secret. */
const secretNames = (kind: Kind, arrived: Iterable<string>): string[] => [
  ...SECRET_OUTPUTS[kind],
  ...SECRET_INPUTS[kind],
  ...arrived,
];

/**
 * The runtime's error as the engine takes it. A create or update that made something fails with `id` and
 * `properties` (engine/contract.ts keptInState): the properties, which hold keys, go to the engine concealed.
 */
async function concealingErrors<T>(kind: Kind, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const kept = err as { id?: unknown; properties?: unknown; reasons?: unknown; message?: unknown };
    if (
      !(err instanceof Error) ||
      typeof kept.id !== "string" ||
      kept.properties === null ||
      typeof kept.properties !== "object"
    )
      throw err;
    const answer = new Error(err.message);
    Object.assign(answer, {
      id: kept.id,
      properties: conceal(kept.properties as Props, secretNames(kind, [])),
      reasons: kept.reasons,
    });
    throw answer;
  }
}

async function check(urn: string, olds: Props, news: Props): Promise<pulumiProvider.CheckResult> {
  const kind = kindOf(urn);
  const given = reveal(news);
  const inputs = kind === "SubAccountBatch" ? { ...given.plain, mark: given.plain.mark ?? markOf(urn) } : given.plain;
  const result = await RUNTIME[kind].check(reveal(olds).plain, inputs);
  return { inputs: conceal(result.inputs as Props, secretNames(kind, given.secret)), failures: result.failures };
}

async function diff(id: string, urn: string, olds: Props, news: Props): Promise<pulumiProvider.DiffResult> {
  const kind = kindOf(urn);
  return RUNTIME[kind].diff(id, reveal(olds).plain, reveal(news).plain);
}

async function create(urn: string, inputs: Props): Promise<pulumiProvider.CreateResult> {
  const kind = kindOf(urn);
  const given = reveal(inputs);
  return concealingErrors(kind, async () => {
    const { id, outs } = await RUNTIME[kind].create(given.plain);
    return { id, outs: conceal(outs as Props, secretNames(kind, given.secret)) };
  });
}

async function read(id: string, urn: string, props: Props | undefined): Promise<pulumiProvider.ReadResult> {
  const kind = kindOf(urn);
  const state = reveal(props);
  // No state: `pulumi import` (or the `import` option) names an object by its import id.
  const found =
    Object.keys(state.plain).length > 0
      ? await RUNTIME[kind].read(id, state.plain)
      : kind === "ApiKey"
        ? await importKey(currentSession(), id)
        : await importBatch(currentSession(), id, markOf(urn));
  if (found.id === "") return { id: "", props: {} };
  const names = secretNames(kind, state.secret);
  return {
    id: found.id,
    props: conceal(found.props as Props, names),
    ...("inputs" in found && found.inputs !== undefined && { inputs: conceal(found.inputs as Props, names) }),
  };
}

async function update(id: string, urn: string, olds: Props, news: Props): Promise<pulumiProvider.UpdateResult> {
  const kind = kindOf(urn);
  const given = reveal(news);
  return concealingErrors(kind, async () => {
    const { outs } = await RUNTIME[kind].update(id, reveal(olds).plain, given.plain);
    return { outs: conceal(outs as Props, secretNames(kind, given.secret)) };
  });
}

async function remove(id: string, urn: string, props: Props): Promise<void> {
  await RUNTIME[kindOf(urn)].delete(id, reveal(props).plain);
}

/** The functions: the same client calls as the data sources (resources/dataSources.ts), through the session. */
async function invoke(fn: string, args: Props): Promise<pulumiProvider.InvokeResult> {
  const a = reveal(args).plain as Record<string, never>;
  const own = currentSession().client(undefined);
  switch (fn) {
    case token("getModels"): {
      const all = await own.client.account.models();
      return {
        outputs: {
          models: all.filter(
            (m) =>
              (a.category === undefined || m.category === a.category) &&
              (a.vendor === undefined || m.vendor === a.vendor),
          ),
        },
      };
    }
    case token("getBalance"):
      return { outputs: { balance: await own.client.account.balance() } };
    case token("getUsage"): {
      const items = await own.client.account.usage(a as unknown as UsageQuery);
      return { outputs: { items, totalCost: sumCost(items) } };
    }
    case token("getSubAccounts"):
      return { outputs: conceal({ subAccounts: await own.subAccounts.list(a) }, ["subAccounts"]) };
    default:
      throw new LlmAccountsError(`the ${PROVIDER_NAME} provider has no function ${redact(fn)}`);
  }
}

/** The provider `main` serves. */
export const llmAccountsProvider: pulumiProvider.Provider = {
  version: PACKAGE.version,
  getSchema: async () => JSON.stringify(packageSchema()),
  check,
  diff,
  create,
  read,
  update,
  delete: remove,
  invoke,
};
