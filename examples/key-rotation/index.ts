import * as pulumi from "@pulumi/pulumi";
import * as llm from "pulumi-llm-accounts";

const config = new pulumi.Config();
const everyDays = config.getNumber("everyDays") ?? 90;
const overlapHours = config.getNumber("overlapHours") ?? 24;
// Set a new value after a suspected leak (`pulumi config set leakTicket SEC-1234`): the next `pulumi up` rotates.
const leakTicket = config.get("leakTicket") ?? "none";

// The CI runner's key: replaced by a new one every 90 days, or at once when the ticket changes. The replaced
// key stays valid for 24 hours so that every runner can pick up the new one; the first `pulumi up` after
// that deletes it.
const ci = new llm.ApiKey("ci", {
  alias: "ci-runner",
  securityConfig: { spendLimit: { monthly: 200 } },
  rotation: { everyDays, triggers: [leakTicket], overlapHours },
});

/** The key masked (`sk-...1a2b`): changes at each rotation. */
export const keyHint = ci.keyHint;
/** The current key, a secret: hand it to whatever uses it from this output (or `ci.key` in the program). */
export const key = ci.key;
/** The key replaced by the last rotation while it is still valid, a secret; else undefined. */
export const previousKey = ci.previousKey;
/** When the previous key is deleted (at the first `pulumi up` from then on). */
export const previousKeyExpiresAt = ci.previousKeyExpiresAt;
/** When the current key was issued by a rotation; undefined until the first one. */
export const rotatedAt = ci.rotatedAt;
/** When the current key was issued: the next rotation by age is due `everyDays` after it. */
export const createdAt = ci.createdAt;
