import { beforeAll, describe, expect, test } from "@jest/globals";
import * as pulumi from "@pulumi/pulumi";

// Program-level wiring under Pulumi's mocks. Provider code never runs here (mocks replace the engine), and
// additionalSecretOutputs has no effect under mocks: the end-to-end suite proves those on the real CLI.
const registered: pulumi.runtime.MockResourceArgs[] = [];

beforeAll(async () => {
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        registered.push(args);
        const rotation = args.inputs.rotation ? { rotatedAt: "2026-11-01T00:00:00Z" } : {};
        return {
          id: `${args.name}-id`,
          state: {
            ...args.inputs,
            key: `sk-${args.name}-${"k".repeat(36)}wxyz`,
            createdAt: "2026-10-01T00:00:00Z",
            ...rotation,
          },
        };
      },
      call() {
        return {};
      },
    },
    "project",
    "stack",
    true,
  );
});

function outputValue<T>(o: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => o.apply(resolve));
}

/** Whether an output is secret: the SDK keeps it on the output as a promise it does not type publicly. */
const isSecret = (output: pulumi.Output<unknown>) => (output as unknown as { isSecret: Promise<boolean> }).isSecret;

describe("resource wiring", () => {
  test("ApiKey registers under its own type with the declared inputs and a provider that loads the runtime by package name", async () => {
    const { ApiKey } = await import("../../provider/resources/ApiKey.js");
    const key = new ApiKey(
      "k",
      { alias: "a", adoptKey: "sk-" + "a".repeat(40), securityConfig: { geo: { countries: ["SG"] } } },
      { protect: false },
    );
    expect(await outputValue(key.keyHint)).toBe("sk-...wxyz");
    const r = registered.find((x) => x.name === "k")!;
    expect(r.type).toBe("pulumi-nodejs:dynamic/llm-accounts:ApiKey");
    expect(r.inputs).toMatchObject({ alias: "a", securityConfig: { geo: { countries: ["SG"] } } });
    expect(String(r.inputs.__provider)).toContain('import("pulumi-llm-accounts/runtime")');
  });

  test("ApiKey registers only the inputs given and the outputs it cannot derive; keyHint is the key masked, not secret", async () => {
    const { ApiKey } = await import("../../provider/resources/ApiKey.js");
    const key = new ApiKey("plain", { alias: "p" });
    // Every public output is there; the inputs not given are not registered (each registered property costs
    // the SDK four promises with captured stack traces per resource).
    const outputs = Object.keys(key).filter(
      (k) => k !== "urn" && k !== "id" && pulumi.Output.isInstance((key as unknown as Record<string, unknown>)[k]),
    );
    expect(outputs.sort()).toEqual(
      [
        "__provider",
        "alias",
        "createdAt",
        "enabled",
        "key",
        "keyHint",
        "previousKey",
        "previousKeyExpiresAt",
        "rotatedAt",
        "rotationDue",
        "securityConfig",
      ].sort(),
    );
    expect(await outputValue(key.keyHint)).toBe("sk-...wxyz");
    expect(await isSecret(key.keyHint)).toBe(false);
    // Without rotation, the rotation outputs are undefined, and previousKey is secret all the same.
    expect(await outputValue(key.previousKey)).toBeUndefined();
    expect(await isSecret(key.previousKey)).toBe(true);
    expect(await outputValue(key.rotatedAt)).toBeUndefined();
    expect(await outputValue(key.rotationDue)).toBeUndefined();
  });

  test("ApiKey passes rotation as an input, and its rotation outputs come from the provider", async () => {
    const { ApiKey } = await import("../../provider/resources/ApiKey.js");
    const key = new ApiKey("rot", { alias: "r", rotation: { everyDays: 90, triggers: ["INC-1"], overlapHours: 24 } });
    const r = await new Promise<pulumi.runtime.MockResourceArgs>((done) => {
      const poll = () => {
        const found = registered.find((x) => x.name === "rot");
        return found ? done(found) : setTimeout(poll, 5);
      };
      poll();
    });
    expect(r.inputs.rotation).toEqual({ everyDays: 90, triggers: ["INC-1"], overlapHours: 24 });
    expect(await outputValue(key.rotatedAt)).toBe("2026-11-01T00:00:00Z");
  });

  test("the user's additionalSecretOutputs are kept beside the package's own", async () => {
    const { withSecretOutputs } = await import("../../provider/resources/shim.js");
    expect(withSecretOutputs({ additionalSecretOutputs: ["alias"], protect: true }, ["key", "adoptKey"])).toEqual({
      additionalSecretOutputs: ["alias", "key", "adoptKey"],
      protect: true,
    });
    expect(withSecretOutputs(undefined, ["tokens"]).additionalSecretOutputs).toEqual(["tokens"]);
  });

  test("SubAccountBatch registers under its own type with every input", async () => {
    const { SubAccountBatch } = await import("../../provider/resources/SubAccountBatch.js");
    new SubAccountBatch("team", { alias: "t", balance: 5, count: 2, modelPricing: [{ model: "m", pricingFactor: 1 }] });
    await new Promise((r) => setTimeout(r, 50));
    const r = registered.find((x) => x.name === "team")!;
    expect(r.type).toBe("pulumi-nodejs:dynamic/llm-accounts:SubAccountBatch");
    expect(r.inputs).toMatchObject({
      alias: "t",
      balance: 5,
      count: 2,
      modelPricing: [{ model: "m", pricingFactor: 1 }],
    });
  });
  test("a registration formats no stack trace but the resource's source position, unless PULUMI_DEBUG_PROMISE_LEAKS asks for them", async () => {
    const { ApiKey } = await import("../../provider/resources/ApiKey.js");
    const { SubAccountBatch } = await import("../../provider/resources/SubAccountBatch.js");
    /** The frames of each stack trace formatted while `declare` runs. */
    const tracesOf = (declare: () => void): number[] => {
      const original = Error.prepareStackTrace;
      const frames: number[] = [];
      Error.prepareStackTrace = (err, callSites) => (
        frames.push(callSites.length), original ? original(err, callSites) : String(err)
      );
      try {
        declare();
      } finally {
        Error.prepareStackTrace = original;
      }
      return frames;
    };
    const limit = Error.stackTraceLimit;
    const declare = (suffix: string) => () => {
      new ApiKey(`traced-key-${suffix}`, { alias: "t" });
      new SubAccountBatch(`traced-batch-${suffix}`, {
        alias: "t",
        balance: 5,
        count: 2,
        modelPricing: [{ model: "m", pricingFactor: 1 }],
      });
    };
    // The SDK still makes a trace for each promise of the registrations (about 30 per resource), each without a
    // frame: only the source position it sends the engine (one per resource, its own limit) has frames.
    const quiet = tracesOf(declare("quiet"));
    expect(quiet.length).toBeGreaterThan(40);
    expect(quiet.filter((n) => n > 0)).toHaveLength(2);
    expect(Error.stackTraceLimit).toBe(limit);
    process.env.PULUMI_DEBUG_PROMISE_LEAKS = "true";
    try {
      expect(tracesOf(declare("leaks")).filter((n) => n > 0).length).toBeGreaterThan(40);
    } finally {
      delete process.env.PULUMI_DEBUG_PROMISE_LEAKS;
    }
  });
  test("ApiKey.get and SubAccountBatch.get register a read by id with the state given (a batch's without a mark); isInstance tells each by its type token", async () => {
    const { ApiKey } = await import("../../provider/resources/ApiKey.js");
    const { SubAccountBatch } = await import("../../provider/resources/SubAccountBatch.js");
    const key = ApiKey.get("got-key", "fp-1", {
      key: `sk-${"g".repeat(36)}wxyz`,
      alias: "shared",
      createdAt: "2026-10-01T00:00:00Z",
    });
    const team = SubAccountBatch.get("got-team", "sab-1", { tokens: ["sk-t1"], alias: "team", balance: 5, count: 1 });
    expect(await outputValue(key.keyHint)).toBe("sk-...wxyz");
    await outputValue(team.tokens);
    const [k, t] = ["got-key", "got-team"].map((name) => registered.find((x) => x.name === name)!);
    expect(k).toMatchObject({
      type: "pulumi-nodejs:dynamic/llm-accounts:ApiKey",
      id: "fp-1",
      inputs: { alias: "shared", createdAt: "2026-10-01T00:00:00Z" },
    });
    expect(String(k.inputs.__provider)).toContain('import("pulumi-llm-accounts/runtime")');
    expect(t).toMatchObject({
      type: "pulumi-nodejs:dynamic/llm-accounts:SubAccountBatch",
      id: "sab-1",
      inputs: { tokens: ["sk-t1"], alias: "team", balance: 5, count: 1 },
    });
    expect(t.inputs.mark).toBeUndefined();
    expect([
      ApiKey.isInstance(key),
      SubAccountBatch.isInstance(team),
      ApiKey.isInstance(team),
      SubAccountBatch.isInstance(key),
    ]).toEqual([true, true, false, false]);
    expect([
      ApiKey.isInstance(undefined),
      ApiKey.isInstance({ __pulumiType: "other" }),
      ApiKey.isInstance("ApiKey"),
    ]).toEqual([false, false, false]);
  });
});
