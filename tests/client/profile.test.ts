import { afterEach, describe, expect, test } from "@jest/globals";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Profile } from "../../provider/api/profile.js";
import {
  BadRequestError,
  ConfigurationError,
  LlmAccountsClient,
  NotFoundError,
  resolveClientOptions,
} from "../../provider/client/index.js";
import { UnclassifiedAnswerError } from "../../provider/client/refusals.js";

/**
 * The platform profile (issue 44): with one, an answer is done, refused, gone, transient or unauthorised by the
 * profile's signatures (status and code) only, never by words; an answer it cannot classify stops, shown masked,
 * naming the doctor. Against a bare HTTP server that answers what each test scripts.
 */

const ADMIN = "sk-admin-" + "p".repeat(32);
const LIVE = "sk-" + "q".repeat(40);

/** A server answering each request with the next scripted answer (the last one repeats); counts the requests. */
async function scripted(answers: { status: number; body: unknown }[]) {
  let served = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    const a = answers[Math.min(served++, answers.length - 1)];
    res.writeHead(a.status, { "content-type": "application/json" }).end(JSON.stringify(a.body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  open.push(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, served: () => served };
}
const open: Server[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

const ENVELOPE: Profile = {
  version: 1,
  done: { shape: "envelope", code: "0" },
  refused: [{ status: 200, code: "1002" }],
  goneKey: [{ status: 200, code: "1004" }],
  goneSubAccount: [],
  transient: [{ status: 200, code: "1001" }],
  unauthorised: [{ status: 401 }],
};
const PLAIN: Profile = {
  version: 1,
  done: { shape: "plain" },
  refused: [{ status: 400 }, { status: 200, code: "success:false" }],
  goneKey: [{ status: 400, code: "invalid_key" }],
  goneSubAccount: [{ status: 404 }],
  transient: [],
  unauthorised: [{ status: 401 }],
};

const client = (url: string, profile?: Profile) =>
  new LlmAccountsClient({
    baseUrl: url,
    adminKey: ADMIN,
    rateLimits: false,
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
    platform: profile && { profile },
  });

describe("a platform profile", () => {
  test("the setting: JSON text validated naming the field; its measured limits reach the readings the client uses", () => {
    const env = { LLM_ACCOUNTS_BASE_URL: "https://api.example.com" };
    expect(() => resolveClientOptions(undefined, {}, { ...env, LLM_ACCOUNTS_PROFILE: "{" })).toThrow(
      /LLM_ACCOUNTS_PROFILE is invalid: is not JSON/,
    );
    expect(() =>
      resolveClientOptions(undefined, { profile: JSON.stringify({ ...PLAIN, done: { shape: "wrapped" } }) }, env),
    ).toThrow(/the stack config llm-accounts:profile is invalid: "done"\."shape" /);
    expect(() =>
      resolveClientOptions(
        undefined,
        {},
        { ...env, LLM_ACCOUNTS_PROFILE: JSON.stringify({ ...ENVELOPE, done: { shape: "envelope" } }) },
      ),
    ).toThrow(/"done"\."code" an envelope's done code is needed/);
    expect(() =>
      resolveClientOptions(undefined, {}, { ...env, LLM_ACCOUNTS_PROFILE: JSON.stringify({ ...PLAIN, version: 2 }) }),
    ).toThrow(/"version"/);
    const options = resolveClientOptions(
      undefined,
      { profile: JSON.stringify({ ...PLAIN, limits: { createMark: "fit", usagePageField: "cursor" } }) },
      env,
    );
    expect(options.platform).toMatchObject({
      createMark: "fit",
      usagePageField: "cursor",
      profile: { done: { shape: "plain" } },
    });
    // A setting of its own wins over the profile's measure.
    expect(
      resolveClientOptions(
        undefined,
        { createMark: "tilde", profile: JSON.stringify({ ...PLAIN, limits: { createMark: "fit" } }) },
        env,
      ).platform?.createMark,
    ).toBe("tilde");
  });

  test("words are never read: 'busy, try again' in a refusal the profile calls refused is a bad request, sent once; without a profile it is tried again", async () => {
    const busy = { status: 200, body: { success: false, message: "system busy, try again" } };
    const s = await scripted([busy]);
    await expect(client(s.url, PLAIN).apiKeys.get("sk-abc")).rejects.toBeInstanceOf(BadRequestError);
    expect(s.served()).toBe(1);
    const t = await scripted([busy, { status: 200, body: { balance: "1.000000" } }]);
    expect(await client(t.url).account.balance()).toBe("1.000000");
    expect(t.served()).toBe(2);
  });

  test("a 400 invalid_key the profile calls gone is a NotFoundError (without a profile, a bad request)", async () => {
    const gone = { status: 400, body: { error: { code: "invalid_key", message: "invalid key" } } };
    const s = await scripted([gone]);
    await expect(client(s.url, PLAIN).apiKeys.get("sk-abc")).rejects.toBeInstanceOf(NotFoundError);
    await expect(client(s.url).apiKeys.get("sk-abc")).rejects.toBeInstanceOf(BadRequestError);
    // Another 400 is refused, by status, whatever its words say.
    const other = await scripted([
      { status: 400, body: { error: { code: "invalid_alias", message: "key not found" } } },
    ]);
    await expect(client(other.url, PLAIN).apiKeys.get("sk-abc")).rejects.toBeInstanceOf(BadRequestError);
  });

  test("envelope: done by the done code, gone and transient by theirs; a code the profile does not list stops, the answer shown masked and the doctor named; a delete it answers is not done", async () => {
    const s = await scripted([
      { status: 200, body: { code: "1001", message: "anything at all" } },
      { status: 200, body: { code: 0, message: "ok", data: { deleted: 1 } } },
    ]);
    expect(await client(s.url, ENVELOPE).apiKeys.delete(["sk-abc"])).toBe(1);
    expect(s.served()).toBe(2);
    const g = await scripted([{ status: 200, body: { code: 1004, message: "whatever" } }]);
    await expect(client(g.url, ENVELOPE).apiKeys.get("sk-abc")).rejects.toBeInstanceOf(NotFoundError);
    const u = await scripted([{ status: 200, body: { code: 7, message: `limit reached for ${LIVE}\u001b[2J` } }]);
    const err = (await client(u.url, ENVELOPE)
      .apiKeys.delete(["sk-abc"])
      .catch((x: unknown) => x)) as Error;
    expect(err).toBeInstanceOf(UnclassifiedAnswerError);
    expect(err.message).toMatch(
      /^the answer HTTP 200 \{"code":7,"message":"limit reached for sk-\.\.\.\w{4}\\u001b\[2J"\} matches no signature of the platform profile \(llm-accounts:profile\); run `llm-accounts doctor --write --save`/,
    );
    expect(err.message).not.toContain(LIVE);
    // Without a profile the same answer is a refusal (never done) by the package's defaults.
    await expect(client(u.url).apiKeys.delete(["sk-abc"])).rejects.toBeInstanceOf(BadRequestError);
  });

  test("an answer that matches two meanings is not classified (never resolved towards loss)", async () => {
    const both: Profile = {
      ...PLAIN,
      refused: [{ status: 200, code: "success:false" }],
      goneKey: [{ status: 200, code: "success:false" }],
    };
    const s = await scripted([{ status: 200, body: { success: false, message: "令牌不存在" } }]);
    await expect(client(s.url, both).apiKeys.delete(["sk-abc"])).rejects.toThrow(
      /matches more than one meaning \(gone, refused\)/,
    );
  });

  test("a profile that is not valid is refused where it is read, before anything is sent", () => {
    expect(() =>
      resolveClientOptions(
        undefined,
        { profile: JSON.stringify({ version: 1 }) },
        { LLM_ACCOUNTS_BASE_URL: "https://x.example" },
      ),
    ).toThrow(ConfigurationError);
  });
});
