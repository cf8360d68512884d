/**
 * One naming rule for the shapes lib/ and the client package's source parse (lib/ARCHITECTURE.md, "Names"): an exported zod schema
 * is `Z<Name>`, and the type inferred from it, when exported, is `T<Name>` with the same name. The
 * exceptions are types an installed package exports under a domain name (renaming them would break
 * agents that import them) and input-side variants, each listed with its reason.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/** The server's layers and the client package's (saga, protocol, agent). */
const SOURCES = [path.join(process.cwd(), "lib"), path.join(process.cwd(), "packages", "client", "src")];

/** Types named for the domain on purpose. */
const DOMAIN_NAMED: Record<string, string> = {
  JournalEntry: "@sagaboard/client's adapters export it",
  HeldCall: "@sagaboard/client's adapters export it",
  RunJournal: "@sagaboard/client's adapters export it",
  WaitingOutcome: "the input side of ZPreviousOutcome, named for what the client holds",
  TLookupResultInput: "the input side of ZLookupResult",
  FakeArgs: "the saga testkit's fake tool arguments",
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

const files = SOURCES.flatMap(sourceFiles).map((file) => ({ file: path.relative(process.cwd(), file), text: readFileSync(file, "utf8") }));

describe("names of schemas and their types", () => {
  it("finds the schemas it checks", () => {
    const schemas = files.flatMap(({ text }) => [...text.matchAll(/export const (\w+)\s*(?::[^=]+)?=\s*z\b/g)]);
    expect(schemas.length).toBeGreaterThan(150);
  });

  it("names every exported zod schema Z<Name>", () => {
    const wrong = files.flatMap(({ file, text }) =>
      [...text.matchAll(/export const (\w+)\s*(?::[^=]+)?=\s*z\b/g)].map((m) => m[1]!).filter((name) => !/^Z[A-Z]/.test(name)).map((name) => `${file}: ${name}`),
    );
    expect(wrong).toEqual([]);
  });

  it("names the exported type of ZName TName", () => {
    const wrong = files.flatMap(({ file, text }) =>
      [...text.matchAll(/export type (\w+)(?:<[^=]*>)? = z\.(?:infer|output|input)<typeof (Z\w+)>/g)]
        .filter(([, type, schema]) => type !== `T${schema!.slice(1)}` && !(type! in DOMAIN_NAMED))
        .map(([, type, schema]) => `${file}: ${type} (of ${schema})`),
    );
    expect(wrong).toEqual([]);
  });
});
