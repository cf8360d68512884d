/**
 * A property test over 10,000 random mixes of writes (audit links whose data carries sealed values),
 * erasures (a subject's key destroyed), archives (a chain's links written to an archive file, the file
 * verified and one of its bytes edited, then the links removed and the chain's head kept, as retention
 * does), verifications and single-byte edits, with the chain verifier the audit desk runs: no
 * verification after an erasure or an archive raises a tamper alarm, every sealed value opens while
 * its key lives and never after, and every single-byte edit of a stored link or of an archive is
 * caught (by the chain, or by AES-GCM for the sealed bytes, or by the archive's line hashes). No
 * database: the rows are built as the store builds them (chainLink).
 */
import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { chainLink, type ChainHead } from "@/lib/core/db/audit-chain";
import { ChainVerifier, type ChainRow } from "@/lib/desks/audit/chain-verifier";
import { ArchiveLineType, ArchiveWriter, verifyArchiveBytes, type CheckpointHead } from "@/lib/core/archive/archive-file";
import { publicKeyFingerprint } from "@/lib/core/archive/signing-key";
import { newDataKey, openSealed, sealValue, sealedKeyId } from "./sealing";

/** A small deterministic generator, so a failure names its seed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function verified(rows: readonly ChainRow[], archived: ReadonlyMap<string, ChainHead> = new Map()): boolean {
  const v = new ChainVerifier(archived);
  for (const r of rows) v.push(r);
  return v.result().brokenChains === 0;
}

describe("erasure never breaks the chain; every edit is caught (10,000 random operations)", () => {
  it("holds for seed 49", async () => {
    const random = rng(49);
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const keys = new Map<string, Buffer>(); // live keys by id
    const destroyed = new Set<string>();
    const rows: ChainRow[] = [];
    const heads = new Map<string, ChainHead>();
    const clear = new Map<string, unknown>(); // sealed value -> what it holds
    const archived = new Map<string, ChainHead>(); // chains retention moved to an archive: their heads
    const signing = generateKeyPairSync("ed25519");
    const publicDer = signing.publicKey.export({ format: "der", type: "spki" });
    const publicKey = publicDer.toString("base64");
    const keyFingerprint = publicKeyFingerprint(publicDer);
    let writes = 0;
    let archives = 0;
    let archiveEditsMissed = 0;
    let falseAlarms = 0;
    let editsMissed = 0;
    let edits = 0;
    const at = new Date("2026-12-07T00:00:00Z");

    for (let op = 0; op < 10_000; op++) {
      const roll = random();
      if (roll < 0.6 || rows.length === 0) {
        // A write: a step event whose data carries a value sealed under a subject's key.
        writes++;
        if (keys.size === 0 || random() < 0.1) keys.set(`sk_${op}`, newDataKey());
        const [keyId, key] = pick([...keys.entries()]);
        const value = `person${op}@example.com`;
        const sealed = sealValue(key, keyId, value);
        clear.set(sealed, value);
        const scope = `run:run_${Math.floor(random() * 20)}`;
        const link = chainLink(heads.get(scope), { scope, runId: scope.slice(4), stepId: null, type: "compensation.requested", actor: "system:test", data: { compensation: { args: { to: sealed } } } }, new Date(at.getTime() + op));
        heads.set(scope, { seq: link.seq, hash: link.hash });
        rows.push({ id: rows.length + 1, ...link, data: link.data as unknown });
      } else if (roll < 0.7) {
        // An erasure: the key goes; nothing stored changes.
        if (keys.size > 1) {
          const [keyId] = pick([...keys.entries()]);
          keys.delete(keyId);
          destroyed.add(keyId);
        }
      } else if (roll < 0.705) {
        // An archive: one chain's links written to a file, verified, one byte of it edited; then
        // removed from the table, its head kept (later links continue it).
        const scope = pick(rows).scope;
        const links = rows.filter((r) => r.scope === scope);
        let text = "";
        const writer = new ArchiveWriter((t) => (text += t));
        writer.write(ArchiveLineType.header, { format: "sagaboard-archive/1", archiveId: `arc_${op}`, createdAt: at.toISOString(), publicKey });
        for (const row of links) writer.write(ArchiveLineType.event, { row });
        const last = links.at(-1)!;
        const heads: CheckpointHead[] = [[scope, last.seq, last.hash]];
        writer.finish({ archiveId: `arc_${op}`, runs: 0, events: links.length, heads, keyFingerprint }, signing.privateKey);
        const bytes = Buffer.from(text);
        if (!(await verifyArchiveBytes(bytes)).ok) falseAlarms++;
        const pos = Math.floor(random() * bytes.length);
        const edited = Buffer.from(bytes);
        edited[pos] = bytes[pos]! ^ 0x01;
        const result = await verifyArchiveBytes(edited);
        if (result.ok) archiveEditsMissed++;
        archives++;
        archived.set(scope, { seq: last.seq, hash: last.hash });
        for (let i = rows.length - 1; i >= 0; i--) if (rows[i]!.scope === scope) rows.splice(i, 1);
      } else if (roll < 0.85) {
        // A verification of the whole log, and of what the sealed values say.
        if (op % 20 === 0) {
          if (!verified(rows, archived)) falseAlarms++;
          for (const [sealed, value] of [...clear.entries()].slice(-20)) {
            const keyId = sealedKeyId(sealed);
            if (destroyed.has(keyId)) expect(keys.has(keyId)).toBe(false);
            else expect(openSealed(keys.get(keyId)!, sealed)).toBe(value);
          }
        }
      } else if (op % 25 === 0) {
        // A single-byte edit of one stored link (its data's text, its hash or its previous hash).
        edits++;
        const i = Math.floor(random() * rows.length);
        const row = rows[i]!;
        const text = JSON.stringify(row.data);
        const field = pick(["data", "hash", "prevHash"] as const);
        const source = field === "data" ? text : row[field];
        const pos = Math.floor(random() * source.length);
        const flipped = source.slice(0, pos) + (source[pos] === "a" ? "b" : "a") + source.slice(pos + 1);
        let edited: ChainRow;
        try {
          edited = field === "data" ? { ...row, data: JSON.parse(flipped) as unknown } : { ...row, [field]: flipped };
        } catch {
          continue; // the edit made the stored JSON unreadable: the database would refuse to hand it over
        }
        if (flipped === source) continue;
        const copy = rows.slice();
        copy[i] = edited;
        if (verified(copy, archived)) editsMissed++;
      }
    }
    expect(writes).toBeGreaterThan(5000);
    expect(destroyed.size).toBeGreaterThan(10);
    expect(edits).toBeGreaterThan(20);
    expect(archives).toBeGreaterThan(20);
    expect(archiveEditsMissed).toBe(0);
    expect(falseAlarms).toBe(0);
    expect(editsMissed).toBe(0);
  });
});
