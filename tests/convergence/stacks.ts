import { AsyncLocalStorage } from "node:async_hooks";
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { OPERATIONS } from "../../provider/api/operations.js";
import { STACK_CONFIG_SLOT } from "../../provider/runtime/index.js";

// Several stacks on one account, as platform teams run them (one stack per team or environment, at once in CI):
// each stack is its own plugin process, with its own clients and what they keep (held tokens, shared list,
// delete coalescer), talking to the same platform. In one test process, each stack reaches the emulator through
// a proxy of its own, so that its clients are its own (another base URL), and the proxy records which stack
// sent which sub-account delete. The stack config the runtime reads is the one of the stack whose call runs.

type StackSettings = Record<string, string | undefined>;

const running = new AsyncLocalStorage<StackSettings>();

/**
 * Makes the runtime read the stack config of the stack whose deployment runs (`inStack`), or `fallback()`
 * outside any. The runtime reads it at call time from the slot the engine's `configure` fills.
 */
export function configPerStack(fallback: () => StackSettings): void {
  (globalThis as Record<string, unknown>)[STACK_CONFIG_SLOT] = {
    get: (key: string) => (running.getStore() ?? fallback())[key.replace(/^llm-accounts:/, "")],
  };
}

/** Runs `work` as stack code: every provider call in it reads `settings` as its stack config. */
export function inStack<T>(settings: StackSettings, work: () => Promise<T>): Promise<T> {
  return running.run(settings, work);
}

const DELETE = OPERATIONS.deleteSubAccounts;

/**
 * A `pulumi up` killed (SIGKILL) at the request `at` names: that request and every later one of the stack never
 * reach the platform, and no answer reaches the stack after it (the process is gone). `killed` is set at that moment.
 */
export interface Kill {
  at: (path: string, body: unknown) => boolean;
  killed: boolean;
}

/**
 * One stack's way to the platform: an HTTP proxy on 127.0.0.1 to the emulator (`target`, which changes when the
 * emulator restarts on another port), that records the tokens of every sub-account delete it forwards. A
 * connection the emulator drops (an injected fault) is dropped toward the stack too.
 */
export class StackProxy {
  /** Tokens this stack asked the platform to delete since the last `takeDeleted()`, answered or not. */
  private deleted = new Set<string>();
  /** Set for a run that is killed (see Kill); cleared by the runner after it. */
  kill?: Kill;
  private constructor(
    private readonly server: Server,
    public target: number,
  ) {}

  static async start(target: number): Promise<StackProxy> {
    let proxy: StackProxy | undefined;
    const server = createServer((req, res) => proxy!.forward(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    proxy = new StackProxy(server, target);
    return proxy;
  }

  /** The base URL the stack's connection uses. */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** What this stack deleted since the last call. */
  takeDeleted(): Set<string> {
    const d = this.deleted;
    this.deleted = new Set();
    return d;
  }

  private forward(req: IncomingMessage, res: import("node:http").ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (this.dies(req.url?.split("?")[0] ?? "", body)) return void req.socket.destroy();
      if (req.method === DELETE.method && req.url?.split("?")[0].endsWith(DELETE.path)) {
        try {
          for (const t of (JSON.parse(body.toString("utf8")) as { sks?: unknown }).sks as string[]) this.deleted.add(t);
        } catch {
          // Not a body the platform takes: it deletes nothing.
        }
      }
      const upstream = request(
        { host: "127.0.0.1", port: this.target, method: req.method, path: req.url, headers: req.headers, agent: false },
        (answer) => {
          // The process died while the platform answered: nobody reads the answer.
          if (this.kill?.killed) {
            answer.resume();
            return void req.socket.destroy();
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on("error", () => req.socket.destroy());
        },
      );
      upstream.on("error", () => req.socket.destroy());
      upstream.end(body);
    });
  }

  /** Whether this request finds the stack's process dead, or kills it. */
  private dies(path: string, body: Buffer): boolean {
    const kill = this.kill;
    if (!kill) return false;
    if (kill.killed) return true;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      parsed = undefined;
    }
    if (kill.at(path, parsed)) kill.killed = true;
    return kill.killed;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
