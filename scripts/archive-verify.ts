/**
 * Verifies an archive file offline, without the database (lib/server/retention/ARCHITECTURE.md):
 *
 *   npm run archive:verify -- FILE [--public-key archive-signing.pub]
 *
 * Every line's hash, every audit chain link by link, the checkpoint's heads and counts, and its
 * Ed25519 signature. Exit 0 when it verifies; 1 with the line at fault otherwise; 2 for wrong usage.
 * Without --public-key the key the file carries is used and its fingerprint printed: compare it with
 * `npm run retention -- public-key` on the server (or pass that file) to know who signed it.
 */
import type { KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { verifyArchiveFile } from "@/lib/core/archive/archive-file";
import { parsePublicKey } from "@/lib/core/archive/signing-key";

const USAGE = "Usage: npm run archive:verify -- FILE [--public-key FILE]";

async function main(): Promise<number> {
  let parsed: { positionals: string[]; values: { "public-key"?: string } };
  try {
    parsed = parseArgs({ args: process.argv.slice(2).filter((a, i) => !(i === 0 && a === "--")), allowPositionals: true, options: { "public-key": { type: "string" } } });
  } catch (e) {
    console.error(`archive:verify: ${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
    return 2;
  }
  const [file, ...extra] = parsed.positionals;
  if (!file || extra.length > 0) {
    console.error(`archive:verify: ${file ? `one file at a time (got ${parsed.positionals.length})` : "name the archive file"}.\n${USAGE}`);
    return 2;
  }
  let trusted: KeyObject | undefined;
  const keyFile = parsed.values["public-key"];
  try {
    if (keyFile) trusted = parsePublicKey(readFileSync(keyFile, "utf8"), keyFile);
  } catch (e) {
    console.error(`archive:verify: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
  const result = await verifyArchiveFile(file, trusted);
  if (!result.ok) {
    console.error(`archive:verify: ${file} does NOT verify: ${result.message}${result.line !== null && !result.message.includes(`line ${result.line}`) ? ` (line ${result.line})` : ""}`);
    return 1;
  }
  console.log(
    `${file} verifies: archive ${result.archiveId} of ${result.createdAt}, ${result.runs} run(s), ${result.steps} step(s), ${result.events} audit event(s) in ${result.chains} chain(s), ${result.lines} lines, sha256 ${result.sha256}. ` +
      (result.trustedKey ? `Signed with the trusted key ${result.keyFingerprint}.` : `Signed with key ${result.keyFingerprint}: compare it with \`npm run retention -- public-key\` on the server, or pass that key with --public-key.`),
  );
  return 0;
}

process.exitCode = await main();
