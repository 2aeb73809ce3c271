/** One request as the emulator saw it: no body, no credential, no query string. */
export interface RequestLogEntry {
  /** The operation name (`api-key/create`, ...), or `unknown` for a path or method no operation has. */
  op: string;
  method: string;
  path: string;
  /** The status answered; 0 when the connection was dropped without an answer. */
  status: number;
  /** Arrival, epoch ms. */
  at: number;
  /** The injected fault(s), e.g. `500` or `latency+drop-after`. */
  fault?: string;
}

/** Default number of entries the request log keeps: enough for any test, bounded for a long-running emulator. */
export const DEFAULT_REQUEST_LOG_SIZE = 10_000;

/** Characters of a path the log keeps: an unrouted 15 KB path must not make each entry 15 KB. */
export const LOGGED_PATH_MAX = 256;

/** A path as the log keeps it: cut to LOGGED_PATH_MAX characters, marked when cut. */
export function loggedPath(path: string): string {
  return path.length > LOGGED_PATH_MAX ? `${path.slice(0, LOGGED_PATH_MAX)}...(${path.length} chars)` : path;
}

/** The emulator's request log: a ring buffer of the last `capacity` entries, oldest first when read. */
export class RequestLog {
  private readonly ring: RequestLogEntry[] = [];
  private next = 0;

  constructor(readonly capacity: number = DEFAULT_REQUEST_LOG_SIZE) {}

  /** Records an entry (the caller may still fill in its status); the oldest goes when the log is full. */
  push(entry: RequestLogEntry): void {
    if (this.ring.length < this.capacity) this.ring.push(entry);
    else this.ring[this.next] = entry;
    this.next = (this.next + 1) % this.capacity;
  }

  /** The kept entries in order of arrival. */
  entries(): RequestLogEntry[] {
    return this.ring.length < this.capacity
      ? [...this.ring]
      : [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }

  /** Empties the log. */
  clear(): void {
    this.ring.length = 0;
    this.next = 0;
  }
}
