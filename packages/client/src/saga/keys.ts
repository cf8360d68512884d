import { createHash } from "node:crypto";

/** Length of every step and compensation key, in hex characters. */
export const KEY_LENGTH = 32;

/** The hex sha256 of a text. */
export function sha256Hex(input: string): string {
  return createHash("sha256").update(input).digest("hex");
}

/**
 * The idempotency key of a step: derived from the run and the harness-owned step index, never from
 * the model's arguments, so a reworded retry of the same step lands on the same key.
 */
export function stepKey(runId: string, stepIdx: number, tool: string): string {
  return sha256Hex(`${runId}:${stepIdx}:${tool}`).slice(0, KEY_LENGTH);
}

/** The key of a step's compensation: its own key, because an unwind can crash halfway too. */
export function compensationKey(runId: string, stepIdx: number, tool: string): string {
  return sha256Hex(`${runId}:${stepIdx}:compensate:${tool}`).slice(0, KEY_LENGTH);
}

/** JSON with object keys sorted at every depth, so equal values hash equally. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      const sorted: Record<string, unknown> = {};
      for (const k of Object.keys(v as Record<string, unknown>).sort()) {
        sorted[k] = (v as Record<string, unknown>)[k];
      }
      return sorted;
    }
    return v;
  });
}

/** Hash of a call's arguments: binds approvals to exact arguments (never used as an effect key). */
export function argsHash(args: unknown): string {
  return sha256Hex(canonicalJson(args ?? null));
}

/** Hash of a pivot's commit plan with each tool's policy version. */
export function planHash(items: readonly { tool: string; argsHash: string; policyVersion: number }[]): string {
  return sha256Hex(canonicalJson(items.map((i) => [i.tool, i.argsHash, i.policyVersion])));
}

/** Hash-chain link of an audit event: the previous link plus this event's canonical content. */
export function auditHash(prevHash: string, event: unknown): string {
  return sha256Hex(`${prevHash}\n${canonicalJson(event)}`);
}
