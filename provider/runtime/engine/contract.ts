import type * as pulumi from "@pulumi/pulumi";

/** Values as the engine hands them to check: whatever the program wrote, not validated yet. */
export type Props = Record<string, unknown>;

/**
 * A read that found the resource: its live outputs, and the inputs they imply when the platform drifted from the
 * outputs. Without `inputs` the engine keeps the inputs it stored, so a refresh that finds nothing changed shows
 * nothing. (Pulumi's `ReadResult` types `inputs` as outputs; the engine takes them as inputs, so they are typed so.)
 */
export type ReadFound<I, O> = { id: string; props: O; inputs?: I };

/** What read answers: the resource found, or an empty id when it is gone. */
export type ReadOutcome<I, O> = ReadFound<I, O> | { id: ""; props: Record<string, never> };

/**
 * The dynamic provider contract (`pulumi.dynamic.ResourceProvider`) with the runtime's input and output types.
 * The stored state (`olds`, `props`) arrives as any version wrote it, or as a hand edit left it: it is parsed
 * where it comes in (runtime/index.ts). Type-only: nothing of `@pulumi/pulumi` is loaded, so the serialized
 * provider stays as small as it was.
 */
export interface TypedProvider<I, O> {
  /** Validates raw values: the inputs it returns are typed once `failures` is empty. */
  check(
    olds: Props,
    news: Props,
  ): Promise<pulumi.dynamic.CheckResult<I> & { inputs: I; failures: pulumi.dynamic.CheckFailure[] }>;
  diff(id: string, olds: Props, news: I): Promise<pulumi.dynamic.DiffResult>;
  create(inputs: I): Promise<pulumi.dynamic.CreateResult<O> & { outs: O }>;
  read(id: string, props: Props): Promise<ReadOutcome<I, O>>;
  update(id: string, olds: Props, news: I): Promise<pulumi.dynamic.UpdateResult<O> & { outs: O }>;
  delete(id: string, props: Props): Promise<void>;
}

/**
 * Makes `error` what the engine records as "created (or changed), but failed": the resource keeps `id` and
 * `properties` as its outputs (secret outputs stay secret) and shows the message as the reason. Not enumerable,
 * so that JSON.stringify(error) cannot show the keys or tokens among the properties.
 */
export function keptInState<E extends Error>(error: E, id: string, properties: object): E {
  Object.defineProperty(error, "id", { value: id, enumerable: false });
  Object.defineProperty(error, "properties", { value: properties, enumerable: false });
  Object.defineProperty(error, "reasons", { value: [error.message], enumerable: false });
  return error;
}
