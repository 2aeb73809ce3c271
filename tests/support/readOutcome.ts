import type { ReadOutcome } from "../../provider/runtime/index.js";

/** A read that found the resource: its outputs and inputs, typed. */
export type Found<I, O> = Extract<ReadOutcome<I, O>, { inputs: I }>;

/**
 * Narrows a read's outcome to "found"; fails the test when the read reported the resource gone (an empty id).
 * (`id: string` includes "", so `id !== ""` alone does not narrow the union: the presence of inputs does.)
 */
export function found<I, O>(read: ReadOutcome<I, O>): Found<I, O> {
  if (read.id === "" || !("inputs" in read)) throw new Error("the read reported the resource gone (an empty id)");
  return read;
}
