import { describe, expect, test } from "@jest/globals";
import * as pulumi from "@pulumi/pulumi";
import { inspect } from "node:util";
import { claim, claimedKey, claimedTokens, claimHeldTokens } from "../../provider/resources/ownership.js";

// One object, one owner (issue 28), in the program process: the second resource that adopts a key or a
// sub-account fails with a RunError naming both resources, the key masked. The claims are read here directly (an
// output that fails rejects promises of its own that only a program's runtime collects); the e2e suite shows the
// failed preview on the real CLI where the toolchain prints a program's errors (tests/e2e/adoptionGrowth.test.ts).

const value = (o: pulumi.Output<unknown>) => (o as unknown as { promise(): Promise<unknown> }).promise();
const key = (c: string) => `sk-${c.repeat(40)}`;
const failure = (f: () => void): Error | undefined => {
  try {
    f();
    return undefined;
  } catch (e) {
    return e as Error;
  }
};

describe("one owner per adopted object", () => {
  test("a second ApiKey adopting the same key fails naming both, masked", async () => {
    const k = key("a");
    await expect(value(claimedKey({}, "ci", pulumi.secret(k)))).resolves.toBe(k);
    const err = failure(() => claim("key", k, {}, 'the adoptKey of ApiKey "ci-copy"'));
    expect(pulumi.RunError.isInstance(err)).toBe(true);
    expect(err?.message).toBe(
      'the adoptKey of ApiKey "ci-copy" (sk-...aaaa) is also the adoptKey of ApiKey "ci": one key has one owner, so only one resource may adopt it: remove it from one of them',
    );
    expect(err?.message).not.toContain(k);
  });

  test("a token in two batches fails naming both and the positions; one batch naming its own token again is left to check", async () => {
    const a = key("b");
    const b = key("c");
    const team = {};
    await expect(value(claimedTokens(team, "team", [a, b]))).resolves.toEqual([a, b]);
    await expect(value(claimedTokens(team, "team", [b]))).resolves.toEqual([b]);
    const err = failure(() => claim("sub-account", b, {}, 'adoptTokens[1] of SubAccountBatch "team-twin"'));
    expect(err?.message).toBe(
      'adoptTokens[1] of SubAccountBatch "team-twin" (sk-...cccc) is also adoptTokens[1] of SubAccountBatch "team": one sub-account has one owner, so only one resource may adopt it: remove it from one of them',
    );
  });

  test("a sub-account a batch still holds beyond its non-empty adoptTokens (its update not run: up --target) adopted by another: fails naming both and the remedy", async () => {
    const [t, u, made] = [key("m"), key("n"), key("o")];
    const team = {};
    await value(claimedTokens(team, "team", [u]));
    claimHeldTokens(team, "team", [u], pulumi.secret([t, u, made]));
    await new Promise((resolve) => setImmediate(resolve));
    const err = failure(() => claim("sub-account", t, {}, 'adoptTokens[0] of SubAccountBatch "twin"'));
    expect(err?.message).toBe(
      'adoptTokens[0] of SubAccountBatch "twin" (sk-...mmmm) is also tokens[0] still held by SubAccountBatch "team": one sub-account has one owner, so only one resource may adopt it: ' +
        '"team" gives up a sub-account it adopted only in its own update, and this command does not run that update (a pulumi up --target that leaves "team" out): ' +
        "run pulumi up with both batches (a --target for each, or none). A sub-account a batch created is never given up",
    );
    // What it declares is claimed as its adoptTokens (the same owner), and what it created is claimed too.
    expect(failure(() => claim("sub-account", u, team, 'adoptTokens[0] of SubAccountBatch "team"'))).toBeUndefined();
    expect(
      failure(() => claim("sub-account", made, {}, 'adoptTokens[0] of SubAccountBatch "other"'))?.message,
    ).toContain('tokens[2] still held by SubAccountBatch "team"');
  });

  test("a key and a sub-account token are different kinds of object: the same text claimed as each is no conflict", async () => {
    const t = key("e");
    await expect(value(claimedKey({}, "k", t))).resolves.toBe(t);
    await expect(value(claimedTokens({}, "batch", [t]))).resolves.toEqual([t]);
  });

  test("the one-owner error has no stack frames: rendered as @pulumi/pulumi's handler of an uncaught error does, it is its message at once", () => {
    const k = key("f");
    claim("key", k, {}, 'the adoptKey of ApiKey "first"');
    const err = failure(() => claim("key", k, {}, 'the adoptKey of ApiKey "second"'))!;
    expect(err.stack).not.toMatch(/\n\s+at /);
    // On Node.js 20.20, inspect with colors never ends for a frame under node_modules/@pulumi/<file>, which an
    // apply's source-mapped frames are: the program grew to 3.6 GiB before this error printed.
    const started = Date.now();
    const shown = inspect(err, { colors: true });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(shown).toContain("one key has one owner");
    expect(shown.length).toBeLessThan(2000);
  });

  test("the claims belong to one program run: a new run (a new resource monitor) declares the same adoption again", async () => {
    const mocks = {
      newResource: (a: pulumi.runtime.MockResourceArgs) => ({ id: `${a.name}-id`, state: a.inputs }),
      call: (a: pulumi.runtime.MockCallArgs) => a.inputs,
    };
    const k = key("g");
    await pulumi.runtime.setMocks(mocks);
    await expect(value(claimedKey({}, "ci", k))).resolves.toBe(k);
    expect(failure(() => claim("key", k, {}, 'the adoptKey of ApiKey "ci-copy"'))?.message).toContain(
      'is also the adoptKey of ApiKey "ci"',
    );
    // The next run of an inline program in the same process: the modules stay loaded, the monitor is new.
    await pulumi.runtime.setMocks(mocks);
    await expect(value(claimedKey({}, "ci", k))).resolves.toBe(k);
    expect(failure(() => claim("key", k, {}, 'the adoptKey of ApiKey "ci-copy"'))?.message).toContain(
      'is also the adoptKey of ApiKey "ci"',
    );
  });
});
