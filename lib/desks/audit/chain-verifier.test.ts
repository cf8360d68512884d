import { describe, expect, it } from "vitest";
import { auditHash } from "@/packages/client/src/saga/keys";
import { auditHashedContent, GENESIS_HASH } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { ChainVerifier, type ChainRow } from "./chain-verifier";

let nextId = 1;

/** A chain of `n` valid links in `scope`, starting at `t0`. */
function chain(scope: string, n: number, t0 = Date.UTC(2026, 11, 1)): ChainRow[] {
  const rows: ChainRow[] = [];
  let prevHash = GENESIS_HASH;
  for (let seq = 1; seq <= n; seq++) {
    const content = { seq, scope, runId: scope.startsWith("run:") ? scope.slice(4) : null, stepId: null, type: "step.confirmed", actor: "agent:a", data: { stepIdx: seq } as Json, at: new Date(t0 + seq * 1000) };
    const hash = auditHash(prevHash, auditHashedContent(content));
    rows.push({ id: nextId++, ...content, prevHash, hash });
    prevHash = hash;
  }
  return rows;
}

/** Interleaves chains by id (append order). */
function log(...chains: ChainRow[][]): ChainRow[] {
  return chains.flat().sort((a, b) => a.id - b.id);
}

function verify(rows: readonly ChainRow[]) {
  const v = new ChainVerifier();
  for (const row of [...rows].sort((a, b) => a.id - b.id)) v.push(row);
  return v.result();
}

function edit(rows: ChainRow[], id: number, change: Partial<ChainRow>): ChainRow[] {
  return rows.map((r) => (r.id === id ? { ...r, ...change } : r));
}

describe("ChainVerifier", () => {
  it("verifies interleaved chains and counts them by kind", () => {
    const result = verify(log(chain("run:r1", 5), chain("user:u1", 3), chain("run:r2", 2)));
    expect(result).toMatchObject({ chains: 3, events: 10, brokenChains: 0, breaks: [], chainsByKind: { run: 2, user: 1 } });
  });

  const target = () => {
    const a = chain("run:ra", 5);
    const b = chain("run:rb", 4);
    return { a, b, rows: log(a, b), mid: a[2]! };
  };

  it.each([
    ["type", { type: "step.failed" }, "content"],
    ["actor", { actor: "user:mallory" }, "content"],
    ["data", { data: { stepIdx: 99 } }, "content"],
    ["at", { at: new Date(Date.UTC(2027, 0, 1)) }, "content"],
    ["stepId", { stepId: "stp_x" }, "content"],
    ["runId", { runId: "rb" }, "runId"],
    ["hash", { hash: "f".repeat(64) }, "hash"],
    ["prevHash", { prevHash: "e".repeat(64) }, "prevHash"],
    ["seq", { seq: 40 }, "seq"],
  ] as const)("an edited %s breaks exactly that link, and says what it is", (_field, change, kind) => {
    const { rows, mid } = target();
    const result = verify(edit(rows, mid.id, change));
    expect(result.brokenChains).toBe(1);
    expect(result.breaks).toEqual([expect.objectContaining({ scope: "run:ra", seq: "seq" in change ? change.seq : 3, eventId: mid.id, kind })]);
  });

  it("names a changed time as the likely change when it is out of order", () => {
    const { rows, mid } = target();
    expect(verify(edit(rows, mid.id, { at: new Date(Date.UTC(2027, 0, 1)) })).breaks[0]?.message).toContain("the time is the likely change");
  });

  it("a link moved to another chain is reported where it sits, as belonging to its own", () => {
    const { rows, mid } = target();
    for (const scope of ["run:rb", "run:nowhere"]) {
      const result = verify(edit(rows, mid.id, { scope }));
      expect(result.brokenChains).toBe(1);
      expect(result.breaks).toEqual([expect.objectContaining({ scope, seq: 3, eventId: mid.id, kind: "scope", belongsTo: "run:ra" })]);
    }
    const users = log(chain("user:u1", 3), chain("user:u2", 3));
    const moved = users.find((r) => r.scope === "user:u1" && r.seq === 2)!;
    expect(verify(edit(users, moved.id, { scope: "user:u3" })).breaks).toEqual([expect.objectContaining({ scope: "user:u3", kind: "scope", belongsTo: "user:u1" })]);
  });

  it("a deleted middle link shows as missing at the link after it; a deleted first link too", () => {
    const { a, rows, mid } = target();
    const result = verify(rows.filter((r) => r.id !== mid.id));
    expect(result.breaks).toEqual([expect.objectContaining({ scope: "run:ra", seq: 4, eventId: a[3]!.id, kind: "missing" })]);
    expect(result.breaks[0]?.message).toContain("Link 3 is missing");
    expect(verify(rows.filter((r) => r.id !== a[0]!.id)).breaks).toEqual([expect.objectContaining({ seq: 2, kind: "missing" })]);
  });

  it("an edited last link cannot say whether content or hash changed", () => {
    const { a, rows } = target();
    const last = a[4]!;
    expect(verify(edit(rows, last.id, { actor: "user:mallory" })).breaks).toEqual([expect.objectContaining({ eventId: last.id, kind: "content-or-hash" })]);
  });

  it("a consistent rewrite of a whole chain passes (saved heads catch it)", () => {
    const rewritten = chain("run:ra", 5).map((r) => ({ ...r, id: r.id + 1000 }));
    expect(verify(rewritten).brokenChains).toBe(0);
  });
});
