import { expect } from "@jest/globals";
import type { Props, TypedProvider } from "../../provider/runtime/index.js";

/** The inputs a provider's check makes of values a test declares valid: the test fails on any check failure. */
export async function checkedInputs<I>(
  provider: Pick<TypedProvider<I, unknown>, "check">,
  news: Props,
  olds: Props = {},
): Promise<I> {
  const { inputs, failures } = await provider.check(olds, news);
  expect(failures).toEqual([]);
  return inputs;
}
