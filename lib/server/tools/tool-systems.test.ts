import { describe, expect, it } from "vitest";
import { OTHER_SYSTEM, systemInWords, systemOfTool } from "./tool-systems";

describe("a tool's system", () => {
  it("is what its row names, trimmed", () => {
    expect(systemOfTool("payments")).toBe("payments");
    expect(systemOfTool("  jira ")).toBe("jira");
  });

  it("is 'other' when the row names none: nothing is guessed from the tool's name", () => {
    expect(systemOfTool(null)).toBe(OTHER_SYSTEM);
    expect(systemOfTool(undefined)).toBe(OTHER_SYSTEM);
    expect(systemOfTool("   ")).toBe(OTHER_SYSTEM);
  });

  it("reads in a sentence as its name, or as the system the tool acts on", () => {
    expect(systemInWords("payments", "charge_card")).toBe("payments");
    expect(systemInWords(OTHER_SYSTEM, "charge_card")).toBe("the system charge_card acts on");
  });
});
