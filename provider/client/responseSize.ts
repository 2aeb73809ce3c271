import type { CancelableRequest } from "got";
import { ResponseTooLargeError, type ErrorDetails } from "./errors.js";

/**
 * Awaits a got request, cancelling it as soon as its body, counted after decompression, passes `max` bytes:
 * the rest is never read. Rejects with a ResponseTooLargeError, which the transport does not retry.
 */
export async function readAtMost<T>(pending: CancelableRequest<T>, max: number, details: ErrorDetails): Promise<T> {
  let over = false;
  pending.on("downloadProgress", (progress) => {
    if (!over && progress.transferred > max) {
      over = true;
      pending.cancel();
    }
  });
  try {
    return await pending;
  } catch (err) {
    if (!over) throw err;
    throw new ResponseTooLargeError(`the answer is larger than ${max} bytes (after decompression) and was not read (${details.operation})`, {
      ...details,
      code: "response_too_large",
    });
  }
}
