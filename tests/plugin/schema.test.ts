import { describe, expect, test } from "@jest/globals";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { API_KEY_INPUTS, BATCH_INPUTS, packageSchema, token } from "../../provider/plugin/schema.js";
import { REPO } from "../support/programDir.js";

// The provider plugin's schema (provider/plugin/schema.ts): the inputs' descriptions are the docs' notes, and what
// is secret in the dynamic resources is secret in every SDK generated from it.

/** The notes of a docs page's `| input | type | notes |` table, by input name, links reduced to their text. */
function docsNotes(page: string): Record<string, string> {
  const text = readFileSync(join(REPO, "docs/resources", page), "utf8");
  const table = text.slice(text.indexOf("| input | type | notes |")).split("\n\n")[0];
  const rows = table.split("\n").slice(2);
  return Object.fromEntries(
    rows.map((row) => {
      const cells = row.split(" | ");
      const name = cells[0].replace(/^\|\s*`|`$/g, "");
      return [name, cells[cells.length - 1].replace(/\s*\|$/, "").replace(/\[([^\]]+)\]\([^)]*\)/g, "$1")];
    }),
  );
}

type Spec = { description?: string; secret?: boolean };
const schema = packageSchema() as {
  config: { variables: Record<string, Spec> };
  resources: Record<string, { inputProperties: Record<string, Spec>; properties: Record<string, Spec> }>;
};

describe("the provider's schema", () => {
  test.each([
    ["api-key.md", API_KEY_INPUTS],
    ["sub-account-batch.md", BATCH_INPUTS],
  ])("the inputs of %s, each described by its notes in the docs", (page, inputs) => {
    const notes = docsNotes(page);
    expect(Object.keys(inputs).sort()).toEqual(Object.keys(notes).sort());
    for (const [name, spec] of Object.entries(inputs)) expect([name, spec.description]).toEqual([name, notes[name]]);
  });

  test("the secrets of the dynamic resources are secret in the schema, and so are the provider's keys", () => {
    const secret = (props: Record<string, Spec>) =>
      Object.keys(props)
        .filter((k) => props[k].secret === true)
        .sort();
    expect(secret(schema.resources[token("ApiKey")].properties)).toEqual(["adoptKey", "key", "previousKey"]);
    expect(secret(schema.resources[token("ApiKey")].inputProperties)).toEqual(["adoptKey"]);
    expect(secret(schema.resources[token("SubAccountBatch")].properties)).toEqual([
      "adoptTokens",
      "subAccounts",
      "tokens",
    ]);
    expect(secret(schema.config.variables)).toEqual(["accountKey", "adminKey"]);
  });
});
