import { ALIAS_MAX_LENGTH } from "../../../api/assumptions.js";
import { platformPartsOf } from "../../../api/schemas/index.js";
import { EVERY_KEPT_FORM, sameAlias } from "../../../api/keptForms.js";
import { isObject } from "../../../api/canonical.js";
import { printable } from "../../kit.js";
import { OPERATIONS } from "../../../api/operations.js";
import { SETTINGS } from "../../../client/settings.js";
import { keptAliasRow, shortAlias } from "./aliases.js";
import {
  type Probe,
  type Raw,
  describeRefusal,
  describeShape,
  idempotent,
  isGone,
  meaningOf,
  refused,
  steadiness,
  transient,
} from "../probe.js";
import type { DoctorRow } from "../report.js";
import { type Run, keep, lagOf, unmeasuredRow } from "../run.js";
import { deleteKey } from "../throwaways.js";

/** The key points, not measured where the key's create answered nothing: the API cannot list keys, so none is looked at. */
const KEY_POINTS = ["IP allow-list entries as kept", "alias case as kept", "usage paging field", "long alias as kept"];

/**
 * One key, restricted to a documentation address (192.0.2.10: no request can come from it) and disabled as soon as
 * it shows, recorded (sealed) in the journal as soon as its answer comes, and deleted again on every way out: how
 * long it takes to show, the IP allow-list as kept, the usage paging while it exists, security_config parts sent
 * back, and the answers of status and delete.
 */
export async function keyChecks(run: Run, hex: string): Promise<DoctorRow[]> {
  const { probe, made } = run;
  // Letters, digits and `-` only: an API key's alias is sent as declared (no mark), and this one passes everywhere.
  // Mixed case: the alias the platform keeps shows whether it changes case.
  const alias = `Doctor-${hex}`;
  const created = await probe.send(OPERATIONS.createApiKey, { alias, security_config: { ip: { allow: [ADDRESS] } } });
  const key =
    isObject(created.body) && typeof created.body.key === "string" && created.body.key !== ""
      ? created.body.key
      : undefined;
  if (key === undefined && transient(created)) {
    // The create may have been done: the key is named (by its alias) for the console, and the other points go on.
    made.keyInDoubt = alias;
    const why = `the key's create answered ${describeShape(created)} (a create is never sent blindly again), and the API cannot list keys`;
    return KEY_POINTS.map((point) => unmeasuredRow(point, "see docs/decisions.md", why));
  }
  if (key === undefined)
    throw new Error(`api-key/create answered ${describeShape(created)} without a key: ${describeRefusal(created)}`);
  made.keyMade(key, alias);
  try {
    return await withKey(run, key, created);
  } finally {
    if (!made.keyDeleted) await deleteKey(run);
  }
}

/** The documentation address (RFC 5737) the doctor's key is restricted to. */
const ADDRESS = "192.0.2.10";

/** The checks of the doctor's key, once made. */
async function withKey(run: Run, key: string, created: Raw): Promise<DoctorRow[]> {
  const { probe, made } = run;
  const rows: DoctorRow[] = [];
  let kept: Raw | undefined;
  run.lag = await lagOf(
    probe,
    async () => ((kept = await probe.send(OPERATIONS.getApiKey, { key })), !isGone(kept)),
    "the new API key",
  );
  // Disabled as soon as it shows: a key no request can use even where the platform ignores the allow-list.
  const status = await idempotent(probe, OPERATIONS.setApiKeyStatus, { key, enabled: false });
  rows.push(allowListRow(kept!, ADDRESS));
  rows.push(caseRow(made.keyAlias!, kept!));
  const usage = await usageRow(probe, run.usageField);
  rows.push(usage);
  if (usage.verdict === "holds" || usage.setting) {
    const field = usage.verdict === "holds" ? run.usageField : /"(\w+)" is read/.exec(usage.observed)?.[1];
    if (field) run.measured.limits.usagePageField = field;
  }
  const parts = await partsRow(probe, key, made.keyAlias!, created);
  if (parts) rows.push(parts);
  rows.push(await lengthRow(run, key, ADDRESS));
  const removed = await idempotent(probe, OPERATIONS.deleteApiKeys, { keys: [key] });
  if (!refused(removed)) made.keyGone(key);
  // A write sent a second time after a lost answer says nothing of the confirmation's shape.
  const confirmed = (a: Raw & { retried: boolean }, field: string) =>
    a.retried || a.status === 204 || (isObject(a.body) && field in a.body);
  run.answers.terse ||= !confirmed(status, "enabled") || !confirmed(removed, "deleted");
  return rows;
}

/** The row of the IP allow-list as the new key's get answers it. */
export function allowListRow(kept: Raw, address: string): DoctorRow {
  const config = isObject(kept.body) && isObject(kept.body.security_config) ? kept.body.security_config : undefined;
  const allow = config && isObject(config.ip) && Array.isArray(config.ip.allow) ? config.ip.allow : undefined;
  const asRange = allow?.length === 1 && allow[0] === `${address}/32`;
  return {
    point: "IP allow-list entries as kept",
    assumes: "as sent",
    observed:
      allow === undefined
        ? "not answered"
        : asRange
          ? `an address kept as its range (${address}/32)`
          : allow[0] === address
            ? "as sent"
            : `kept as ${printable(JSON.stringify(allow)).slice(0, 60)}`,
    verdict: allow === undefined ? "not checked" : asRange ? "handled" : allow[0] === address ? "holds" : "not checked",
    reading: asRange ? "normalised-values" : undefined,
  };
}

/** The row of the case of an alias: the doctor's key, created under a mixed-case alias, as its get answers it. */
export function caseRow(sent: string, kept: Raw): DoctorRow {
  const point = "alias case as kept";
  const assumes = "as sent";
  const live = isObject(kept.body) && typeof kept.body.alias === "string" ? kept.body.alias : undefined;
  if (live === undefined)
    return { point, assumes, observed: "not checked: the key's get answered no alias", verdict: "not checked" };
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
export async function lengthRow(run: Run, key: string, address: string): Promise<DoctorRow> {
  const point = "long alias as kept";
  const assumes = `kept whole, up to ${ALIAS_MAX_LENGTH} characters`;
  const sent = `${run.made.keyAlias}-`.padEnd(ALIAS_MAX_LENGTH, "Cut");
  const edited = await idempotent(run.probe, OPERATIONS.editApiKey, {
    key,
    alias: sent,
    security_config: { ip: { allow: [address] } },
  });
  if (refused(edited)) {
    if (transient(edited))
      return unmeasuredRow(point, assumes, `the edit answered ${describeShape(edited)} after the runtime's retries`);
    // Sent once more (an edit is idempotent): the refusal is kept only when it answers alike.
    if (meaningOf(edited) === "refused")
      keep(
        run,
        "refused",
        point,
        steadiness(
          edited,
          await idempotent(run.probe, OPERATIONS.editApiKey, {
            key,
            alias: sent,
            security_config: { ip: { allow: [address] } },
          }),
        ),
      );
    return {
      point,
      assumes,
      observed: `not checked: an alias of ${ALIAS_MAX_LENGTH} characters was refused (${describeRefusal(edited)}), which hides whether longer aliases would be kept cut (cut-aliases)`,
      verdict: "not checked",
    };
  }
  const live = isObject(edited.body) && typeof edited.body.alias === "string" ? edited.body.alias : undefined;
  // What the key is called now, should it have to be named (Throwaways.left).
  run.made.keyAlias = live ?? sent;
  if (live === undefined)
    return { point, assumes, observed: "not checked: the key's edit answered no alias", verdict: "not checked" };
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

/**
 * Parts of a key's security_config the spec does not show: the package keeps them and sends them back with every
 * edit (an edit replaces the whole config). Where the new key shows some, one edit sends them back as it would.
 */
export async function partsRow(probe: Probe, key: string, alias: string, created: Raw): Promise<DoctorRow | undefined> {
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

/** Candidate request fields for a further usage page, tried when the assumed one is not read. */
export const PAGE_FIELDS = ["page", "cursor", "next_page", "page_token", "pageToken", "next", "offset"];

/** The usage paging row: the assumed field moves on to a second page, or which field does. */
export async function usageRow(probe: Probe, field: string): Promise<DoctorRow> {
  const today = new Date().toISOString().slice(0, 10);
  const start = new Date(Date.now() - 364 * 86_400_000).toISOString().slice(0, 10);
  const query = { start, end: today, with_model: true };
  const first = await probe.send(OPERATIONS.usageSummary, query);
  const page = isObject(first.body) ? first.body : {};
  const token = page.next_page;
  const assumes = `the request field "${field}" carries next_page back`;
  if (!(page.has_more === true || (token !== null && token !== undefined && token !== ""))) {
    return {
      point: "usage paging field",
      assumes,
      observed: "one page only: nothing to page through",
      verdict: "not checked",
    };
  }
  const head = (a: Raw) =>
    isObject(a.body) && Array.isArray(a.body.items) ? JSON.stringify(a.body.items[0]) : undefined;
  const firstHead = head(first);
  for (const candidate of [field, ...PAGE_FIELDS.filter((f) => f !== field)]) {
    const next = await probe.send(OPERATIONS.usageSummary, { ...query, [candidate]: token });
    if (!refused(next) && head(next) !== firstHead) {
      if (candidate === field)
        return { point: "usage paging field", assumes, observed: "as assumed", verdict: "holds" };
      return {
        point: "usage paging field",
        assumes,
        observed: `the field "${candidate}" is read`,
        verdict: "setting",
        setting: `${SETTINGS.usagePageField.config}=${candidate} (or ${SETTINGS.usagePageField.env})`,
        reading: "usage-cursor",
      };
    }
  }
  return {
    point: "usage paging field",
    assumes,
    observed: `none of ${PAGE_FIELDS.join(", ")} moves to the next page`,
    verdict: "setting",
    setting: `${SETTINGS.usagePageField.config}=<the platform's field>`,
  };
}
