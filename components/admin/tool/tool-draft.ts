// The tool editor's draft: the row's fields as the form's inputs hold them, and back to the changes the
// API takes (only the fields that differ from the row).

import type { TToolRow } from "@/lib/server/tools/views";
import { durationDraftOf, secondsOfDraft, type DurationDraft } from "@/lib/server/tools/duration";

/** The edit form's state: the row's fields as the inputs hold them. */
export interface Draft {
  toolClass: string;
  compensator: string;
  undoMechanism: string;
  owner: string;
  system: string;
  window: DurationDraft;
  retention: DurationDraft;
  audienceRule: string;
  reviewerEditableArgs: string;
  revokeRoles: string[];
  alwaysRequireApproval: boolean;
  twoApprovers: boolean;
  correctionSubject: string;
  correctionBody: string;
  description: string;
}

/** The draft of a row as it stands: what the form shows before any change. */
export function draftOf(tool: TToolRow): Draft {
  return {
    toolClass: tool.toolClass,
    compensator: tool.compensator ?? "",
    undoMechanism: tool.undoMechanism ?? "",
    owner: tool.owner ?? "",
    system: tool.system ?? "",
    window: durationDraftOf(tool.revocationWindowSec),
    retention: durationDraftOf(tool.keyRetentionSec),
    audienceRule: tool.audienceRule ?? "",
    reviewerEditableArgs: tool.reviewerEditableArgs?.join(", ") ?? "",
    revokeRoles: tool.revokeRoles,
    alwaysRequireApproval: tool.alwaysRequireApproval,
    twoApprovers: tool.twoApprovers === true,
    correctionSubject: tool.correctionSubject ?? "",
    correctionBody: tool.correctionBody ?? "",
    description: tool.description ?? "",
  };
}

/** The fields that differ from the row, as the API takes them. */
export function changesOf(tool: TToolRow, d: Draft): Record<string, unknown> {
  const next: Record<string, unknown> = {
    toolClass: d.toolClass,
    compensator: d.compensator || null,
    undoMechanism: d.undoMechanism.trim() || null,
    owner: d.owner.trim() || null,
    system: d.system.trim() || null,
    revocationWindowSec: secondsOfDraft(d.window),
    keyRetentionSec: secondsOfDraft(d.retention),
    audienceRule: d.audienceRule.trim() || null,
    reviewerEditableArgs: d.reviewerEditableArgs.trim()
      ? d.reviewerEditableArgs
          .split(",")
          .map((a) => a.trim())
          .filter(Boolean)
      : null,
    revokeRoles: d.revokeRoles,
    alwaysRequireApproval: d.alwaysRequireApproval,
    twoApprovers: d.twoApprovers,
    correctionSubject: d.correctionSubject.trim() || null,
    correctionBody: d.correctionBody.trim() || null,
    description: d.description.trim() || null,
  };
  const current = tool as unknown as Record<string, unknown>;
  return Object.fromEntries(Object.entries(next).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(current[k] ?? null)));
}
