/**
 * `llm-accounts doctor`: checks a real account against each point the spec leaves open (docs/decisions.md), before the
 * first `pulumi up`. It sends the operations of api/operations.ts itself (it must see the answers as the wire carries
 * them) and judges each as the client will: by the client's own reading (client/refusals.ts judge), parsing and
 * schemas, and where the outcome is the client's to say (a list), by the client itself; never copies of them. It
 * names each point where the platform answers otherwise than the package assumes, says whether the package handles
 * that by itself or which setting to set, and exits 0 (every point holds or is handled), 1 (a setting is needed) or
 * 2 (the check could not run). Read-only by default; `--write` adds what only a write shows, with throwaway objects
 * under a marked alias that it deletes again whatever happens (a Ctrl-C included), or names, and `--save` writes the
 * platform profile it measured (api/profile.ts). Nothing secret is printed.
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { z } from "zod";
import {
  ALIAS_MAX_LENGTH,
  FIT_MARK_MIN_LENGTH,
  LATE_VISIBILITY_WINDOW_MS,
  SUB_ACCOUNT_MAX_COUNT,
  SUB_ACCOUNT_MAX_SKS,
  USAGE_NEXT_PAGE_FIELD,
  lookBound,
} from "./api/assumptions.js";
import { maskKey, redact } from "./api/redact.js";
import { ModelPricingSchema, parseAnswerJson, platformPartsOf } from "./api/schemas/index.js";
import { EVERY_KEPT_FORM, KEPT_FORMS, modelsBeyond, sameAlias, sameFactor, type KeptForm } from "./api/keptForms.js";
import { isObject } from "./api/canonical.js";
import { printable } from "./commands/kit.js";
import { PROFILE_VERSION, ProfileSchema, type Profile, type Signature } from "./api/profile.js";
import { LlmAccountsClient } from "./client/client.js";
import { ApiError } from "./client/errors.js";
import { refusedSizeCap } from "./client/subAccounts.js";
import { smallerCountCap } from "./runtime/subAccountBatch/index.js";
import { SYSTEM_CLOCK, type Clock } from "./client/clock.js";
import { parseBaseUrl, resolveClientOptions } from "./client/config.js";
import { codeOf, judge, type Judgement, type Meaning } from "./client/refusals.js";
import { describeOperation, OPERATIONS, type Operation } from "./api/operations.js";
import { refusalNamesKey } from "./client/apiKeys.js";
import { wirePath } from "./api/casing.js";
import { SETTINGS } from "./client/settings.js";
import { UsageError } from "./usageError.js";

export const DOCTOR_USAGE = `Options of "doctor" (credentials from LLM_ACCOUNTS_BASE_URL, LLM_ACCOUNTS_ADMIN_KEY, LLM_ACCOUNTS_ACCOUNT_KEY):
  --write    Also check what only a write shows: creates one API key, and sub-accounts of balance 0 (a few, then
             one create of 100, the most the package sends at once) under an alias marked "doctor", and deletes
             them again, on Ctrl-C too (nothing else is touched); what it could not delete is named
  --save     With --write: print the platform profile it measured as a "pulumi config set llm-accounts:profile" line
             (plain JSON, no secret); with it, the package classifies every answer by the profile's signatures
  --stack NAME  With --save: run that "pulumi config set" for the stack NAME instead of printing it
  --json     One JSON object on stdout instead of the table
  Exit code: 0 when every point holds or the package handles it by itself, 1 when a setting is needed,
  2 when the check could not run (no credentials, no answer, a credential refused, interrupted)
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

/** What a refusal means to the client, or undefined for an answer. */
const meaningOf = (a: Raw): Meaning | undefined => ("refusal" in a.judged ? a.judged.refusal.meaning : undefined);

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

/** An id of more digits than a float holds exactly (a snowflake): the form of `snowflake-ids`, not another form. */
const SNOWFLAKE = /^-?\d{16,}$/;

/** The spec's forms: decimals in strings, ids and counts as numbers, timestamps in ISO 8601 with an offset. Another form seen, or undefined. */
function otherForm(value: unknown, field = ""): string | undefined {
  if (Array.isArray(value)) return value.map((v) => otherForm(v, field)).find((f) => f !== undefined);
  if (isObject(value)) return Object.entries(value).map(([k, v]) => otherForm(v, k)).find((f) => f !== undefined);
  if (["balance", "monthly_cost", "cost", "text_input_price", "text_output_price"].includes(field) && typeof value !== "string") return `${field} as a ${typeof value}`;
  if (["id", "user_id"].includes(field) && typeof value === "string" && SNOWFLAKE.test(value)) return undefined;
  if (["id", "user_id", "total", "context_window", "max_output_tokens"].includes(field) && typeof value !== "number") return `${field} as a ${typeof value}`;
  if (["created_at", "updated_at"].includes(field) && !(typeof value === "string" && /T.*(Z|[+-]\d{2}:?\d{2})$/i.test(value))) return `${field} ${JSON.stringify(value)}`;
  return undefined;
}

/** The first snowflake id of an answer (as the client parses it: digits kept as text), `field: digits`, or undefined. */
function snowflakeIn(value: unknown, field = ""): string | undefined {
  if (Array.isArray(value)) return value.map((v) => snowflakeIn(v, field)).find((f) => f !== undefined);
  if (isObject(value)) return Object.entries(value).map(([k, v]) => snowflakeIn(v, k)).find((f) => f !== undefined);
  return ["id", "user_id"].includes(field) && typeof value === "string" && SNOWFLAKE.test(value) ? `${field} of ${value.replace("-", "").length} digits` : undefined;
}

/** Tries of one probe while its answers are transient (the client tries a dozen; the doctor needs an answer, not a wait). */
const TRANSIENT_TRIES = 8;
/** How long the doctor looks for a write that does not show yet, and how often. */
const VISIBILITY_PROBE_MAX_MS = 60_000;
const VISIBILITY_POLL_MS = 250;

/** The time the doctor waits on (a test gives a fake one, shared with an emulator's clock). */
export type DoctorClock = Pick<Clock, "now" | "sleep">;

/** Why the doctor stopped, and the emulator reading that answers the way that stopped it, when one does (redirects). */
class Stopped extends Error {
  constructor(
    message: string,
    readonly reading?: string,
  ) {
    super(message);
  }
}

/** The doctor's probes of one account. */
class Probe {
  readonly envelope = { seen: false, withoutData: false, doneCode: undefined as string | undefined };
  readonly answers: unknown[] = [];
  /** The first answer the client's own schema could not read: the operation and field, which the client would fail on. */
  unreadable?: string;
  /** The first transient answer in a 2xx, tried again as the client does. */
  transient?: { text: string; status: number; code?: string };
  /** The first snowflake id seen (snowflakeIn). */
  snowflake?: string;
  /** Writes answered 5xx although they were done (found by looking, or the same write sent again answered so). */
  readonly lost: string[] = [];
  /** Whether a write was answered in a 2xx without a body (a 204 No Content). */
  noBody = false;
  /** Set while the doctor deletes what it made: its requests go on after `stop` (a Ctrl-C). */
  cleaning = false;

  constructor(
    private readonly base: URL,
    private readonly keys: { admin?: string; account?: string },
    readonly clock: DoctorClock,
    /** Aborted on a Ctrl-C: every request but the cleanup's stops. */
    private readonly stop: AbortSignal,
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
      await this.clock.sleep(50 * attempt);
    }
  }

  /** One request, parsed and judged by the client's own reading and, when done, by the operation's own schema. */
  private async sendOnce(op: Operation, body: unknown, credential?: string): Promise<Raw> {
    if (this.stop.aborted && !this.cleaning) throw new Stopped("interrupted (SIGINT)");
    const key = credential ?? (op.group === "management" ? this.keys.admin : this.keys.account);
    const url = new URL(this.base.pathname.replace(/\/$/, "") + op.path, this.base);
    const query = op.method === "GET" ? (body as Record<string, unknown> | undefined) : undefined;
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, String(v));
    const timeout = AbortSignal.timeout(30_000);
    const res = await fetch(url, {
      method: op.method,
      redirect: "manual",
      signal: this.cleaning ? timeout : AbortSignal.any([timeout, this.stop]),
      headers: { authorization: `Bearer ${key ?? ""}`, accept: "application/json", ...(op.method === "GET" ? {} : { "content-type": "application/json" }) },
      body: op.method === "GET" ? undefined : JSON.stringify(body ?? {}),
    }).catch((err: unknown) => {
      throw this.stop.aborted && !this.cleaning ? new Stopped("interrupted (SIGINT)") : err;
    });
    const text = await res.text();
    return this.judged(op, res.status, text);
  }

  /** An answer as the client reads it (http.ts: no body in a 2xx is `{}`; an id beyond 2^53 kept as its digits), judged. */
  private judged(op: Operation, status: number, text: string): Raw {
    const ok = status >= 200 && status < 300;
    let wire: unknown;
    try {
      wire = text.trim() === "" ? (ok ? {} : undefined) : parseAnswerJson(text);
    } catch {
      wire = undefined;
    }
    const judged = judge(op.group, status, wire);
    if (ok && text.trim() === "" && op.retry !== "read") this.noBody = true;
    if (isObject(wire) && ok && "code" in wire) {
      if ("data" in wire) this.envelope.seen = true;
      if ("answer" in judged && "data" in wire) this.envelope.doneCode ??= String(wire.code);
      if ("refusal" in judged && !("data" in wire)) this.envelope.withoutData = true;
    }
    if (!("answer" in judged)) return { status, body: wire, wire, judged };
    // Answers only (a refusal is no answer): what the checks of fields and forms read, and the client's schema.
    this.answers.push(judged.answer);
    this.snowflake ??= snowflakeIn(judged.answer);
    const parsed = op.response.safeParse(judged.answer);
    if (!parsed.success && this.unreadable === undefined) {
      const issue = parsed.error.issues[0];
      this.unreadable = `${op.name}: ${wirePath(issue.path) || "(body)"} ${issue.message}`;
    }
    return { status, body: judged.answer, wire, judged };
  }
}

/** Text from the platform as the doctor prints it: keys masked, control characters escaped. */
const clean = (text: string): string => printable(redact(text));

/**
 * A write that sets a target state (status, delete, edit), sent once more when its answer is a 5xx, as the package
 * sends it: `retried` says so; a second answer of 404 to a delete means the first did it.
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
  /** The clock of the doctor's waits (the wall clock unless a test gives another). */
  clock?: DoctorClock;
  /** Where a Ctrl-C (SIGINT) comes from: the process unless a test gives another. */
  signals?: Pick<NodeJS.Process, "on" | "off">;
}

/** What `--write` made on the account: deleted again whatever happens, or named (left). */
class Throwaways {
  key?: string;
  keyAlias?: string;
  keyDeleted = false;
  /** Tokens of its sub-accounts not deleted yet. */
  readonly tokens = new Set<string>();
  /** The aliases its creates were sent under (what a create whose answer was lost made is looked for by them). */
  readonly aliases: string[] = [];
  /** The tokens each alias's creates made. */
  readonly under = new Map<string, string[]>();

  /** What could not be deleted, masked, with how to delete it; undefined when nothing is left. */
  get left(): string | undefined {
    const parts: string[] = [];
    if (this.tokens.size > 0) {
      const prefixes = [...new Set(this.aliases)].map((a) => `--prefix '${a}'`).join(" ");
      parts.push(`sub-accounts ${[...this.tokens].map(maskKey).join(", ")}: delete them with \`llm-accounts sweep ${prefixes} --yes\``);
    }
    if (this.key !== undefined && !this.keyDeleted) {
      parts.push(`the API key ${maskKey(this.key)} (alias ${this.keyAlias}): delete it in the platform's console (the API cannot list keys)`);
    }
    return parts.length > 0 ? `left on the account, not deleted: ${parts.join("; ")}` : undefined;
  }
}

/** Runs `llm-accounts doctor`; resolves with its exit code. */
export async function runDoctor(args: string[], io: DoctorIo): Promise<number> {
  const made = new Throwaways();
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  const signals = io.signals ?? process;
  let found: { rows: DoctorRow[]; profile?: Profile };
  let opts: ReturnType<typeof options>;
  try {
    opts = options(args);
    // A Ctrl-C during the writes stops the probes, then the cleanup deletes what they made.
    if (opts.write) signals.on("SIGINT", onSigint);
    found = await examine(io.env, opts.write, { clock: io.clock ?? SYSTEM_CLOCK, stop: stop.signal, made });
  } catch (err) {
    const message = clean([err instanceof Error ? err.message : String(err), made.left].filter(Boolean).join("; "));
    const reading = err instanceof Stopped ? err.reading : undefined;
    if (args.includes("--json")) io.stdout.write(`${JSON.stringify({ ran: false, exitCode: DOCTOR_EXIT.couldNotRun, error: message, ...(reading && { differs: [reading] }) })}\n`);
    else io.stdout.write(`llm-accounts doctor could not run: ${message}\n`);
    return DOCTOR_EXIT.couldNotRun;
  } finally {
    signals.off("SIGINT", onSigint);
  }
  return report(found, opts, io, made.left);
}

/** Prints what the doctor found (the table or --json), saves the profile with --save; the exit code. */
async function report(found: { rows: DoctorRow[]; profile?: Profile }, opts: ReturnType<typeof options>, io: DoctorIo, left: string | undefined): Promise<number> {
  // Every row is printable and masked, in the table and in --json alike.
  const rows = found.rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "string" ? clean(v) : v])) as unknown as DoctorRow);
  const code = rows.some((r) => r.verdict === "setting") ? DOCTOR_EXIT.settingNeeded : DOCTOR_EXIT.holds;
  const differs = [...new Set(rows.flatMap((r) => (r.reading && (r.verdict === "handled" || r.verdict === "setting") ? [r.reading] : [])))];
  const settings = rows.flatMap((r) => (r.setting ? [r.setting] : []));
  const saved = opts.save && found.profile ? await save(found.profile, opts.stack, io) : undefined;
  if (opts.json) {
    io.stdout.write(`${JSON.stringify({ ran: true, exitCode: code, differs, settings, rows, ...(found.profile && { profile: found.profile }), ...(saved && { saved }), ...(left && { left: clean(left) }) })}\n`);
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
  if (left) io.stdout.write(`\n${clean(left)}.\n`);
  if (saved) io.stdout.write(opts.stack ? `\nThe profile: ${saved}.\n` : `\nThe profile, for the stack config (plain, not secret):\n${saved}\n`);
  return code;
}

/** The profile saved with `pulumi config set` (--stack), or the line that saves it. */
async function save(profile: Profile, stack: string | undefined, io: DoctorIo): Promise<string> {
  const text = JSON.stringify(profile);
  if (!stack) return `pulumi config set ${SETTINGS.profile.config} '${text}'`;
  try {
    await (io.pulumi ?? runPulumi)(["config", "set", SETTINGS.profile.config, text, "--stack", stack]);
    return `saved in the config of stack ${stack} (${SETTINGS.profile.config})`;
  } catch (err) {
    return `not saved: pulumi config set failed: ${clean(err instanceof Error ? err.message : String(err))}`;
  }
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

/** What one run of the doctor shares between its checks. */
interface Run {
  probe: Probe;
  /** The package's own client, with the settings the environment gives: what `up` would read, read as `up` reads it. */
  client: LlmAccountsClient;
  /** The profile the environment already sets, if any (its limits count as obeyed). */
  profile?: Profile;
  /** The `lateWritesMs` setting the environment sets, if any: how long the runtime looks for a late write. */
  lateWritesMs?: number;
  usageField: string;
  measured: Measured;
  /** How the sub-account list is read: all at once, or by pages of 100 where page_size=-1 is refused. */
  paging: Record<string, number>;
  /** The throwaway objects of `--write`. */
  made: Throwaways;
  /** What `--write` saw of write answers: confirmed otherwise than the spec shows. */
  answers: { terse: boolean };
  /** How long a write took to show (ms; undefined: not within VISIBILITY_PROBE_MAX_MS), once measured. */
  lag?: number | undefined;
  /** The model names the model list answered (the pricing probes use its first two). */
  models: string[];
}

/** The credentials and settings the doctor runs with; both credentials are needed. */
function settingsOf(env: NodeJS.ProcessEnv): ReturnType<typeof resolveClientOptions> & { adminKey: string; accountKey: string } {
  const options = resolveClientOptions(undefined, {}, env);
  if (!options.adminKey || !options.accountKey) {
    throw new UsageError(`both credentials are needed: set ${SETTINGS.adminKey.env} and ${SETTINGS.accountKey.env}`);
  }
  return options as ReturnType<typeof resolveClientOptions> & { adminKey: string; accountKey: string };
}

/** Every row, read-only checks first, then (with `write`) those that need a write, and with `write` the profile. Throws when the check cannot run. */
async function examine(env: NodeJS.ProcessEnv, write: boolean, io: { clock: DoctorClock; stop: AbortSignal; made: Throwaways }): Promise<{ rows: DoctorRow[]; profile?: Profile }> {
  const options = settingsOf(env);
  const probe = new Probe(parseBaseUrl(options.baseUrl), { admin: options.adminKey, account: options.accountKey }, io.clock, io.stop);
  const run: Run = {
    probe,
    client: new LlmAccountsClient({ ...options, rateLimits: false, clock: io.clock }),
    profile: options.platform?.profile,
    lateWritesMs: options.platform?.lateWritesMs,
    usageField: options.platform?.usagePageField ?? USAGE_NEXT_PAGE_FIELD,
    measured: { refused: [], goneKey: [], goneSubAccount: [], unauthorised: [], limits: {} },
    paging: { page_size: -1 },
    made: io.made,
    answers: { terse: false },
    models: [],
  };
  const rows = [...(await connect(run)), ...(await readOnlyRows(run))];
  if (write) rows.push(...(await writes(run)));
  else {
    rows.push({ point: "usage paging field", assumes: `"${run.usageField}"`, observed: "checked with --write only (a key of the doctor's makes usage to page through)", verdict: "not checked" });
    rows.push({ point: "create mark, write answers, refusals, alias filter", assumes: "see docs/decisions.md", observed: "checked with --write only", verdict: "not checked" });
    rows.push({ point: "aliases and pricing as kept", assumes: "as written (case, length, factor decimals; an edit sets the whole pricing)", observed: "checked with --write only", verdict: "not checked" });
  }
  rows.push(...answerRows(probe));
  const all = rows.sort((a, b) => order(a) - order(b));
  if (!write) return { rows: all };
  const profile = profileOf(probe, run.measured, all);
  const clash = clashRow(profile);
  return { rows: clash ? [...all, clash] : all, profile };
}

/**
 * Both credentials, the balance and the sub-account list (all at once, or by pages where that is refused): the
 * doctor stops when either is refused, or when the platform redirects (with the client's own message: `up` stops
 * on it too).
 */
async function connect(run: Run): Promise<DoctorRow[]> {
  const { probe, measured } = run;
  const balance = await probe.send(OPERATIONS.balance, {});
  if (meaningOf(balance) === "unauthorised") throw new Error(`the admin key was refused (${balance.status}) by ${probe.origin}`);
  if (balance.status >= 300 && balance.status < 400) {
    const err = await run.client.account.balance().then(() => undefined, (e: unknown) => e);
    const why = err instanceof Error ? err.message : `account/balance answered HTTP ${balance.status}, a redirect`;
    throw new Stopped(`${why}; \`pulumi up\` stops on the same answer, and every other point is hidden behind it (the emulator plays it with --reading redirects)`, "redirects");
  }
  if (refused(balance)) throw new Error(`account/balance was refused: ${describeRefusal(balance)}`);
  let list = await probe.send(OPERATIONS.listSubAccounts, run.paging);
  if (meaningOf(list) === "unauthorised") throw new Error(`the main account key was refused (${list.status}) by ${probe.origin}`);
  const allRefused = refused(list);
  if (allRefused) {
    measured.refused.push(signatureOf(list));
    run.paging = { page: 1, page_size: 100 };
    list = await probe.send(OPERATIONS.listSubAccounts, run.paging);
  }
  // A list refused in pages too (403, success: false in a 200): the main account key cannot list, so nothing runs.
  if (refused(list)) throw new Error(`the sub-account list was refused with the main account key: ${describeRefusal(list)}`);
  const models = OPERATIONS.models.response.safeParse((await probe.send(OPERATIONS.models, {})).body);
  if (models.success) run.models = [...new Set(models.data.models.map((m) => m.model))];
  const wrongAdmin = await probe.send(OPERATIONS.balance, {}, `sk-admin-doctor${randomBytes(12).toString("hex")}`);
  if (refused(wrongAdmin)) measured.unauthorised.push(signatureOf(wrongAdmin));
  const hasTotal = isObject(list.body) && typeof list.body.total !== "undefined" && "pageSize" in list.body;
  return [
    { point: "credentials", assumes: "admin key for the management group, main account key for the sub-account group", observed: "both accepted", verdict: "holds" },
    allRefused
      ? { point: "page_size=-1 (all sub-accounts)", assumes: "accepted", observed: "refused", verdict: "handled", reading: "list-all-refused" }
      : { point: "page_size=-1 (all sub-accounts)", assumes: "accepted", observed: "accepted", verdict: "holds" },
    {
      point: "list answer fields",
      assumes: "items, total, page, pageSize",
      observed: hasTotal ? "as assumed" : `fields ${isObject(list.body) ? Object.keys(list.body).join(", ") : "(none)"}`,
      verdict: hasTotal ? "holds" : "handled",
      reading: hasTotal ? undefined : "list-no-total",
    },
  ];
}

/** The management group's refusals, read-only: a get of a key that does not exist (gone). */
async function readOnlyRows(run: Run): Promise<DoctorRow[]> {
  const missing = await run.probe.send(OPERATIONS.getApiKey, { key: unknownKey() });
  if (refused(missing)) run.measured.goneKey.push(signatureOf(missing));
  return [errorShapeRow("management group errors", missing, run.probe.envelope), goneRow("a key that does not exist", missing, "management")];
}

/** The rows every answer the doctor got speaks to: envelope, fields the spec does not list, value forms, ids, transient answers. */
function answerRows(probe: Probe): DoctorRow[] {
  const extra = new Set<string>();
  for (const a of probe.answers) unknownFields(a, extra);
  const form = probe.answers.map((a) => otherForm(a)).find((f) => f !== undefined);
  const forms = "decimals in strings, ids as numbers, ISO 8601 timestamps with an offset";
  return [
    {
      point: "answer envelope",
      assumes: "answers as the spec shows them",
      observed: probe.envelope.seen ? "wrapped as {code, message, data}" : "not wrapped",
      verdict: probe.envelope.seen ? "handled" : "holds",
      reading: probe.envelope.seen ? (probe.envelope.withoutData ? "envelope-no-data" : "envelope") : undefined,
    },
    {
      point: "fields the spec does not list",
      assumes: "none needed; any is ignored",
      observed: extra.size ? `${[...extra].slice(0, 6).join(", ")}${extra.size > 6 ? ", ..." : ""}` : "none seen",
      verdict: extra.size ? "handled" : "holds",
      reading: extra.size ? "extra-fields" : undefined,
    },
    // Judged with the client's own schemas: "handled" only when the client reads every answer the doctor got.
    probe.unreadable
      ? { point: "value forms", assumes: forms, observed: `the client cannot read ${probe.unreadable}${form ? ` (${form})` : ""}`, verdict: "setting", setting: "none exists: report this platform's value form", reading: form ? "other-forms" : undefined }
      : { point: "value forms", assumes: forms, observed: form ? `${form}: read by the client` : "as assumed", verdict: form ? "handled" : "holds", reading: form ? "other-forms" : undefined },
    probe.snowflake
      ? { point: "ids", assumes: "whole numbers (spec 2.5)", observed: `beyond 2^53 (${probe.snowflake}): the client keeps them as their digits, never rounded`, verdict: "handled", reading: "snowflake-ids" }
      : { point: "ids", assumes: "whole numbers (spec 2.5)", observed: "within 2^53", verdict: "holds" },
    {
      point: "transient answers",
      assumes: "429 (or 5xx) when the platform cannot answer now",
      observed: probe.transient ? `${probe.transient.text}: the client tries it again` : "none seen",
      verdict: probe.transient ? "handled" : "holds",
      reading: probe.transient ? "transient-200" : undefined,
    },
    { point: "rate limit answer", assumes: "429 with Retry-After", observed: "not reached (it takes 60 writes a minute)", verdict: "not checked" },
  ];
}

/** The platform profile of what the probes measured (api/profile.ts), with the forms its `rows` found values kept in (`kept`). */
function profileOf(probe: Probe, measured: Measured, rows: readonly DoctorRow[]): Profile {
  const kept = KEPT_FORMS.filter((f: KeptForm) => rows.some((r) => r.verdict === "handled" && r.reading === f));
  const transient: Signature[] = [{ status: 429 }];
  if (probe.transient) transient.push(probe.transient.code ? { status: probe.transient.status, code: probe.transient.code } : { status: probe.transient.status });
  const form = probe.answers.map((a) => otherForm(a)).find((f) => f !== undefined);
  return ProfileSchema.parse({
    version: PROFILE_VERSION,
    done: probe.envelope.seen && probe.envelope.doneCode !== undefined ? { shape: "envelope", code: probe.envelope.doneCode } : { shape: "plain" },
    refused: unique(measured.refused),
    goneKey: unique(measured.goneKey),
    goneSubAccount: unique(measured.goneSubAccount),
    transient: unique(transient),
    unauthorised: unique([{ status: 401 }, ...measured.unauthorised]),
    ...(kept.length > 0 && { kept }),
    ...(form && { forms: { seen: form.slice(0, 120) } }),
    ...(Object.keys(measured.limits).length > 0 && { limits: measured.limits }),
  });
}

/** A row when the profile lists the same signature as gone and as refused: such an answer stops (never taken for gone). */
function clashRow(profile: Profile): DoctorRow | undefined {
  const clash = (["goneKey", "goneSubAccount"] as const).flatMap((m) =>
    profile[m].filter((g) => profile.refused.some((r) => r.status === g.status && r.code === g.code)).map(() => m),
  );
  if (clash.length === 0) return undefined;
  return {
    point: "gone and refused told apart",
    assumes: "a gone object answers otherwise than a refused request",
    observed: `the same status and code for ${clash.join(", ")} and refused: with the profile, such an answer stops (never taken for gone)`,
    verdict: "setting",
    setting: "none exists: report this platform's refusal codes",
  };
}

/** The signatures without repeats. */
function unique(signatures: Signature[]): Signature[] {
  const seen = new Set<string>();
  return signatures.filter((s) => !seen.has(JSON.stringify(s)) && seen.add(JSON.stringify(s)) !== undefined);
}

const order = (r: DoctorRow): number => ["holds", "handled", "setting", "not checked"].indexOf(r.verdict);

/**
 * The row of what an answer about something that does not exist means to the package: gone (as a 404), or a
 * refusal it looks behind (a key's refusal naming the key: one get per key; a sub-account's: one list), or neither.
 */
function goneRow(what: string, answer: Raw, group: "management" | "sub-account"): DoctorRow {
  const point = `gone: ${what}`;
  const assumes = "404 (or an answer that says not found)";
  if (meaningOf(answer) === "gone") return { point, assumes, observed: `${describeShape(answer)}: read as gone`, verdict: answer.status === 404 ? "holds" : "handled" };
  if (group === "management" && namesKey(answer)) {
    return { point, assumes, observed: `${describeShape(answer)} (${describeRefusal(answer)}): a refusal of a key the package holds that names the key, read as gone`, verdict: "handled", reading: "gone-400" };
  }
  if (group === "sub-account" && meaningOf(answer) === "refused") {
    return { point, assumes, observed: `${describeShape(answer)} (${describeRefusal(answer)}): a refused edit or delete is followed by one list, and what it does not show is gone`, verdict: "handled", reading: "gone-400" };
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
    // The envelope wraps every refusal: a shape of the group's own (success: false, a bare {code, message}) does not show behind it.
    const hides = "the envelope wraps every refusal, and hides any other refusal shape behind it";
    if (envelope.seen && envelope.withoutData) return { point, assumes, observed: `HTTP ${answer.status} {code, message} without data: ${hides}`, verdict: "handled", reading: "envelope-no-data" };
    if (envelope.seen) return { point, assumes, observed: `HTTP ${answer.status} with an envelope's code: ${hides}`, verdict: "handled", reading: "envelope" };
    if (isObject(answer.wire) && answer.wire.success === false) return { point, assumes, observed: `HTTP ${answer.status} with success: false`, verdict: "handled", reading: "refusals-200" };
    return { point, assumes, observed: `HTTP ${answer.status} without a refusal the package recognises`, verdict: "setting", setting: "none exists: report this platform's refusal shape" };
  }
  if (isObject(answer.wire) && isObject(answer.wire.error)) return { point, assumes, observed: `${answer.status} {error: {code, message}}`, verdict: "holds" };
  if (isObject(answer.wire) && ("code" in answer.wire || "message" in answer.wire)) return { point, assumes, observed: `${answer.status} {code, message}`, verdict: "handled", reading: "bare-errors" };
  return { point, assumes, observed: `${answer.status} ${answer.wire === undefined ? "without JSON" : "in another shape"} (the status decides)`, verdict: "handled" };
}

/** The checks that need a write, each with its throwaway object, deleted again whatever happens (cleanUp). */
async function writes(run: Run): Promise<DoctorRow[]> {
  const rows: DoctorRow[] = [];
  const hex = randomBytes(6).toString("hex");
  // A refused request of the management group (a usage window that ends before it starts): what "refused" looks like.
  const badQuery = await run.probe.send(OPERATIONS.usageSummary, { start: "2001-01-02", end: "2001-01-01" });
  if (refused(badQuery) && meaningOf(badQuery) !== "transient") run.measured.refused.push(signatureOf(badQuery));
  rows.push(...(await keyChecks(run, hex)));
  // A delete of a key that does not exist: done (idempotent) or a refusal the client reads as gone.
  const keyDelete = await idempotent(run.probe, OPERATIONS.deleteApiKeys, { keys: [unknownKey()] });
  let finished = false;
  try {
    rows.push(...(await subAccountChecks(run, hex, keyDelete)));
    finished = true;
  } finally {
    const deleted = await cleanUp(run, finished);
    if (deleted) rows.push(deleted);
  }
  rows.push(...writeAnswerRows(run));
  return rows;
}

/** The rows of how writes are confirmed, and of writes whose answer was lost. */
function writeAnswerRows(run: Run): DoctorRow[] {
  const rows: DoctorRow[] = [];
  const { terse } = run.answers;
  const noContent = run.probe.noBody;
  const assumes = "status answers {enabled}, delete {deleted}, sub-account writes {success}";
  rows.push({ point: "write answers", assumes, observed: terse ? "confirmed otherwise ({success: true} or {})" : "as assumed", verdict: terse ? "handled" : "holds", reading: terse ? "terse-writes" : undefined });
  rows.push({
    point: "writes answered without a body",
    assumes: "a JSON body",
    observed: noContent ? "204 No Content: the client takes it as done where nothing is read from it" : "none",
    verdict: noContent ? "handled" : "holds",
    reading: noContent ? "no-content" : undefined,
  });
  if (run.probe.lost.length > 0) {
    rows.push({
      point: "a write whose answer is lost",
      assumes: "answered (a 5xx means not done, for a create: in doubt)",
      observed: `${[...new Set(run.probe.lost)].join(", ")} answered 5xx although done (found by looking, or the write sent again)`,
      verdict: "handled",
      reading: "gateway-timeout-after-write",
    });
  }
  return rows;
}

/**
 * One key, deleted again whatever happens: how long it takes to show, the IP allow-list as kept, the usage paging
 * while it exists, security_config parts sent back, and the answers of status and delete.
 */
async function keyChecks(run: Run, hex: string): Promise<DoctorRow[]> {
  const { probe, made } = run;
  const rows: DoctorRow[] = [];
  // Letters, digits and `-` only: an API key's alias is sent as declared (no mark), and this one passes everywhere.
  // One IP address in its allow-list (a documentation address): the form the platform keeps it in.
  const address = "192.0.2.10";
  // Mixed case: the alias the platform keeps shows whether it changes case.
  made.keyAlias = `Doctor-${hex}`;
  const created = await probe.send(OPERATIONS.createApiKey, { alias: made.keyAlias, security_config: { ip: { allow: [address] } } });
  const key = isObject(created.body) && typeof created.body.key === "string" ? created.body.key : undefined;
  if (!key) throw new Error(`api-key/create answered ${created.status} without a key`);
  made.key = key;
  try {
    let kept: Raw | undefined;
    run.lag = await lagOf(probe, async () => ((kept = await probe.send(OPERATIONS.getApiKey, { key })), !isGone(kept)));
    rows.push(allowListRow(kept!, address));
    rows.push(caseRow(made.keyAlias, kept!));
    const usage = await usageRow(probe, run.usageField);
    rows.push(usage);
    if (usage.verdict === "holds" || usage.setting) {
      const field = usage.verdict === "holds" ? run.usageField : /"(\w+)" is read/.exec(usage.observed)?.[1];
      if (field) run.measured.limits.usagePageField = field;
    }
    const parts = await partsRow(probe, key, made.keyAlias, created);
    if (parts) rows.push(parts);
    rows.push(await lengthRow(run, key, address));
    const status = await idempotent(probe, OPERATIONS.setApiKeyStatus, { key, enabled: false });
    const removed = await idempotent(probe, OPERATIONS.deleteApiKeys, { keys: [key] });
    if (!refused(removed)) made.keyDeleted = true;
    // A write sent a second time after a lost answer says nothing of the confirmation's shape.
    const confirmed = (a: Raw & { retried: boolean }, field: string) => a.retried || a.status === 204 || (isObject(a.body) && field in a.body);
    run.answers.terse ||= !confirmed(status, "enabled") || !confirmed(removed, "deleted");
  } finally {
    if (!made.keyDeleted) await deleteKey(run);
  }
  return rows;
}

/** The row of the IP allow-list as the new key's get answers it. */
function allowListRow(kept: Raw, address: string): DoctorRow {
  const config = isObject(kept.body) && isObject(kept.body.security_config) ? kept.body.security_config : undefined;
  const allow = config && isObject(config.ip) && Array.isArray(config.ip.allow) ? config.ip.allow : undefined;
  const asRange = allow?.length === 1 && allow[0] === `${address}/32`;
  return {
    point: "IP allow-list entries as kept",
    assumes: "as sent",
    observed: allow === undefined ? "not answered" : asRange ? `an address kept as its range (${address}/32)` : allow[0] === address ? "as sent" : `kept as ${printable(JSON.stringify(allow)).slice(0, 60)}`,
    verdict: allow === undefined ? "not checked" : asRange ? "handled" : allow[0] === address ? "holds" : "not checked",
    reading: asRange ? "normalised-values" : undefined,
  };
}

/** An alias as a row shows it: at most 40 characters, printable. */
const shortAlias = (alias: string) => printable(alias.length > 40 ? `${alias.slice(0, 40)}...` : alias);

/**
 * The row of an alias the platform answered (`live`) for one it was sent, judged as the runtime compares them
 * (api/keptForms.ts sameAlias): as sent; a form of it the platform keeps (`changed`: lower-cased, cut), which the
 * runtime takes for the alias declared; or another alias, which it takes for drift.
 */
function keptAliasRow(point: string, assumes: string, sent: string, live: string, changed: { shows: boolean; what: string; reading: string; also: string }): DoctorRow {
  if (!sameAlias(sent, live, EVERY_KEPT_FORM)) {
    return { point, assumes, observed: `"${shortAlias(sent)}" kept as "${shortAlias(live)}", not a form of it the runtime knows: it reads another alias, drift at every gate and an edit at every up`, verdict: "setting", setting: "none exists: report this platform's alias form" };
  }
  if (!changed.shows) return { point, assumes, observed: live === sent ? "as sent" : "as sent but for its case (alias case as kept)", verdict: "holds" };
  return { point, assumes, observed: `${changed.what}: the runtime takes it for the alias declared (no drift, no edit) and keeps the platform's form in the state; ${changed.also}`, verdict: "handled", reading: changed.reading };
}

/** The row of the case of an alias: the doctor's key, created under a mixed-case alias, as its get answers it. */
function caseRow(sent: string, kept: Raw): DoctorRow {
  const point = "alias case as kept";
  const assumes = "as sent";
  const live = isObject(kept.body) && typeof kept.body.alias === "string" ? kept.body.alias : undefined;
  if (live === undefined) return { point, assumes, observed: "not checked: the key's get answered no alias", verdict: "not checked" };
  return keptAliasRow(point, assumes, sent, live, {
    shows: live !== sent,
    what: `"${shortAlias(sent)}" kept as "${shortAlias(live)}"`,
    reading: "lowercase-aliases",
    also: "a create whose answer is lost is found by its marked alias lower-cased (api/keptForms.ts sameMarked)",
  });
}

/**
 * The row of a long alias: one edit of the doctor's key to an alias of ALIAS_MAX_LENGTH characters, and the alias
 * its answer shows. A platform that refuses it (a shorter cap, named by the create mark's row) hides whether it cuts.
 */
async function lengthRow(run: Run, key: string, address: string): Promise<DoctorRow> {
  const point = "long alias as kept";
  const assumes = `kept whole, up to ${ALIAS_MAX_LENGTH} characters`;
  const sent = `${run.made.keyAlias}-`.padEnd(ALIAS_MAX_LENGTH, "Cut");
  const edited = await idempotent(run.probe, OPERATIONS.editApiKey, { key, alias: sent, security_config: { ip: { allow: [address] } } });
  if (refused(edited)) {
    if (meaningOf(edited) === "refused") run.measured.refused.push(signatureOf(edited));
    return { point, assumes, observed: `not checked: an alias of ${ALIAS_MAX_LENGTH} characters was refused (${describeRefusal(edited)}), which hides whether longer aliases would be kept cut (cut-aliases)`, verdict: "not checked" };
  }
  const live = isObject(edited.body) && typeof edited.body.alias === "string" ? edited.body.alias : undefined;
  // What the key is called now, should it have to be named (Throwaways.left).
  run.made.keyAlias = live ?? sent;
  if (live === undefined) return { point, assumes, observed: "not checked: the key's edit answered no alias", verdict: "not checked" };
  const length = [...live].length;
  // Kept cut, not refused: the profile's aliasCut, within which the runtime places a create's mark.
  if (length < ALIAS_MAX_LENGTH && sameAlias(sent, live, EVERY_KEPT_FORM)) run.measured.limits.aliasCut = length;
  return keptAliasRow(point, assumes, sent, live, {
    shows: length < ALIAS_MAX_LENGTH,
    what: `an alias of ${ALIAS_MAX_LENGTH} characters kept cut to its first ${length}`,
    reading: "cut-aliases",
    also:
      `the profile keeps the cut (limits.aliasCut ${length}, with --save), so that a create's mark is placed within it and a lost create is found; ` +
      "without the profile a lost create whose mark was cut off stops, taking nothing; and the cut hides whether longer aliases would be refused (short-aliases)",
  });
}

/** A pricing factor of more decimals than a platform is known to keep (FACTOR_DECIMALS_MAX is 6). */
const PROBE_FACTOR = 1.2345678;

/**
 * A pricing factor and a pricing edit as the platform keeps them: two edits of the doctor's first sub-account (the
 * model list's first two models at factor 1, then the first alone at PROBE_FACTOR), then one list of it. Judged as
 * the runtime compares (api/keptForms.ts): the factor by sameFactor, the model left out by modelsBeyond. Its own
 * edits, not the create: a platform that refuses a model there must not pass for one that refuses the create mark.
 */
async function pricingRows(run: Run, token: string, alias: string): Promise<DoctorRow[]> {
  const factorRow = { point: "pricing factor as kept", assumes: "as sent" };
  const mergeRow = { point: "a pricing edit that leaves a model out", assumes: "the edit sets the whole list (spec 4.11): the model is removed" };
  const notChecked = (why: string): DoctorRow[] => [factorRow, mergeRow].map((r) => ({ ...r, observed: `not checked: ${why}`, verdict: "not checked" }));
  if (run.models.length < 2) return notChecked("the model list names fewer than two models");
  const [model, other] = run.models;
  const sent = [{ model, pricingFactor: PROBE_FACTOR }];
  for (const pricing of [[model, other].map((m) => ({ model: m, pricing_factor: 1 })), [{ model, pricing_factor: PROBE_FACTOR }]]) {
    const edit = await idempotent(run.probe, OPERATIONS.editSubAccounts, { sks: [token], alias, model_pricing: pricing });
    if (refused(edit)) return notChecked(`a pricing edit was refused (${describeRefusal(edit)})`);
  }
  const items = itemsOf((await run.probe.send(OPERATIONS.listSubAccounts, { sk: token, ...run.paging })).body);
  const item = items.find((i) => i.token === token || i.token === maskKey(token)) ?? (items.length === 1 ? items[0] : undefined);
  const parsed = z.array(ModelPricingSchema).safeParse(item?.model_pricing);
  if (!parsed.success) return notChecked("the list did not show the sub-account's pricing");
  const live = parsed.data.map((m) => ({ model: m.model, pricingFactor: m.pricing_factor }));
  const factor = live.find((m) => m.model === model)?.pricingFactor;
  const kept = modelsBeyond(sent, live);
  const rows: DoctorRow[] = [];
  if (factor === undefined) rows.push({ ...factorRow, observed: `${model} not listed after an edit that set it`, verdict: "setting", setting: "none exists: report this platform's pricing edit" });
  else if (factor === PROBE_FACTOR) rows.push({ ...factorRow, observed: "as sent", verdict: "holds" });
  else if (sameFactor(PROBE_FACTOR, factor, EVERY_KEPT_FORM)) {
    rows.push({ ...factorRow, observed: `${PROBE_FACTOR} kept as ${factor}: the runtime takes it for the factor declared (no drift, no edit) and keeps the platform's form in the state`, verdict: "handled", reading: "rounded-factors" });
  } else {
    rows.push({ ...factorRow, observed: `${PROBE_FACTOR} kept as ${factor}, not a rounding of it: the runtime reads another factor, drift at every gate`, verdict: "setting", setting: "none exists: report this platform's pricing form" });
  }
  rows.push(
    kept.length === 0
      ? { ...mergeRow, observed: "removed", verdict: "holds" }
      : {
          ...mergeRow,
          observed:
            `${kept.join(", ")} kept after an edit that left it out: the edit merges, so no edit removes a model; an update that removes one ` +
            "looks with one list and fails naming the model and the remedy (the console, or `pulumi up --replace`), the state holding what the platform kept: a removed permission is never silently kept",
          verdict: "handled",
          reading: "merged-pricing",
        },
  );
  return rows;
}

/**
 * Parts of a key's security_config the spec does not show: the package keeps them and sends them back with every
 * edit (an edit replaces the whole config). Where the new key shows some, one edit sends them back as it would.
 */
async function partsRow(probe: Probe, key: string, alias: string, created: Raw): Promise<DoctorRow | undefined> {
  const shown = isObject(created.body) ? platformPartsOf(created.body.security_config) : undefined;
  if (shown === undefined) return undefined;
  const parts = JSON.parse(shown) as Record<string, unknown>;
  const echoed = await probe.send(OPERATIONS.editApiKey, { key, alias, security_config: parts });
  return {
    point: "security_config parts the spec does not show",
    assumes: "none; any is kept and sent back with every edit",
    observed: `${Object.keys(parts).join(", ")}; sent back ${!refused(echoed) ? "and accepted" : `and refused (${describeRefusal(echoed)}): the package sends its edit again without the parts a refusal names`}`,
    verdict: "handled",
    reading: "extra-fields",
  };
}

/** Deletes the doctor's key (cleanUp); one it could not delete stays named in `made`. */
async function deleteKey(run: Run): Promise<void> {
  const { probe, made } = run;
  if (made.key === undefined) return;
  probe.cleaning = true;
  try {
    const removed = await idempotent(probe, OPERATIONS.deleteApiKeys, { keys: [made.key] });
    made.keyDeleted = !refused(removed) || isGone(await probe.send(OPERATIONS.getApiKey, { key: made.key }));
  } catch {
    // Named below (Throwaways.left): the error that stopped the doctor is the one it reports.
  } finally {
    probe.cleaning = false;
  }
}

/**
 * Sub-accounts of balance 0 under the doctor's aliases: the create mark, how long a create takes to show, the alias
 * filter, the list as the client reads it, the largest create, the longest alias, and what "gone" looks like.
 */
async function subAccountChecks(run: Run, hex: string, keyDelete: Raw): Promise<DoctorRow[]> {
  const { probe, measured } = run;
  const { alias, row: mark } = await markRow(run, hex);
  const rows = [mark];
  const first = [...run.made.tokens][0];
  // The first create's sub-account, looked for until it shows (the key's lag, measured first, may be shorter).
  const shows = async () => itemsOf((await probe.send(OPERATIONS.listSubAccounts, { alias, ...run.paging })).body).some((i) => i.alias === alias);
  const lag = await lagOf(probe, shows);
  run.lag = lag === undefined || run.lag === undefined ? undefined : Math.max(lag, run.lag);
  if (run.lag !== undefined && run.lag > 0) measured.limits.visibilityMs = Math.min(roundUp(run.lag), LATE_VISIBILITY_WINDOW_MS);
  rows.push(visibilityRow(run.lag, run.profile, run.lateWritesMs));
  rows.push(await aliasFilterRow(run, alias));
  rows.push(await countRow(run, alias));
  // What was just made shows only after the platform's lag: the list is read once it has passed.
  if (run.lag) await probe.clock.sleep(run.lag);
  rows.push(...(await listRows(run, alias, first)));
  if (first !== undefined) rows.push(...(await pricingRows(run, first, alias)));
  const longest = first === undefined ? undefined : await measureAliasMax(run, hex, first, mark);
  if (longest) rows.push(longest);
  // Sub-account refusals: an edit of a token that does not exist (changes nothing): the group's refusal shape, and gone.
  const goneEdit = await probe.send(OPERATIONS.editSubAccounts, { sks: [unknownKey()], alias: "doctor", model_pricing: [] });
  rows.push(errorShapeRow("sub-account group errors", goneEdit, probe.envelope));
  rows.push(goneRow("a sub-account that does not exist", goneEdit, "sub-account"));
  if (refused(goneEdit)) measured.goneSubAccount.push(signatureOf(goneEdit));
  // A delete of a token that does not exist: done (idempotent deletes) or gone; either way the package's delete is done.
  const goneDelete = await idempotent(probe, OPERATIONS.deleteSubAccounts, { sks: [unknownKey()] });
  if (refused(goneDelete)) measured.goneSubAccount.push(signatureOf(goneDelete));
  rows.push(deletesRow(keyDelete, goneDelete));
  return rows;
}

/** Milliseconds rounded up to the next 100. */
const roundUp = (ms: number) => Math.max(100, Math.ceil(ms / 100) * 100);
/** Seconds, for a row. */
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** A sub-account create under `alias` (`count` of balance 0); one answered 5xx is looked for by its alias, as the package looks. */
async function subCreate(run: Run, alias: string, count = 1): Promise<Raw> {
  const { probe, made } = run;
  made.aliases.push(alias);
  let answer = await probe.send(OPERATIONS.createSubAccounts, { alias, balance: 0, model_pricing: [], count });
  const answered = answer.status < 500;
  if (!answered) {
    // Looked for with the client's own list, as the package looks (a list it cannot read stops the doctor as it stops `up`).
    const found = await run.client.subAccounts.list({ alias }).catch(async (err: unknown) => {
      // A list the client cannot read that shows sub-accounts under the alias: their tokens (masked-tokens), as listRows says.
      const shown = itemsOf((await probe.send(OPERATIONS.listSubAccounts, { alias, ...run.paging })).body).some((i) => i.alias === alias);
      throw new Stopped(`a sub-account create answered ${answer.status} (its answer lost) could not be looked for: ${err instanceof Error ? err.message : String(err)}; \`pulumi up\` stops there too, which hides the points not checked yet`, shown ? "masked-tokens" : undefined);
    });
    if (found.length > 0) {
      probe.lost.push(OPERATIONS.createSubAccounts.name);
      const items = found.map((f) => ({ token: f.token, alias: f.alias }));
      answer = { status: 200, body: { items }, wire: { items }, judged: { answer: { items } } };
    }
  }
  const items = itemsOf(answer.body);
  const tokens = items.flatMap((i) => (typeof i.token === "string" ? [i.token] : []));
  for (const t of tokens) made.tokens.add(t);
  made.under.set(alias, [...(made.under.get(alias) ?? []), ...tokens]);
  // A create confirmed without `success` (terse-writes); a refusal says nothing of the confirmation.
  if (answered && !refused(answer) && items.length > 0 && isObject(answer.body) && !("success" in answer.body)) run.answers.terse = true;
  return answer;
}

/** The create mark: the tilde form, short then as long as the package allows; the fit form where it is refused. */
async function markRow(run: Run, hex: string): Promise<{ alias: string; row: DoctorRow }> {
  const { measured } = run;
  const tildeShort = `doctor~${hex}`;
  const short = await subCreate(run, tildeShort);
  if (refused(short)) {
    measured.refused.push(signatureOf(short));
    const fitted = await subCreate(run, `doct${hex}`);
    measured.limits.createMark = "fit";
    const row: DoctorRow = refused(fitted)
      ? { point: "create mark", assumes: "<alias>~<hex> accepted", observed: `refused in both forms (${describeRefusal(fitted)})`, verdict: "setting", setting: "none exists: the platform refuses both marks" }
      : { point: "create mark", assumes: "<alias>~<hex> accepted", observed: "`~` refused; the fit form accepted", verdict: "handled", setting: `${SETTINGS.createMark.config}=fit (saves one call a run)`, reading: "restricted-aliases" };
    return { alias: `doct${hex}`, row };
  }
  const long = await subCreate(run, `${"doctor".padEnd(ALIAS_MAX_LENGTH - 13, "-")}~${hex}`);
  if (!refused(long)) return { alias: tildeShort, row: { point: "create mark", assumes: `<alias>~<hex>, up to ${ALIAS_MAX_LENGTH} characters`, observed: "accepted", verdict: "holds" } };
  measured.refused.push(signatureOf(long));
  measured.limits.createMark = "fit";
  return {
    alias: tildeShort,
    row: { point: "create mark", assumes: `aliases of up to ${ALIAS_MAX_LENGTH} characters`, observed: "a long marked alias refused (aliases are capped shorter)", verdict: "handled", setting: `${SETTINGS.createMark.config}=fit (saves one call a run)`, reading: "short-aliases" },
  };
}

/**
 * The longest alias the platform takes (limits.aliasMax), where it refuses one of ALIAS_MAX_LENGTH: found by edits
 * of the doctor's first sub-account, letters and digits only, halving the range each time (about 7 edits). The
 * create mark's row says it.
 */
async function measureAliasMax(run: Run, hex: string, token: string, mark: DoctorRow): Promise<DoctorRow | undefined> {
  const aliasOf = (n: number) => `doct${hex}`.padEnd(n, "x");
  const takes = async (n: number) => !refused(await idempotent(run.probe, OPERATIONS.editSubAccounts, { sks: [token], alias: aliasOf(n), model_pricing: [] }));
  if (await takes(ALIAS_MAX_LENGTH)) return undefined;
  if (!(await takes(FIT_MARK_MIN_LENGTH))) return undefined;
  let [lo, hi] = [FIT_MARK_MIN_LENGTH, ALIAS_MAX_LENGTH - 1];
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (await takes(mid)) lo = mid;
    else hi = mid - 1;
  }
  run.measured.limits.aliasMax = lo;
  mark.observed += `; the longest alias taken: ${lo} characters`;
  // Where `~` is refused too (restricted-aliases), the short cap shows only here.
  if (mark.reading !== "short-aliases") return { point: "longest alias", assumes: `${ALIAS_MAX_LENGTH} characters`, observed: `${lo} characters (measured by edits)`, verdict: "handled", reading: "short-aliases" };
  return undefined;
}

/**
 * The row of how long a write took to show, against how long the runtime looks for a late write (lookBound: the
 * `lateWritesMs` setting, else its default or half as long again as the profile's measured lag).
 */
function visibilityRow(lag: number | undefined, profile: Profile | undefined, settingMs: number | undefined): DoctorRow {
  const point = "late visibility of a write";
  const assumes = `a write shows within ${seconds(lookBound(settingMs, undefined))} (a read that misses one looks again that long)`;
  if (lag === undefined) {
    return { point, assumes, observed: `a new key or sub-account not shown after ${seconds(VISIBILITY_PROBE_MAX_MS)}`, verdict: "setting", setting: "none exists: a write that shows that late cannot be told from a lost one" };
  }
  if (lag === 0) return { point, assumes, observed: "shown at once", verdict: "holds" };
  const covered = lookBound(settingMs, profile?.limits?.visibilityMs);
  if (lag <= covered) return { point, assumes, observed: `shown after ${seconds(lag)}: the runtime looks again for ${seconds(covered)}`, verdict: "handled" };
  return {
    point,
    assumes,
    observed: `shown after ${seconds(lag)}, later than the runtime looks (${seconds(covered)}): a read right after a write would take it for gone`,
    verdict: "setting",
    setting: `${SETTINGS.profile.config} (llm-accounts doctor --write --save), whose limits.visibilityMs makes the runtime look for ${seconds(lookBound(settingMs, roundUp(lag)))}, or ${SETTINGS.lateWritesMs.config}`,
  };
}

/** Alias filter: a prefix of the doctor's alias must match nothing (listed as the client lists). */
async function aliasFilterRow(run: Run, alias: string): Promise<DoctorRow> {
  const prefix = await run.probe.send(OPERATIONS.listSubAccounts, { alias: alias.slice(0, -3), ...run.paging });
  const point = "alias filter of the list";
  if (refused(prefix)) return { point, assumes: "exact", observed: `not checked: the filtered list was refused (${describeRefusal(prefix)})`, verdict: "not checked" };
  const matched = itemsOf(prefix.body).length;
  return { point, assumes: "exact", observed: matched > 0 ? "matches a prefix" : "exact", verdict: matched > 0 ? "handled" : "holds", reading: matched > 0 ? "alias-filter-prefix" : undefined };
}

/**
 * The largest count of one create (not shown): one create of as many as the package sends at once, balance 0. The
 * package splits a create on a refusal that names `count` (runtime/subAccountBatch/recovery.ts), or to the profile's createCap.
 */
async function countRow(run: Run, alias: string): Promise<DoctorRow> {
  const full = await subCreate(run, alias, SUB_ACCOUNT_MAX_COUNT);
  const point = "largest count of one sub-account create";
  const assumes = `${SUB_ACCOUNT_MAX_COUNT}`;
  if (!refused(full)) return { point, assumes, observed: `count ${SUB_ACCOUNT_MAX_COUNT} accepted`, verdict: "holds" };
  const why = describeRefusal(full);
  run.measured.refused.push(signatureOf(full));
  // Judged by the package's own rules: whether its split takes this refusal for the count's (smallerCountCap), and
  // the cap a refusal gives (refusedSizeCap: its number, else half), saved for the split to obey.
  const err = refusalError(OPERATIONS.createSubAccounts, full);
  const cap = refusedSizeCap(err, /[\s\S]/, SUB_ACCOUNT_MAX_COUNT);
  if (cap !== undefined) run.measured.limits.createCap = cap;
  if (smallerCountCap(err, SUB_ACCOUNT_MAX_COUNT) !== undefined) return { point, assumes, observed: `count ${SUB_ACCOUNT_MAX_COUNT} refused (${why})`, verdict: "handled", reading: "small-count-cap" };
  const observed = `count ${SUB_ACCOUNT_MAX_COUNT} refused (${why}): the refusal does not name count, so the package does not split a larger batch by itself`;
  const obeyed = run.profile?.limits?.createCap;
  if (obeyed !== undefined && cap !== undefined && obeyed <= cap) return { point, assumes, observed: `${observed}; the profile's createCap ${obeyed} splits it`, verdict: "handled" };
  return {
    point,
    assumes,
    observed,
    verdict: "setting",
    setting: cap !== undefined ? `${SETTINGS.profile.config} (llm-accounts doctor --write --save), whose limits.createCap ${cap} splits creates` : "none exists: declare batches of at most the platform's cap (count)",
  };
}

/** The error the client makes of a refusal (http.ts: of the class its meaning's status picks), for the package's own rules to judge. */
function refusalError(op: Operation, a: Raw): ApiError {
  const refusal = "refusal" in a.judged ? a.judged.refusal : undefined;
  return ApiError.fromResponse(refusal?.meansStatus ?? a.status, { code: refusal?.code, apiMessage: refusal?.apiMessage, operation: describeOperation(op) });
}

/**
 * The list as the package reads it (the client's own list, as `up` calls it): the doctor's sub-accounts by their
 * alias, all of them and only them; a list that masks tokens stops there, with the client's message. And `total`
 * under a filter: one filtered by the first sub-account's token must count 1.
 */
async function listRows(run: Run, alias: string, first: string | undefined): Promise<DoctorRow[]> {
  const ours = [...run.made.tokens];
  const raw = itemsOf((await run.probe.send(OPERATIONS.listSubAccounts, { alias, ...run.paging })).body).filter((i) => i.alias === alias);
  const masked = raw.find((i) => typeof i.token === "string" && !ours.includes(i.token))?.token;
  const point = "the sub-account list as the client reads it";
  const assumes = "whole tokens, every sub-account of the filter";
  let listed: string[];
  try {
    listed = (await run.client.subAccounts.list({ alias })).map((s) => s.token);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return [
      { point, assumes, observed: `${masked ? `tokens masked (${String(masked).slice(0, 12)}): ` : ""}\`pulumi up\` stops at its first list: ${message}`, verdict: "setting", setting: "none exists: the package needs the list to show whole tokens", reading: masked ? "masked-tokens" : undefined },
      { point: "the list's total under a filter", assumes: "counts what the filter matches", observed: "not checked: hidden by the list the client cannot read", verdict: "not checked" },
    ];
  }
  const expected = new Set(run.made.under.get(alias));
  if (listed.length !== expected.size || !listed.every((t) => expected.has(t))) {
    return [{ point, assumes, observed: `the client's list shows ${listed.length} sub-accounts where the doctor made ${expected.size} under one alias`, verdict: "setting", setting: "none exists: report this platform's list" }];
  }
  const rows: DoctorRow[] = [{ point, assumes, observed: `${listed.length} sub-accounts, read as listed`, verdict: "holds" }];
  if (first === undefined) return rows;
  const one = await run.probe.send(OPERATIONS.listSubAccounts, { sk: first, ...run.paging });
  const total = isObject(one.body) ? Number(one.body.total) : NaN;
  const ignores = Number.isFinite(total) && total > itemsOf(one.body).length;
  const point2 = "the list's total under a filter";
  const assumes2 = "counts what the filter matches";
  if (!Number.isFinite(total)) rows.push({ point: point2, assumes: assumes2, observed: "not checked: the list answers no total (list-no-total), which hides what a total counts", verdict: "not checked" });
  else rows.push({ point: point2, assumes: assumes2, observed: ignores ? `${total} for one match: the client reads a filtered list by its items` : "as assumed", verdict: ignores ? "handled" : "holds", reading: ignores ? "total-unfiltered" : undefined });
  return rows;
}

/** The items of a list or create answer (the objects only). */
function itemsOf(body: unknown): Record<string, unknown>[] {
  return isObject(body) && Array.isArray(body.items) ? body.items.filter(isObject) : [];
}

/** Whether an answer says the object named does not exist, as the package reads it (gone, or a key's refusal naming the key). */
const isGone = (a: Raw) => meaningOf(a) === "gone" || namesKey(a);

/**
 * How long a write took to show: `shows` is asked from the write's answer on, every VISIBILITY_POLL_MS, until it
 * does (0 when at once), at most VISIBILITY_PROBE_MAX_MS (then undefined).
 */
async function lagOf(probe: Probe, shows: () => Promise<boolean>): Promise<number | undefined> {
  const from = probe.clock.now();
  if (await shows()) return 0;
  for (;;) {
    await probe.clock.sleep(VISIBILITY_POLL_MS);
    if (await shows()) return probe.clock.now() - from;
    if (probe.clock.now() - from >= VISIBILITY_PROBE_MAX_MS) return undefined;
  }
}

/**
 * Deletes what `--write` made (its key, once more where that failed; its sub-accounts, with those a create whose
 * answer was lost made, found under its aliases), whatever stopped it; what it could not delete stays named in
 * `made` (Throwaways.left). Returns the row of the largest `sks`, when the deletes ran.
 */
async function cleanUp(run: Run, finished: boolean): Promise<DoctorRow | undefined> {
  const { probe, made } = run;
  probe.cleaning = true;
  try {
    if (!finished) for (const t of (await leftUnder(probe, made.aliases, run.paging, [...made.tokens])) ?? []) made.tokens.add(t);
    if (!made.keyDeleted) await deleteKey(run);
    probe.cleaning = true;
    if (made.tokens.size === 0) return undefined;
    const { row, failed } = await deleteMade(run, [...made.tokens]);
    for (const t of made.tokens) if (!failed.includes(t)) made.tokens.delete(t);
    return row;
  } finally {
    probe.cleaning = false;
  }
}

/**
 * Tokens of sub-accounts under the doctor's aliases that are not among `known` (nor a masked form of one);
 * undefined when a list cannot be read.
 */
async function leftUnder(probe: Probe, aliases: string[], paging: Record<string, number>, known: string[]): Promise<string[] | undefined> {
  const found: string[] = [];
  const masks = new Set(known.map(maskKey));
  try {
    for (const alias of new Set(aliases)) {
      for (let page = 1; page <= 10; page++) {
        const list = await probe.send(OPERATIONS.listSubAccounts, { alias, ...paging, ...("page" in paging && { page }) });
        if (refused(list)) return undefined;
        const items = itemsOf(list.body);
        for (const i of items) if (i.alias === alias && typeof i.token === "string" && !known.includes(i.token) && !masks.has(i.token)) found.push(i.token);
        if (!("page" in paging) || items.length < 100) break;
      }
    }
  } catch {
    return undefined;
  }
  return [...new Set(found)];
}

/** The row of deletes of what does not exist: done (idempotent), gone (the package takes it as done), or neither. */
function deletesRow(key: Raw, subAccount: Raw): DoctorRow {
  const point = "deletes of what does not exist";
  const assumes = "a refusal that says gone (404)";
  const done = [key, subAccount].filter((a) => "answer" in a.judged).length;
  // A key delete refused naming the key is looked at, one get per key (runtime/command/deleteCoalescer.ts); a sub-account
  // delete refused is followed by one list: both are done for what is gone.
  const looked = (a: Raw) => (a === key ? namesKey(a) : meaningOf(a) === "refused");
  const gone = [key, subAccount].filter((a) => meaningOf(a) === "gone" || looked(a)).length;
  if (done + gone < 2) {
    const other = [key, subAccount].find((a) => refused(a) && meaningOf(a) !== "gone" && !looked(a))!;
    return { point, assumes, observed: `${describeShape(other)} (${describeRefusal(other)}): not read as gone`, verdict: "setting", setting: `${SETTINGS.profile.config} (llm-accounts doctor --write --save)` };
  }
  if (done > 0) return { point, assumes, observed: "answered done: deletes are idempotent", verdict: "handled", reading: "idempotent-deletes" };
  if ([key, subAccount].some(looked)) {
    return { point, assumes, observed: `refused (${describeShape([key, subAccount].find(looked)!)}): the package looks, and what is missing is done`, verdict: "handled", reading: "gone-400" };
  }
  return { point, assumes, observed: "refused as gone", verdict: "holds" };
}

/**
 * Deletes the doctor's sub-accounts with the client's own delete, as the package deletes (split where a refusal
 * names `sks`: client/subAccounts.ts). A delete that fails (a lost answer, a refusal) may have been done in part:
 * what the list still shows under the doctor's aliases is deleted again, twice at most. The row of the largest `sks`
 * (not checked where too few were made to tell), and the tokens not known to be deleted.
 */
async function deleteMade(run: Run, made: string[]): Promise<{ row: DoctorRow; failed: string[] }> {
  const api = run.client.subAccounts;
  let failed = made;
  for (let round = 0; round < 3 && failed.length > 0; round++) {
    if (await api.delete(failed).then(() => true, () => false)) failed = [];
    else {
      const still = await leftUnder(run.probe, run.made.aliases, run.paging, []);
      if (still === undefined) break;
      failed = failed.filter((t) => still.includes(t) || still.includes(maskKey(t)));
    }
  }
  const point = "largest sks of one sub-account edit or delete";
  const assumes = `${SUB_ACCOUNT_MAX_SKS}`;
  if (api.sksCap !== undefined) return { row: { point, assumes, observed: `a delete of ${made.length} refused for its sks; split to ${api.sksCap}`, verdict: "handled", reading: "sks-cap" }, failed };
  if (made.length <= SUB_ACCOUNT_MAX_COUNT) {
    return { row: { point, assumes, observed: `not checked: a delete of only ${made.length} (the create of ${SUB_ACCOUNT_MAX_COUNT} was refused), which hides a smaller cap`, verdict: "not checked" }, failed };
  }
  return { row: { point, assumes, observed: `a delete of ${made.length} accepted`, verdict: "holds" }, failed };
}

/** The words of a refusal in any of its shapes, short, masked and printable. */
function describeRefusal(answer: Raw): string {
  const said = "refusal" in answer.judged ? (answer.judged.refusal.apiMessage ?? answer.judged.refusal.code) : "unclassified" in answer.judged ? answer.judged.unclassified : undefined;
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
