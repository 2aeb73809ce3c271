import { wirePath } from "../api/casing.js";
import type { ErrorBody } from "../api/schemas/index.js";

/** A non-2xx answer: `{error: {code, message}}` with a status (the shape of spec 7, used for both groups). */
export class ErrorAnswer extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  /** The JSON body of the answer. */
  body(): ErrorBody {
    return { error: { code: this.code, message: this.message } };
  }
}

/** A 400 that names the request field at fault, as the wire names it (`security_config.geo.countries[1]`). */
export function invalidField(path: readonly PropertyKey[], message: string): ErrorAnswer {
  return new ErrorAnswer(400, "invalid_request", `${wirePath(path) || "body"}: ${message}`);
}

/** A 404 for a resource that does not exist. */
export function notFound(code: string, message: string): ErrorAnswer {
  return new ErrorAnswer(404, code, message);
}
