/**
 * The SDK's switch that prints, for a promise left pending at exit, the stack trace captured when it was made
 * (the only use of those traces).
 */
const PROMISE_LEAKS_SWITCH = "PULUMI_DEBUG_PROMISE_LEAKS";

/**
 * Makes stack traces of no frame until the returned function is called, unless PULUMI_DEBUG_PROMISE_LEAKS is set:
 * around an SDK call made for each resource. The SDK formats a trace for each promise it makes in a registration
 * (four per registered property, and the urn's, the id's and the RPC's: about 30 per resource) and in each debug
 * message it sends the engine (three per resource), each frame mapped through the program's source maps, and keeps
 * each string while the promise is pending: most of the program's time and memory beyond trivial resources at
 * 1,000 resources and more (docs/benchmarks.md). The trace the SDK sends the engine as the resource's source
 * position sets its own limit and is kept whole; an error of a failed registration keeps its message, without frames.
 */
export function promiseTracesOff(): () => void {
  if (process.env[PROMISE_LEAKS_SWITCH]) return () => {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  return () => {
    Error.stackTraceLimit = limit;
  };
}
