import { describe, expect, test } from "@jest/globals";
import { LlmAccountsError } from "../../../provider/client/errors.js";
import { keptInState } from "../../../provider/runtime/engine/contract.js";

describe("keptInState: the created-but-failed protocol", () => {
  test("the engine reads id, properties and reasons; JSON of the error shows none of them", () => {
    const key = "sk-" + "k".repeat(40) + "9z9z";
    const err = keptInState(new LlmAccountsError("could not be disabled"), "fp-1", { key, alias: "a" });
    const seen = err as unknown as { id: string; properties: Record<string, unknown>; reasons: string[] };
    expect(seen.id).toBe("fp-1");
    expect(seen.properties).toEqual({ key, alias: "a" });
    expect(seen.reasons).toEqual(["could not be disabled"]);
    expect(Object.keys(err)).not.toEqual(expect.arrayContaining(["id"]));
    expect(JSON.stringify(err)).not.toContain(key);
    expect(JSON.stringify({ ...err })).not.toContain("fp-1");
  });
});
