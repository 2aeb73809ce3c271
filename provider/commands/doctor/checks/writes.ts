import { randomBytes } from "node:crypto";
import { OPERATIONS } from "../../../api/operations.js";
import { keyChecks } from "./keys.js";
import { subAccountChecks } from "./subAccounts.js";
import { idempotent, refused, unknownKey } from "../probe.js";
import type { DoctorRow } from "../report.js";
import { keep, type Run } from "../run.js";
import { cleanUp } from "../throwaways.js";

/** The checks that need a write, each with its throwaway object, deleted again whatever happens (cleanUp). */
export async function writes(run: Run): Promise<DoctorRow[]> {
  const rows: DoctorRow[] = [];
  const hex = randomBytes(6).toString("hex");
  // A refused request of the management group (a usage window that ends before it starts): what "refused" looks like.
  const badQuery = await run.probe.twice(OPERATIONS.usageSummary, { start: "2001-01-02", end: "2001-01-01" });
  if (refused(badQuery.raw) || !badQuery.steady) keep(run, "refused", "a refused request", badQuery);
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
export function writeAnswerRows(run: Run): DoctorRow[] {
  const rows: DoctorRow[] = [];
  const { terse } = run.answers;
  const noContent = run.probe.noBody;
  const assumes = "status answers {enabled}, delete {deleted}, sub-account writes {success}";
  rows.push({
    point: "write answers",
    assumes,
    observed: terse ? "confirmed otherwise ({success: true} or {})" : "as assumed",
    verdict: terse ? "handled" : "holds",
    reading: terse ? "terse-writes" : undefined,
  });
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
