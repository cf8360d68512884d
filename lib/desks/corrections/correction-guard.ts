/** Why a change to a correction is refused, in words that say what to do (shared by the commands). */
import { ApiError } from "@/packages/client/src/protocol/errors";
import { CorrectionStatus } from "@/packages/client/src/saga/vocabulary";

/** What the guard reads of a correction. */
export interface GuardedRow {
  id: string;
  status: string;
  claimedBy: string | null;
  version: number;
  sentBy: string | null;
  sentAt: Date | null;
  messageId: string | null;
  dismissedBy: string | null;
  dismissReason: string | null;
}

/** A sent or dismissed correction takes no more changes: say what happened to it. */
export function assertNotClosed(row: GuardedRow, doing: string): void {
  if (row.status === CorrectionStatus.SENT) {
    throw new ApiError("INVALID_TRANSITION", `Correction ${row.id} was already sent${row.sentBy ? ` by ${row.sentBy}` : ""}${row.sentAt ? ` at ${row.sentAt.toISOString()}` : ""}${row.messageId ? ` (message id ${row.messageId})` : ""}; it cannot be ${doing}. Nothing was changed.`, {
      details: [{ path: "status", message: "already sent" }],
    });
  }
  if (row.status === CorrectionStatus.DISMISSED) {
    throw new ApiError("INVALID_TRANSITION", `Correction ${row.id} was dismissed by ${row.dismissedBy ?? "someone"} ("${row.dismissReason ?? ""}"); it cannot be ${doing}. Nothing was changed.`, {
      details: [{ path: "status", message: "dismissed" }],
    });
  }
  if (row.status === CorrectionStatus.SENDING) {
    throw new ApiError("INVALID_TRANSITION", `Correction ${row.id} is being sent (approved by ${row.sentBy ?? "someone"}); it cannot be ${doing}. Nothing was changed.`, {
      details: [{ path: "status", message: "being sent" }],
    });
  }
}

/** Only the person holding a draft changes it. */
export function assertHeldBy(row: GuardedRow, me: string, doing: string): void {
  if (row.claimedBy === me) return;
  const message = row.claimedBy
    ? `${row.claimedBy} holds correction ${row.id}; only they can ${doing} it (ask them to release it). Nothing was changed.`
    : `Claim correction ${row.id} first: only the person holding it can ${doing} it. Nothing was changed.`;
  throw new ApiError("CONFLICT", message, { details: [{ path: "claimedBy", message: row.claimedBy ? `held by ${row.claimedBy}` : "not claimed" }] });
}

/** Edits and sends carry the version they were made on; a change since means the person must look again. */
export function assertVersion(row: GuardedRow, expectedVersion: number): void {
  if (row.version === expectedVersion) return;
  throw new ApiError(
    "CONFLICT",
    `Correction ${row.id} changed since you loaded it (version ${row.version}, not ${expectedVersion}); reload it, check the text, and try again. Nothing was changed.`,
    { details: [{ path: "expectedVersion", message: `is ${row.version} now` }] },
  );
}
