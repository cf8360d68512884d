import { describe, expect, it } from "vitest";
import { sqliteBusyTimeoutMs } from "./prisma";

describe("SAGABOARD_SQLITE_BUSY_TIMEOUT_MS", () => {
  it("is 10 s unless set, and refuses what is not a whole number of milliseconds, naming the variable", () => {
    expect(sqliteBusyTimeoutMs({})).toBe(10_000);
    expect(sqliteBusyTimeoutMs({ SAGABOARD_SQLITE_BUSY_TIMEOUT_MS: " 150 " })).toBe(150);
    for (const bad of ["ten", "1.5", "0", "-5"]) {
      expect(() => sqliteBusyTimeoutMs({ SAGABOARD_SQLITE_BUSY_TIMEOUT_MS: bad })).toThrow(`SAGABOARD_SQLITE_BUSY_TIMEOUT_MS must be a whole number of milliseconds above 0 (got "${bad}")`);
    }
  });
});
