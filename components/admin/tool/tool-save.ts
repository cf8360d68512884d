"use client";

// Saving a change to a tool's row, bound to the policy version the page loaded; the server's field
// errors come back by field (for the inputs) and in words (for the summary).

import { useState } from "react";
import { DashboardRequestError, errorMessage, postParsed } from "@/components/dashboard/live";
import { ZToolEditResult, type TToolRow } from "@/lib/server/tools/views";
import { toolFieldLabel } from "@/components/admin/tool-labels";
import { dashboardUrl, DashboardPath } from "@/lib/delivery/dashboard-paths";

/** What the last save said when it was refused: a sentence, and each field's error by field; null otherwise. */
export type Outcome = { tone: "bad"; text: string; fields?: Record<string, string> } | null;

/** What a save is sent with: the changed fields and, for some saves, a check, a reason or an acknowledgement. */
export interface ToolSaveBody {
  /** The fields that change, as the API takes them. */
  changes: Record<string, unknown>;
  /** The admin checked the row against the connector. */
  verified?: boolean;
  /** Why, kept in the history. */
  reason?: string;
  /** Accept a declared tool without an argument schema, knowingly. */
  acceptWithoutArgsSchema?: boolean;
}

/** A save of the row, as the form that asked holds it. */
export interface ToolSave {
  /** A save is under way. */
  busy: boolean;
  /** What the last refused save said, or null. */
  outcome: Outcome;
  /** Saves; `done` starts the sentence the page shows on success. True when it was saved. */
  save: (body: ToolSaveBody, done: string) => Promise<boolean>;
}

/** Saves an edit bound to the version the page loaded; what it said, for the form that asked. */
export function useToolSave(tool: TToolRow, onSaved: (text: string) => void): ToolSave {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>(null);
  async function save(body: ToolSaveBody, done: string): Promise<boolean> {
    setBusy(true);
    setOutcome(null);
    try {
      const result = await postParsed(dashboardUrl(DashboardPath.updateTool, { name: tool.name }), ZToolEditResult, { expectedVersion: tool.policyVersion, ...body });
      if (result.ok) {
        onSaved(result.changed.length > 0 ? `${done} Version ${result.tool.policyVersion}: ${result.changed.join(", ")} changed.` : `${done} Version ${result.tool.policyVersion}.`);
        return true;
      }
      setOutcome({ tone: "bad", text: `Not saved: ${result.message}` });
    } catch (e) {
      const fields: Record<string, string> = {};
      if (e instanceof DashboardRequestError) for (const d of e.details) fields[d.path.replace(/^(body\.)?changes\./, "")] = d.message;
      const named = Object.keys(fields).map(toolFieldLabel);
      // Field errors stand beside their inputs; the summary names the fields in words.
      const text =
        named.length > 0 && named.every((label) => label !== null)
          ? `Not saved: ${named.length === 1 ? "one field needs" : `${named.length} fields need`} a change (marked above): ${named.join(", ")}. Nothing was changed.`
          : `Not saved: ${errorMessage(e)}`;
      setOutcome({ tone: "bad", text, fields });
    } finally {
      setBusy(false);
    }
    return false;
  }
  return { busy, outcome, save };
}
