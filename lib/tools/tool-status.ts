/** The review states of a tool-table row: one doc line per value. */

/** Where a tool stands in review. */
export const ToolStatus = {
  /** Declared by its team, not yet accepted by an admin: every call is held for a person. */
  UNREVIEWED: "UNREVIEWED",
  /** Accepted by an admin (or registered by a connector the server runs): calls follow the row. */
  REVIEWED: "REVIEWED",
  /** Turned off by an admin: every new intent is refused, naming who disabled it. */
  DISABLED: "DISABLED",
} as const;
export type ToolStatus = (typeof ToolStatus)[keyof typeof ToolStatus];
export const TOOL_STATUSES = Object.values(ToolStatus);
