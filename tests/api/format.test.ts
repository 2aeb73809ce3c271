import { expect, test } from "@jest/globals";
import { addDays, utcDate } from "../../provider/api/format.js";

test("dates: the UTC day of an instant, and days added across month and year ends", () => {
  expect(utcDate(Date.UTC(2026, 0, 1, 23, 59))).toBe("2026-01-01");
  expect(addDays("2026-01-01", -1)).toBe("2025-12-31");
  expect(addDays("2028-02-28", 1)).toBe("2028-02-29");
});
