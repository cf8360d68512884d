/**
 * The Ed25519 key archive checkpoints are signed with (lib/server/retention/ARCHITECTURE.md): the file
 * SAGABOARD_ARCHIVE_KEY_FILE, else `.archive-signing-key` in the data directory, created on first use
 * (PKCS#8 PEM, mode 0600). Its public half goes into every archive file; anyone holding a copy of it
 * (`npm run retention -- public-key`) can check an archive offline without the database.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { dataDirectory } from "@/lib/core/db/url";
import { createSecretFileOnce } from "@/lib/core/secret-file";

/** The signing key, its public half and where it came from. */
export interface ArchiveSigningKey {
  /** The private key. */
  privateKey: KeyObject;
  /** The public key. */
  publicKey: KeyObject;
  /** The public key as SPKI DER, base64: what an archive file carries. */
  publicKeyBase64: string;
  /** sha256 of the public key's DER, 16 hex: how people compare keys. */
  fingerprint: string;
  /** The file it was read from. */
  source: string;
}

/** The file the key lives in, for this environment. */
export function signingKeyFile(env: NodeJS.ProcessEnv = process.env): string {
  return env.SAGABOARD_ARCHIVE_KEY_FILE?.trim() || path.join(dataDirectory(env.DATABASE_URL), ".archive-signing-key");
}

/** sha256 of a public key's SPKI DER, 16 hex. */
export function publicKeyFingerprint(der: Buffer): string {
  return createHash("sha256").update(der).digest("hex").slice(0, 16);
}

/** A public key from an archive's base64 SPKI DER, or a PEM file's text; a clear error when it is neither. */
export function parsePublicKey(text: string, source: string): KeyObject {
  try {
    const key = text.includes("-----BEGIN") ? createPublicKey(text) : createPublicKey({ key: Buffer.from(text.trim(), "base64"), format: "der", type: "spki" });
    if (key.asymmetricKeyType !== "ed25519") throw new Error(`an ${key.asymmetricKeyType ?? "unknown"} key`);
    return key;
  } catch (e) {
    throw new Error(`${source} does not hold an Ed25519 public key (${e instanceof Error ? e.message : String(e)}). Export the server's with: npm run retention -- public-key > archive-signing.pub`);
  }
}

/** Reads the signing key, creating it on first use unless `create` is false (a dry run writes nothing). */
export function resolveArchiveSigningKey(env: NodeJS.ProcessEnv = process.env, create = true): ArchiveSigningKey | null {
  const file = signingKeyFile(env);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    if (env.SAGABOARD_ARCHIVE_KEY_FILE?.trim()) throw new Error(`SAGABOARD_ARCHIVE_KEY_FILE names ${file}, which does not exist. Restore the key file, or unset the variable to use the data directory's.`);
    if (!create) return null;
    const { privateKey } = generateKeyPairSync("ed25519");
    createSecretFileOnce(file, privateKey.export({ format: "pem", type: "pkcs8" }).toString());
    text = readFileSync(file, "utf8");
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(text);
  } catch (e) {
    throw new Error(`The archive signing key in ${file} cannot be read (${e instanceof Error ? e.message : String(e)}). Restore it from a copy; a new key would sign new archives only (old ones still verify with the old public key).`);
  }
  if (privateKey.asymmetricKeyType !== "ed25519") throw new Error(`The archive signing key in ${file} is not an Ed25519 key (it is ${privateKey.asymmetricKeyType ?? "unknown"}).`);
  const publicKey = createPublicKey(privateKey);
  const der = publicKey.export({ format: "der", type: "spki" });
  return { privateKey, publicKey, publicKeyBase64: der.toString("base64"), fingerprint: publicKeyFingerprint(der), source: file };
}
