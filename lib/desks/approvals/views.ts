/**
 * What the approvals desk returns: the approvals a pivot has so far (two approvers), the confirm page
 * of an email link, and the outcome of an email or Slack decision. Plain JSON, dates as ISO strings.
 */
import { z } from "zod";
import { ZIsoDate } from "@/packages/client/src/protocol/schemas/saga";

/** Where a person approved. */
export const ZApprovalChannel = z.enum(["dashboard", "email", "slack"]);
/** Where a person approved. */
export type TApprovalChannel = z.infer<typeof ZApprovalChannel>;

/** One person's approval of the plan as it is now. */
export const ZPivotApprovalView = z.object({
  /** The approver's email. */
  by: z.string(),
  /** Where they approved. */
  via: ZApprovalChannel,
  /** When. */
  at: ZIsoDate,
});
/** One person's approval. */
export type TPivotApprovalView = z.infer<typeof ZPivotApprovalView>;

/** How many approvals the plan needs and who has given one (for the plan hash as it is now). */
export const ZPivotApprovals = z.object({
  /** 1, or 2 when a tool of the plan asks for two approvers. */
  needed: z.number().int().min(1).max(2),
  /** The tools whose row asks for two approvers. */
  twoApproverTools: z.array(z.string()),
  /** Approvals recorded for the current plan, oldest first (the deciding one included once decided). */
  given: z.array(ZPivotApprovalView),
});
/** How many approvals the plan needs and who gave one. */
export type TPivotApprovals = z.infer<typeof ZPivotApprovals>;

/** Why an approval link was refused, with the HTTP status it is answered with. */
export const ZLinkRefusal = z.object({
  /** 403: another person's link (forwarded); 404: no such link; 409: used already; 410: no longer usable. */
  status: z.union([z.literal(403), z.literal(404), z.literal(409), z.literal(410)]),
  /** The page's title. */
  title: z.string(),
  /** What happened and what to do instead. */
  message: z.string(),
  /** Where the link's item is in the dashboard (its pivot or escalation page), when the person may open it. */
  itemPath: z.string().nullable(),
});
/** Why an approval link was refused. */
export type TLinkRefusal = z.infer<typeof ZLinkRefusal>;
