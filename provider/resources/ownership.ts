import * as pulumi from "@pulumi/pulumi";
import { fingerprint, maskKey } from "../api/redact.js";

/** What a program adopts: a key (`adoptKey`) or a sub-account (`adoptTokens`), each with its own owners. */
export type Kind = "key" | "sub-account";

/** One resource that declares adoptions (made in its constructor, before super: `this` is not usable yet). */
export type Owner = object;

/** Who declared an object for adoption: the resource, and where in its inputs. */
interface Claim {
  owner: Owner;
  describe: string;
}

/**
 * The adoptions the program declared so far, by kind and fingerprint of the key (never the key itself): the
 * program process's one registry. A program runs once per `pulumi` command, so it holds one program's
 * declarations; the engine cannot tell two resources apart by their inputs, only the program knows their names.
 */
const claims = new Map<string, Claim>();

/**
 * Declares that `owner` adopts `key` (`describe` says where). When another resource of the program already declared
 * it, fails the program at once (at preview, as soon as the value is known) with an error naming both resources
 * and the key masked: one object, one owner; two resources adopting it would both manage it, and the
 * destroy or count change of one would delete what the other holds.
 */
export function claim(kind: Kind, key: string, owner: Owner, describe: string): void {
  const id = `${kind}:${fingerprint(key)}`;
  const earlier = claims.get(id);
  if (earlier === undefined) {
    claims.set(id, { owner, describe });
    return;
  }
  if (earlier.owner === owner) return; // the same list twice over: check names the repeated position
  const message =
    `${describe} (${maskKey(key)}) is also ${earlier.describe}: one ${kind} has one owner, so only one resource ` +
    "may adopt it: remove it from one of them";
  // A RunError, not a ResourceError on this resource: the engine shows no diagnostic for a resource whose
  // registration this very error stops, and a RunError is printed without a stack.
  throw new pulumi.RunError(message);
}

/** The resource's `adoptKey`, claimed for it when its value is known; what to register instead of the input. */
export function claimedKey(owner: Owner, name: string, adoptKey: pulumi.Input<string>): pulumi.Output<string> {
  return pulumi.secret(
    pulumi.output(adoptKey).apply((key) => {
      if (typeof key === "string") claim("key", key, owner, `the adoptKey of ApiKey "${name}"`);
      return key;
    }),
  );
}

/** The batch's `adoptTokens`, each claimed for it when the list is known; what to register instead of the input. */
export function claimedTokens(owner: Owner, name: string, adoptTokens: pulumi.Input<pulumi.Input<string>[]>): pulumi.Output<string[]> {
  return pulumi.secret(
    pulumi.output(adoptTokens).apply((tokens) => {
      if (Array.isArray(tokens)) {
        tokens.forEach((t, i) => {
          if (typeof t === "string") claim("sub-account", t, owner, `adoptTokens[${i}] of SubAccountBatch "${name}"`);
        });
      }
      return tokens;
    }),
  );
}
