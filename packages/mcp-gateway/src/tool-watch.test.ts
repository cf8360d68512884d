import { describe, expect, it } from "vitest";
import { hintsInWords, manifestFor } from "./tool-watch";

describe("an MCP server's hints, as the admin reads them", () => {
  it("are sentences, never the annotations' JSON", () => {
    expect(hintsInWords({ readOnlyHint: true, destructiveHint: false, openWorldHint: false })).toBe(" Its server says (unverified): it only reads; it does not destroy anything; it stays inside its server.");
    expect(hintsInWords(undefined)).toBe("");
    const [tool] = manifestFor([{ name: "wiki.search", description: "Searches the wiki.", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } }], "docs-team", {}).tools;
    expect(tool?.description).toBe("MCP tool wiki.search: Searches the wiki. Its server says (unverified): it only reads.");
    expect(tool?.description).not.toMatch(/[{}"]/);
  });
});
