/**
 * `llm-accounts doctor`: checks a real account against each point the spec leaves open (docs/decisions.md), before the
 * first `pulumi up`. It probes the API with raw requests (it must see the answers as the wire carries them, which the
 * client reads tolerantly), names each point where the platform answers otherwise than the package assumes, says
 * whether the package handles that by itself or which setting to set, and exits 0 (every point holds or is handled),
 * 1 (a setting is needed) or 2 (the check could not run). Read-only by default; `--write` adds what only a write
 * shows, with throwaway objects under a marked alias that it deletes again. Nothing secret is printed.
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { ALIAS_MAX_LENGTH, SUB_ACCOUNT_MAX_COUNT, SUB_ACCOUNT_MAX_SKS, USAGE_NEXT_PAGE_FIELD } from "./api/assumptions.js";
import { redact } from "./api/redact.js";
import { platformPartsOf } from "./api/schemas/index.js";
import { printable } from "./account/printable.js";
import { parseBaseUrl, resolveClientOptions } from "./client/config.js";
import { SETTINGS } from "./client/settings.js";
import { UsageError } from "./usageError.js";

export const DOCTOR_USAGE = `Options of "doctor" (credentials from LLM_ACCOUNTS_BASE_URL, LLM_ACCOUNTS_ADMIN_KEY, LLM_ACCOUNTS_ACCOUNT_KEY):
  --write    Also check what only a write shows: creates one API key, and sub-accounts of balance 0 (a few, then
             one create of 100, the most the package sends at once) under an alias marked "doctor", and deletes
             them again (nothing else is touched)
  --json     One JSON object on stdout instead of the table
  Exit code: 0 when every point holds or the package handles it by itself, 1 when a setting is needed,
  2 when the check could not run (no credentials, no answer, a credential refused)
`;

/** Exit codes of `llm-accounts doctor`. */
export const DOCTOR_EXIT = { holds: 0, settingNeeded: 1, couldNotRun: 2 } as const;

/** One open point as the doctor found it. */
export interface DoctorRow {
  /** The open point (docs/decisions.md). */
  point: string;
  /** What the package assumes. */
  assumes: string;
  /** What the platform did (or why it was not checked). */
  observed: string;
  /** "holds": as assumed; "handled": otherwise, and the package reads it by itself; "setting": a setting is needed; "not checked". */
  verdict: "holds" | "handled" | "setting" | "not checked";
  /** The setting to set, with its value, when one is needed or saves calls. */
  setting?: string;
  /** The emulator reading (`llm-accounts emulator --reading`) that answers this point the way the platform did. */
  reading?: string;
}

/** A raw answer: status and parsed body (undefined when not JSON). */
interface Raw {
  status: number;
  body: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Every field name the spec shows in an answer; another one is a field the spec does not list. */
const SPEC_FIELDS = new Set(
  ("items total page pageSize has_more next_page models model category vendor context_window max_output_tokens pricing balance date cost usage " +
    "key alias enabled security_config ip allow spend_limit monthly geo countries mode created_at id user_id token token_type model_pricing " +
    "pricing_factor monthly_cost updated_at success deleted error code message input_tokens output_tokens cache_read_tokens total_tokens page_size")
    .split(" "),
);

/** Field names in an answer that the spec does not show (the pricing block and usage block may hold more by the spec). */
function unknownFields(value: unknown, found = new Set<string>(), parent = ""): Set<string> {
  if (Array.isArray(value)) for (const v of value) unknownFields(v, found, parent);
  else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (!SPEC_FIELDS.has(k) && parent !== "pricing" && parent !== "usage") found.add(k);
      unknownFields(v, found, k);
    }
  }
  return found;
}

/** The spec's forms: decimals in strings, ids and counts as numbers, timestamps in ISO 8601 with an offset. Another form seen, or undefined. */
function otherForm(value: unknown, field = ""): string | undefined {
  if (Array.isArray(value)) return value.map((v) => otherForm(v, field)).find((f) => f !== undefined);
  if (isObject(value)) return Object.entries(value).map(([k, v]) => otherForm(v, k)).find((f) => f !== undefined);
  if (["balance", "monthly_cost", "cost", "text_input_price", "text_output_price"].includes(field) && typeof value !== "string") return `${field} as a ${typeof value}`;
  if (["id", "user_id", "total", "context_window", "max_output_tokens"].includes(field) && typeof value !== "number") return `${field} as a ${typeof value}`;
  if (["created_at", "updated_at"].includes(field) && !(typeof value === "string" && /T.*(Z|[+-]\d{2}:?\d{2})$/i.test(value))) return `${field} ${JSON.stringify(value)}`;
  return undefined;
}

/** The doctor's probes of one account. */
class Probe {
  readonly envelope = { seen: false };
  readonly answers: unknown[] = [];
  /** Writes answered 5xx although they were done (found by looking, or the same write sent again answered so). */
  readonly lost: string[] = [];

  constructor(
    private readonly base: URL,
    private readonly keys: { admin?: string; account?: string },
  ) {}

  /** The platform's origin (no credentials in it), for messages. */
  get origin(): string {
    return this.base.origin;
  }

  /** One raw request; an envelope `{code: 0, data}` is unwrapped (and remembered). */
  async send(group: "management" | "sub-account", method: string, path: string, body?: unknown, query?: Record<string, string>): Promise<Raw> {
    const credential = group === "management" ? this.keys.admin : this.keys.account;
    const url = new URL(this.base.pathname.replace(/\/$/, "") + path, this.base);
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v);
    const res = await fetch(url, {
      method,
      redirect: "manual",
      signal: AbortSignal.timeout(30_000),
      headers: { authorization: `Bearer ${credential ?? ""}`, accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    let answer = res.status < 300;
    if (isObject(json) && "code" in json && "data" in json) {
      this.envelope.seen = true;
      answer &&= ["0", "200", "ok", "success"].includes(String(json.code).toLowerCase());
      if (answer) json = json.data;
    }
    // Answers only (a refusal is no answer): what the checks of fields and forms read.
    if (answer && !(isObject(json) && json.success === false)) this.answers.push(json);
    return { status: res.status, body: json };
  }
}

/**
 * A write that sets a target state (status, delete), sent once more when its answer is a 5xx, as the package sends
 * it: `retried` says so; a second answer of 404 to a delete means the first did it.
 */
async function idempotent(probe: Probe, op: string, group: "management" | "sub-account", method: string, path: string, body: unknown): Promise<Raw & { retried: boolean }> {
  const first = await probe.send(group, method, path, body);
  if (first.status < 500) return { ...first, retried: false };
  const again = await probe.send(group, method, path, body);
  const deleted = (method === "DELETE" || path.endsWith("/delete")) && again.status === 404;
  if (again.status < 300 || deleted) probe.lost.push(op);
  return { ...again, retried: true };
}

/** Parses the doctor's options. */
function options(args: string[]): { write: boolean; json: boolean } {
  const { values } = parseArgs({ args, strict: true, options: { write: { type: "boolean" }, json: { type: "boolean" } } });
  return { write: values.write === true, json: values.json === true };
}

/** Where the command writes; the process's own streams unless a test gives others. */
export interface DoctorIo {
  stdout: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

/** Runs `llm-accounts doctor`; resolves with its exit code. */
export async function runDoctor(args: string[], io: DoctorIo): Promise<number> {
  const { write, json } = options(args);
  let rows: DoctorRow[];
  try {
    rows = await examine(io.env, write);
  } catch (err) {
    const message = redact(err instanceof Error ? err.message : String(err));
    io.stdout.write(json ? `${JSON.stringify({ ran: false, error: message })}\n` : `llm-accounts doctor could not run: ${message}\n`);
    return DOCTOR_EXIT.couldNotRun;
  }
  const code = rows.some((r) => r.verdict === "setting") ? DOCTOR_EXIT.settingNeeded : DOCTOR_EXIT.holds;
  const differs = [...new Set(rows.flatMap((r) => (r.reading && (r.verdict === "handled" || r.verdict === "setting") ? [r.reading] : [])))];
  const settings = rows.flatMap((r) => (r.setting ? [r.setting] : []));
  if (json) {
    io.stdout.write(`${JSON.stringify({ ran: true, exitCode: code, differs, settings, rows })}\n`);
    return code;
  }
  const width = Math.max(...rows.map((r) => r.point.length));
  for (const r of rows) {
    io.stdout.write(`${r.verdict.padEnd(11)} ${r.point.padEnd(width)}  assumes ${r.assumes}; the platform: ${r.observed}${r.setting ? `; set ${r.setting}` : ""}\n`);
  }
  io.stdout.write(
    code === DOCTOR_EXIT.holds
      ? `\nEvery point checked holds or is handled by the package${differs.length ? ` (this platform differs in: ${differs.join(", ")}; the emulator plays it with --reading)` : ""}.\n`
      : `\nA setting is needed before the first up: ${settings.join("; ")}.\n`,
  );
  return code;
}

/** Every row, read-only checks first, then (with `write`) those that need a write. Throws when the check cannot run. */
async function examine(env: NodeJS.ProcessEnv, write: boolean): Promise<DoctorRow[]> {
  const options = resolveClientOptions(undefined, {}, env);
  if (!options.adminKey || !options.accountKey) {
    throw new UsageError(`both credentials are needed: set ${SETTINGS.adminKey.env} and ${SETTINGS.accountKey.env}`);
  }
  const probe = new Probe(parseBaseUrl(options.baseUrl), { admin: options.adminKey, account: options.accountKey });
  const usageField = options.platform?.usagePageField ?? USAGE_NEXT_PAGE_FIELD;
  const rows: DoctorRow[] = [];
  const M = "/api/v1/management";
  const S = "/api/v1/account/sub-account";

  const balance = await probe.send("management", "POST", `${M}/account/balance`, {});
  if (balance.status === 401) throw new Error(`the admin key was refused (401) by ${probe.origin}`);
  if (balance.status >= 300) throw new Error(`account/balance answered ${balance.status}`);
  const list = await probe.send("sub-account", "GET", `${S}/list`, undefined, { page_size: "-1" });
  if (list.status === 401) throw new Error(`the main account key was refused (401) by ${probe.origin}`);
  rows.push({ point: "credentials", assumes: "admin key for the management group, main account key for the sub-account group", observed: "both accepted", verdict: "holds" });
  await probe.send("management", "GET", `${M}/models`);

  // The sub-account list: page_size=-1, total and pageSize.
  let listed = list;
  if (list.status === 400) {
    rows.push({ point: "page_size=-1 (all sub-accounts)", assumes: "accepted", observed: "refused (400)", verdict: "handled", reading: "list-all-refused" });
    listed = await probe.send("sub-account", "GET", `${S}/list`, undefined, { page: "1", page_size: "100" });
  } else {
    rows.push({ point: "page_size=-1 (all sub-accounts)", assumes: "accepted", observed: "accepted", verdict: "holds" });
  }
  const hasTotal = isObject(listed.body) && typeof listed.body.total !== "undefined" && "pageSize" in listed.body;
  rows.push({
    point: "list answer fields",
    assumes: "items, total, page, pageSize",
    observed: hasTotal ? "as assumed" : `fields ${isObject(listed.body) ? Object.keys(listed.body).join(", ") : "(none)"}`,
    verdict: hasTotal ? "holds" : "handled",
    reading: hasTotal ? undefined : "list-no-total",
  });

  // The management group's error shape: a get of a key that does not exist.
  const missing = await probe.send("management", "POST", `${M}/api-key/get`, { key: `sk-doctor${randomBytes(12).toString("hex")}` });
  rows.push(errorShapeRow("management group errors", missing, probe.envelope.seen));

  let written: DoctorRow[] = [];
  if (write) written = await writes(probe, usageField);
  else {
    rows.push({ point: "usage paging field", assumes: `"${usageField}"`, observed: "checked with --write only (a key of the doctor's makes usage to page through)", verdict: "not checked" });
    rows.push({ point: "create mark, write answers, refusals, alias filter", assumes: "see docs/decisions.md", observed: "checked with --write only", verdict: "not checked" });
  }

  rows.push({
    point: "answer envelope",
    assumes: "answers as the spec shows them",
    observed: probe.envelope.seen ? "wrapped as {code, message, data}" : "not wrapped",
    verdict: probe.envelope.seen ? "handled" : "holds",
    reading: probe.envelope.seen ? "envelope" : undefined,
  });
  const extra = new Set<string>();
  for (const a of probe.answers) unknownFields(a, extra);
  rows.push({
    point: "fields the spec does not list",
    assumes: "none needed; any is ignored",
    observed: extra.size ? `${[...extra].slice(0, 6).join(", ")}${extra.size > 6 ? ", ..." : ""}` : "none seen",
    verdict: extra.size ? "handled" : "holds",
    reading: extra.size ? "extra-fields" : undefined,
  });
  const form = probe.answers.map((a) => otherForm(a)).find((f) => f !== undefined);
  rows.push({
    point: "value forms",
    assumes: "decimals in strings, ids as numbers, ISO 8601 timestamps with an offset",
    observed: form ?? "as assumed",
    verdict: form ? "handled" : "holds",
    reading: form ? "other-forms" : undefined,
  });
  rows.push({ point: "rate limit answer", assumes: "429 with Retry-After", observed: "not reached (it takes 60 writes a minute)", verdict: "not checked" });
  return [...rows, ...written].sort((a, b) => order(a) - order(b));
}

const order = (r: DoctorRow): number => ["holds", "handled", "setting", "not checked"].indexOf(r.verdict);

/** The row of an error answer's shape. */
function errorShapeRow(point: string, answer: Raw, envelope: boolean): DoctorRow {
  const assumes = "non-2xx {error: {code, message}}";
  if (answer.status < 300) {
    if (envelope) return { point, assumes, observed: `HTTP ${answer.status} with an envelope's code`, verdict: "handled", reading: "envelope" };
    if (isObject(answer.body) && answer.body.success === false) return { point, assumes, observed: `HTTP ${answer.status} with success: false`, verdict: "handled", reading: "refusals-200" };
    return { point, assumes, observed: `HTTP ${answer.status} without a refusal the package recognises`, verdict: "setting", setting: "none exists: report this platform's refusal shape" };
  }
  if (isObject(answer.body) && isObject(answer.body.error)) return { point, assumes, observed: `${answer.status} {error: {code, message}}`, verdict: "holds" };
  if (isObject(answer.body) && ("code" in answer.body || "message" in answer.body)) return { point, assumes, observed: `${answer.status} {code, message}`, verdict: "handled", reading: "bare-errors" };
  return { point, assumes, observed: `${answer.status} ${answer.body === undefined ? "without JSON" : "in another shape"} (the status decides)`, verdict: "handled" };
}

/** The checks that need a write, each with its throwaway object, deleted again whatever happens. */
async function writes(probe: Probe, usageField: string): Promise<DoctorRow[]> {
  const rows: DoctorRow[] = [];
  const M = "/api/v1/management";
  const S = "/api/v1/account/sub-account";
  const hex = randomBytes(6).toString("hex");

  // One key: the create answer, then status and delete answers; usage paging while it exists.
  // Letters, digits and `-` only: an API key's alias is sent as declared (no mark), and this one passes everywhere.
  // One IP address in its allow-list (a documentation address): the form the platform keeps it in.
  const address = "192.0.2.10";
  const created = await probe.send("management", "POST", `${M}/api-key/create`, { alias: `doctor-${hex}`, security_config: { ip: { allow: [address] } } });
  const key = isObject(created.body) && typeof created.body.key === "string" ? created.body.key : undefined;
  if (!key) throw new Error(`api-key/create answered ${created.status} without a key`);
  try {
    const kept = await probe.send("management", "POST", `${M}/api-key/get`, { key });
    const config = isObject(kept.body) && isObject(kept.body.security_config) ? kept.body.security_config : undefined;
    const allow = config && isObject(config.ip) && Array.isArray(config.ip.allow) ? config.ip.allow : undefined;
    const asRange = allow?.length === 1 && allow[0] === `${address}/32`;
    rows.push({
      point: "IP allow-list entries as kept",
      assumes: "as sent",
      observed: allow === undefined ? "not answered" : asRange ? `an address kept as its range (${address}/32)` : allow[0] === address ? "as sent" : `kept as ${printable(JSON.stringify(allow)).slice(0, 60)}`,
      verdict: allow === undefined ? "not checked" : asRange ? "handled" : allow[0] === address ? "holds" : "not checked",
      reading: asRange ? "normalised-values" : undefined,
    });
    rows.push(await usageRow(probe, usageField));
    // Parts of a key's security_config the spec does not show: the package keeps them and sends them back with every
    // edit (an edit replaces the whole config). Where the new key shows some, one edit sends them back as it would.
    const shown = isObject(created.body) ? platformPartsOf(created.body.security_config) : undefined;
    if (shown !== undefined) {
      const parts = JSON.parse(shown) as Record<string, unknown>;
      const echoed = await probe.send("management", "POST", `${M}/api-key/edit`, { key, alias: `doctor-${hex}`, security_config: parts });
      const taken = echoed.status < 300 && !(isObject(echoed.body) && echoed.body.success === false);
      rows.push({
        point: "security_config parts the spec does not show",
        assumes: "none; any is kept and sent back with every edit",
        observed: `${printable(Object.keys(parts).join(", "))}; sent back ${taken ? "and accepted" : `and refused (${describeRefusal(echoed)}): the package sends its edit again without the parts a refusal names`}`,
        verdict: "handled",
        reading: "extra-fields",
      });
    }
    const status = await idempotent(probe, "api-key/status", "management", "POST", `${M}/api-key/status`, { key, enabled: false });
    const removed = await idempotent(probe, "api-key/delete", "management", "POST", `${M}/api-key/delete`, { keys: [key] });
    // A write sent a second time after a lost answer says nothing of the confirmation's shape.
    const terse = (!status.retried && !(isObject(status.body) && "enabled" in status.body)) || (!removed.retried && !(isObject(removed.body) && "deleted" in removed.body));
    rows.push({
      point: "write answers",
      assumes: "status answers {enabled}, delete {deleted}, sub-account writes {success}",
      observed: terse ? "confirmed otherwise ({success: true} or {})" : "as assumed",
      verdict: terse ? "handled" : "holds",
      reading: terse ? "terse-writes" : undefined,
    });
  } finally {
    await probe.send("management", "POST", `${M}/api-key/delete`, { keys: [key] });
  }

  // The create mark: the tilde form, short then as long as the package allows; the fit form where it is refused.
  const tildeShort = `doctor~${hex}`;
  const tildeLong = `${"doctor".padEnd(ALIAS_MAX_LENGTH - 13, "-")}~${hex}`;
  const fit = `doct${hex}`;
  // A create answered 5xx may have been done: what it made is looked for by its alias, as the package looks.
  const subCreate = async (alias: string, count = 1): Promise<Raw> => {
    const answer = await probe.send("sub-account", "POST", `${S}/token`, { alias, balance: 0, model_pricing: [], count });
    if (answer.status < 500) return answer;
    const listed = await probe.send("sub-account", "GET", `${S}/list`, undefined, { alias, page_size: "-1" });
    const items = isObject(listed.body) && Array.isArray(listed.body.items) ? listed.body.items.filter((i) => isObject(i) && i.alias === alias) : [];
    if (items.length === 0) return answer;
    probe.lost.push("sub-account/create");
    return { status: 200, body: { items } };
  };
  const tokensOf = (answer: Raw): string[] =>
    isObject(answer.body) && Array.isArray(answer.body.items) ? answer.body.items.flatMap((i) => (isObject(i) && typeof i.token === "string" ? [i.token] : [])) : [];
  const refused = (a: Raw) => a.status >= 300 || (isObject(a.body) && a.body.success === false);
  const made: string[] = [];
  try {
    const short = await subCreate(tildeShort);
    made.push(...tokensOf(short));
    let alias = tildeShort;
    let mark: DoctorRow;
    if (refused(short)) {
      const fitted = await subCreate(fit);
      made.push(...tokensOf(fitted));
      alias = fit;
      mark = refused(fitted)
        ? { point: "create mark", assumes: "<alias>~<hex> accepted", observed: "refused in both forms", verdict: "setting", setting: "none exists: the platform refuses both marks" }
        : { point: "create mark", assumes: "<alias>~<hex> accepted", observed: "`~` refused; the fit form accepted", verdict: "handled", setting: `${SETTINGS.createMark.config}=fit (saves one call a run)`, reading: "restricted-aliases" };
    } else {
      const long = await subCreate(tildeLong);
      made.push(...tokensOf(long));
      mark = refused(long)
        ? { point: "create mark", assumes: `aliases of up to ${ALIAS_MAX_LENGTH} characters`, observed: "a long marked alias refused (aliases are capped shorter)", verdict: "handled", setting: `${SETTINGS.createMark.config}=fit (saves one call a run)`, reading: "short-aliases" }
        : { point: "create mark", assumes: `<alias>~<hex>, up to ${ALIAS_MAX_LENGTH} characters`, observed: "accepted", verdict: "holds" };
    }
    rows.push(mark);
    // Alias filter: a prefix of the alias the doctor's sub-account has must match nothing.
    const prefix = await probe.send("sub-account", "GET", `${S}/list`, undefined, { alias: alias.slice(0, -3), page_size: "-1" });
    const matched = isObject(prefix.body) && Array.isArray(prefix.body.items) ? prefix.body.items.length : 0;
    rows.push({
      point: "alias filter of the list",
      assumes: "exact",
      observed: matched > 0 ? "matches a prefix" : "exact",
      verdict: matched > 0 ? "handled" : "holds",
      reading: matched > 0 ? "alias-filter-prefix" : undefined,
    });
    // The largest count of one create (not shown): one create of as many as the package sends at once, balance 0.
    const full = await subCreate(alias, SUB_ACCOUNT_MAX_COUNT);
    made.push(...tokensOf(full));
    // The package splits a create only on a refusal that names `count` (batchRecovery.ts); another refusal says nothing of the cap.
    const why = refused(full) ? describeRefusal(full) : undefined;
    const capped = why !== undefined && /\bcount\b/i.test(why);
    rows.push({
      point: "largest count of one sub-account create",
      assumes: `${SUB_ACCOUNT_MAX_COUNT}`,
      observed: why === undefined ? `count ${SUB_ACCOUNT_MAX_COUNT} accepted` : `count ${SUB_ACCOUNT_MAX_COUNT} refused (${why})`,
      verdict: why === undefined ? "holds" : capped ? "handled" : "not checked",
      reading: capped ? "small-count-cap" : undefined,
    });
    // Sub-account refusals: a delete of a token that does not exist (deletes nothing).
    const gone = await probe.send("sub-account", "DELETE", `${S}/token`, { sks: [`sk-doctor${randomBytes(12).toString("hex")}`] });
    rows.push(errorShapeRow("sub-account group errors", gone, probe.envelope.seen));
  } finally {
    if (made.length > 0) rows.push(await deleteMade(probe, made));
  }
  if (probe.lost.length > 0) {
    rows.push({
      point: "a write whose answer is lost",
      assumes: "answered (a 5xx means not done, for a create: in doubt)",
      observed: `${[...new Set(probe.lost)].join(", ")} answered 5xx although done (found by looking, or the write sent again)`,
      verdict: "handled",
      reading: "gateway-timeout-after-write",
    });
  }
  return rows;
}

/**
 * Deletes the doctor's sub-accounts, in one delete where the platform takes it; one refused for the length of its
 * `sks` (a 400 naming it) is split to the number the refusal gives (else halves), as the package splits; the row of
 * the largest `sks`.
 */
async function deleteMade(probe: Probe, made: string[]): Promise<DoctorRow> {
  const S = "/api/v1/account/sub-account";
  const point = "largest sks of one sub-account edit or delete";
  let cap = made.length;
  let why: string | undefined;
  for (let done = 0; done < made.length; ) {
    const part = made.slice(done, done + cap);
    const answer = await idempotent(probe, "sub-account/delete", "sub-account", "DELETE", `${S}/token`, { sks: part });
    const refusal = answer.status >= 300 || (isObject(answer.body) && answer.body.success === false) ? describeRefusal(answer) : undefined;
    const smaller = refusal !== undefined && !answer.retried && /\bsks\b/i.test(refusal) && part.length > 1;
    if (!smaller) {
      done += part.length;
      continue;
    }
    why ??= refusal;
    const given = (refusal.match(/\d+/g) ?? []).map(Number).filter((n) => n >= 1 && n < part.length);
    cap = given.length > 0 ? Math.max(...given) : Math.floor(part.length / 2);
  }
  if (why === undefined) return { point, assumes: `${SUB_ACCOUNT_MAX_SKS}`, observed: `a delete of ${made.length} accepted`, verdict: "holds" };
  return { point, assumes: `${SUB_ACCOUNT_MAX_SKS}`, observed: `a delete of ${made.length} refused (${why}); split to ${cap}`, verdict: "handled", reading: "sks-cap" };
}

/** The words of a refusal in any of its shapes, short, redacted and printable. */
function describeRefusal(answer: Raw): string {
  const inner = isObject(answer.body) && isObject(answer.body.error) ? answer.body.error : answer.body;
  const message = isObject(inner) && typeof inner.message === "string" ? inner.message : `status ${answer.status}`;
  return printable(redact(message)).slice(0, 80);
}

/** Candidate request fields for a further usage page, tried when the assumed one is not read. */
const PAGE_FIELDS = ["page", "cursor", "next_page", "page_token", "pageToken", "next", "offset"];

/** The usage paging row: the assumed field moves on to a second page, or which field does. */
async function usageRow(probe: Probe, field: string): Promise<DoctorRow> {
  const M = "/api/v1/management";
  const today = new Date().toISOString().slice(0, 10);
  const start = new Date(Date.now() - 364 * 86_400_000).toISOString().slice(0, 10);
  const query = { start, end: today, with_model: true };
  const first = await probe.send("management", "POST", `${M}/usage/summary`, query);
  const page = isObject(first.body) ? first.body : {};
  const token = page.next_page;
  const assumes = `the request field "${field}" carries next_page back`;
  if (!(page.has_more === true || (token !== null && token !== undefined && token !== ""))) {
    return { point: "usage paging field", assumes, observed: "one page only: nothing to page through", verdict: "not checked" };
  }
  const head = (a: Raw) => (isObject(a.body) && Array.isArray(a.body.items) ? JSON.stringify(a.body.items[0]) : undefined);
  const firstHead = head(first);
  for (const candidate of [field, ...PAGE_FIELDS.filter((f) => f !== field)]) {
    const next = await probe.send("management", "POST", `${M}/usage/summary`, { ...query, [candidate]: token });
    if (next.status < 300 && head(next) !== firstHead) {
      if (candidate === field) return { point: "usage paging field", assumes, observed: "as assumed", verdict: "holds" };
      return { point: "usage paging field", assumes, observed: `the field "${candidate}" is read`, verdict: "setting", setting: `${SETTINGS.usagePageField.config}=${candidate} (or ${SETTINGS.usagePageField.env})`, reading: "usage-cursor" };
    }
  }
  return { point: "usage paging field", assumes, observed: `none of ${PAGE_FIELDS.join(", ")} moves to the next page`, verdict: "setting", setting: `${SETTINGS.usagePageField.config}=<the platform's field>` };
}
