import { LATE_VISIBILITY_WINDOW_MS, lookBound, SUB_ACCOUNT_MAX_COUNT } from "../../../api/assumptions.js";
import { isObject } from "../../../api/canonical.js";
import type { Profile } from "../../../api/profile.js";
import { ApiError } from "../../../client/errors.js";
import { refusedSizeCap } from "../../../client/subAccounts.js";
import { smallerCountCap } from "../../../runtime/subAccountBatch/index.js";
import { describeOperation, OPERATIONS, type Operation } from "../../../api/operations.js";
import { SETTINGS } from "../../../client/settings.js";
import { aliasFilterRow, markRow, measureAliasMax } from "./aliases.js";
import { errorShapeRow, goneRow } from "./answers.js";
import { pricingRows } from "./pricing.js";
import {
  type Raw,
  Stopped,
  describeRefusal,
  describeShape,
  idempotent,
  itemsOf,
  meaningOf,
  namesKey,
  refused,
  steadiness,
  transient,
  unknownKey,
} from "../probe.js";
import type { DoctorRow } from "../report.js";
import { type Run, VISIBILITY_PROBE_MAX_MS, keep, lagOf, roundUp, seconds, unmeasuredRow } from "../run.js";

/**
 * Sub-accounts of balance 0 under the doctor's aliases: the create mark, how long a create takes to show, the alias
 * filter, the list as the client reads it, the largest create, the longest alias, and what "gone" looks like.
 */
export async function subAccountChecks(run: Run, hex: string, keyDelete: Raw): Promise<DoctorRow[]> {
  const { probe, measured } = run;
  const { alias, row: mark } = await markRow(run, hex);
  const rows = [mark];
  const first = [...run.made.tokens][0];
  // The first create's sub-account, looked for until it shows (the key's lag, measured first, may be shorter).
  const shows = async () =>
    itemsOf((await probe.send(OPERATIONS.listSubAccounts, { alias, ...run.paging })).body).some(
      (i) => i.alias === alias,
    );
  const lag = await lagOf(probe, shows, "the new sub-account");
  run.lag = lag === undefined || run.lag === undefined ? undefined : Math.max(lag, run.lag);
  if (run.lag !== undefined && run.lag > 0)
    measured.limits.visibilityMs = Math.min(roundUp(run.lag), LATE_VISIBILITY_WINDOW_MS);
  rows.push(visibilityRow(run.lag, run.profile, run.lateWritesMs));
  rows.push(await aliasFilterRow(run, alias));
  rows.push(await countRow(run, alias));
  // What was just made shows only after the platform's lag: the list is read once it has passed.
  if (run.lag) await probe.clock.sleep(run.lag);
  rows.push(...(await listRows(run, alias, first)));
  if (first !== undefined) rows.push(...(await pricingRows(run, first, alias)));
  const longest = first === undefined ? undefined : await measureAliasMax(run, hex, first, mark);
  if (longest) rows.push(longest);
  rows.push(...(await goneRows(run, keyDelete)));
  return rows;
}

/**
 * Sub-account refusals: an edit of a token that does not exist (changes nothing), read twice: the group's refusal
 * shape, and gone; a delete of one, read twice: done (idempotent deletes) or gone. A lenient platform that answers
 * both done needs nothing: the package's edit and delete are done.
 */
async function goneRows(run: Run, keyDelete: Raw): Promise<DoctorRow[]> {
  const { probe } = run;
  const sks = [unknownKey()];
  const goneEdit = await probe.twice(OPERATIONS.editSubAccounts, { sks, alias: "doctor", model_pricing: [] });
  const goneDelete = steadiness(...(await twoDeletes(run, sks)));
  const rows: DoctorRow[] = [];
  const shapePoint = "sub-account group errors";
  const gonePoint = "gone: a sub-account that does not exist";
  if (!goneEdit.steady)
    rows.push(
      unmeasuredRow(shapePoint, "non-2xx {error: {code, message}}", goneEdit.why),
      unmeasuredRow(gonePoint, "404 (or an answer that says not found)", goneEdit.why),
    );
  else if (!refused(goneEdit.raw)) {
    const lenient =
      "an edit naming a token that does not exist answered done (a lenient platform): the package's edit of it is done, and a refresh's list finds it missing";
    rows.push({
      point: shapePoint,
      assumes: "non-2xx {error: {code, message}}",
      observed: `not checked: ${lenient}, which shows no refusal`,
      verdict: "not checked",
    });
    rows.push({
      point: gonePoint,
      assumes: "404 (or an answer that says not found)",
      observed: lenient,
      verdict: "handled",
      reading: "idempotent-deletes",
    });
  } else {
    rows.push(
      errorShapeRow(shapePoint, goneEdit.raw, probe.envelope),
      goneRow("a sub-account that does not exist", goneEdit.raw, "sub-account"),
    );
    keep(run, "goneSubAccount", gonePoint, goneEdit);
  }
  if (refused(goneDelete.raw)) keep(run, "goneSubAccount", "deletes of what does not exist", goneDelete);
  rows.push(
    goneDelete.steady
      ? deletesRow(keyDelete, goneDelete.raw)
      : unmeasuredRow("deletes of what does not exist", "a refusal that says gone (404)", goneDelete.why),
  );
  return rows;
}

/** Two deletes of the same unknown token: the first answer, and the second (undefined when the first was transient). */
async function twoDeletes(run: Run, sks: string[]): Promise<[Raw, Raw | undefined]> {
  const first = await idempotent(run.probe, OPERATIONS.deleteSubAccounts, { sks });
  return [first, transient(first) ? undefined : await idempotent(run.probe, OPERATIONS.deleteSubAccounts, { sks })];
}

/**
 * A sub-account create under `alias` (`count` of balance 0). One that answered nothing or a 5xx may have been done:
 * it is looked for by its alias, as the package looks, and sent once more only when nothing shows (what a second
 * create made is found by the same alias and deleted with the rest).
 */
export async function subCreate(run: Run, alias: string, count = 1): Promise<Raw> {
  const { probe, made } = run;
  made.aliases.push(alias);
  const body = { alias, balance: 0, model_pricing: [], count };
  let answer = await probe.send(OPERATIONS.createSubAccounts, body);
  const lost = (a: Raw) => a.status === 0 || a.status >= 500;
  const answered = !lost(answer);
  for (let tries = 1; lost(answer); tries++) {
    const found = await lookFor(run, alias, answer);
    if (found.length > 0) {
      probe.lost.push(OPERATIONS.createSubAccounts.name);
      const items = found.map((token) => ({ token, alias }));
      answer = { status: 200, body: { items }, wire: { items }, judged: { answer: { items } } };
    } else if (tries < 2) answer = await probe.send(OPERATIONS.createSubAccounts, body);
    else break;
  }
  const items = itemsOf(answer.body);
  const tokens = items.flatMap((i) => (typeof i.token === "string" ? [i.token] : []));
  for (const t of tokens) made.tokens.add(t);
  made.under.set(alias, [...(made.under.get(alias) ?? []), ...tokens]);
  // A create confirmed without `success` (terse-writes); a refusal says nothing of the confirmation.
  if (answered && !refused(answer) && items.length > 0 && isObject(answer.body) && !("success" in answer.body))
    run.answers.terse = true;
  return answer;
}

/** The tokens under `alias` after a create whose answer was lost, by the client's own list (a list it cannot read stops the doctor as it stops `up`). */
async function lookFor(run: Run, alias: string, answer: Raw): Promise<string[]> {
  const found = await run.client.subAccounts.list({ alias }).catch(async (err: unknown) => {
    // A list the client cannot read that shows sub-accounts under the alias: their tokens (masked-tokens), as listRows says.
    const shown = itemsOf((await run.probe.send(OPERATIONS.listSubAccounts, { alias, ...run.paging })).body).some(
      (i) => i.alias === alias,
    );
    throw new Stopped(
      `a sub-account create answered ${describeShape(answer)} (its answer lost) could not be looked for: ${err instanceof Error ? err.message : String(err)}; \`pulumi up\` stops there too, which hides the points not checked yet`,
      shown ? "masked-tokens" : undefined,
    );
  });
  return found.map((f) => f.token);
}

/**
 * The row of how long a write took to show, against how long the runtime looks for a late write (lookBound: the
 * `lateWritesMs` setting, else its default or half as long again as the profile's measured lag).
 */
export function visibilityRow(
  lag: number | undefined,
  profile: Profile | undefined,
  settingMs: number | undefined,
): DoctorRow {
  const point = "late visibility of a write";
  const assumes = `a write shows within ${seconds(lookBound(settingMs, undefined))} (a read that misses one looks again that long)`;
  if (lag === undefined) {
    return {
      point,
      assumes,
      observed: `a new key or sub-account not shown after ${seconds(VISIBILITY_PROBE_MAX_MS)}`,
      verdict: "setting",
      setting: "none exists: a write that shows that late cannot be told from a lost one",
    };
  }
  if (lag === 0) return { point, assumes, observed: "shown at once", verdict: "holds" };
  const covered = lookBound(settingMs, profile?.limits?.visibilityMs);
  if (lag <= covered)
    return {
      point,
      assumes,
      observed: `shown after ${seconds(lag)}: the runtime looks again for ${seconds(covered)}`,
      verdict: "handled",
    };
  return {
    point,
    assumes,
    observed: `shown after ${seconds(lag)}, later than the runtime looks (${seconds(covered)}): a read right after a write would take it for gone`,
    verdict: "setting",
    setting: `${SETTINGS.profile.config} (llm-accounts doctor --write --save), whose limits.visibilityMs makes the runtime look for ${seconds(lookBound(settingMs, roundUp(lag)))}, or ${SETTINGS.lateWritesMs.config}`,
  };
}

/**
 * The largest count of one create (not shown): one create of as many as the package sends at once, balance 0. The
 * package splits a create on a refusal that names `count` (runtime/subAccountBatch/recovery.ts), or to the profile's createCap.
 */
export async function countRow(run: Run, alias: string): Promise<DoctorRow> {
  const full = await subCreate(run, alias, SUB_ACCOUNT_MAX_COUNT);
  const point = "largest count of one sub-account create";
  const assumes = `${SUB_ACCOUNT_MAX_COUNT}`;
  if (!refused(full)) return { point, assumes, observed: `count ${SUB_ACCOUNT_MAX_COUNT} accepted`, verdict: "holds" };
  if (full.status === 0 || full.status === 429 || full.status >= 500)
    return unmeasuredRow(
      point,
      assumes,
      `the create of ${SUB_ACCOUNT_MAX_COUNT} answered ${describeShape(full)} after the runtime's retries`,
    );
  // A refusal in a 2xx whose words read as "try again" ("too many ... in one request") that every try met: no
  // transient, but a cap in other words. Its signature is not kept (it is the busy answer's shape); its number is.
  const persisted = meaningOf(full) === "transient";
  const why = `${describeRefusal(full)}${persisted ? `, on each of the runtime's tries` : ""}`;
  if (!persisted) keep(run, "refused", point, steadiness(full, await subCreate(run, alias, SUB_ACCOUNT_MAX_COUNT)));
  // Judged by the package's own rules: whether its split takes this refusal for the count's (smallerCountCap), and
  // the cap a refusal gives (refusedSizeCap: its number, else half), saved for the split to obey.
  const err = refusalError(OPERATIONS.createSubAccounts, full, persisted ? 400 : undefined);
  const cap = refusedSizeCap(err, /[\s\S]/, SUB_ACCOUNT_MAX_COUNT);
  if (cap !== undefined) run.measured.limits.createCap = cap;
  if (smallerCountCap(err, SUB_ACCOUNT_MAX_COUNT) !== undefined)
    return {
      point,
      assumes,
      observed: `count ${SUB_ACCOUNT_MAX_COUNT} refused (${why})`,
      verdict: "handled",
      reading: "small-count-cap",
    };
  const observed = `count ${SUB_ACCOUNT_MAX_COUNT} refused (${why}): the refusal does not name count, so the package does not split a larger batch by itself`;
  const obeyed = run.profile?.limits?.createCap;
  if (obeyed !== undefined && cap !== undefined && obeyed <= cap)
    return { point, assumes, observed: `${observed}; the profile's createCap ${obeyed} splits it`, verdict: "handled" };
  return {
    point,
    assumes,
    observed,
    verdict: "setting",
    setting:
      cap !== undefined
        ? `${SETTINGS.profile.config} (llm-accounts doctor --write --save), whose limits.createCap ${cap} splits creates`
        : "none exists: declare batches of at most the platform's cap (count)",
  };
}

/** The error the client makes of a refusal (http.ts: of the class its meaning's status picks), for the package's own rules to judge. */
export function refusalError(op: Operation, a: Raw, status?: number): ApiError {
  const refusal = "refusal" in a.judged ? a.judged.refusal : undefined;
  return ApiError.fromResponse(status ?? refusal?.meansStatus ?? a.status, {
    code: refusal?.code,
    apiMessage: refusal?.apiMessage,
    operation: describeOperation(op),
  });
}

/**
 * The list as the package reads it (the client's own list, as `up` calls it): the doctor's sub-accounts by their
 * alias, all of them and only them; a list that masks tokens stops there, with the client's message. And `total`
 * under a filter: one filtered by the first sub-account's token must count 1.
 */
export async function listRows(run: Run, alias: string, first: string | undefined): Promise<DoctorRow[]> {
  const ours = [...run.made.tokens];
  const raw = itemsOf((await run.probe.send(OPERATIONS.listSubAccounts, { alias, ...run.paging })).body).filter(
    (i) => i.alias === alias,
  );
  const masked = raw.find((i) => typeof i.token === "string" && !ours.includes(i.token))?.token;
  const point = "the sub-account list as the client reads it";
  const assumes = "whole tokens, every sub-account of the filter";
  let listed: string[];
  try {
    listed = (await run.client.subAccounts.list({ alias })).map((s) => s.token);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return [
      {
        point,
        assumes,
        observed: `${masked ? `tokens masked (${String(masked).slice(0, 12)}): ` : ""}\`pulumi up\` stops at its first list: ${message}`,
        verdict: "setting",
        setting: "none exists: the package needs the list to show whole tokens",
        reading: masked ? "masked-tokens" : undefined,
      },
      {
        point: "the list's total under a filter",
        assumes: "counts what the filter matches",
        observed: "not checked: hidden by the list the client cannot read",
        verdict: "not checked",
      },
    ];
  }
  const expected = new Set(run.made.under.get(alias));
  if (listed.length !== expected.size || !listed.every((t) => expected.has(t))) {
    return [
      {
        point,
        assumes,
        observed: `the client's list shows ${listed.length} sub-accounts where the doctor made ${expected.size} under one alias`,
        verdict: "setting",
        setting: "none exists: report this platform's list",
      },
    ];
  }
  const rows: DoctorRow[] = [
    { point, assumes, observed: `${listed.length} sub-accounts, read as listed`, verdict: "holds" },
  ];
  if (first === undefined) return rows;
  const one = await run.probe.send(OPERATIONS.listSubAccounts, { sk: first, ...run.paging });
  const total = isObject(one.body) ? Number(one.body.total) : NaN;
  const ignores = Number.isFinite(total) && total > itemsOf(one.body).length;
  const point2 = "the list's total under a filter";
  const assumes2 = "counts what the filter matches";
  if (!Number.isFinite(total))
    rows.push({
      point: point2,
      assumes: assumes2,
      observed: "not checked: the list answers no total (list-no-total), which hides what a total counts",
      verdict: "not checked",
    });
  else
    rows.push({
      point: point2,
      assumes: assumes2,
      observed: ignores ? `${total} for one match: the client reads a filtered list by its items` : "as assumed",
      verdict: ignores ? "handled" : "holds",
      reading: ignores ? "total-unfiltered" : undefined,
    });
  return rows;
}

/** The row of deletes of what does not exist: done (idempotent), gone (the package takes it as done), or neither. */
export function deletesRow(key: Raw, subAccount: Raw): DoctorRow {
  const point = "deletes of what does not exist";
  const assumes = "a refusal that says gone (404)";
  const done = [key, subAccount].filter((a) => "answer" in a.judged).length;
  // A key delete refused naming the key is looked at, one get per key (runtime/command/deleteCoalescer.ts); a sub-account
  // delete refused is followed by one list: both are done for what is gone.
  const looked = (a: Raw) => (a === key ? namesKey(a) : meaningOf(a) === "refused");
  const gone = [key, subAccount].filter((a) => meaningOf(a) === "gone" || looked(a)).length;
  if (done + gone < 2) {
    const other = [key, subAccount].find((a) => refused(a) && meaningOf(a) !== "gone" && !looked(a))!;
    return {
      point,
      assumes,
      observed: `${describeShape(other)} (${describeRefusal(other)}): not read as gone`,
      verdict: "setting",
      setting: `${SETTINGS.profile.config} (llm-accounts doctor --write --save)`,
    };
  }
  if (done > 0)
    return {
      point,
      assumes,
      observed: "answered done: deletes are idempotent",
      verdict: "handled",
      reading: "idempotent-deletes",
    };
  if ([key, subAccount].some(looked)) {
    return {
      point,
      assumes,
      observed: `refused (${describeShape([key, subAccount].find(looked)!)}): the package looks, and what is missing is done`,
      verdict: "handled",
      reading: "gone-400",
    };
  }
  return { point, assumes, observed: "refused as gone", verdict: "holds" };
}
