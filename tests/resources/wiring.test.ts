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
        return { id: `${args.name}-id`, state: { ...args.inputs, keyHint: "sk-...mock" } };
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

describe("resource wiring", () => {
  test("ApiKey registers under its own type with the declared inputs and a provider that loads the runtime by package name", async () => {
    const { ApiKey } = await import("../../provider/resources/ApiKey.js");
    const key = new ApiKey("k", { alias: "a", adoptKey: "sk-" + "a".repeat(40), securityConfig: { geo: { countries: ["SG"] } } }, { protect: false });
    expect(await outputValue(key.keyHint)).toBe("sk-...mock");
    const r = registered.find((x) => x.name === "k")!;
    expect(r.type).toBe("pulumi-nodejs:dynamic/llm-accounts:ApiKey");
    expect(r.inputs).toMatchObject({ alias: "a", securityConfig: { geo: { countries: ["SG"] } } });
    expect(String(r.inputs.__provider)).toContain('import("pulumi-llm-accounts/runtime")');
  });

  test("ApiKey passes rotation as an input", async () => {
    const { ApiKey } = await import("../../provider/resources/ApiKey.js");
    new ApiKey("rot", { alias: "r", rotation: { everyDays: 90, triggers: ["INC-1"], overlapHours: 24 } });
    const r = await new Promise<pulumi.runtime.MockResourceArgs>((done) => {
      const poll = () => {
        const found = registered.find((x) => x.name === "rot");
        return found ? done(found) : setTimeout(poll, 5);
      };
      poll();
    });
    expect(r.inputs.rotation).toEqual({ everyDays: 90, triggers: ["INC-1"], overlapHours: 24 });
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
    expect(r.inputs).toMatchObject({ alias: "t", balance: 5, count: 2, modelPricing: [{ model: "m", pricingFactor: 1 }] });
  });
});
