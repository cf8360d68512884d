/** Checks a run's audit chain link by link: seq from 1, each prevHash the previous hash, each hash its content's. */
import { expect } from "vitest";
import { auditHash } from "@/packages/client/src/saga/keys";
import { auditHashedContent, GENESIS_HASH, type AuditEventRecord, type SagaStore } from "@/packages/client/src/saga/store";

/** The run's events, once every link has been checked. */
export async function expectChainIntact(store: SagaStore, runId: string): Promise<AuditEventRecord[]> {
  const events = await store.listAuditEvents(runId);
  let prev = GENESIS_HASH;
  events.forEach((e, i) => {
    expect(e.seq).toBe(i + 1);
    expect(e.prevHash).toBe(prev);
    expect(auditHash(e.prevHash, auditHashedContent(e))).toBe(e.hash);
    prev = e.hash;
  });
  return events;
}
