/**
 * `llm-accounts doctor`: checks a real account against each point the spec leaves open (docs/decisions.md), before the
 * first `pulumi up`. It sends the operations of api/operations.ts itself (it must see the answers as the wire carries
 * them) and judges each as the client will: by the client's own reading (client/refusals.ts judge) and schemas, never
 * copies of them. It names each point where the platform answers otherwise than the package assumes, says whether the
 * package handles that by itself or which setting to set, and exits 0 (every point holds or is handled), 1 (a setting
 * is needed) or 2 (the check could not run). Read-only by default; `--write` adds what only a write shows, with
 * throwaway objects under a marked alias that it deletes again, and `--save` writes the platform profile it measured
 * (api/profile.ts). Nothing secret is printed.
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { ALIAS_MAX_LENGTH, SUB_ACCOUNT_MAX_COUNT, SUB_ACCOUNT_MAX_SKS, USAGE_NEXT_PAGE_FIELD } from "./api/assumptions.js";
import { redact } from "./api/redact.js";
import { platformPartsOf } from "./api/schemas/index.js";
import { printable } from "./commands/kit.js";
import { isObject } from "./api/canonical.js";
import { PROFILE_VERSION, ProfileSchema, type Profile, type Signature } from "./api/profile.js";
import { parseBaseUrl, resolveClientOptions } from "./client/config.js";
import { codeOf, judge, type Judgement } from "./client/refusals.js";
import { OPERATIONS, type Operation } from "./api/operations.js";
import { refusalNamesKey } from "./client/apiKeys.js";
import { wirePath } from "./api/casing.js";
import { SETTINGS } from "./client/settings.js";
import { UsageError } from "./usageError.js";

export const DOCTOR_USAGE = `Options of "doctor" (credentials from LLM_ACCOUNTS_BASE_URL, LLM_ACCOUNTS_ADMIN_KEY, LLM_ACCOUNTS_ACCOUNT_KEY):
  --write    Also check what only a write shows: creates one API key, and sub-accounts of balance 0 (a few, then
             one create of 100, the most the package sends at once) under an alias marked "doctor", and deletes
             them again (nothing else is touched)
  --save     With --write: print the platform profile it measured as a "pulumi config set llm-accounts:profile" line
             (plain JSON, no secret); with it, the package classifies every answer by the profile's signatures
  --stack NAME  With --save: run that "pulumi config set" for the stack NAME instead of printing it
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

/** An answer as the doctor keeps it: status, the body as the wire carried it, the answer (unwrapped) or refusal, and the client's judgement. */
interface Raw {
  status: number;
  /** The answer unwrapped from its envelope when the client reads it as done, else the body as it came. */
  body: unknown;
  /** The body as the wire carried it (undefined when not JSON). */
  wire: unknown;
  /** What the client makes of it (client/refusals.ts judge, by the package's defaults). */
  judged: Judgement;
}

/** Whether the client takes an answer for a refusal (of any meaning). */
const refused = (a: Raw): boolean => !("answer" in a.judged);

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
      if (!SPEC_FIELDS.has(k) && parent !== "pricing" && parent !== "usage") found.add(clean(k));
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

/** Tries of one probe while its answers are transient (the client tries a dozen; the doctor needs an answer, not a wait). */
const TRANSIENT_TRIES = 8;

/** The doctor's probes of one account. */
class Probe {
  readonly envelope = { seen: false, withoutData: false, doneCode: undefined as string | undefined };
  readonly answers: unknown[] = [];
  /** The first answer the client's own schema could not read: the operation and field, which the client would fail on. */
  unreadable?: string;
  /** The first transient answer in a 2xx, tried again as the client does. */
  transient?: { text: string; status: number; code?: string };
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

  /** One operation (its path and method from api/operations.ts), tried again while the client would (a transient answer in a 2xx). */
  async send(op: Operation, body?: unknown, credential?: string): Promise<Raw> {
    for (let attempt = 1; ; attempt++) {
      const raw = await this.sendOnce(op, body, credential);
      if (!("refusal" in raw.judged && raw.judged.refusal.meaning === "transient" && raw.status < 300) || attempt >= TRANSIENT_TRIES) return raw;
      this.transient ??= { text: `HTTP ${raw.status} ${clean(raw.judged.refusal.apiMessage ?? raw.judged.refusal.form).slice(0, 60)}`, status: raw.status, code: codeOf(raw.wire) };
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }

  /** One request, judged by the client's own reading and, when done, parsed by the operation's own schema. */
  private async sendOnce(op: Operation, body: unknown, credential?: string): Promise<Raw> {
    const key = credential ?? (op.group === "management" ? this.keys.admin : this.keys.account);
    const url = new URL(this.base.pathname.replace(/\/$/, "") + op.path, this.base);
    const query = op.method === "GET" ? (body as Record<string, unknown> | undefined) : undefined;
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, String(v));
    const res = await fetch(url, {
      method: op.method,
      redirect: "manual",
      signal: AbortSignal.timeout(30_000),
      headers: { authorization: `Bearer ${key ?? ""}`, accept: "application/json", ...(op.method === "GET" ? {} : { "content-type": "application/json" }) },
      body: op.method === "GET" ? undefined : JSON.stringify(body ?? {}),
    });
    const text = await res.text();
    let wire: unknown;
    try {
      wire = JSON.parse(text);
    } catch {
      wire = undefined;
    }
    const judged = judge(op.group, res.status, wire);
    if (isObject(wire) && res.status < 300 && "code" in wire) {
      if ("data" in wire) this.envelope.seen = true;
      if ("answer" in judged && "data" in wire) this.envelope.doneCode ??= String(wire.code);
      if ("refusal" in judged && !("data" in wire)) this.envelope.withoutData = true;
    }
    if (!("answer" in judged)) return { status: res.status, body: wire, wire, judged };
    // Answers only (a refusal is no answer): what the checks of fields and forms read, and the client's schema.
    this.answers.push(judged.answer);
    const parsed = op.response.safeParse(judged.answer);
    if (!parsed.success && this.unreadable === undefined) {
      const issue = parsed.error.issues[0];
      this.unreadable = `${op.name}: ${wirePath(issue.path) || "(body)"} ${issue.message}`;
    }
    return { status: res.status, body: judged.answer, wire, judged };
  }
}

/** Text from the platform as the doctor prints it: keys masked, control characters escaped. */
const clean = (text: string): string => printable(redact(text));

/**
 * A write that sets a target state (status, delete), sent once more when its answer is a 5xx, as the package sends
 * it: `retried` says so; a second answer of 404 to a delete means the first did it.
 */
async function idempotent(probe: Probe, op: Operation, body: unknown): Promise<Raw & { retried: boolean }> {
  const first = await probe.send(op, body);
  if (first.status < 500) return { ...first, retried: false };
  const again = await probe.send(op, body);
  const deleted = op.name.endsWith("delete") && again.status === 404;
  if (again.status < 300 || deleted) probe.lost.push(op.name);
  return { ...again, retried: true };
}

/** Parses the doctor's options. */
function options(args: string[]): { write: boolean; json: boolean; save: boolean; stack?: string } {
  const { values } = parseArgs({
    args,
    strict: true,
    options: { write: { type: "boolean" }, json: { type: "boolean" }, save: { type: "boolean" }, stack: { type: "string" } },
  });
  if (values.save && !values.write) throw new UsageError("--save needs --write: the profile is measured with throwaway objects");
  if (values.stack !== undefined && !values.save) throw new UsageError("--stack needs --save");
  if (values.stack !== undefined && !/^[A-Za-z0-9_./-]{1,200}$/.test(values.stack)) throw new UsageError("--stack must be a stack name");
  return { write: values.write === true, json: values.json === true, save: values.save === true, stack: values.stack };
}

/** Where the command writes; the process's own streams unless a test gives others. */
export interface DoctorIo {
  stdout: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** Runs `pulumi config set ...` (--save --stack); the real CLI unless a test gives another. */
  pulumi?: (args: string[]) => Promise<void>;
}

/** Runs `llm-accounts doctor`; resolves with its exit code. */
export async function runDoctor(args: string[], io: DoctorIo): Promise<number> {
  let found: { rows: DoctorRow[]; profile?: Profile };
  let opts: ReturnType<typeof options>;
  try {
    opts = options(args);
    found = await examine(io.env, opts.write);
  } catch (err) {
    const message = clean(err instanceof Error ? err.message : String(err));
    const json = args.includes("--json");
    io.stdout.write(json ? `${JSON.stringify({ ran: false, error: message })}\n` : `llm-accounts doctor could not run: ${message}\n`);
    return DOCTOR_EXIT.couldNotRun;
  }
  // Every row is printable and masked, in the table and in --json alike.
  const rows = found.rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "string" ? clean(v) : v])) as unknown as DoctorRow);
  const code = rows.some((r) => r.verdict === "setting") ? DOCTOR_EXIT.settingNeeded : DOCTOR_EXIT.holds;
  const differs = [...new Set(rows.flatMap((r) => (r.reading && (r.verdict === "handled" || r.verdict === "setting") ? [r.reading] : [])))];
  const settings = rows.flatMap((r) => (r.setting ? [r.setting] : []));
  const profileText = found.profile && JSON.stringify(found.profile);
  const command = profileText && ["config", "set", SETTINGS.profile.config, profileText, ...(opts.stack ? ["--stack", opts.stack] : [])];
  let saved: string | undefined;
  if (opts.save && command) {
    if (opts.stack) {
      try {
        await (io.pulumi ?? runPulumi)(command);
        saved = `saved in the config of stack ${opts.stack} (${SETTINGS.profile.config})`;
      } catch (err) {
        saved = `not saved: pulumi config set failed: ${clean(err instanceof Error ? err.message : String(err))}`;
      }
    } else saved = `pulumi config set ${SETTINGS.profile.config} '${profileText}'`;
  }
  if (opts.json) {
    io.stdout.write(`${JSON.stringify({ ran: true, exitCode: code, differs, settings, rows, ...(found.profile && { profile: found.profile }), ...(saved && { saved }) })}\n`);
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
  if (saved) io.stdout.write(opts.stack ? `\nThe profile: ${saved}.\n` : `\nThe profile, for the stack config (plain, not secret):\n${saved}\n`);
  return code;
}

/** `pulumi config set ...` with the CLI on the PATH; the profile is plain JSON, no secret. */
async function runPulumi(args: string[]): Promise<void> {
  const { execFile } = await import("node:child_process");
  await new Promise<void>((resolve, reject) =>
    execFile("pulumi", args, { timeout: 120_000 }, (err, _out, stderr) => (err ? reject(new Error(`${err.message} ${stderr}`.trim())) : resolve())),
  );
}

/** A random key or token that no platform holds, for the probes of refusals. */
const unknownKey = () => `sk-doctor${randomBytes(12).toString("hex")}`;

/** The signature of an answer for the profile: its status, and its code or shape marker. */
function signatureOf(a: Raw): Signature {
  const code = codeOf(a.wire);
  return code === undefined ? { status: a.status } : { status: a.status, code };
}

/** What the probes measured for the profile. */
interface Measured {
  refused: Signature[];
  goneKey: Signature[];
  goneSubAccount: Signature[];
  unauthorised: Signature[];
  limits: NonNullable<Profile["limits"]>;
}

/** Every row, read-only checks first, then (with `write`) those that need a write, and with `write` the profile. Throws when the check cannot run. */
async function examine(env: NodeJS.ProcessEnv, write: boolean): Promise<{ rows: DoctorRow[]; profile?: Profile }> {
  const options = resolveClientOptions(undefined, {}, env);
  if (!options.adminKey || !options.accountKey) {
    throw new UsageError(`both credentials are needed: set ${SETTINGS.adminKey.env} and ${SETTINGS.accountKey.env}`);
  }
  const probe = new Probe(parseBaseUrl(options.baseUrl), { admin: options.adminKey, account: options.accountKey });
  const usageField = options.platform?.usagePageField ?? USAGE_NEXT_PAGE_FIELD;
  const rows: DoctorRow[] = [];
  const measured: Measured = { refused: [], goneKey: [], goneSubAccount: [], unauthorised: [], limits: {} };
  const meaning = (a: Raw) => ("refusal" in a.judged ? a.judged.refusal.meaning : undefined);

  const balance = await probe.send(OPERATIONS.balance, {});
  if (meaning(balance) === "unauthorised") throw new Error(`the admin key was refused (${balance.status}) by ${probe.origin}`);
  if (balance.status >= 300 && balance.status < 400) {
    throw new Error(`account/balance answered HTTP ${balance.status}, a redirect: the platform moved; set ${SETTINGS.baseUrl.config} to its new address (redirects are never followed, so that the credential is never sent elsewhere)`);
  }
  if (refused(balance)) throw new Error(`account/balance was refused: ${describeRefusal(balance)}`);
  let list = await probe.send(OPERATIONS.listSubAccounts, { page_size: -1 });
  if (meaning(list) === "unauthorised") throw new Error(`the main account key was refused (${list.status}) by ${probe.origin}`);
  const allRefused = refused(list);
  if (allRefused) {
    measured.refused.push(signatureOf(list));
    list = await probe.send(OPERATIONS.listSubAccounts, { page: 1, page_size: 100 });
  }
  // A list refused in pages too (403, success: false in a 200): the main account key cannot list, so nothing runs.
  if (refused(list)) throw new Error(`the sub-account list was refused with the main account key: ${describeRefusal(list)}`);
  rows.push({ point: "credentials", assumes: "admin key for the management group, main account key for the sub-account group", observed: "both accepted", verdict: "holds" });
  await probe.send(OPERATIONS.models, {});
  const wrongAdmin = await probe.send(OPERATIONS.balance, {}, `sk-admin-doctor${randomBytes(12).toString("hex")}`);
  if (refused(wrongAdmin)) measured.unauthorised.push(signatureOf(wrongAdmin));

  // The sub-account list: page_size=-1, total and pageSize.
  rows.push(
    allRefused
      ? { point: "page_size=-1 (all sub-accounts)", assumes: "accepted", observed: "refused", verdict: "handled", reading: "list-all-refused" }
      : { point: "page_size=-1 (all sub-accounts)", assumes: "accepted", observed: "accepted", verdict: "holds" },
  );
  const hasTotal = isObject(list.body) && typeof list.body.total !== "undefined" && "pageSize" in list.body;
  rows.push({
    point: "list answer fields",
    assumes: "items, total, page, pageSize",
    observed: hasTotal ? "as assumed" : `fields ${isObject(list.body) ? Object.keys(list.body).join(", ") : "(none)"}`,
    verdict: hasTotal ? "holds" : "handled",
    reading: hasTotal ? undefined : "list-no-total",
  });

  // The management group's refusals: a get of a key that does not exist (gone), a usage query the spec refuses (refused).
  const missing = await probe.send(OPERATIONS.getApiKey, { key: unknownKey() });
  rows.push(errorShapeRow("management group errors", missing, probe.envelope));
  rows.push(goneRow("a key that does not exist", missing));
  if (refused(missing)) measured.goneKey.push(signatureOf(missing));

  let written: DoctorRow[] = [];
  if (write) written = await writes(probe, usageField, measured, allRefused ? { page: 1, page_size: 100 } : { page_size: -1 });
  else {
    rows.push({ point: "usage paging field", assumes: `"${usageField}"`, observed: "checked with --write only (a key of the doctor's makes usage to page through)", verdict: "not checked" });
    rows.push({ point: "create mark, write answers, refusals, alias filter", assumes: "see docs/decisions.md", observed: "checked with --write only", verdict: "not checked" });
  }

  rows.push({
    point: "answer envelope",
    assumes: "answers as the spec shows them",
    observed: probe.envelope.seen ? "wrapped as {code, message, data}" : "not wrapped",
    verdict: probe.envelope.seen ? "handled" : "holds",
    reading: probe.envelope.seen ? (probe.envelope.withoutData ? "envelope-no-data" : "envelope") : undefined,
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
  // Judged with the client's own schemas: "handled" only when the client reads every answer the doctor got.
  rows.push(
    probe.unreadable
      ? {
          point: "value forms",
          assumes: "decimals in strings, ids as numbers, ISO 8601 timestamps with an offset",
          observed: `the client cannot read ${probe.unreadable}${form ? ` (${form})` : ""}`,
          verdict: "setting",
          setting: "none exists: report this platform's value form",
          reading: form ? "other-forms" : undefined,
        }
      : {
          point: "value forms",
          assumes: "decimals in strings, ids as numbers, ISO 8601 timestamps with an offset",
          observed: form ? `${form}: read by the client` : "as assumed",
          verdict: form ? "handled" : "holds",
          reading: form ? "other-forms" : undefined,
        },
  );
  rows.push({
    point: "transient answers",
    assumes: "429 (or 5xx) when the platform cannot answer now",
    observed: probe.transient ? `${probe.transient.text}: the client tries it again` : "none seen",
    verdict: probe.transient ? "handled" : "holds",
    reading: probe.transient ? "transient-200" : undefined,
  });
  rows.push({ point: "rate limit answer", assumes: "429 with Retry-After", observed: "not reached (it takes 60 writes a minute)", verdict: "not checked" });
  const all = [...rows, ...written].sort((a, b) => order(a) - order(b));
  if (!write) return { rows: all };
  const transient: Signature[] = [{ status: 429 }];
  if (probe.transient) transient.push(probe.transient.code ? { status: probe.transient.status, code: probe.transient.code } : { status: probe.transient.status });
  const profile = ProfileSchema.parse({
    version: PROFILE_VERSION,
    done: probe.envelope.seen && probe.envelope.doneCode !== undefined ? { shape: "envelope", code: probe.envelope.doneCode } : { shape: "plain" },
    refused: unique(measured.refused),
    goneKey: unique(measured.goneKey),
    goneSubAccount: unique(measured.goneSubAccount),
    transient: unique(transient),
    unauthorised: unique([{ status: 401 }, ...measured.unauthorised]),
    ...(form && { forms: { seen: form.slice(0, 120) } }),
    ...(Object.keys(measured.limits).length > 0 && { limits: measured.limits }),
  });
  const clash = (["goneKey", "goneSubAccount"] as const).flatMap((m) =>
    profile[m].filter((g) => profile.refused.some((r) => r.status === g.status && r.code === g.code)).map(() => m),
  );
  if (clash.length > 0) {
    all.push({
      point: "gone and refused told apart",
      assumes: "a gone object answers otherwise than a refused request",
      observed: `the same status and code for ${clash.join(", ")} and refused: with the profile, such an answer stops (never taken for gone)`,
      verdict: "setting",
      setting: "none exists: report this platform's refusal codes",
    });
  }
  return { rows: all, profile };
}

/** The signatures without repeats. */
function unique(signatures: Signature[]): Signature[] {
  const seen = new Set<string>();
  return signatures.filter((s) => !seen.has(JSON.stringify(s)) && seen.add(JSON.stringify(s)) !== undefined);
}

const order = (r: DoctorRow): number => ["holds", "handled", "setting", "not checked"].indexOf(r.verdict);

/** The row of what a read of something that does not exist means to the client: gone (as a 404), or not. */
function goneRow(what: string, answer: Raw): DoctorRow {
  const point = `gone: ${what}`;
  const assumes = "404 (or an answer that says not found)";
  if ("refusal" in answer.judged && answer.judged.refusal.meaning === "gone") return { point, assumes, observed: `${describeShape(answer)}: read as gone`, verdict: answer.status === 404 ? "holds" : "handled" };
  if (namesKey(answer)) {
    return { point, assumes, observed: `${describeShape(answer)} (${describeRefusal(answer)}): a refusal of a key the package holds that names the key, read as gone`, verdict: "handled", reading: "gone-400" };
  }
  return {
    point,
    assumes,
    observed: `${describeShape(answer)} (${describeRefusal(answer)}): the client does not read it as gone`,
    verdict: "setting",
    setting: `${SETTINGS.profile.config} (llm-accounts doctor --write --save), which names this answer gone`,
  };
}

/** Whether the client takes a key's refusal for an unknown key (client/apiKeys.ts keyUnknown: a refusal naming the key). */
function namesKey(a: Raw): boolean {
  return "refusal" in a.judged && a.judged.refusal.meaning === "refused" && refusalNamesKey(a.judged.refusal.code, a.judged.refusal.apiMessage);
}

/** How an answer looks: status and code or shape marker. */
function describeShape(a: Raw): string {
  const code = codeOf(a.wire);
  return `HTTP ${a.status}${code ? ` ${code}` : ""}`;
}

/** The row of an error answer's shape. */
function errorShapeRow(point: string, answer: Raw, envelope: { seen: boolean; withoutData: boolean }): DoctorRow {
  const assumes = "non-2xx {error: {code, message}}";
  if (answer.status < 300) {
    if (envelope.seen && envelope.withoutData) return { point, assumes, observed: `HTTP ${answer.status} {code, message} without data`, verdict: "handled", reading: "envelope-no-data" };
    if (envelope.seen) return { point, assumes, observed: `HTTP ${answer.status} with an envelope's code`, verdict: "handled", reading: "envelope" };
    if (isObject(answer.wire) && answer.wire.success === false) return { point, assumes, observed: `HTTP ${answer.status} with success: false`, verdict: "handled", reading: "refusals-200" };
    return { point, assumes, observed: `HTTP ${answer.status} without a refusal the package recognises`, verdict: "setting", setting: "none exists: report this platform's refusal shape" };
  }
  if (isObject(answer.wire) && isObject(answer.wire.error)) return { point, assumes, observed: `${answer.status} {error: {code, message}}`, verdict: "holds" };
  if (isObject(answer.wire) && ("code" in answer.wire || "message" in answer.wire)) return { point, assumes, observed: `${answer.status} {code, message}`, verdict: "handled", reading: "bare-errors" };
  return { point, assumes, observed: `${answer.status} ${answer.wire === undefined ? "without JSON" : "in another shape"} (the status decides)`, verdict: "handled" };
}

/** The checks that need a write, each with its throwaway object, deleted again whatever happens. */
async function writes(probe: Probe, usageField: string, measured: Measured, paging: Record<string, number>): Promise<DoctorRow[]> {
  const rows: DoctorRow[] = [];
  const hex = randomBytes(6).toString("hex");

  // One key: the create answer, then status and delete answers; usage paging while it exists.
  // Letters, digits and `-` only: an API key's alias is sent as declared (no mark), and this one passes everywhere.
  // A refused request of the management group (a usage window that ends before it starts): what "refused" looks like.
  const badQuery = await probe.send(OPERATIONS.usageSummary, { start: "2001-01-02", end: "2001-01-01" });
  if (refused(badQuery) && !("refusal" in badQuery.judged && badQuery.judged.refusal.meaning === "transient")) measured.refused.push(signatureOf(badQuery));
  // One IP address in its allow-list (a documentation address): the form the platform keeps it in.
  const address = "192.0.2.10";
  const created = await probe.send(OPERATIONS.createApiKey, { alias: `doctor-${hex}`, security_config: { ip: { allow: [address] } } });
  const key = isObject(created.body) && typeof created.body.key === "string" ? created.body.key : undefined;
  if (!key) throw new Error(`api-key/create answered ${created.status} without a key`);
  try {
    const kept = await probe.send(OPERATIONS.getApiKey, { key });
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
    const usage = await usageRow(probe, usageField);
    rows.push(usage);
    if (usage.verdict === "holds" || usage.setting) {
      const field = usage.verdict === "holds" ? usageField : /"(\w+)" is read/.exec(usage.observed)?.[1];
      if (field) measured.limits.usagePageField = field;
    }
    // Parts of a key's security_config the spec does not show: the package keeps them and sends them back with every
    // edit (an edit replaces the whole config). Where the new key shows some, one edit sends them back as it would.
    const shown = isObject(created.body) ? platformPartsOf(created.body.security_config) : undefined;
    if (shown !== undefined) {
      const parts = JSON.parse(shown) as Record<string, unknown>;
      const echoed = await probe.send(OPERATIONS.editApiKey, { key, alias: `doctor-${hex}`, security_config: parts });
      rows.push({
        point: "security_config parts the spec does not show",
        assumes: "none; any is kept and sent back with every edit",
        observed: `${Object.keys(parts).join(", ")}; sent back ${!refused(echoed) ? "and accepted" : `and refused (${describeRefusal(echoed)}): the package sends its edit again without the parts a refusal names`}`,
        verdict: "handled",
        reading: "extra-fields",
      });
    }
    const status = await idempotent(probe, OPERATIONS.setApiKeyStatus, { key, enabled: false });
    const removed = await idempotent(probe, OPERATIONS.deleteApiKeys, { keys: [key] });
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
    await probe.send(OPERATIONS.deleteApiKeys, { keys: [key] });
  }
  // A delete of a key that does not exist: done (idempotent) or a refusal the client reads as gone.
  const keyDelete = await probe.send(OPERATIONS.deleteApiKeys, { keys: [unknownKey()] });

  // The create mark: the tilde form, short then as long as the package allows; the fit form where it is refused.
  const tildeShort = `doctor~${hex}`;
  const tildeLong = `${"doctor".padEnd(ALIAS_MAX_LENGTH - 13, "-")}~${hex}`;
  const fit = `doct${hex}`;
  // A create answered 5xx may have been done: what it made is looked for by its alias, as the package looks.
  const subCreate = async (alias: string, count = 1): Promise<Raw> => {
    const answer = await probe.send(OPERATIONS.createSubAccounts, { alias, balance: 0, model_pricing: [], count });
    if (answer.status < 500) return answer;
    const listed = await probe.send(OPERATIONS.listSubAccounts, { alias, ...paging });
    const items = isObject(listed.body) && Array.isArray(listed.body.items) ? listed.body.items.filter((i) => isObject(i) && i.alias === alias) : [];
    if (items.length === 0) return answer;
    probe.lost.push(OPERATIONS.createSubAccounts.name);
    return { status: 200, body: { items }, wire: { items }, judged: { answer: { items } } };
  };
  const tokensOf = (answer: Raw): string[] =>
    isObject(answer.body) && Array.isArray(answer.body.items) ? answer.body.items.flatMap((i) => (isObject(i) && typeof i.token === "string" ? [i.token] : [])) : [];
  const made: string[] = [];
  let finished = false;
  try {
    const short = await subCreate(tildeShort);
    made.push(...tokensOf(short));
    let alias = tildeShort;
    let mark: DoctorRow;
    if (refused(short)) {
      measured.refused.push(signatureOf(short));
      const fitted = await subCreate(fit);
      made.push(...tokensOf(fitted));
      alias = fit;
      measured.limits.createMark = "fit";
      mark = refused(fitted)
        ? { point: "create mark", assumes: "<alias>~<hex> accepted", observed: `refused in both forms (${describeRefusal(fitted)})`, verdict: "setting", setting: "none exists: the platform refuses both marks" }
        : { point: "create mark", assumes: "<alias>~<hex> accepted", observed: "`~` refused; the fit form accepted", verdict: "handled", setting: `${SETTINGS.createMark.config}=fit (saves one call a run)`, reading: "restricted-aliases" };
    } else {
      const long = await subCreate(tildeLong);
      made.push(...tokensOf(long));
      if (refused(long)) {
        measured.refused.push(signatureOf(long));
        measured.limits.createMark = "fit";
      }
      mark = refused(long)
        ? { point: "create mark", assumes: `aliases of up to ${ALIAS_MAX_LENGTH} characters`, observed: "a long marked alias refused (aliases are capped shorter)", verdict: "handled", setting: `${SETTINGS.createMark.config}=fit (saves one call a run)`, reading: "short-aliases" }
        : { point: "create mark", assumes: `<alias>~<hex>, up to ${ALIAS_MAX_LENGTH} characters`, observed: "accepted", verdict: "holds" };
    }
    rows.push(mark);
    // Alias filter: a prefix of the alias the doctor's sub-account has must match nothing.
    // Listed as the client lists: all at once, or by pages of 100 where page_size=-1 is refused.
    const prefix = await probe.send(OPERATIONS.listSubAccounts, { alias: alias.slice(0, -3), ...paging });
    const matched = isObject(prefix.body) && Array.isArray(prefix.body.items) ? prefix.body.items.length : 0;
    rows.push(
      refused(prefix)
        ? { point: "alias filter of the list", assumes: "exact", observed: `not checked: the filtered list was refused (${describeRefusal(prefix)})`, verdict: "not checked" }
        : {
            point: "alias filter of the list",
            assumes: "exact",
            observed: matched > 0 ? "matches a prefix" : "exact",
            verdict: matched > 0 ? "handled" : "holds",
            reading: matched > 0 ? "alias-filter-prefix" : undefined,
          },
    );
    // The largest count of one create (not shown): one create of as many as the package sends at once, balance 0.
    const full = await subCreate(alias, SUB_ACCOUNT_MAX_COUNT);
    made.push(...tokensOf(full));
    // The package splits a create only on a refusal that names `count` (subAccountBatch/recovery.ts); the same create of 1 was taken, so
    // another refusal of this one is about its count all the same, and the package will not split on it.
    const why = refused(full) ? describeRefusal(full) : undefined;
    const capped = why !== undefined && /\bcount\b/i.test(why);
    const cap = why === undefined ? undefined : /\b(\d{1,3})\b/.exec(why)?.[1];
    if (why !== undefined) measured.refused.push(signatureOf(full));
    if (cap !== undefined && Number(cap) > 0 && Number(cap) < SUB_ACCOUNT_MAX_COUNT) measured.limits.createCap = Number(cap);
    rows.push({
      point: "largest count of one sub-account create",
      assumes: `${SUB_ACCOUNT_MAX_COUNT}`,
      observed: why === undefined ? `count ${SUB_ACCOUNT_MAX_COUNT} accepted` : `count ${SUB_ACCOUNT_MAX_COUNT} refused (${why})${capped ? "" : ": the refusal does not name count, so the package does not split a larger batch"}`,
      verdict: why === undefined ? "holds" : capped ? "handled" : "setting",
      setting: why !== undefined && !capped ? `none exists: declare batches of at most ${cap ?? "the platform's cap"} (count)` : undefined,
      reading: capped ? "small-count-cap" : undefined,
    });
    // Sub-account refusals: an edit of a token that does not exist (changes nothing): the group's refusal shape, and gone.
    const goneEdit = await probe.send(OPERATIONS.editSubAccounts, { sks: [unknownKey()], alias: "doctor", model_pricing: [] });
    rows.push(errorShapeRow("sub-account group errors", goneEdit, probe.envelope));
    rows.push(goneRow("a sub-account that does not exist", goneEdit));
    if (refused(goneEdit)) measured.goneSubAccount.push(signatureOf(goneEdit));
    // A delete of a token that does not exist: done (idempotent deletes) or gone; either way the package's delete is done.
    const goneDelete = await probe.send(OPERATIONS.deleteSubAccounts, { sks: [unknownKey()] });
    if (refused(goneDelete)) measured.goneSubAccount.push(signatureOf(goneDelete));
    rows.push(deletesRow(keyDelete, goneDelete));
    finished = true;
  } finally {
    // A create whose answer was lost made sub-accounts all the same: they are looked for under the doctor's aliases.
    if (!finished) made.push(...(await leftUnder(probe, [tildeShort, tildeLong, fit], paging, made)));
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

/** Tokens of sub-accounts under the doctor's aliases that it has not recorded; none when the list cannot be read. */
async function leftUnder(probe: Probe, aliases: string[], paging: Record<string, number>, known: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const alias of aliases) {
    try {
      for (let page = 1; page <= 10; page++) {
        const list = await probe.send(OPERATIONS.listSubAccounts, { alias, ...paging, ...("page" in paging && { page }) });
        const items = isObject(list.body) && Array.isArray(list.body.items) ? list.body.items : [];
        for (const i of items) if (isObject(i) && i.alias === alias && typeof i.token === "string" && !known.includes(i.token)) found.push(i.token);
        if (!("page" in paging) || items.length < 100) break;
      }
    } catch {
      // The cleanup goes on with what it found; the error that stopped the doctor is the one it reports.
    }
  }
  return [...new Set(found)];
}

/** The row of deletes of what does not exist: done (idempotent), gone (the package takes it as done), or neither. */
function deletesRow(key: Raw, subAccount: Raw): DoctorRow {
  const point = "deletes of what does not exist";
  const assumes = "a refusal that says gone (404)";
  const done = [key, subAccount].filter((a) => "answer" in a.judged).length;
  // A key delete refused naming the key is looked at, one get per key, and done for the gone ones (runtime/command/deleteCoalescer.ts).
  const isGone = (a: Raw) => ("refusal" in a.judged && a.judged.refusal.meaning === "gone") || (a === key && namesKey(a));
  const gone = [key, subAccount].filter(isGone).length;
  if (done + gone < 2) {
    const other = [key, subAccount].find((a) => !("answer" in a.judged) && !isGone(a))!;
    return { point, assumes, observed: `${describeShape(other)} (${describeRefusal(other)}): not read as gone`, verdict: "setting", setting: `${SETTINGS.profile.config} (llm-accounts doctor --write --save)` };
  }
  if (done > 0) return { point, assumes, observed: "answered done: deletes are idempotent", verdict: "handled", reading: "idempotent-deletes" };
  return { point, assumes, observed: "refused as gone", verdict: "holds" };
}

/**
 * Deletes the doctor's sub-accounts, in one delete where the platform takes it; one refused for the length of its
 * `sks` (a 400 naming it) is split to the number the refusal gives (else halves), as the package splits; the row of
 * the largest `sks`.
 */
async function deleteMade(probe: Probe, made: string[]): Promise<DoctorRow> {
  const point = "largest sks of one sub-account edit or delete";
  let cap = made.length;
  let why: string | undefined;
  for (let done = 0; done < made.length; ) {
    const part = made.slice(done, done + cap);
    const answer = await idempotent(probe, OPERATIONS.deleteSubAccounts, { sks: part });
    const refusal = refused(answer) ? describeRefusal(answer) : undefined;
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

/** The words of a refusal in any of its shapes, short, masked and printable. */
function describeRefusal(answer: Raw): string {
  const said = "refusal" in answer.judged ? (answer.judged.refusal.apiMessage ?? answer.judged.refusal.code) : undefined;
  return clean(said ?? `status ${answer.status}`).slice(0, 80);
}

/** Candidate request fields for a further usage page, tried when the assumed one is not read. */
const PAGE_FIELDS = ["page", "cursor", "next_page", "page_token", "pageToken", "next", "offset"];

/** The usage paging row: the assumed field moves on to a second page, or which field does. */
async function usageRow(probe: Probe, field: string): Promise<DoctorRow> {
  const today = new Date().toISOString().slice(0, 10);
  const start = new Date(Date.now() - 364 * 86_400_000).toISOString().slice(0, 10);
  const query = { start, end: today, with_model: true };
  const first = await probe.send(OPERATIONS.usageSummary, query);
  const page = isObject(first.body) ? first.body : {};
  const token = page.next_page;
  const assumes = `the request field "${field}" carries next_page back`;
  if (!(page.has_more === true || (token !== null && token !== undefined && token !== ""))) {
    return { point: "usage paging field", assumes, observed: "one page only: nothing to page through", verdict: "not checked" };
  }
  const head = (a: Raw) => (isObject(a.body) && Array.isArray(a.body.items) ? JSON.stringify(a.body.items[0]) : undefined);
  const firstHead = head(first);
  for (const candidate of [field, ...PAGE_FIELDS.filter((f) => f !== field)]) {
    const next = await probe.send(OPERATIONS.usageSummary, { ...query, [candidate]: token });
    if (!refused(next) && head(next) !== firstHead) {
      if (candidate === field) return { point: "usage paging field", assumes, observed: "as assumed", verdict: "holds" };
      return { point: "usage paging field", assumes, observed: `the field "${candidate}" is read`, verdict: "setting", setting: `${SETTINGS.usagePageField.config}=${candidate} (or ${SETTINGS.usagePageField.env})`, reading: "usage-cursor" };
    }
  }
  return { point: "usage paging field", assumes, observed: `none of ${PAGE_FIELDS.join(", ")} moves to the next page`, verdict: "setting", setting: `${SETTINGS.usagePageField.config}=<the platform's field>` };
}
