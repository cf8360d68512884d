/**
 * A property test over 10,000 random mixes of writes (audit links whose data carries sealed values),
 * erasures (a subject's key destroyed), verifications and single-byte edits, with the chain verifier
 * the audit desk runs: no verification after an erasure raises a tamper alarm, every sealed value
 * opens while its key lives and never after, and every single-byte edit of a stored link is caught
 * (by the chain, or by AES-GCM for the sealed bytes). No database: the rows are built as the store
 * builds them (chainLink).
 */
import { describe, expect, it } from "vitest";
import { chainLink, type ChainHead } from "@/lib/core/db/audit-chain";
import { ChainVerifier, type ChainRow } from "@/lib/desks/audit/chain-verifier";
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

function verified(rows: readonly ChainRow[]): boolean {
  const v = new ChainVerifier();
  for (const r of rows) v.push(r);
  return v.result().brokenChains === 0;
}

describe("erasure never breaks the chain; every edit is caught (10,000 random operations)", () => {
  it("holds for seed 49", () => {
    const random = rng(49);
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const keys = new Map<string, Buffer>(); // live keys by id
    const destroyed = new Set<string>();
    const rows: ChainRow[] = [];
    const heads = new Map<string, ChainHead>();
    const clear = new Map<string, unknown>(); // sealed value -> what it holds
    let falseAlarms = 0;
    let editsMissed = 0;
    let edits = 0;
    const at = new Date("2026-12-07T00:00:00Z");

    for (let op = 0; op < 10_000; op++) {
      const roll = random();
      if (roll < 0.6 || rows.length === 0) {
        // A write: a step event whose data carries a value sealed under a subject's key.
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
      } else if (roll < 0.85) {
        // A verification of the whole log, and of what the sealed values say.
        if (op % 20 === 0) {
          if (!verified(rows)) falseAlarms++;
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
        if (verified(copy)) editsMissed++;
      }
    }
    expect(rows.length).toBeGreaterThan(5000);
    expect(destroyed.size).toBeGreaterThan(10);
    expect(edits).toBeGreaterThan(20);
    expect(falseAlarms).toBe(0);
    expect(editsMissed).toBe(0);
  });
});
