import { describe, expect, it } from "vitest";
import { csvField, csvRecord } from "./audit-csv";

describe("csv", () => {
  it("leaves plain fields alone and quotes the ones RFC 4180 says must be", () => {
    expect(csvField("step.confirmed")).toBe("step.confirmed");
    expect(csvField("")).toBe("");
    expect(csvField('{"a":1,"b":"x"}')).toBe('"{""a"":1,""b"":""x""}"');
    expect(csvField("two\r\nlines")).toBe('"two\r\nlines"');
    expect(csvField("line\nfeed")).toBe('"line\nfeed"');
    expect(csvField(" padded ")).toBe('" padded "');
  });

  it("ends every record with CRLF", () => {
    expect(csvRecord(["1", "a,b", 'say "hi"'])).toBe('1,"a,b","say ""hi"""\r\n');
  });
});
