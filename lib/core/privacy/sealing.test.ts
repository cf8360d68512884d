import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isSealed, keyFingerprint, newDataKey, openSealed, sealedKeyId, sealValue, subjectHash, unwrapKey, wrapKey } from "./sealing";
import { parseMasterKey } from "./master-key";

describe("sealing", () => {
  const key = newDataKey();

  it("round-trips any JSON value under its key, naming the key id in clear", () => {
    for (const value of ["ada@example.com", 42, { street: "1 Main St" }, ["a", null], true]) {
      const sealed = sealValue(key, "sk_1", value);
      expect(isSealed(sealed)).toBe(true);
      expect(sealedKeyId(sealed)).toBe("sk_1");
      // Not in clear; a plaintext of a few characters (42, true) can turn up in random base64 by chance.
      const clear = JSON.stringify(value).replace(/"/g, "");
      if (clear.length >= 8) expect(sealed).not.toContain(clear);
      expect(openSealed(key, sealed)).toEqual(value);
    }
  });

  it("refuses another key, another key id, and any edited byte", () => {
    const sealed = sealValue(key, "sk_1", "ada@example.com");
    expect(() => openSealed(newDataKey(), sealed)).toThrow();
    expect(() => openSealed(key, sealed.replace("sk_1", "sk_2"))).toThrow();
    const body = sealed.slice("sealed:v1:sk_1:".length);
    for (let i = 0; i < body.length; i += 7) {
      const flipped = body[i] === "A" ? "B" : "A";
      expect(() => openSealed(key, `sealed:v1:sk_1:${body.slice(0, i)}${flipped}${body.slice(i + 1)}`)).toThrow();
    }
  });

  it("wraps data keys under the master key, bound to their label", () => {
    const master = randomBytes(32);
    const wrapped = wrapKey(master, key, "sk_1");
    expect(unwrapKey(master, wrapped, "sk_1").equals(key)).toBe(true);
    expect(() => unwrapKey(master, wrapped, "sk_2")).toThrow();
    expect(() => unwrapKey(randomBytes(32), wrapped, "sk_1")).toThrow();
  });

  it("hashes a subject with a key, trimmed and lower-cased; fingerprints tell master keys apart", () => {
    const hashKey = randomBytes(32);
    expect(subjectHash(hashKey, " Ada@Example.com ")).toBe(subjectHash(hashKey, "ada@example.com"));
    expect(subjectHash(hashKey, "ada@example.com")).not.toBe(subjectHash(randomBytes(32), "ada@example.com"));
    expect(keyFingerprint(Buffer.alloc(32, 1))).not.toBe(keyFingerprint(Buffer.alloc(32, 2)));
  });

  it("reads a master key as base64 or hex, and says how to make one otherwise", () => {
    const bytes = randomBytes(32);
    expect(parseMasterKey(bytes.toString("base64"), "env").equals(bytes)).toBe(true);
    expect(parseMasterKey(bytes.toString("hex"), "env").equals(bytes)).toBe(true);
    expect(() => parseMasterKey("short", "SAGABOARD_MASTER_KEY")).toThrow(/SAGABOARD_MASTER_KEY is not 32 bytes.*randomBytes\(32\)/);
  });
});
