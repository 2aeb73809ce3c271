import { expect, test } from "@jest/globals";
import * as pulumi from "@pulumi/pulumi";
import type { z } from "zod";
import type { RotationArgs, SecurityConfigArgs } from "../../provider/resources/ApiKey.js";
import type { RotationSchema } from "../../provider/runtime/apiKey/rotation.js";
import { ApiKeyInputsSchema } from "../../provider/runtime/apiKey/index.js";
import type { SecurityConfig } from "../../provider/api/schemas/index.js";

// The input types users see are derived from the schemas check validates them by (as ConnectionArgs is): these
// assertions fail to compile (`tsc --noEmit`, the first step of `npm test`) when the two drift apart.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const assert = <T extends true>(): T => true as T;

test("SecurityConfigArgs and RotationArgs have exactly the fields of their schemas", () => {
  assert<Same<keyof SecurityConfigArgs, keyof SecurityConfig>>();
  assert<Same<keyof RotationArgs, keyof z.output<typeof RotationSchema>>>();
  // @ts-expect-error: a field the schema does not take is not an argument either.
  const unknownField: RotationArgs = { everyDays: 1, every: 2 };
  // @ts-expect-error: the schema's literal, not any string.
  const wrongMode: SecurityConfigArgs = { models: { mode: "any", items: [] } };
  expect([unknownField, wrongMode]).toHaveLength(2);
});

test("every level of the Args may be an Output, and values typed by the Args pass the schemas", () => {
  const countries: SecurityConfigArgs = {
    geo: { countries: [pulumi.output("FR"), "DE"] },
    spendLimit: pulumi.output({ monthly: 10 }),
  };
  const rotation: RotationArgs = { everyDays: pulumi.output(30), overlapHours: 24, triggers: [{ n: 1 }] };
  expect([countries, rotation]).toHaveLength(2);
  const securityConfig: SecurityConfigArgs = {
    ip: { allow: ["10.0.0.0/8"] },
    models: { mode: "model", items: ["m-1"] },
  };
  const plainRotation: RotationArgs = { everyDays: 90, overlapHours: 24, triggers: ["t"] };
  const parsed = ApiKeyInputsSchema.safeParse({ alias: "a", securityConfig, rotation: plainRotation });
  expect(parsed.success).toBe(true);
  expect(parsed.data?.securityConfig).toEqual(securityConfig);
  expect(parsed.data?.rotation).toEqual(plainRotation);
});
