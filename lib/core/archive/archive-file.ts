/**
 * The archive file format (lib/server/retention/ARCHITECTURE.md): JSON lines, each ending in its own
 * hash, which also covers the line before it:
 *
 *   {"n":1,"type":"header","format":"sagaboard-archive/1",...,"h":"<sha256(h0 \n body1)>"}
 *   {"n":2,"type":"run","row":{...},"h":"<sha256(h1 \n body2)>"}
 *   ...
 *   {"n":N,"type":"checkpoint",...,"signature":"<Ed25519>","h":"<sha256(hN-1 \n bodyN)>"}
 *
 * `body` is the line's text up to (not including) `,"h":`, byte for byte, so no re-encoding is needed
 * to check it. The checkpoint names the last hash before it and the head of every audit chain the
 * file holds, and is signed with the archive signing key whose public half the header carries. So a
 * change of any byte is caught at the line it is in: that line's hash no longer matches its text (or
 * the text is no longer a line), and a consistent rewrite of every later hash still fails the
 * signature. Pure: no database; `npm run archive:verify` and the retention pass both use it.
 */
import { closeSync, createReadStream, openSync, writeSync } from "node:fs";
import { createHash, sign, verify, type KeyObject } from "node:crypto";
import { auditHash, canonicalJson } from "@/packages/client/src/saga/keys";
import { auditHashedContent, GENESIS_HASH } from "@/packages/client/src/saga/store";
import type { Json } from "@/packages/client/src/saga/tools";
import { parsePublicKey, publicKeyFingerprint } from "./signing-key";

/** The format an archive's header names. */
export const ARCHIVE_FORMAT = "sagaboard-archive/1";

/** What a line holds. */
export const ArchiveLineType = {
  /** The first line: format, archive id, when, who, the public key. */
  header: "header",
  /** A Run row. */
  run: "run",
  /** A Step row. */
  step: "step",
  /** A Pivot row. */
  pivot: "pivot",
  /** An Escalation row. */
  escalation: "escalation",
  /** A Correction row. */
  correction: "correction",
  /** A Revoke row. */
  revoke: "revoke",
  /** A settled WorkerTask row of an archived run. */
  task: "task",
  /** An AuditEvent row (a link of a run's chain). */
  event: "event",
  /** The last line: the signed checkpoint. */
  checkpoint: "checkpoint",
} as const;
export type ArchiveLineType = (typeof ArchiveLineType)[keyof typeof ArchiveLineType];

const HASH_SUFFIX = /,"h":"([0-9a-f]{64})"\}$/;

/** The hash of a line's body after the previous line's hash. */
export function lineHash(previous: string, body: string): string {
  return createHash("sha256").update(`${previous}\n${body}`).digest("hex");
}

/** The head of one audit chain, as a checkpoint lists it: [scope, seq, hash]. */
export type CheckpointHead = [scope: string, seq: number, hash: string];

/** What the checkpoint signs. */
export interface CheckpointPayload {
  /** The archive's id (`arc_...`). */
  archiveId: string;
  /** Lines before the checkpoint. */
  lines: number;
  /** The hash of the line before the checkpoint. */
  lastHash: string;
  /** Runs and audit events in the file. */
  runs: number;
  events: number;
  /** The head of every audit chain in the file, sorted by scope. */
  heads: CheckpointHead[];
  /** The signing key's fingerprint. */
  keyFingerprint: string;
}

/** Writes an archive file line by line (buffered), keeping the hash chain. */
export class ArchiveWriter {
  private readonly fd: number | null;
  private readonly sink: ((text: string) => void) | null;
  private previous = GENESIS_HASH;
  private count = 0;
  private buffer: string[] = [];
  private buffered = 0;

  /** `target`: a file to create (never one that exists), or a function that takes the text (tests). */
  constructor(target: string | ((text: string) => void)) {
    // "wx": never overwrite an archive that is already there.
    this.fd = typeof target === "string" ? openSync(target, "wx", 0o600) : null;
    this.sink = typeof target === "string" ? null : target;
  }

  /** Lines written so far. */
  get lines(): number {
    return this.count;
  }

  /** The last line's hash. */
  get lastHash(): string {
    return this.previous;
  }

  /** Appends one line of `type` with `fields`. */
  write(type: ArchiveLineType, fields: Record<string, unknown>): void {
    this.count++;
    const full = JSON.stringify({ n: this.count, type, ...fields });
    const body = full.slice(0, -1);
    this.previous = lineHash(this.previous, body);
    const line = `${body},"h":"${this.previous}"}\n`;
    this.buffer.push(line);
    this.buffered += line.length;
    if (this.buffered > 1 << 20) this.flush();
  }

  /** Signs and appends the checkpoint, then closes the file. */
  finish(payload: Omit<CheckpointPayload, "lines" | "lastHash">, privateKey: KeyObject): { signature: string } {
    const signed: CheckpointPayload = { ...payload, lines: this.count, lastHash: this.previous };
    const signature = sign(null, Buffer.from(canonicalJson(signed)), privateKey).toString("base64");
    this.write(ArchiveLineType.checkpoint, { ...signed, signature });
    this.flush();
    if (this.fd !== null) closeSync(this.fd);
    return { signature };
  }

  /** Closes the file without a checkpoint (a failed pass; the caller removes it). */
  abandon(): void {
    try {
      if (this.fd !== null) closeSync(this.fd);
    } catch {
      // already closed
    }
  }

  private flush(): void {
    if (this.buffer.length === 0) return;
    if (this.fd !== null) writeSync(this.fd, this.buffer.join(""));
    else this.sink!(this.buffer.join(""));
    this.buffer = [];
    this.buffered = 0;
  }
}

/** What a verification found. */
export type ArchiveVerification =
  | {
      ok: true;
      archiveId: string;
      createdAt: string;
      runs: number;
      steps: number;
      events: number;
      chains: number;
      lines: number;
      /** sha256 of the file's bytes. */
      sha256: string;
      /** The signing key's fingerprint (compare with `npm run retention -- public-key`). */
      keyFingerprint: string;
      /** Whether the key was the one the caller trusts (null: none was given). */
      trustedKey: boolean | null;
    }
  | { ok: false; line: number | null; message: string };

interface ChainState {
  seq: number;
  hash: string;
}

/**
 * Verifies an archive file offline: every line's hash, every audit chain link by link, the checkpoint's
 * heads and counts and its signature (with `trustedKey` when given, else the key the header carries).
 * The first problem found is reported with the line it is on.
 */
export async function verifyArchiveFile(file: string, trustedKey?: KeyObject): Promise<ArchiveVerification> {
  try {
    return await verifyArchiveChunks(createReadStream(file) as AsyncIterable<Buffer>, trustedKey);
  } catch (e) {
    return { ok: false, line: null, message: `${file} cannot be read: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** Verifies an archive held in memory (tests, and a file already read). */
export function verifyArchiveBytes(bytes: Buffer, trustedKey?: KeyObject): Promise<ArchiveVerification> {
  return verifyArchiveChunks([bytes], trustedKey);
}

/** Verifies an archive read as a sequence of chunks (see verifyArchiveFile). */
export async function verifyArchiveChunks(chunks: AsyncIterable<Buffer> | Iterable<Buffer>, trustedKey?: KeyObject): Promise<ArchiveVerification> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const fileHash = createHash("sha256");
  let previous = GENESIS_HASH;
  let n = 0;
  let header: { archiveId: string; createdAt: string; publicKey: string } | null = null;
  let checkpoint: (CheckpointPayload & { signature: string }) | null = null;
  let checkpointPrevious = "";
  const chains = new Map<string, ChainState>();
  const counts = { run: 0, step: 0, event: 0 };
  let failure: { line: number | null; message: string } | null = null;
  let pending: Buffer = Buffer.alloc(0);

  const fail = (line: number | null, message: string) => {
    failure ??= { line, message };
  };

  const checkLine = (bytes: Buffer): void => {
    n++;
    if (failure) return;
    const where = `line ${n}`;
    if (checkpoint) return fail(n, `${where} comes after the checkpoint: lines were added to the archive after it was signed.`);
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch {
      return fail(n, `${where} is not valid UTF-8: the file was changed or damaged there.`);
    }
    const suffix = HASH_SUFFIX.exec(text);
    if (!suffix) return fail(n, `${where} does not end with its hash ("h"): the line was changed or cut, or two lines were joined.`);
    const body = text.slice(0, suffix.index);
    const expected = lineHash(previous, body);
    if (expected !== suffix[1]) return fail(n, `${where}'s content does not match its hash: the line (or its hash) was changed after the archive was written.`);
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return fail(n, `${where} is not JSON: the file was changed there.`);
    }
    if (value.n !== n) return fail(n, `${where} says it is line ${String(value.n)}: lines were removed, added or reordered.`);
    const type = value.type as string;
    if (n === 1) {
      if (type !== ArchiveLineType.header || value.format !== ARCHIVE_FORMAT) return fail(n, `line 1 is not a ${ARCHIVE_FORMAT} header: this is not a Sagaboard archive, or its start was changed.`);
      header = { archiveId: String(value.archiveId), createdAt: String(value.createdAt), publicKey: String(value.publicKey) };
    } else if (type === ArchiveLineType.checkpoint) {
      checkpoint = value as unknown as CheckpointPayload & { signature: string };
      checkpointPrevious = previous;
    } else if (type === ArchiveLineType.event) {
      counts.event++;
      const row = value.row as { scope: string; seq: number; runId: string | null; stepId: string | null; type: string; actor: string; data: Json; at: string; prevHash: string; hash: string };
      const state = chains.get(row.scope);
      const expectedSeq = (state?.seq ?? 0) + 1;
      if (row.seq !== expectedSeq && state) return fail(n, `${where}: link ${row.seq} of ${row.scope} follows link ${state.seq}: links of the chain are missing or out of order.`);
      if (state && row.prevHash !== state.hash) return fail(n, `${where}: link ${row.seq} of ${row.scope} does not name the link before it (prevHash).`);
      const content = auditHash(row.prevHash, auditHashedContent({ ...row, at: new Date(row.at) }));
      if (content !== row.hash) return fail(n, `${where}: link ${row.seq} of ${row.scope} does not match its audit hash.`);
      chains.set(row.scope, { seq: row.seq, hash: row.hash });
    } else if (type === ArchiveLineType.run) counts.run++;
    else if (type === ArchiveLineType.step) counts.step++;
    previous = suffix[1]!;
  };

  for await (const buf of chunks) {
    fileHash.update(buf);
    let data = pending.length > 0 ? Buffer.concat([pending, buf]) : buf;
    let at = data.indexOf(0x0a);
    while (at !== -1) {
      checkLine(data.subarray(0, at));
      data = data.subarray(at + 1);
      at = data.indexOf(0x0a);
    }
    pending = Buffer.from(data);
  }
  if (pending.length > 0) checkLine(pending);
  if (failure) return { ok: false, ...(failure as { line: number | null; message: string }) };
  if (!header) return { ok: false, line: null, message: "The file is empty: not a Sagaboard archive." };
  const cp = checkpoint as (CheckpointPayload & { signature: string }) | null;
  if (!cp) return { ok: false, line: n, message: `The archive ends at line ${n} without its checkpoint: it was cut short (or its last line was removed).` };
  const h = header as { archiveId: string; createdAt: string; publicKey: string };
  if (cp.lines !== n - 1 || cp.lastHash !== checkpointPrevious) return { ok: false, line: n, message: `line ${n} (the checkpoint) names ${cp.lines} lines before it, but the file has ${n - 1}: lines were removed or added.` };
  if (cp.archiveId !== h.archiveId) return { ok: false, line: n, message: `line ${n} (the checkpoint) is for archive ${cp.archiveId}, but line 1 says ${h.archiveId}.` };
  if (cp.runs !== counts.run || cp.events !== counts.event) return { ok: false, line: n, message: `line ${n} (the checkpoint) counts ${cp.runs} runs and ${cp.events} events; the file holds ${counts.run} and ${counts.event}.` };
  const heads = [...chains.entries()].map(([scope, s]) => [scope, s.seq, s.hash] as CheckpointHead).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  if (canonicalJson(heads) !== canonicalJson(cp.heads)) return { ok: false, line: n, message: `line ${n} (the checkpoint) names other chain heads than the file's audit events end at.` };
  let key: KeyObject;
  try {
    key = parsePublicKey(h.publicKey, "line 1's publicKey");
  } catch (e) {
    return { ok: false, line: 1, message: e instanceof Error ? e.message : String(e) };
  }
  const der = key.export({ format: "der", type: "spki" });
  const fingerprint = publicKeyFingerprint(der);
  if (cp.keyFingerprint !== fingerprint) return { ok: false, line: n, message: `line ${n} (the checkpoint) names key ${cp.keyFingerprint}, but line 1 carries key ${fingerprint}.` };
  const { signature, ...payload } = cp;
  const signed = { archiveId: payload.archiveId, lines: payload.lines, lastHash: payload.lastHash, runs: payload.runs, events: payload.events, heads: payload.heads, keyFingerprint: payload.keyFingerprint };
  let trustedKey_ok: boolean | null = null;
  if (trustedKey) {
    trustedKey_ok = publicKeyFingerprint(trustedKey.export({ format: "der", type: "spki" })) === fingerprint;
    if (!trustedKey_ok) return { ok: false, line: 1, message: `The archive was signed with key ${fingerprint}, not the trusted key you gave: it was not written by that server, or it was re-signed.` };
  }
  let valid = false;
  try {
    valid = verify(null, Buffer.from(canonicalJson(signed)), key, Buffer.from(String(signature), "base64"));
  } catch {
    valid = false;
  }
  if (!valid) return { ok: false, line: n, message: `line ${n} (the checkpoint): its signature does not verify with key ${fingerprint}: the archive was changed after it was signed.` };
  return { ok: true, archiveId: h.archiveId, createdAt: h.createdAt, runs: counts.run, steps: counts.step, events: counts.event, chains: chains.size, lines: n, sha256: fileHash.digest("hex"), keyFingerprint: fingerprint, trustedKey: trustedKey_ok };
}

/** sha256 of a file's bytes. */
export async function fileSha256(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
