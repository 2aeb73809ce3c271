import type * as pulumi from "@pulumi/pulumi";
import { apiKey, subAccountBatch } from "../../provider/runtime/index.js";

// A small stand-in for the Pulumi engine: it plays one deployment against the runtime's provider methods in
// the order and with the parallelism the engine uses, and keeps a state map as the engine's checkpoint would.

type Props = Record<string, unknown>;

/** The two resource types of the package, as the engine sees them. */
export type ResourceType = "ApiKey" | "SubAccountBatch";

// As the engine sees them: the contract with untyped values, which is all an engine knows of what it stores.
type Provider = Required<Omit<pulumi.dynamic.ResourceProvider, "configure">>;
const RUNTIME: Record<ResourceType, Provider> = { ApiKey: apiKey, SubAccountBatch: subAccountBatch };

/** Where the engine keeps the provider's text, among the inputs and the outputs of every dynamic resource. */
const PROVIDER_KEY = "__provider";

/**
 * The dynamic provider plugin as @pulumi/pulumi's cmd/dynamic-provider is: each call loads the provider from
 * the properties it gets (the news for check, diff, create and update; the stored outputs for read and
 * delete), and adds it to the outputs and inputs of a success. The properties of a partial failure are passed
 * to the engine as the provider made them.
 */
function plugin(type: ResourceType): Provider {
  const load = (props: Props): Provider => {
    if (typeof props[PROVIDER_KEY] !== "string") throw new Error("code must be a string, not undefined");
    return RUNTIME[type];
  };
  const including = <T extends Props>(result: T | undefined, props: Props): T =>
    Object.assign(result ?? ({} as T), { [PROVIDER_KEY]: props[PROVIDER_KEY] });
  return {
    check: async (olds, news) => {
      const checked = await load(news).check(olds, news);
      return { ...checked, inputs: { ...checked.inputs, [PROVIDER_KEY]: news[PROVIDER_KEY] } };
    },
    diff: (id, olds, news) => load(news).diff(id, olds, news),
    create: async (props) => {
      const { id, outs } = await load(props).create(props);
      return { id, outs: including(outs, props) };
    },
    read: async (id, props) => {
      const read = await load(props).read(id, props);
      return { id: read.id, props: including(read.props, props), inputs: read.inputs && including(read.inputs, props) };
    },
    update: async (id, olds, news) => ({ outs: including((await load(news).update(id, olds, news)).outs, news) }),
    delete: (id, props) => load(props).delete(id, props),
  };
}

const PROVIDERS: Record<ResourceType, Provider> = {
  ApiKey: plugin("ApiKey"),
  SubAccountBatch: plugin("SubAccountBatch"),
};

/** The inputs the program registers: its own, and the provider's text (the shim's, in the package). */
function registered(d: Declared): Props {
  return { ...d.props, [PROVIDER_KEY]: `provider of ${d.type}` };
}

/** One resource as the checkpoint holds it. `pendingDelete`: the replaced twin the engine still has to delete. */
export interface StateEntry {
  type: ResourceType;
  name: string;
  id: string;
  inputs: Props;
  outputs: Props;
  pendingDelete?: boolean;
}

/** A declared resource: its type, logical name and the program's raw inputs. */
export interface Declared {
  type: ResourceType;
  name: string;
  props: Props;
}

/** How one deployment is run: `up --refresh` or not, and `--parallel`. */
export interface DeployOptions {
  refresh: boolean;
  parallel: number;
  /**
   * For a run that may be killed (SIGKILL): true from the moment the process died. From then on no step starts,
   * and nothing the provider answers, success or error, reaches the checkpoint or the user; what finished before
   * it is in the checkpoint, as the engine saves each step as it ends.
   */
  killed?: () => boolean;
}

/** What one deployment did: its errors, every id and non-secret output shown, and what refresh found gone. */
export interface DeployResult {
  errors: Error[];
  ids: string[];
  outputs: Props[];
  goneOnRefresh: string[];
}

/** Runs at most `limit` tasks at a time (the engine's `--parallel`). */
function limiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/** The engine's checkpoint and its deployments. */
export class Engine {
  /** By URN-like key: `type::name`, and `type::name#n` for replaced twins awaiting their delete. */
  readonly state = new Map<string, StateEntry>();
  private twins = 0;
  /** Whether the process of the running deployment is dead (a killed run): its answers are lost. */
  private dead: () => boolean = () => false;

  /** `pulumi up` of a program: refresh (optional), check/diff/create/update/replace, then deletes. */
  async up(program: Declared[], options: DeployOptions): Promise<DeployResult> {
    const result: DeployResult = { errors: [], ids: [], outputs: [], goneOnRefresh: [] };
    const dead = options.killed ?? (() => false);
    // A killed process starts nothing, and keeps nothing of what answers after its death.
    const limited = limiter(Math.max(1, options.parallel));
    const run = <T>(task: () => Promise<T>): Promise<T> => limited(async () => (dead() ? (undefined as T) : task()));
    this.dead = dead;
    if (options.refresh) {
      await this.refresh(run, result);
      // A failed refresh ends the update before any change, as the engine does.
      if (result.errors.length > 0) return result;
    }
    const declared = new Set(program.map((d) => urnOf(d.type, d.name)));
    await Promise.all(program.map((d) => run(() => this.step(d, result))));
    // The engine schedules deletes (removed resources, replaced twins) last, and not at all after a failure.
    if (result.errors.length > 0 || dead()) return result;
    const doomed = [...this.state].filter(([urn, e]) => e.pendingDelete || !declared.has(urn));
    await Promise.all(
      doomed.map(([urn, e]) =>
        run(async () => {
          try {
            await PROVIDERS[e.type].delete(e.id, e.outputs);
            if (!dead()) this.state.delete(urn);
          } catch (err) {
            if (!dead()) result.errors.push(err as Error);
          }
        }),
      ),
    );
    return result;
  }

  /**
   * `pulumi preview --refresh --expect-no-changes`: the reasons it would fail (none when it passes). It works
   * on a copy of the checkpoint: a preview writes nothing.
   */
  async gate(program: Declared[], parallel = 10): Promise<string[]> {
    const copy = new Engine();
    for (const [urn, e] of this.state) copy.state.set(urn, structuredClone(e));
    const result: DeployResult = { errors: [], ids: [], outputs: [], goneOnRefresh: [] };
    await copy.refresh(limiter(parallel), result);
    const reasons = [
      ...result.errors.map((e) => `refresh failed: ${e.message}`),
      ...result.goneOnRefresh.map((urn) => `${urn} is gone`),
    ];
    const declared = new Set(program.map((d) => urnOf(d.type, d.name)));
    for (const [urn, e] of copy.state)
      if (e.pendingDelete || !declared.has(urn)) reasons.push(`${urn} would be deleted`);
    for (const d of program) {
      const urn = urnOf(d.type, d.name);
      const old = copy.state.get(urn);
      if (!old) {
        reasons.push(`${urn} would be created`);
        continue;
      }
      const provider = PROVIDERS[d.type];
      const checked = await provider.check(old.inputs, registered(d));
      if ((checked.failures ?? []).length > 0)
        reasons.push(`${urn}: check failed: ${JSON.stringify(checked.failures)}`);
      const diff = await provider.diff(old.id, old.outputs, checked.inputs);
      if (diff.changes)
        reasons.push(
          `${urn} would be ${(diff.replaces ?? []).length > 0 ? `replaced (${diff.replaces!.join(", ")})` : "updated"}`,
        );
    }
    return reasons;
  }

  private async refresh(run: <T>(task: () => Promise<T>) => Promise<T>, result: DeployResult): Promise<void> {
    await Promise.all(
      [...this.state].map(([urn, e]) =>
        run(async () => {
          try {
            const read = await PROVIDERS[e.type].read(e.id, e.outputs);
            if (this.dead()) return;
            if (!read.id) {
              this.state.delete(urn);
              result.goneOnRefresh.push(urn);
              return;
            }
            e.outputs = read.props;
            if (read.inputs) e.inputs = read.inputs;
            this.shown(result, read.id, read.props);
          } catch (err) {
            if (!this.dead()) result.errors.push(err as Error);
          }
        }),
      ),
    );
  }

  private async step(d: Declared, result: DeployResult): Promise<void> {
    const urn = urnOf(d.type, d.name);
    const provider = PROVIDERS[d.type];
    const old = this.state.get(urn);
    try {
      const checked = await provider.check(old?.inputs ?? {}, registered(d));
      if (this.dead()) return;
      if ((checked.failures ?? []).length > 0) throw new Error(`check failed: ${JSON.stringify(checked.failures)}`);
      const inputs = checked.inputs;
      if (!old) {
        await this.create(urn, d, inputs, result);
        return;
      }
      const diff = await provider.diff(old.id, old.outputs, inputs);
      if (this.dead()) return;
      if (!diff.changes) {
        old.inputs = inputs;
        return;
      }
      if ((diff.replaces ?? []).length > 0) {
        // Create-before-delete: the old object is deleted after every create and update, as a twin.
        const replaced = { ...old, pendingDelete: true };
        const created = await this.create(urn, d, inputs, result);
        if (created && !this.dead()) this.state.set(`${urn}#${++this.twins}`, replaced);
        return;
      }
      try {
        const { outs } = await provider.update(old.id, old.outputs, inputs);
        if (this.dead()) return;
        this.state.set(urn, { ...old, inputs, outputs: outs });
        this.shown(result, old.id, outs);
      } catch (err) {
        // An update that fails with properties is recorded with them, as the engine does (partial failure).
        const partial = err as { id?: string; properties?: Props };
        if (this.dead()) return;
        if (partial.id && partial.properties) this.state.set(urn, { ...old, inputs, outputs: partial.properties });
        throw err;
      }
    } catch (err) {
      if (!this.dead()) result.errors.push(err as Error);
    }
  }

  /** A create; an error that carries an id and properties is recorded as created-but-failed, as the engine does. */
  private async create(urn: string, d: Declared, inputs: Props, result: DeployResult): Promise<boolean> {
    try {
      const { id, outs } = await PROVIDERS[d.type].create(inputs);
      if (this.dead()) return false;
      this.state.set(urn, { type: d.type, name: d.name, id, inputs, outputs: outs });
      this.shown(result, id, outs);
      return true;
    } catch (err) {
      const partial = err as { id?: string; properties?: Props };
      if (this.dead()) return false;
      result.errors.push(err as Error);
      if (!partial.id || !partial.properties) return false;
      this.state.set(urn, { type: d.type, name: d.name, id: partial.id, inputs, outputs: partial.properties });
      this.shown(result, partial.id, partial.properties);
      return true;
    }
  }

  private shown(result: DeployResult, id: string, outputs: Props): void {
    result.ids.push(id);
    result.outputs.push(outputs);
  }
}

function urnOf(type: ResourceType, name: string): string {
  return `${type}::${name}`;
}
