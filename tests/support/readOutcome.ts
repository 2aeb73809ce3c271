import type { ReadFound, ReadOutcome } from "../../provider/runtime/index.js";

/**
 * Narrows a read's outcome to "found"; fails the test when the read reported the resource gone (an empty id).
 * (`id: string` includes "", so `id !== ""` does not narrow the union by itself.)
 */
export function found<I, O>(read: ReadOutcome<I, O>): ReadFound<I, O> {
  if (read.id === "") throw new Error("the read reported the resource gone (an empty id)");
  return read as ReadFound<I, O>;
}

/** The inputs the engine stores after a refresh: those read returned, else the ones it held (read returned none). */
export function inputsAfterRefresh<I>(read: ReadFound<I, unknown>, stored: I): I {
  return read.inputs ?? stored;
}
