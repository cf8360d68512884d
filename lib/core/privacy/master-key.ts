/**
 * The master key that wraps every subject key (lib/core/privacy/ARCHITECTURE.md): SAGABOARD_MASTER_KEY
 * (32 bytes, base64 or hex), else the file SAGABOARD_MASTER_KEY_FILE, else `.master-key` in the data
 * directory, created on first use for `npm start` and tests (never under NODE_ENV=production, where a
 * key that silently appeared would seal data nobody keeps a copy of).
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { dataDirectory } from "@/lib/core/db/url";
import { createSecretFileOnce } from "@/lib/core/secret-file";

/** A master key and where it came from (for messages: never the key itself). */
export interface MasterKey {
  /** The 32 bytes. */
  key: Buffer;
  /** `SAGABOARD_MASTER_KEY`, or the file's path. */
  source: string;
}

/** 32 bytes from base64, base64url or hex text; anything else is a clear error naming the source. */
export function parseMasterKey(text: string, source: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, "hex") : Buffer.from(t, "base64url");
  if (key.length !== 32) {
    throw new Error(`The master key in ${source} is not 32 bytes (base64 or 64 hex digits). Make one with: node -e "console.log(require('crypto').randomBytes(32).toString('base64'))".`);
  }
  return key;
}

function readIfPresent(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}

/** The master key from the environment or the data directory (see the module comment). */
export function resolveMasterKey(env: NodeJS.ProcessEnv = process.env): MasterKey {
  const inline = env.SAGABOARD_MASTER_KEY?.trim();
  if (inline) return { key: parseMasterKey(inline, "SAGABOARD_MASTER_KEY"), source: "SAGABOARD_MASTER_KEY" };
  const named = env.SAGABOARD_MASTER_KEY_FILE?.trim();
  if (named) {
    const text = readIfPresent(named);
    if (text === undefined) throw new Error(`SAGABOARD_MASTER_KEY_FILE names ${named}, which does not exist. Restore the key file, or point the variable at it.`);
    return { key: parseMasterKey(text, named), source: named };
  }
  const file = path.join(dataDirectory(env.DATABASE_URL), ".master-key");
  let text = readIfPresent(file);
  if (text === undefined) {
    if (env.NODE_ENV === "production") {
      throw new Error(`No master key: set SAGABOARD_MASTER_KEY or SAGABOARD_MASTER_KEY_FILE (32 random bytes, base64). It seals personal data; keep a copy where the database's backups are not.`);
    }
    createSecretFileOnce(file, `${randomBytes(32).toString("base64")}\n`);
    text = readFileSync(file, "utf8");
  }
  return { key: parseMasterKey(text, file), source: file };
}
