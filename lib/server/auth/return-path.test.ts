import { describe, expect, it } from "vitest";
import { safeReturnPath, signInPath } from "./return-path";

describe("safeReturnPath", () => {
  it("keeps same-site paths with their query", () => {
    expect(safeReturnPath("/")).toBe("/");
    expect(safeReturnPath("/runs/run_1")).toBe("/runs/run_1");
    expect(safeReturnPath("/?status=FAILED&agent=a")).toBe("/?status=FAILED&agent=a");
  });

  it("turns anything that could leave the site into /", () => {
    for (const value of [
      "https://evil.example/",
      "//evil.example/x",
      "/\\evil.example",
      "\\\\evil.example",
      "/\t/evil.example",
      "javascript:alert(1)",
      "runs/run_1",
      "",
      undefined,
      ["/runs"],
      `/${"a".repeat(3000)}`,
    ]) {
      expect(safeReturnPath(value), String(value)).toBe("/");
    }
  });

  it("never returns to the sign-in page or the API", () => {
    expect(safeReturnPath("/signin")).toBe("/");
    expect(safeReturnPath("/signin?error=x")).toBe("/");
    expect(safeReturnPath("/api/v1/runs")).toBe("/");
  });
});

describe("signInPath", () => {
  it("carries the page to come back to and the error to explain", () => {
    expect(signInPath(undefined)).toBe("/signin");
    expect(signInPath("/")).toBe("/signin");
    expect(signInPath("/?status=FAILED")).toBe("/signin?callbackUrl=%2F%3Fstatus%3DFAILED");
    expect(signInPath("//evil.example", "AccountDisabled")).toBe("/signin?error=AccountDisabled");
  });
});
