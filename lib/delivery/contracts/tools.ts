/**
 * The tool table's endpoints: admins read and edit it from the dashboard (session). A team's agent
 * token declares its own tools with declarations.ts.
 */
import * as z from "zod";
import { DashboardPath } from "@/lib/delivery/dashboard-paths";
import { defineEndpoint } from "@/packages/client/src/protocol/endpoint";
import { ZToolPolicyFields } from "@/lib/server/tools/tool-policy";
import { ZToolDetail, ZToolEditResult, ZToolTable } from "@/lib/server/tools/views";

const tags = ["tools"];
const ToolParams = z.object({ name: z.string().trim().min(1).max(80) });

export const dashboardFindTools = defineEndpoint({
  method: "GET",
  path: DashboardPath.findTools,
  operationId: "dashboardFindTools",
  summary: "The per-tool reversibility table (every signed-in person may read it)",
  tags,
  auth: "user",
  response: ZToolTable,
});

export const dashboardGetTool = defineEndpoint({
  method: "GET",
  path: DashboardPath.getTool,
  operationId: "dashboardGetTool",
  summary: "One tool's row, its declaration and its history",
  tags,
  auth: "user",
  params: ToolParams,
  response: ZToolDetail,
});

export const dashboardUpdateTool = defineEndpoint({
  method: "POST",
  path: DashboardPath.updateTool,
  operationId: "dashboardUpdateTool",
  summary: "Edit a tool's row (admins), bound to the version the page loaded",
  description:
    "Every accepted edit is a new policy version: approvals and plans naming the tool become stale. An edit the connectors cannot honour is a 400 naming each field; someone else's edit since the page loaded is answered 200 with `{ ok: false, reason: \"version_changed\" }`.",
  tags,
  auth: "user",
  params: ToolParams,
  body: z.strictObject({
    expectedVersion: z.number().int().min(1),
    changes: ZToolPolicyFields.partial(),
    reason: z.string().trim().max(500).optional(),
    verified: z.boolean().optional(),
    /** Accepting a declared tool that has no argument schema, knowing its calls will take any JSON. */
    acceptWithoutArgsSchema: z.boolean().optional(),
  }),
  response: ZToolEditResult,
});

export const dashboardDecideToolProposal = defineEndpoint({
  method: "POST",
  path: DashboardPath.decideToolProposal,
  operationId: "dashboardDecideToolProposal",
  summary: "Accept or refuse a team's proposed change to a tool's row (admins), bound to the version the page loaded",
  description:
    "A team's declaration never changes a row an admin reviewed: what it suggests differently waits as a proposal. Accepting copies it over the row as an edit (a new policy version; checked like an edit, a 400 naming each field the connectors cannot honour); refusing drops it and leaves the row as it was. No proposal waiting is a 409.",
  tags,
  auth: "user",
  params: ToolParams,
  body: z.strictObject({
    expectedVersion: z.number().int().min(1),
    decision: z.enum(["accept", "refuse"]),
    reason: z.string().trim().max(500).optional(),
    /** Accepting a declared tool that has no argument schema, knowing its calls will take any JSON. */
    acceptWithoutArgsSchema: z.boolean().optional(),
  }),
  response: ZToolEditResult,
});
