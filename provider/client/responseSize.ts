import type { RequestPromise, Response } from "got";
import { ResponseTooLargeError, type ErrorDetails } from "./errors.js";

/**
 * Starts a got request with the signal given and awaits it, aborting it as soon as its body, counted after
 * decompression, passes `max` bytes: the rest is never read. Rejects with a ResponseTooLargeError, which the
 * transport does not retry. (got 15 replaced the request's `cancel()` with the `signal` option.)
 */
export async function readAtMost<T extends Response | Response["body"]>(
  start: (signal: AbortSignal) => RequestPromise<T>,
  max: number,
  details: ErrorDetails,
): Promise<T> {
  const abort = new AbortController();
  const pending = start(abort.signal);
  let over = false;
  pending.on("downloadProgress", (progress) => {
    if (!over && progress.transferred > max) {
      over = true;
      abort.abort();
    }
  });
  try {
    return await pending;
  } catch (err) {
    if (!over) throw err;
    throw new ResponseTooLargeError(
      `the answer is larger than ${max} bytes (after decompression) and was not read (${details.operation})`,
      {
        ...details,
        code: "response_too_large",
      },
    );
  }
}
