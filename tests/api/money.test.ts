import { expect, test } from "@jest/globals";
import fc from "fast-check";
import { formatMicros, showMicros, toMicros } from "../../provider/api/money.js";

test("money: the wire's six-place strings and numbers become whole millionths exactly, signs included", () => {
  expect(toMicros("12.345678")).toBe(12_345_678n);
  expect(toMicros("-0.5")).toBe(-500_000n);
  expect(toMicros("3")).toBe(3_000_000n);
  expect(toMicros(0.1)).toBe(100_000n);
  expect(toMicros(1.1)).toBe(1_100_000n);
  expect(toMicros(3.3)).toBe(3_300_000n);
  expect(toMicros(" 7 ")).toBe(7_000_000n);
  expect(toMicros(".5")).toBe(500_000n);
  // Exponent forms, as String() writes very small and very large numbers.
  expect(toMicros(1e-6)).toBe(1n);
  expect(toMicros(1e21)).toBe(10n ** 27n);
  expect(toMicros("2.5E-3")).toBe(2_500n);
});

test("money: places past the sixth round half away from zero, as the platform keeps six", () => {
  expect(toMicros("0.0000005")).toBe(1n);
  expect(toMicros("0.0000004999")).toBe(0n);
  expect(toMicros("-1.2345675")).toBe(-1_234_568n);
  expect(toMicros(4e-7)).toBe(0n);
  expect(toMicros("-0.0000001")).toBe(0n);
});

test("money: sums of decimals are exact where floating point is not (0.1 x 3, 1.1 + 2.2)", () => {
  expect(0.1 * 3 > 0.3).toBe(true);
  expect(1.1 + 2.2 > 3.3).toBe(true);
  expect(toMicros(0.1) * 3n).toBe(toMicros(0.3));
  expect(toMicros("1.100000") + toMicros("2.200000")).toBe(toMicros(3.3));
});

test("money: formats as the API writes amounts, and as the shortest exact decimal for messages", () => {
  expect(formatMicros(12_345_678n)).toBe("12.345678");
  expect(formatMicros(-500_000n)).toBe("-0.500000");
  expect(formatMicros(0n)).toBe("0.000000");
  expect(showMicros(1_200_000_000n)).toBe("1200");
  expect(showMicros(3_300_000n)).toBe("3.3");
  expect(showMicros(10_500_000n)).toBe("10.5");
  expect(showMicros(0n)).toBe("0");
  expect(showMicros(-1n)).toBe("-0.000001");
});

test("money: anything that is not a finite decimal amount is refused", () => {
  for (const bad of ["", ".", "abc", "1.2.3", "1,5", "0x10", "e5", Number.NaN, Number.POSITIVE_INFINITY]) {
    expect(() => toMicros(bad)).toThrow(RangeError);
  }
});

test("money: any six-place string round-trips, and a sum in millionths is the exact decimal sum", () => {
  const micros = fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n });
  fc.assert(fc.property(micros, (m) => toMicros(formatMicros(m)) === m && toMicros(showMicros(m)) === m));
  // A number with at most six places and 15 significant digits is read as the decimal it was written as.
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 999_999_999 }), fc.integer({ min: 0, max: 999_999_999 }), (a, b) => {
      const [x, y] = [a / 1e6, b / 1e6];
      return toMicros(x) === BigInt(a) && toMicros(x) + toMicros(y) === BigInt(a + b);
    }),
  );
});
