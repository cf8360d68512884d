/**
 * A secret kept in a file of the data directory, created once: written to a temporary file and
 * hard-linked into place, which fails when another process won the race (then its file is the one).
 */
import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Creates `file` holding `content` (mode 600) unless it exists; never overwrites one another process made. */
export function createSecretFileOnce(file: string, content: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(temp, content, { mode: 0o600 });
  try {
    linkSync(temp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  } finally {
    unlinkSync(temp);
  }
}
