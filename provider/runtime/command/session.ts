/**
 * The runtime's per-process state, as one object: a Session (its fields say what it owns). runtime/index.ts hands
 * `currentSession()` to every method as its first argument; the session is made at the first call of the process
 * (a plugin serves one `pulumi` command) and replaced by `startFresh` (tests and programs that play several
 * commands in one process). The stack config is read from its slot each time a client is resolved, so a session
 * never holds a config that the shim's `configure` replaced. Only the rate limiters outlive a session: the platform
 * counts per credential over windows that do not restart with it (client/limiter.ts PROCESS_LIMITERS).
 */
import { fingerprint } from "../../api/redact.js";
import { LlmAccountsClient } from "../../client/client.js";
import {
  resolveClientOptions,
  type ConnectionArgs,
  type StackConfig,
  type TransportOptions,
} from "../../client/config.js";
import { PROCESS_LIMITERS, type RateLimiters } from "../../client/limiter.js";
import { WriteCounter } from "../../client/subAccounts.js";
import { setStackConfig, stackConfig } from "./connection.js";
import { DeleteCoalescer } from "./deleteCoalescer.js";
import { DeleteSchedule } from "./deleteSchedule.js";
import { SubAccountDeletes } from "./subAccountDeletes.js";
import { Custody } from "./custody.js";
import { keyTaken, tokenTaken } from "./adoption.js";
import { SharedSubAccountList } from "./sharedList.js";
import { canonical } from "../../api/canonical.js";

/** Retry settings and clock for every client a session makes. */
export type ClientOverrides = Pick<TransportOptions, "retry" | "clock">;

/** One client of a session and what the session keeps beside it for the rest of its life. */
export class SessionClient {
  private schedule: DeleteSchedule | undefined;
  private coalescer: DeleteCoalescer | undefined;
  private subAccountDeletes: SubAccountDeletes | undefined;
  private list: SharedSubAccountList | undefined;
  /** The data sources' answers, by call and arguments (dataSources.ts). */
  readonly answers = new Map<string, Promise<unknown>>();

  constructor(readonly client: LlmAccountsClient) {}

  /** The coalescer of this client's key deletes (its switch is read when first used, as the plugin reads settings). */
  get deletes(): DeleteCoalescer {
    return (this.coalescer ??= new DeleteCoalescer(this.client.apiKeys, this.deleteSchedule()));
  }

  /** The coalescer of this client's sub-account batch deletes, on the same schedule as its key deletes. */
  get batchDeletes(): SubAccountDeletes {
    return (this.subAccountDeletes ??= new SubAccountDeletes(this.client.subAccounts, this.deleteSchedule()));
  }

  /** One schedule for all the deletes of this client: the engine's `--parallel` bounds them together. */
  private deleteSchedule(): DeleteSchedule {
    return (this.schedule ??= new DeleteSchedule());
  }

  /** The shared list that answers this client's sub-account reads. */
  get subAccounts(): SharedSubAccountList {
    return (this.list ??= new SharedSubAccountList(this.client.subAccounts));
  }
}

/** What a new session starts with (startFresh). */
export interface SessionOptions {
  /** Retry settings and clock of every client (default: none, or those of the session before, at startFresh). */
  clientOverrides?: ClientOverrides;
  /** The stack config, written to the config slot as `configure` would (tests; programs driving the runtime). */
  stackConfig?: Record<string, string | undefined>;
  /** The program run the session's data-source answers belong to. */
  run?: unknown;
  /** The rate limiters of its clients (default: PROCESS_LIMITERS). */
  limiters?: RateLimiters;
}

/** The runtime's state for one `pulumi` command's worth of calls (see the top of this file). */
export class Session {
  readonly overrides: ClientOverrides;
  readonly limiters: RateLimiters;
  readonly writes = new WriteCounter();
  readonly run: unknown;
  /** Who keeps which key and which sub-account in this command, whatever client reached it (command/custody.ts). */
  readonly custody = { keys: new Custody("ApiKey", keyTaken), subAccounts: new Custody("SubAccountBatch", tokenTaken) };
  /** What the program run declared it adopts: by kind and key fingerprint, who declared it and where (resources/ownership.ts). */
  readonly claims = new Map<string, { owner: object; describe: string }>();
  private readonly clients = new Map<string, SessionClient>();

  constructor(options: Omit<SessionOptions, "stackConfig"> = {}) {
    this.overrides = options.clientOverrides ?? {};
    this.limiters = options.limiters ?? PROCESS_LIMITERS;
    this.run = options.run;
  }

  /** A check or a diff of any resource of the command arrived: the engine going through the program's registrations. */
  arrived(now = Date.now()): void {
    this.custody.keys.transfers.arrived(now);
    this.custody.subAccounts.transfers.arrived(now);
  }

  /**
   * The client for a connection, resolved now (at call time) from `connection`, the stack config and the
   * environment, with its companions. Shared by resources with the same settings.
   */
  client(connection: ConnectionArgs | undefined, config: StackConfig = stackConfig()): SessionClient {
    const options = { ...resolveClientOptions(connection, config), ...this.overrides };
    const id = fingerprint(canonical(options));
    let entry = this.clients.get(id);
    if (!entry) {
      entry = new SessionClient(new LlmAccountsClient(options, { limiters: this.limiters, writes: this.writes }));
      this.clients.set(id, entry);
    }
    return entry;
  }
}

/**
 * The session of the process: the provider's only per-process state but the rate limiters (tests/moduleState.test.ts
 * says so). Made by currentSession, replaced by startFresh.
 */
let current: Session | undefined;

/** The session of the process, made at its first use. */
export function currentSession(): Session {
  return (current ??= new Session());
}

/**
 * Starts a new session: every client made so far is forgotten, and with it what each kept (the delete
 * coalescer's learned parallelism, the shared list's last answer, data source answers, the write count), and the
 * custody and claims. The limiters stay, and the client overrides unless `options` gives new ones;
 * `options.stackConfig` is written to the config slot. Returns the new session.
 */
export function startFresh(options: SessionOptions = {}): Session {
  if (options.stackConfig) setStackConfig(options.stackConfig);
  current = new Session({
    clientOverrides: options.clientOverrides ?? current?.overrides,
    limiters: options.limiters ?? current?.limiters,
    run: options.run,
  });
  return current;
}

/**
 * Retry settings and clock for every client made from now on (programs that drive the runtime directly):
 * a new session with them.
 */
export function setClientOverrides(overrides: ClientOverrides): void {
  startFresh({ clientOverrides: overrides });
}

/** The client of the current session for a connection (tests; programs that drive the runtime directly). */
export function clientFor(
  connection: ConnectionArgs | undefined,
  config: StackConfig = stackConfig(),
): LlmAccountsClient {
  return currentSession().client(connection, config).client;
}
