/**
 * The cryptography of sealed personal fields (lib/core/privacy/ARCHITECTURE.md), with Node's crypto
 * only: AES-256-GCM for values and for wrapping data keys, HMAC-SHA256 for subject hashes. Pure: no
 * database, no files, so each rule is unit-tested on its own (sealing.test.ts).
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, randomFillSync } from "node:crypto";

/** What every sealed value starts with; the key id follows, then the sealed bytes. */
export const SEALED_PREFIX = "sealed:v1:";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A JSON value as stored. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Whether `value` is a sealed value. */
export function isSealed(value: unknown): boolean {
  return typeof value === "string" && value.startsWith(SEALED_PREFIX);
}

/** The id of the subject key a sealed value was sealed under (readable without any key). */
export function sealedKeyId(sealed: string): string {
  const rest = sealed.slice(SEALED_PREFIX.length);
  const colon = rest.indexOf(":");
  if (colon <= 0) throw new Error(`A sealed value has no key id: ${sealed.slice(0, 40)}...`);
  return rest.slice(0, colon);
}

/** Random IVs drawn from a pool filled 4 KiB at a time: one system call per 341 values, not one each. */
const ivPool = Buffer.alloc(4096 - (4096 % IV_BYTES));
let ivOffset = ivPool.length;

function randomIv(): Buffer {
  if (ivOffset + IV_BYTES > ivPool.length) {
    randomFillSync(ivPool);
    ivOffset = 0;
  }
  const iv = Buffer.from(ivPool.subarray(ivOffset, ivOffset + IV_BYTES));
  ivOffset += IV_BYTES;
  return iv;
}

function encrypt(key: Buffer, plaintext: Buffer, aad: string): Buffer {
  const iv = randomIv();
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
}

function decrypt(key: Buffer, sealed: Buffer, aad: string): Buffer {
  if (sealed.length < IV_BYTES + TAG_BYTES) throw new Error("The sealed bytes are too short to be AES-256-GCM.");
  const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
}

/** `value` sealed under the data key `key` named `keyId` (the id is bound as associated data). */
export function sealValue(key: Buffer, keyId: string, value: JsonValue): string {
  return `${SEALED_PREFIX}${keyId}:${encrypt(key, Buffer.from(JSON.stringify(value)), keyId).toString("base64url")}`;
}

/** The value `sealed` holds; throws when the key is not the one it was sealed under or a byte changed. */
export function openSealed(key: Buffer, sealed: string): JsonValue {
  const keyId = sealedKeyId(sealed);
  const bytes = Buffer.from(sealed.slice(SEALED_PREFIX.length + keyId.length + 1), "base64url");
  return JSON.parse(decrypt(key, bytes, keyId).toString("utf8")) as JsonValue;
}

/** A new random 32-byte data key. */
export function newDataKey(): Buffer {
  return randomBytes(32);
}

/** `key` wrapped by the master key, as text for a column. */
export function wrapKey(master: Buffer, key: Buffer, label: string): string {
  return `w1:${encrypt(master, key, label).toString("base64url")}`;
}

/** The key `wrapped` holds; throws when `master` is not the key that wrapped it. */
export function unwrapKey(master: Buffer, wrapped: string, label: string): Buffer {
  if (!wrapped.startsWith("w1:")) throw new Error("A wrapped key must start with w1:.");
  return decrypt(master, Buffer.from(wrapped.slice(3), "base64url"), label);
}

/** A master key's fingerprint: enough to tell two keys apart, nothing about the key. */
export function keyFingerprint(master: Buffer): string {
  return createHash("sha256").update("sagaboard master key fingerprint\0").update(master).digest("hex").slice(0, 16);
}

/** How a subject is compared: trimmed and lower-cased (`Ada@Example.com ` is `ada@example.com`). */
export function normalSubject(subject: string): string {
  return subject.trim().toLowerCase();
}

/** The keyed hash a subject is found by (never the subject in clear). */
export function subjectHash(hashKey: Buffer, subject: string): string {
  return createHmac("sha256", hashKey).update(normalSubject(subject)).digest("hex");
}
