import { expect, test } from "@jest/globals";
import { addDays, decimalToMicros, microsToDecimal, utcDate } from "../../provider/api/format.js";

test("money: decimal strings and whole millionths convert both ways exactly, signs included", () => {
  expect(decimalToMicros("12.345678")).toBe(12_345_678n);
  expect(decimalToMicros("-0.5")).toBe(-500_000n);
  expect(decimalToMicros("3")).toBe(3_000_000n);
  expect(microsToDecimal(12_345_678n)).toBe("12.345678");
  expect(microsToDecimal(-500_000)).toBe("-0.500000");
  // 0.1 + 0.2 in floating point is not 0.3; in millionths it is.
  expect(microsToDecimal(decimalToMicros("0.1") + decimalToMicros("0.2"))).toBe("0.300000");
});

test("dates: the UTC day of an instant, and days added across month and year ends", () => {
  expect(utcDate(Date.UTC(2026, 0, 1, 23, 59))).toBe("2026-01-01");
  expect(addDays("2026-01-01", -1)).toBe("2025-12-31");
  expect(addDays("2028-02-28", 1)).toBe("2028-02-29");
});
