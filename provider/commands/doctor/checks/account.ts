import { randomBytes } from "node:crypto";
import { isObject } from "../../../api/canonical.js";
import { OPERATIONS } from "../../../api/operations.js";
import { errorShapeRow, goneRow } from "./answers.js";
import { Stopped, describeRefusal, describeShape, meaningOf, refused, transient, unknownKey } from "../probe.js";
import type { DoctorRow } from "../report.js";
import { keep, unmeasuredRow, type Run } from "../run.js";

/**
 * Both credentials, the balance and the sub-account list (all at once, or by pages where that is refused): the
 * doctor stops when either is refused, or when the platform redirects (with the client's own message: `up` stops
 * on it too).
 */
export async function connect(run: Run): Promise<DoctorRow[]> {
  const { probe } = run;
  const balance = await probe.send(OPERATIONS.balance, {});
  if (meaningOf(balance) === "unauthorised")
    throw new Error(`the admin key was refused (${balance.status}) by ${probe.origin}`);
  if (balance.status >= 300 && balance.status < 400) {
    const err = await run.client.account.balance().then(
      () => undefined,
      (e: unknown) => e,
    );
    const why = err instanceof Error ? err.message : `account/balance answered HTTP ${balance.status}, a redirect`;
    throw new Stopped(
      `${why}; \`pulumi up\` stops on the same answer, and every other point is hidden behind it (the emulator plays it with --reading redirects)`,
      "redirects",
    );
  }
  // After the runtime's retries: a platform that cannot answer now cannot be measured (never a refusal).
  if (transient(balance))
    throw new Error(
      `account/balance answered ${describeShape(balance)} after the runtime's retries: the platform cannot be measured now; run the doctor again`,
    );
  if (refused(balance)) throw new Error(`account/balance was refused: ${describeRefusal(balance)}`);
  const whole = await probe.twice(OPERATIONS.listSubAccounts, run.paging);
  let list = whole.raw;
  if (meaningOf(list) === "unauthorised")
    throw new Error(`the main account key was refused (${list.status}) by ${probe.origin}`);
  // page_size=-1 refused, twice alike: the list is read by pages. One refusal and one answer: read whole, as the package does.
  const allRefused = whole.steady && refused(list);
  if (allRefused) {
    keep(run, "refused", "page_size=-1 (all sub-accounts)", whole);
    run.paging = { page: 1, page_size: 100 };
    list = await probe.send(OPERATIONS.listSubAccounts, run.paging);
  } else if (refused(list) && !whole.steady) list = await probe.send(OPERATIONS.listSubAccounts, run.paging);
  if (transient(list))
    throw new Error(
      `the sub-account list answered ${describeShape(list)} after the runtime's retries: the platform cannot be measured now; run the doctor again`,
    );
  // A list refused in pages too (403, success: false in a 200): the main account key cannot list, so nothing runs.
  if (refused(list))
    throw new Error(`the sub-account list was refused with the main account key: ${describeRefusal(list)}`);
  const models = OPERATIONS.models.response.safeParse((await probe.send(OPERATIONS.models, {})).body);
  if (models.success) run.models = [...new Set(models.data.models.map((m) => m.model))];
  const wrongAdmin = await probe.twice(OPERATIONS.balance, {}, `sk-admin-doctor${randomBytes(12).toString("hex")}`);
  if (refused(wrongAdmin.raw) || !wrongAdmin.steady) keep(run, "unauthorised", "a refused credential", wrongAdmin);
  const hasTotal = isObject(list.body) && typeof list.body.total !== "undefined" && "pageSize" in list.body;
  return [
    {
      point: "credentials",
      assumes: "admin key for the management group, main account key for the sub-account group",
      observed: "both accepted",
      verdict: "holds",
    },
    allRefused
      ? {
          point: "page_size=-1 (all sub-accounts)",
          assumes: "accepted",
          observed: "refused",
          verdict: "handled",
          reading: "list-all-refused",
        }
      : { point: "page_size=-1 (all sub-accounts)", assumes: "accepted", observed: "accepted", verdict: "holds" },
    {
      point: "list answer fields",
      assumes: "items, total, page, pageSize",
      observed: hasTotal
        ? "as assumed"
        : `fields ${isObject(list.body) ? Object.keys(list.body).join(", ") : "(none)"}`,
      verdict: hasTotal ? "holds" : "handled",
      reading: hasTotal ? undefined : "list-no-total",
    },
  ];
}

/** The management group's refusals, read-only: a get of a key that does not exist (gone). */
export async function readOnlyRows(run: Run): Promise<DoctorRow[]> {
  const missing = await run.probe.twice(OPERATIONS.getApiKey, { key: unknownKey() });
  const point = "gone: a key that does not exist";
  if (!missing.steady) {
    keep(run, "goneKey", point, missing);
    return [
      unmeasuredRow("management group errors", "non-2xx {error: {code, message}}", missing.why),
      unmeasuredRow(point, "404 (or an answer that says not found)", missing.why),
    ];
  }
  if (refused(missing.raw)) keep(run, "goneKey", point, missing);
  return [
    errorShapeRow("management group errors", missing.raw, run.probe.envelope),
    goneRow("a key that does not exist", missing.raw, "management"),
  ];
}
