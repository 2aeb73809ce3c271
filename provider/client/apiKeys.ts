import { API_KEY_DELETE_MAX } from "../api/assumptions.js";
import { fromWire, toWire } from "../api/casing.js";
import { ApiGroup } from "./apiGroup.js";
import { type ApiError, BadRequestError, LlmAccountsError, NotFoundError, UnknownAnswerError } from "./errors.js";
import { AmbiguousAnswerError, answerUnknown } from "./refusals.js";
import { sameAlias, sameRestrictions } from "../api/keptForms.js";
import { maskKey } from "../api/redact.js";
import { OPERATIONS } from "../api/operations.js";
import { KNOWN_SECURITY_PARTS } from "../api/schemas/index.js";
import type * as s from "../api/schemas/index.js";
import { isObject } from "../api/canonical.js";

/** The management group's API key operations (spec 4.1 to 4.5). */
export class ApiKeysApi extends ApiGroup {
  /**
   * Creates a key; the answer is the only time the key itself is returned. Never retried blindly. Only the key is
   * needed of the answer: a field it lacks (or holds in a form no schema reads) is taken from the request, as the
   * spec's create makes it (enabled, the alias and restrictions sent), so that a key the platform made is never
   * lost for another field of its answer. The next read shows the platform's values.
   */
  async create(request: s.ApiKeyCreateRequest): Promise<s.ApiKeyCreated> {
    return withoutRefusedParts(request, async (req) => {
      const sent = bodyOf(req);
      const res = await this.http.send({ op: OPERATIONS.createApiKey, body: sent });
      this.credentialTaken = true;
      const answered = res.security_config !== undefined;
      return fromWire({
        key: res.key,
        alias: res.alias ?? sent.alias,
        enabled: res.enabled ?? true,
        security_config: answered ? res.security_config : sent.security_config,
        platform_parts: answered ? res.platform_parts : req.platformParts,
        created_at: res.created_at ?? new Date().toISOString(),
      });
    });
  }

  /**
   * Whether the platform took the admin key: an answer of this group in its own JSON came back, or the one look
   * (`account/balance`, confirmCredential) did. Until then a refusal naming a key may be about the admin key.
   */
  private credentialTaken = false;
  private credentialLook?: Promise<void>;
  /** The gets on the wire: a refusal waits for them before it looks (confirmCredential), as one of them may tell. */
  private readonly reading = new Set<Promise<unknown>>();

  /** Reads a key's configuration (never the key). */
  async get(key: string): Promise<s.ApiKeyView> {
    const sent = this.http.send({ op: OPERATIONS.getApiKey, body: { key } });
    this.reading.add(sent);
    try {
      const res = await sent;
      this.credentialTaken = true;
      return fromWire(res);
    } finally {
      this.reading.delete(sent);
    }
  }

  /**
   * A key's view with one get, or undefined when the platform says it does not know the key (isGone: a 404 in its
   * JSON, a 400 naming the key or an answer the profile reads as gone or refused, once the admin key is known to be
   * taken). An answer that is not the platform's (an HTML page, `null`) is thrown: nothing is concluded from it.
   */
  async find(key: string): Promise<s.ApiKeyView | undefined> {
    try {
      return await this.get(key);
    } catch (err) {
      if (await this.isGone(err)) return undefined;
      throw err;
    }
  }

  /**
   * Whether a get's error says the key is gone. A 404 in the platform's JSON does. A 400 naming a key (keyUnknown)
   * or an answer the profile gives the meanings "gone" and "refused" does only when the platform takes the admin
   * key: an IP allow-list refuses the admin key with such a 400 too (confirmCredential, which throws then).
   */
  async isGone(err: unknown): Promise<boolean> {
    // A 404 in the platform's JSON: the platform took the admin key, and does not know this one.
    if (err instanceof NotFoundError) return (this.credentialTaken = true);
    const ambiguous =
      err instanceof AmbiguousAnswerError &&
      err.meanings.includes("gone") &&
      err.meanings.every((m) => m === "gone" || m === "refused");
    if (!ambiguous && !keyUnknown(err)) return false;
    await this.confirmCredential(err as ApiError);
    return true;
  }

  /**
   * Resolves when the platform takes the admin key: once any answer of this group in its own JSON came (the gets on
   * the wire with this one awaited first), else after one `account/balance` (a call that names no key), once per
   * client. A balance that fails (refused, or answered so that nothing can be read) means the refusal may be about
   * the credential: the command stops, naming both answers, before it concludes that any key is gone.
   */
  private async confirmCredential(refusal: LlmAccountsError): Promise<void> {
    // The gets sent with this one (a refresh, a refused delete's looks): any of them answered by the platform tells.
    await Promise.allSettled([...this.reading]);
    if (this.credentialTaken) return;
    this.credentialLook ??= this.http.send({ op: OPERATIONS.balance, body: {} }).then(
      () => void (this.credentialTaken = true),
      (err: unknown) => {
        this.credentialLook = undefined;
        const said = err instanceof LlmAccountsError ? err.message : String(err);
        throw new LlmAccountsError(
          `${refusal.message}: a refusal that may be about the admin key rather than the key, and the admin key was refused too (${said}); ` +
            "nothing was concluded, dropped or deleted. If the platform keeps an IP allow-list for the admin key, run from an address it allows",
          { operation: refusal.operation, status: refusal.status, code: refusal.code, apiMessage: refusal.apiMessage },
        );
      },
    );
    return this.credentialLook;
  }

  /**
   * Replaces alias and security configuration as a whole; `enabled` is left as it is. An answer that cannot be read
   * as the platform's is confirmed by one get (the alias and configuration sent), else the edit fails naming the key.
   */
  async edit(request: s.ApiKeyEditRequest): Promise<s.ApiKeyView> {
    return withoutRefusedParts(request, async (req) => {
      try {
        return fromWire(await this.http.send({ op: OPERATIONS.editApiKey, body: { key: req.key, ...bodyOf(req) } }));
      } catch (err) {
        if (!answerUnknown(err)) throw err;
        const view = await this.lookAfter(err, req.key, "edit");
        if (
          sameAlias(req.alias, view.alias, this.keptForms) &&
          sameRestrictions(view.securityConfig ?? {}, req.securityConfig ?? {}, this.keptForms)
        )
          return view;
        throw notConfirmed(err, [req.key], "a get shows its alias or security_config as before: not edited");
      }
    });
  }

  /** Enables or disables a key; returns the confirmed state (by one get when the answer cannot be read as the platform's). */
  async setStatus(key: string, enabled: boolean): Promise<boolean> {
    try {
      const res = await this.http.send({ op: OPERATIONS.setApiKeyStatus, body: { key, enabled } });
      // A 2xx that is no refusal (client/refusals.ts) without `enabled` confirms the state asked for.
      return res.enabled ?? enabled;
    } catch (err) {
      if (!answerUnknown(err)) throw err;
      if ((await this.lookAfter(err, key, "status")).enabled === enabled) return enabled;
      throw notConfirmed(err, [key], `a get shows it ${enabled ? "disabled" : "enabled"} still: not changed`);
    }
  }

  /**
   * Deletes up to 1000 keys in one call; the platform rejects the whole batch if any key is bad. An answer that is
   * not the platform's (UnknownAnswerError) is confirmed by one get per key: those gone are deleted; those still
   * there fail together (KeysNotConfirmedError, naming them).
   */
  async delete(keys: readonly string[]): Promise<number> {
    if (keys.length > API_KEY_DELETE_MAX) throw new RangeError(`at most ${API_KEY_DELETE_MAX} keys per delete call`);
    try {
      const res = await this.http.send({ op: OPERATIONS.deleteApiKeys, body: { keys: [...keys] } });
      // The batch is all or nothing (spec 4.5): a 2xx that is no refusal without a count deleted them all.
      return res.deleted ?? keys.length;
    } catch (err) {
      // A refusal the profile gives two meanings (AmbiguousAnswerError) is the caller's to look at, key by key
      // (runtime/command/deleteCoalescer.ts): some keys may be gone, the others to send again.
      if (!(err instanceof UnknownAnswerError)) throw err;
      const live = (
        await Promise.all(keys.map(async (k) => ((await this.lookFor(err, k, "delete")) ? [k] : [])))
      ).flat();
      if (live.length === 0) return keys.length;
      throw notConfirmed(err, live, `a get shows ${live.length > 1 ? "them" : "it"} still there: not deleted`);
    }
  }

  /** The view of `key` after a write answered with `err` (unknown): one get; a key not found or a get that cannot tell stops, naming both answers. */
  private async lookAfter(err: LlmAccountsError, key: string, what: string): Promise<s.ApiKeyView> {
    const view = await this.lookFor(err, key, what);
    if (view) return view;
    throw notConfirmed(err, [key], "a get does not find the key");
  }

  /**
   * One get of `key` after its `what` was answered with `err` (unknown). A get that cannot tell stops the write as
   * a whole (an LlmAccountsError, not KeysNotConfirmedError: no key of it counts as written), naming both answers.
   */
  private async lookFor(err: LlmAccountsError, key: string, what: string): Promise<s.ApiKeyView | undefined> {
    try {
      return await this.find(key);
    } catch (looked) {
      const said = looked instanceof Error ? looked.message : String(looked);
      throw new LlmAccountsError(
        `${err.message}; looking (a get of ${maskKey(key)}) could not tell either: ${said}. Nothing was concluded of this ${what}`,
        {
          operation: err.operation,
          status: err.status,
        },
      );
    }
  }
}

/** A write to keys whose answer could not be read and which a look did not confirm; `keys` are those not written (masked in the message). */
export class KeysNotConfirmedError extends LlmAccountsError {
  constructor(
    message: string,
    details: ConstructorParameters<typeof LlmAccountsError>[1],
    /** The keys the write did not reach, as far as the look tells: they stay in the state. */
    readonly keys: readonly string[],
  ) {
    super(message, details);
    Object.defineProperty(this, "keys", { value: keys, enumerable: false });
  }
}

/** The error of a write to `keys` answered with `err` (unknown) that a look did not confirm: both said, the keys named masked. */
function notConfirmed(err: LlmAccountsError, keys: readonly string[], found: string): KeysNotConfirmedError {
  const named = keys.map(maskKey).join(", ");
  return new KeysNotConfirmedError(
    `${err.message}; for ${named}: ${found}`,
    { operation: err.operation, status: err.status, requestId: err.requestId },
    keys,
  );
}

/**
 * Whether a get's refusal says the key is unknown: a 404 (or a refusal that says "not found"), or a 400 whose code or
 * message names the key (`invalid_key`). A get sends nothing but the key, and a key the package holds is one the
 * platform issued, so such a 400 can only refuse the key itself: it is not (or no longer) this account's key
 * (docs/decisions.md, "Other readings a platform may show": a gone object).
 */
export function keyUnknown(err: unknown): boolean {
  if (err instanceof NotFoundError) return true;
  return err instanceof BadRequestError && refusalNamesKey(err.code, err.apiMessage);
}

/** Whether a refusal of a request that sends nothing but keys names the key (its code or message): keyUnknown's rule, which the doctor reports with. */
export function refusalNamesKey(code: string | undefined, message: string | undefined): boolean {
  return /key/i.test(`${code ?? ""} ${message ?? ""}`);
}

/**
 * The wire body of a create or edit: the declared security config, with what of it is the platform's
 * (`platformParts`, s.platformOwnedOf) sent back as it came, since the platform replaces the whole `security_config`:
 * a part the package does not know whole, and the platform's fields inside a known part beside the declared fields
 * of that part (a declared field always wins). A known part left out is no restriction of that kind (the user's to
 * declare): the platform's fields inside it go with it.
 */
function bodyOf(request: s.ApiKeyCreateRequest): { alias: string; security_config?: Record<string, unknown> } {
  const declared =
    request.securityConfig === undefined ? undefined : (toWire(request.securityConfig) as Record<string, unknown>);
  if (request.platformParts === undefined)
    return declared === undefined ? { alias: request.alias } : { alias: request.alias, security_config: declared };
  const platform = JSON.parse(request.platformParts) as Record<string, unknown>;
  const config = Object.fromEntries(Object.entries(platform).filter(([name]) => !KNOWN_SECURITY_PARTS.includes(name)));
  for (const [name, part] of Object.entries(declared ?? {}))
    config[name] = isObject(part) && isObject(platform[name]) ? { ...platform[name], ...part } : part;
  return { alias: request.alias, security_config: config };
}

/**
 * The paths into `parts` (what the package sends back only because the platform showed it) that a refusal's words
 * name: a part (`note`) or a field inside one (`hours.updated_at`, `security_config.spend_limit.daily`), each named
 * to its end. A path that goes on into what `parts` does not hold (`spend_limit.monthly`, declared) names the
 * user's part, not the platform's: none of it is taken away.
 */
function refusedPaths(parts: Record<string, unknown>, words: string): string[][] {
  const paths: string[][] = [];
  for (const [named] of words.matchAll(/[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*/g)) {
    const path = named.split(".");
    if (path[0] === "security_config") path.shift();
    let node: unknown = parts;
    let depth = 0;
    while (depth < path.length && isObject(node) && Object.hasOwn(node, path[depth])) node = node[path[depth++]];
    if (depth > 0 && depth === path.length) paths.push(path);
  }
  return paths;
}

/** `parts` without the value at `path`, and without a part or object left empty by it. */
function removePath(parts: Record<string, unknown>, path: readonly string[]): void {
  const [head, ...rest] = path;
  const child = parts[head];
  if (rest.length > 0 && isObject(child)) {
    removePath(child, rest);
    if (Object.keys(child).length > 0) return;
  }
  delete parts[head];
}

/**
 * Sends `request`; when the platform refuses it (400) naming a field inside a part of its `security_config` that the
 * package sent back only because the platform showed it (an annotation of its answers it does not take as input, a
 * read-only field such as `hours.updated_at`), sends it once more without exactly that field: the part stays. A 400
 * made nothing, so the second try is safe. One that names a whole part sent back fails as it came, with advice: sent
 * without it, the write would remove from the key what the package cannot declare (docs/decisions.md). A refusal
 * that names none of it is the user's to see.
 */
async function withoutRefusedParts<R extends s.ApiKeyCreateRequest, T>(
  request: R,
  send: (request: R) => Promise<T>,
): Promise<T> {
  try {
    return await send(request);
  } catch (err) {
    if (!(err instanceof BadRequestError) || request.platformParts === undefined) throw err;
    const parts = JSON.parse(request.platformParts) as Record<string, unknown>;
    const refused = refusedPaths(parts, err.message);
    if (refused.length === 0) throw err;
    const whole = [...new Set(refused.filter((path) => path.length === 1).map(([part]) => part))];
    if (whole.length > 0) throw wholePartRefused(err, whole);
    for (const path of refused) removePath(parts, path);
    return send({ ...request, platformParts: Object.keys(parts).length === 0 ? undefined : JSON.stringify(parts) });
  }
}

/**
 * A 400 that refused whole parts of `security_config` the package sends back only because the platform showed them
 * (`parts`): nothing was changed, and nothing is sent without them, which would remove them from the key.
 */
function wholePartRefused(err: BadRequestError, parts: readonly string[]): BadRequestError {
  const named = parts.map((p) => `security_config.${p}`).join(", ");
  const [it, they] = parts.length > 1 ? ["them", "they are"] : ["it", "it is"];
  return err.withAdvice(
    `The platform refused ${named} of this key: set outside the program (the web console), ${they} sent back because an edit replaces the whole ` +
      `security_config (spec 4.3), and the package cannot declare ${it}. Sent without ${it}, the write would remove ${it} from the key, so nothing was changed. ` +
      `If ${it} may go, remove ${it} in the web console and run again (docs/decisions.md: the package never removes what it cannot declare)`,
  );
}
