import { expect, test } from "@jest/globals";
import { camelPath, fromWire, toWire, wirePath } from "../../provider/api/casing.js";

test("keys are renamed at every depth, values never, and undefined members are dropped", () => {
  const wire = {
    security_config: { spend_limit: { monthly: 5 }, models: { items: ["gpt_4o_mini"] } },
    created_at: "x",
    user_id: 7,
  };
  const camel = fromWire(wire);
  expect(camel).toEqual({
    securityConfig: { spendLimit: { monthly: 5 }, models: { items: ["gpt_4o_mini"] } },
    createdAt: "x",
    userId: 7,
  });
  expect(toWire(camel)).toEqual(wire);
  expect(toWire({ alias: "a", securityConfig: undefined })).toEqual({ alias: "a" });
  // Only plain objects are walked: a Date (or any class instance) is passed through as it is.
  const at = new Date(0);
  expect(fromWire({ created_at: at }).createdAt).toBe(at);
});

/** snake_case to camelCase without the module's memory. */
const toCamelByHand = (name: string) => name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

test("renaming from memory gives the same answers past its cap, in both directions, for every name", () => {
  // More distinct names than the memory holds (4096), then the first ones again.
  // Letters only: a digit after an underscore does not come back (field_0 -> field0 -> field0).
  const letters = (i: number) => i.toString(26).replace(/./g, (d) => String.fromCharCode(97 + parseInt(d, 26)));
  const names = Array.from({ length: 5000 }, (_, i) => `field_${letters(i)}_name`);
  const wire = Object.fromEntries(names.map((n, i) => [n, i]));
  const camel = fromWire(wire) as Record<string, number>;
  for (const [i, n] of names.entries()) expect(camel[toCamelByHand(n)]).toBe(i);
  expect(toWire(camel)).toEqual(wire);
  expect(fromWire({ field_a_name: "again", [names[4999]!]: "late" })).toEqual({
    fieldAName: "again",
    [toCamelByHand(names[4999]!)]: "late",
  });
});

test("paths are rendered as users and as the wire name them", () => {
  expect(camelPath(["security_config", "geo", "countries", 1])).toBe("securityConfig.geo.countries[1]");
  expect(wirePath(["security_config", "geo", "countries", 1])).toBe("security_config.geo.countries[1]");
});
