/** A CRM whose keyed updates keep a pre-write snapshot, so a rollback can restore it exactly. */
import { ProviderRejection } from "./errors";
import { SimSystem, type IdempotencyOpts, type SimOptions } from "./system";

/** Field values of a record; plain data so snapshots are faithful copies. */
export type CrmFields = Record<string, unknown>;

/** A customer record. */
export interface CrmRecord {
  /** `crm_…` or whatever the seed chose. */
  id: string;
  /** Current values. */
  fields: CrmFields;
  /** Last write, so a test can see that a restore happened. */
  updatedAt: Date;
}

/** One keyed write in the record's audit trail. */
export interface CrmUpdate {
  /** The idempotency key, which is also the snapshot's name for `restore`. */
  key: string;
  /** The record written. */
  recordId: string;
  /** The whole record before the write: what a hard rollback puts back. */
  before: CrmFields;
  /** What the write changed. */
  patch: CrmFields;
  /** When it was written; drives search lag. */
  at: Date;
  /** Set once restored, so a repeated restore is a replay, not a second rollback. */
  restoredAt?: Date;
}

/** The CRM service. */
export class CrmSim extends SimSystem {
  private readonly records = new Map<string, CrmRecord>();
  private readonly updates = new Map<string, CrmUpdate>();

  constructor(opts: SimOptions = {}) {
    super("crm", opts);
  }

  /** Creates a record as test or demo setup (not an operation of the run, so not logged). */
  seed(recordId: string, fields: CrmFields): void {
    this.records.set(recordId, { id: recordId, fields: structuredClone(fields), updatedAt: this.clock.now() });
  }

  /** Applies `patch`; with a key, snapshots the record first and stores the snapshot under that key. */
  update(recordId: string, patch: CrmFields, opts: IdempotencyOpts = {}): Promise<CrmRecord> {
    const key = opts.idempotencyKey;
    return this.mutate("update", { recordId, patch }, { key, ref: recordId }, () =>
      this.idempotent(key, "update", { recordId, patch }, () => {
        const record = this.record(recordId);
        const at = this.clock.now();
        if (key !== undefined) {
          const before = structuredClone(record.fields);
          this.updates.set(key, { key, recordId, before, patch: structuredClone(patch), at });
        }
        Object.assign(record.fields, structuredClone(patch));
        record.updatedAt = at;
        return { value: record, ref: recordId };
      }),
    );
  }

  /** Hard rollback: puts the snapshot taken by update `snapshotKey` back, overwriting later writes. */
  restore(snapshotKey: string): Promise<CrmRecord> {
    const ref = this.updates.get(snapshotKey)?.recordId;
    return this.mutate("restore", { snapshotKey }, { key: snapshotKey, ref }, () => {
      const update = this.updates.get(snapshotKey);
      if (!update) throw new ProviderRejection(404, "not_found", `no snapshot ${snapshotKey}`);
      const record = this.record(update.recordId);
      if (update.restoredAt) return { value: record, ref: record.id, replayed: true };
      record.fields = structuredClone(update.before);
      record.updatedAt = update.restoredAt = this.clock.now();
      return { value: record, ref: record.id };
    });
  }

  /** The audit-trail entry of a keyed update, lagging behind writes. */
  findUpdateByKey(key: string): Promise<CrmUpdate | undefined> {
    return this.read(() => {
      const update = this.updates.get(key);
      return update && this.searchable(update.at) ? update : undefined;
    });
  }

  /** Direct retrieval is never lagged. */
  get(recordId: string): Promise<CrmRecord | undefined> {
    return this.read(() => this.records.get(recordId));
  }

  private record(recordId: string): CrmRecord {
    const record = this.records.get(recordId);
    if (!record) throw this.notFound("record", recordId);
    return record;
  }
}
