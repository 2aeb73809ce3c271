import type * as pulumi from "@pulumi/pulumi";
import { apiKey, subAccountBatch } from "../../provider/runtime/index.js";

// A small stand-in for the Pulumi engine: it plays one deployment against the runtime's provider methods in
// the order and with the parallelism the engine uses, and keeps a state map as the engine's checkpoint would.

type Props = Record<string, unknown>;

/** The two resource types of the package, as the engine sees them. */
export type ResourceType = "ApiKey" | "SubAccountBatch";

// As the engine sees them: the contract with untyped values, which is all an engine knows of what it stores.
const PROVIDERS: Record<"ApiKey" | "SubAccountBatch", Required<Omit<pulumi.dynamic.ResourceProvider, "configure">>> = { ApiKey: apiKey, SubAccountBatch: subAccountBatch };

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

  /** `pulumi up` of a program: refresh (optional), check/diff/create/update/replace, then deletes. */
  async up(program: Declared[], options: DeployOptions): Promise<DeployResult> {
    const result: DeployResult = { errors: [], ids: [], outputs: [], goneOnRefresh: [] };
    const run = limiter(Math.max(1, options.parallel));
    if (options.refresh) {
      await this.refresh(run, result);
      // A failed refresh ends the update before any change, as the engine does.
      if (result.errors.length > 0) return result;
    }
    const declared = new Set(program.map((d) => urnOf(d.type, d.name)));
    await Promise.all(program.map((d) => run(() => this.step(d, result))));
    // The engine schedules deletes (removed resources, replaced twins) last, and not at all after a failure.
    if (result.errors.length > 0) return result;
    const doomed = [...this.state].filter(([urn, e]) => e.pendingDelete || !declared.has(urn));
    await Promise.all(
      doomed.map(([urn, e]) =>
        run(async () => {
          try {
            await PROVIDERS[e.type].delete(e.id, e.outputs);
            this.state.delete(urn);
          } catch (err) {
            result.errors.push(err as Error);
          }
        }),
      ),
    );
    return result;
  }

  private async refresh(run: <T>(task: () => Promise<T>) => Promise<T>, result: DeployResult): Promise<void> {
    await Promise.all(
      [...this.state].map(([urn, e]) =>
        run(async () => {
          try {
            const read = await PROVIDERS[e.type].read(e.id, e.outputs);
            if (!read.id) {
              this.state.delete(urn);
              result.goneOnRefresh.push(urn);
              return;
            }
            e.outputs = read.props;
            if (read.inputs) e.inputs = read.inputs;
            this.shown(result, read.id, read.props);
          } catch (err) {
            result.errors.push(err as Error);
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
      const checked = await provider.check(old?.inputs ?? {}, d.props);
      if ((checked.failures ?? []).length > 0) throw new Error(`check failed: ${JSON.stringify(checked.failures)}`);
      const inputs = checked.inputs;
      if (!old) {
        await this.create(urn, d, inputs, result);
        return;
      }
      const diff = await provider.diff(old.id, old.outputs, inputs);
      if (!diff.changes) {
        old.inputs = inputs;
        return;
      }
      if ((diff.replaces ?? []).length > 0) {
        // Create-before-delete: the old object is deleted after every create and update, as a twin.
        const replaced = { ...old, pendingDelete: true };
        const created = await this.create(urn, d, inputs, result);
        if (created) this.state.set(`${urn}#${++this.twins}`, replaced);
        return;
      }
      try {
        const { outs } = await provider.update(old.id, old.outputs, inputs);
        this.state.set(urn, { ...old, inputs, outputs: outs });
        this.shown(result, old.id, outs);
      } catch (err) {
        // An update that fails with properties is recorded with them, as the engine does (partial failure).
        const partial = err as { id?: string; properties?: Props };
        if (partial.id && partial.properties) this.state.set(urn, { ...old, inputs, outputs: partial.properties });
        throw err;
      }
    } catch (err) {
      result.errors.push(err as Error);
    }
  }

  /** A create; an error that carries an id and properties is recorded as created-but-failed, as the engine does. */
  private async create(urn: string, d: Declared, inputs: Props, result: DeployResult): Promise<boolean> {
    try {
      const { id, outs } = await PROVIDERS[d.type].create(inputs);
      this.state.set(urn, { type: d.type, name: d.name, id, inputs, outputs: outs });
      this.shown(result, id, outs);
      return true;
    } catch (err) {
      const partial = err as { id?: string; properties?: Props };
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
