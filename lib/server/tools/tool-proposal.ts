/**
 * A team's proposed change to a tool's row: what its latest declaration suggests that differs from
 * the row in force. It waits beside the row until an admin accepts it (the fields are copied over,
 * as an edit, versioned) or refuses it (it is dropped); the row in force never takes a value from a
 * declaration on its own. Pure: no database.
 */
import * as z from "zod";
import { diffFields, TOOL_POLICY_FIELDS, ZToolPolicyFields, type ToolPolicyField, type TToolPolicyFields } from "./tool-policy";

/** The fields a proposal may carry: every field of the row but its review status, and the connector's lookup. */
export const ZToolProposal = ZToolPolicyFields.omit({ status: true })
  .partial()
  .extend({
    /** Whether the team's connector can look an effect up by its step key (a fact the admin's checks use). */
    lookupAvailable: z.boolean().optional(),
  });
/** A team's proposed change to a tool's row. */
export type TToolProposal = z.output<typeof ZToolProposal>;

/**
 * The proposal a declaration makes against `inForce`: each suggested field whose value differs, and
 * the lookup when the team now says otherwise. Null when the declaration suggests nothing new.
 */
export function proposalOf(inForce: TToolPolicyFields, suggestion: Partial<TToolPolicyFields>, lookupSuggested: boolean, lookupInForce: boolean): TToolProposal | null {
  const proposal: Record<string, unknown> = {};
  const changed = diffFields(inForce, { ...inForce, ...suggestion });
  for (const field of Object.keys(changed) as ToolPolicyField[]) {
    if (field !== "status") proposal[field] = suggestion[field] ?? null;
  }
  if (lookupSuggested !== lookupInForce) proposal.lookupAvailable = lookupSuggested;
  return Object.keys(proposal).length > 0 ? (proposal as TToolProposal) : null;
}

/** The proposal stored in a row, or null (anything malformed is no proposal: the row in force stands). */
export function storedProposal(value: unknown): TToolProposal | null {
  if (value === null || value === undefined) return null;
  const parsed = ZToolProposal.safeParse(value);
  return parsed.success && Object.keys(parsed.data).length > 0 ? parsed.data : null;
}

/** The row's fields with a proposal applied over them (lookup apart: it is not an editable field). */
export function withProposal(inForce: TToolPolicyFields, proposal: TToolProposal): TToolPolicyFields {
  const fields: Partial<TToolPolicyFields> = {};
  for (const field of TOOL_POLICY_FIELDS) {
    if (field !== "status" && field in proposal) (fields as Record<string, unknown>)[field] = (proposal as Record<string, unknown>)[field];
  }
  return { ...inForce, ...fields };
}
