import { SUB_ACCOUNT_MAX_COUNT, SUB_ACCOUNT_MAX_SKS } from "../../api/assumptions.js";
import { maskKey } from "../../api/redact.js";
import { OPERATIONS } from "../../api/operations.js";
import { ApiError } from "../../client/errors.js";
import type { CommandIo } from "../command.js";
import type { Journal } from "./journal.js";
import { type Probe, idempotent, isGone, itemsOf, refused } from "./probe.js";
import type { DoctorRow } from "./report.js";
import type { Run } from "./run.js";

/**
 * The mark of every sub-account the doctor makes (checks/aliases.ts): `doctor~<hex>`, the long `doctor---~<hex>` (or
 * its cut, a platform that keeps 32 characters), the fit form `doct<hex>` and its longer edits `doct<hex>xxx`.
 * Case is ignored (a platform may lower-case aliases).
 */
const DOCTOR_MARK = /^(doctor-*~[0-9a-f]{12}|doctor-{20,}|doct[0-9a-f]{12}x*)$/i;

/** Whether an alias carries the doctor's mark. */
export const markedByDoctor = (alias: unknown): boolean => typeof alias === "string" && DOCTOR_MARK.test(alias);

/** What `--write` made on the account: deleted again on every way out, or named (left). */
export class Throwaways {
  key?: string;
  keyAlias?: string;
  keyDeleted = false;
  /** The alias of a key whose create's answer was lost: it may exist, and the API cannot list keys. */
  keyInDoubt?: string;
  /** Tokens of its sub-accounts not deleted yet. */
  readonly tokens = new Set<string>();
  /** The aliases its creates were sent under (what a create whose answer was lost made is looked for by them). */
  readonly aliases: string[] = [];
  /** The tokens each alias's creates made. */
  readonly under = new Map<string, string[]>();
  /** Keys of earlier runs (the journal's) it could not delete either: still in the journal. */
  readonly earlierKeys: string[] = [];
  /** What it deleted (this run's objects and earlier runs' leftovers). */
  readonly deleted = { keys: [] as string[], subAccounts: 0 };

  constructor(
    readonly journal: Journal,
    private readonly stderr: CommandIo["stderr"],
  ) {}

  /** A key just made: recorded (sealed) in the journal before anything else is sent, so that a kill cannot lose it. */
  keyMade(key: string, alias: string): void {
    this.key = key;
    this.keyAlias = alias;
    if (!this.journal.add(key, alias))
      this.stderr.write(
        `llm-accounts doctor: the journal ${this.journal.path} could not be written: a kill now would leave the key ${maskKey(key)} unnamed\n`,
      );
  }

  /** A key deleted (or known gone): forgotten by the journal. */
  keyGone(key: string): void {
    if (key === this.key) this.keyDeleted = true;
    this.deleted.keys.push(maskKey(key));
    this.journal.remove(key);
  }

  /** What it deleted, for stderr after a signal or a failure; undefined when nothing. */
  get deletedText(): string | undefined {
    const parts = [
      ...(this.deleted.keys.length > 0
        ? [`the API key${this.deleted.keys.length > 1 ? "s" : ""} ${this.deleted.keys.join(", ")}`]
        : []),
      ...(this.deleted.subAccounts > 0
        ? [`${this.deleted.subAccounts} sub-account${this.deleted.subAccounts > 1 ? "s" : ""}`]
        : []),
    ];
    return parts.length > 0 ? `deleted what it made: ${parts.join(" and ")}` : undefined;
  }

  /** What could not be deleted, masked, with how to delete it; undefined when nothing is left. */
  get left(): string | undefined {
    const parts: string[] = [];
    if (this.tokens.size > 0) {
      const prefixes = [...new Set(this.aliases)].map((a) => `--prefix '${a}'`).join(" ");
      parts.push(
        `sub-accounts ${[...this.tokens].map(maskKey).join(", ")} (marked ${[...new Set(this.aliases)].join(", ")}): delete them with \`llm-accounts sweep ${prefixes} --yes\`, or run the doctor again`,
      );
    }
    if (this.key !== undefined && !this.keyDeleted) {
      parts.push(
        `the API key ${maskKey(this.key)} (alias ${this.keyAlias}; created restricted to a documentation address, and disabled): ` +
          `the next \`llm-accounts doctor --write\` with this admin key deletes it first (its journal, ${this.journal.path}, holds it sealed), or delete it in the platform's console (the API cannot list keys)`,
      );
    }
    if (this.earlierKeys.length > 0) {
      parts.push(
        `API keys earlier doctor runs made, ${this.earlierKeys.join(", ")}: still in the journal (${this.journal.path}) for the next run, or delete them in the platform's console`,
      );
    }
    if (this.keyInDoubt !== undefined) {
      parts.push(
        `an API key with alias ${this.keyInDoubt} may exist (its create's answer was lost, and the API cannot list keys): look for it in the platform's console and delete it`,
      );
    }
    return parts.length > 0 ? `left on the account, not deleted: ${parts.join("; ")}` : undefined;
  }
}

/**
 * Deletes what earlier doctor runs left on this account, before this run makes anything: the keys its journal holds
 * for this admin key, and the sub-accounts whose alias carries its mark. A row says what it found.
 */
export async function sweepEarlier(run: Run): Promise<DoctorRow | undefined> {
  const { made, probe } = run;
  const point = "earlier doctor runs' leftovers";
  const assumes = "none";
  for (const { key } of made.journal.earlier()) {
    const removed = await idempotent(probe, OPERATIONS.deleteApiKeys, { keys: [key] });
    if (!refused(removed) || isGone(removed) || isGone(await probe.send(OPERATIONS.getApiKey, { key })))
      made.keyGone(key);
    else made.earlierKeys.push(maskKey(key));
  }
  const keys = made.deleted.keys.length;
  let tokens: string[];
  try {
    tokens = (await run.client.subAccounts.list()).filter((s) => markedByDoctor(s.alias)).map((s) => s.token);
  } catch (err) {
    return {
      point,
      assumes,
      observed: `not checked: the list could not be read (${(err as Error).message.slice(0, 120)})${keys ? `; ${keys} API key(s) of the journal deleted` : ""}`,
      verdict: "not checked",
    };
  }
  if (tokens.length > 0) {
    const { failed } = await deleteMade(run, tokens);
    made.deleted.subAccounts += tokens.length - failed.length;
    for (const t of failed) made.tokens.add(t);
  }
  if (keys + tokens.length === 0) return undefined;
  return {
    point,
    assumes,
    observed: `deleted first: ${keys} API key(s) from the journal, ${tokens.length} marked sub-account(s)`,
    verdict: "handled",
  };
}

/** Deletes the doctor's key (cleanUp); one it could not delete stays named in `made`. */
export async function deleteKey(run: Run): Promise<void> {
  const { probe, made } = run;
  if (made.key === undefined) return;
  probe.cleaning = true;
  try {
    const removed = await idempotent(probe, OPERATIONS.deleteApiKeys, { keys: [made.key] });
    if (!refused(removed) || isGone(await probe.send(OPERATIONS.getApiKey, { key: made.key }))) made.keyGone(made.key);
  } catch {
    // Named below (Throwaways.left): the error that stopped the doctor is the one it reports.
  } finally {
    probe.cleaning = false;
  }
}

/**
 * Deletes what `--write` made (its key, once more where that failed; its sub-accounts, with those a create whose
 * answer was lost made, found under its aliases), whatever stopped it; what it could not delete stays named in
 * `made` (Throwaways.left). Returns the row of the largest `sks`, when the deletes ran.
 */
export async function cleanUp(run: Run, finished: boolean): Promise<DoctorRow | undefined> {
  const { probe, made } = run;
  probe.cleaning = true;
  try {
    if (!finished)
      for (const t of (await leftUnder(probe, made.aliases, run.paging, [...made.tokens])) ?? []) made.tokens.add(t);
    if (!made.keyDeleted) await deleteKey(run);
    probe.cleaning = true;
    if (made.tokens.size === 0) return undefined;
    const { row, failed } = await deleteMade(run, [...made.tokens]);
    made.deleted.subAccounts += made.tokens.size - failed.length;
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
export async function leftUnder(
  probe: Probe,
  aliases: string[],
  paging: Record<string, number>,
  known: string[],
): Promise<string[] | undefined> {
  const found: string[] = [];
  const masks = new Set(known.map(maskKey));
  try {
    for (const alias of new Set(aliases)) {
      for (let page = 1; page <= 10; page++) {
        const list = await probe.send(OPERATIONS.listSubAccounts, {
          alias,
          ...paging,
          ...("page" in paging && { page }),
        });
        if (refused(list)) return undefined;
        const items = itemsOf(list.body);
        for (const i of items)
          if (i.alias === alias && typeof i.token === "string" && !known.includes(i.token) && !masks.has(i.token))
            found.push(i.token);
        if (!("page" in paging) || items.length < 100) break;
      }
    }
  } catch {
    return undefined;
  }
  return [...new Set(found)];
}

/** Deletes by the doctor's own requests (no client: a token in a form the client's schema refuses is deleted too); the tokens not deleted. */
async function deleteRaw(probe: Probe, tokens: string[], size: number): Promise<string[]> {
  const failed: string[] = [];
  for (let i = 0; i < tokens.length; i += size) {
    const part = tokens.slice(i, i + size);
    const answer = await idempotent(probe, OPERATIONS.deleteSubAccounts, { sks: part });
    if (refused(answer) && !isGone(answer)) failed.push(...part);
  }
  return failed;
}

/**
 * Deletes the doctor's sub-accounts with the client's own delete, as the package deletes (split where a refusal
 * names `sks`: client/subAccounts.ts); where the client cannot send it (a token form its schema refuses), by the
 * doctor's own requests. A delete that fails (a lost answer, a refusal) may have been done in part: what the list
 * still shows under the doctor's aliases is deleted again, twice at most. The row of the largest `sks` (not checked
 * where too few were made to tell), and the tokens not known to be deleted.
 */
export async function deleteMade(run: Run, made: string[]): Promise<{ row: DoctorRow; failed: string[] }> {
  const api = run.client.subAccounts;
  let failed = made;
  for (let round = 0; round < 3 && failed.length > 0; round++) {
    const outcome = await api.delete(failed).then(
      () => undefined,
      (err: unknown) => err,
    );
    if (outcome === undefined) failed = [];
    // Not the platform's refusal (a request the client would not build, an answer lost): the doctor's own deletes.
    else if (!(outcome instanceof ApiError))
      failed = await deleteRaw(run.probe, failed, api.sksCap ?? SUB_ACCOUNT_MAX_SKS);
    if (failed.length > 0) {
      const still = await leftUnder(run.probe, run.made.aliases, run.paging, []);
      if (still === undefined) break;
      failed = failed.filter((t) => still.includes(t) || still.includes(maskKey(t)));
    }
  }
  const point = "largest sks of one sub-account edit or delete";
  const assumes = `${SUB_ACCOUNT_MAX_SKS}`;
  if (api.sksCap !== undefined)
    return {
      row: {
        point,
        assumes,
        observed: `a delete of ${made.length} refused for its sks; split to ${api.sksCap}`,
        verdict: "handled",
        reading: "sks-cap",
      },
      failed,
    };
  if (made.length <= SUB_ACCOUNT_MAX_COUNT) {
    return {
      row: {
        point,
        assumes,
        observed: `not checked: a delete of only ${made.length} (the create of ${SUB_ACCOUNT_MAX_COUNT} was refused), which hides a smaller cap`,
        verdict: "not checked",
      },
      failed,
    };
  }
  return { row: { point, assumes, observed: `a delete of ${made.length} accepted`, verdict: "holds" }, failed };
}
