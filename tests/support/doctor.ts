import { PassThrough } from "node:stream";
import { runDoctor, type DoctorIo } from "../../provider/commands/doctor/index.js";
import { startEmulator, type Emulator } from "../../provider/emulator/index.js";

/** A doctor's io for a test: `stdout` and the env it is given, stderr kept apart (read with `err()`), no terminal. */
export function doctorIo(
  stdout: NodeJS.WritableStream,
  env: NodeJS.ProcessEnv,
  extra: Partial<DoctorIo> = {},
): DoctorIo & { err: () => string } {
  const stderr = new PassThrough();
  let err = "";
  stderr.on("data", (c: Buffer) => (err += c.toString()));
  return { stdin: new PassThrough(), stdout, stderr, env, stderrIsTty: false, ...extra, err: () => err };
}

/** Runs `llm-accounts doctor args` in-process: its exit code, stdout and stderr. */
export async function doctorRun(
  args: string[],
  env: NodeJS.ProcessEnv,
  extra: Partial<DoctorIo> = {},
): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  let out = "";
  stdout.on("data", (c: Buffer) => (out += c.toString()));
  const io = doctorIo(stdout, env, extra);
  const code = await runDoctor(args, io);
  return { code, out, err: io.err() };
}

/**
 * A platform nobody here wrote: a server in front of an emulator that passes every request on and answers what
 * `rewrite` makes of the emulator's answer (path, status, JSON body).
 */
export async function platformBefore(
  emu: Emulator,
  /** The answer to give (`raw`: this text as the body, not JSON), or null to drop the connection without one (the request was processed). */
  rewrite: (
    path: string,
    status: number,
    body: unknown,
    request: unknown,
  ) => { status: number; body: unknown; raw?: string } | null,
  /** An answer of the platform's own, given without passing the request on (it makes nothing). */
  refuse: (path: string, request: unknown) => { status: number; body: unknown; raw?: string } | undefined = () =>
    undefined,
  /** What the request becomes before it is passed on (its URL with the query, and its body text). */
  inbound: (url: string, text: string) => { url: string; text: string } = (url, text) => ({ url, text }),
): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const { createServer } = await import("node:http");
  const send = (res: import("node:http").ServerResponse, answer: { status: number; body: unknown; raw?: string }) =>
    answer.raw !== undefined
      ? res.writeHead(answer.status, { "content-type": "text/html" }).end(answer.raw)
      : res.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const passed = inbound(req.url ?? "/", Buffer.concat(chunks).toString());
      const text = passed.text;
      const path = new URL(passed.url, "http://x").pathname;
      const own = refuse(path, text ? JSON.parse(text) : undefined);
      if (own) return void send(res, own);
      void fetch(`${emu.baseUrl}${passed.url}`, {
        method: req.method,
        headers: { authorization: req.headers.authorization ?? "", "content-type": "application/json" },
        body: req.method === "GET" ? undefined : text,
      }).then(async (r) => {
        const answerText = await r.text();
        const answered = rewrite(
          path,
          r.status,
          answerText === "" ? {} : JSON.parse(answerText),
          text ? JSON.parse(text) : undefined,
        );
        if (answered === null) return void res.socket?.destroy();
        send(res, answered);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The doctor run against a front of a new emulator (platformBefore), with a fake clock whose waits pass at once; the emulator is closed after `then`. */
export async function doctorBefore<T>(
  args: string[],
  front: {
    rewrite?: Parameters<typeof platformBefore>[1];
    refuse?: Parameters<typeof platformBefore>[2];
    inbound?: Parameters<typeof platformBefore>[3];
    emulator?: Parameters<typeof startEmulator>[0];
  },
  then: (run: { code: number; out: string; err: string }, emu: Emulator) => Promise<T> | T,
): Promise<T> {
  const emu = await startEmulator({ port: 0, rateLimits: false, ...front.emulator });
  const platform = await platformBefore(
    emu,
    front.rewrite ?? ((_p, status, body) => ({ status, body })),
    front.refuse,
    front.inbound,
  );
  let now = Date.now();
  const clock = { now: () => now, sleep: async (ms: number) => void (now += ms) };
  try {
    const run = await doctorRun(
      args,
      {
        LLM_ACCOUNTS_BASE_URL: platform.baseUrl,
        LLM_ACCOUNTS_ADMIN_KEY: emu.adminKey,
        LLM_ACCOUNTS_ACCOUNT_KEY: emu.accountKey,
      },
      { clock },
    );
    return await then(run, emu);
  } finally {
    await platform.close();
    await emu.close();
  }
}
