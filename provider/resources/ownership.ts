import * as pulumi from "@pulumi/pulumi";
import { fingerprint, maskKey } from "../api/redact.js";
import { sessionOfThisRun } from "./run.js";

/** What a program adopts: a key (`adoptKey`) or a sub-account (`adoptTokens`), each with its own owners. */
export type Kind = "key" | "sub-account";

/** One resource that declares adoptions (made in its constructor, before super: `this` is not usable yet). */
export type Owner = object;

/** Who declared an object for adoption: the resource, and where in its inputs. */
interface Claim {
  owner: Owner;
  describe: string;
  /** What to do when another resource claims it too, where removing it from one of them is not the remedy. */
  remedy?: string;
}

/** What one run of the program declared: claims by kind and fingerprint of the key (never the key itself). */
type Claims = Map<string, Claim>;

/**
 * The claims of the program run going on now, kept by its session (resources/run.ts): each run of an Automation API
 * inline program has its own, and a run never sees the claims of the run before. Taken once per resource, in its
 * constructor.
 */
export function claimsOfThisRun(): Claims {
  return sessionOfThisRun().claims;
}

/**
 * The program's failure with `message` and no stack frames. A RunError is printed as its message alone, but
 * @pulumi/pulumi's handler of an uncaught error also renders it with `util.inspect(err, { colors: true })`, and on
 * Node.js 20.20 that rendering never ends for a frame under `node_modules/@pulumi/<file>` (the SDK's source-mapped
 * frames of an apply are such frames): it grows a string until the heap gives out (3.6 GiB in 35 s measured for
 * two ApiKeys adopting one key). With nothing but the message, the error is printed at once.
 */
export function programFailure(message: string): Error {
  const err = new pulumi.RunError(message);
  err.stack = `${err.name}: ${message}`;
  return err;
}

/**
 * Declares that `owner` adopts `key` (`describe` says where) in the run whose `claims` are given (this run's by
 * default). When another resource of the run already declared it, fails the program at once (at preview, as soon
 * as the value is known) with an error naming both resources and the key masked: one object, one owner; two
 * resources adopting it would both manage it, and the destroy or count change of one would delete what the other
 * holds.
 */
export function claim(
  kind: Kind,
  key: string,
  owner: Owner,
  describe: string,
  claims: Claims = claimsOfThisRun(),
  remedy?: string,
): void {
  const id = `${kind}:${fingerprint(key)}`;
  const earlier = claims.get(id);
  if (earlier === undefined) {
    claims.set(id, { owner, describe, remedy });
    return;
  }
  if (earlier.owner === owner) return; // the same list twice over: check names the repeated position
  const message =
    `${describe} (${maskKey(key)}) is also ${earlier.describe}: one ${kind} has one owner, so only one resource ` +
    `may adopt it: ${remedy ?? earlier.remedy ?? "remove it from one of them"}`;
  // A RunError, not a ResourceError on this resource: the engine shows no diagnostic for a resource whose
  // registration this very error stops, and a RunError is printed without a stack.
  throw programFailure(message);
}

/** The resource's `adoptKey`, claimed for it when its value is known; what to register instead of the input. */
export function claimedKey(owner: Owner, name: string, adoptKey: pulumi.Input<string>): pulumi.Output<string> {
  const claims = claimsOfThisRun();
  return pulumi.secret(
    pulumi.output(adoptKey).apply((key) => {
      if (typeof key === "string") claim("key", key, owner, `the adoptKey of ApiKey "${name}"`, claims);
      return key;
    }),
  );
}

/** The batch's `adoptTokens`, each claimed for it when the list is known; what to register instead of the input. */
export function claimedTokens(
  owner: Owner,
  name: string,
  adoptTokens: pulumi.Input<pulumi.Input<string>[]>,
): pulumi.Output<string[]> {
  const claims = claimsOfThisRun();
  return pulumi.secret(
    pulumi.output(adoptTokens).apply((tokens) => {
      if (Array.isArray(tokens)) {
        tokens.forEach((t, i) => {
          if (typeof t === "string")
            claim("sub-account", t, owner, `adoptTokens[${i}] of SubAccountBatch "${name}"`, claims);
        });
      }
      return tokens;
    }),
  );
}

/**
 * Claims for an ApiKey the key it holds (its `key` output: known from the state at preview for a resource that
 * exists): a new resource may not adopt it, also once this one's `adoptKey` was removed.
 */
export function claimHeldKey(owner: Owner, name: string, key: pulumi.Output<string>): void {
  const claims = claimsOfThisRun();
  key.apply((k) => {
    if (typeof k === "string" && k !== "") claim("key", k, owner, `the key held by ApiKey "${name}"`, claims);
    return k;
  });
}

/**
 * Claims for a batch the sub-accounts it holds once the engine has answered its registration (its `tokens` output:
 * known from the state at preview for a batch with no change, after its update otherwise). With `adoptTokens` absent
 * or empty, which changes nothing of what it holds: every one. With a non-empty list (the adopted set, claimed as that
 * input): those it still holds beyond it. Its update gives up an adopted one left out of the list, so another batch
 * may adopt that one in the same deployment; a batch that still holds it after its registration is one whose update
 * this command does not run (a `pulumi up --target` that leaves it out: the engine answers with its old state and calls
 * none of its methods), and a taker beside it would leave both states holding the sub-account, which a `pulumi destroy
 * --target` of the giver would then delete.
 */
export function claimHeldTokens(
  owner: Owner,
  name: string,
  adoptTokens: pulumi.Input<pulumi.Input<string>[]> | undefined,
  tokens: pulumi.Output<string[]>,
): void {
  const claims = claimsOfThisRun();
  pulumi.all([pulumi.output(adoptTokens), tokens]).apply(([declared, held]) => {
    const adopted = Array.isArray(declared) && declared.length > 0 ? new Set(declared) : undefined;
    (held ?? []).forEach((t, i) => {
      if (typeof t !== "string") return;
      if (adopted === undefined)
        claim("sub-account", t, owner, `tokens[${i}] held by SubAccountBatch "${name}"`, claims);
      else if (!adopted.has(t))
        claim("sub-account", t, owner, `tokens[${i}] still held by SubAccountBatch "${name}"`, claims, stillHeld(name));
    });
  });
}

/** What to do when another batch adopts a sub-account batch `name` still holds beyond its non-empty `adoptTokens`. */
function stillHeld(name: string): string {
  return (
    `"${name}" gives up a sub-account it adopted only in its own update, and this command does not run that update ` +
    `(a pulumi up --target that leaves "${name}" out): run pulumi up with both batches (a --target for each, or none). ` +
    "A sub-account a batch created is never given up"
  );
}
