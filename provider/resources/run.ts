import * as pulumi from "@pulumi/pulumi";
import { currentSession, startFresh, type Session } from "../runtime/command/index.js";

/**
 * The session of this run of the program: the one place the program side keeps what a run declared (claims,
 * ownership.ts) and asked (data source answers, dataSources.ts). A session remembers its run (the engine's resource
 * monitor; undefined outside a Pulumi program). When the program runs again in the same process, as an Automation
 * API program run inline does at each `up`, the new run has a new resource monitor: a new session starts, and what
 * the run before kept is forgotten, so that a second `up` never shows the first one's balance nor its claims.
 */
export function sessionOfThisRun(): Session {
  const run = pulumi.runtime.getMonitor();
  const session = currentSession();
  return session.run === run ? session : startFresh({ run });
}
