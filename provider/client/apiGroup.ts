import { lookBound, lookWaits } from "../api/assumptions.js";
import { keptFormsOf, type KeptForms } from "../api/keptForms.js";
import type { Send } from "../api/operations.js";
import { SYSTEM_CLOCK, type Clock } from "./clock.js";
import type { PlatformReadings } from "./config.js";

/**
 * Base of every client object that holds a credential, directly or through its transport: `util.inspect`,
 * `JSON.stringify` and `String()` show its class and origin, never a key.
 */
export abstract class ShowsOriginOnly {
  /** The origin requests go to (no credentials in it). */
  abstract get origin(): string;

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }

  toJSON(): Record<string, string> {
    return { origin: this.origin };
  }

  toString(): string {
    return `${this.constructor.name}(${this.origin})`;
  }
}

/** What an API group needs of its transport: where requests go, a way to send one (`HttpTransport`), and the platform's readings. */
export interface Sender {
  readonly origin: string;
  readonly send: Send;
  /** The readings of the spec's open points that settings chose (config.ts PlatformReadings). */
  readonly platform?: PlatformReadings;
  /** The clock its retries wait on (a fake one in tests); the wall clock when not given. */
  readonly clock?: Pick<Clock, "now" | "sleep">;
}

/** Base of the API group classes: they send through the transport, and show only its origin. */
export abstract class ApiGroup extends ShowsOriginOnly {
  constructor(protected readonly http: Sender) {
    super();
  }

  get origin(): string {
    return this.http.origin;
  }

  /** Waits `ms` on the transport's clock: a read that missed what was just written looks again after it. */
  wait(ms: number): Promise<void> {
    return (this.http.clock ?? SYSTEM_CLOCK).sleep(ms);
  }

  /** The time on the transport's clock, in milliseconds since the epoch. */
  now(): number {
    return (this.http.clock ?? SYSTEM_CLOCK).now();
  }

  /** The kept forms of values the profile measured this platform keeping (keptFormsOf): none without a profile. */
  get keptForms(): KeptForms {
    return keptFormsOf(this.http.platform?.profile);
  }

  /** How long after a write the platform may still be making or showing it: the setting, else the assumption or the profile's measured lag (lookBound). */
  get lateWritesMs(): number {
    return lookBound(this.http.platform?.lateWritesMs, this.http.platform?.profile?.limits?.visibilityMs);
  }

  /** The waits of a look for what was written at `writtenAt` (this clock), which may show until lateWritesMs after it (lookWaits). */
  waitsSince(writtenAt: number): number[] {
    return lookWaits(writtenAt + this.lateWritesMs - this.now());
  }
}
