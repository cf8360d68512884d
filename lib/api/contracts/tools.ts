/**
 * The tool table's endpoints: admins read and edit it from the dashboard (session), and a team's
 * agent token declares its own tools (Bearer). Declared tools land unreviewed: every call held.
 */
import * as z from "zod";
import { DashboardPath } from "../dashboard-paths";
import { defineEndpoint } from "../endpoint";
import { ZDeclarationResult, ZToolManifest } from "@/lib/tools/declare-tools";
import { ZToolPolicyFields } from "@/lib/tools/tool-policy";
import { ZToolDetail, ZToolEditResult, ZToolTable } from "@/lib/tools/views";

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

export const declareTools = defineEndpoint({
  method: "POST",
  path: "/api/v1/tools/declarations",
  operationId: "declareTools",
  summary: "Declare the calling team's tools (a manifest) into the token's namespace",
  description:
    "Names are put in the namespace of the token (`<token name>.<tool>`), and the token's scope gains them. New tools land UNREVIEWED: every call is held for a person until an admin accepts the tool at /admin/tools. A declaration is a suggestion: a tool an admin already reviewed keeps its accepted row.",
  tags,
  auth: "agent",
  body: ZToolManifest,
  example: { tools: [{ name: "book_room", class: "COMPENSATABLE", lookup: true, compensation: { tool: "cancel_room", args: { room: "{{room}}" } }, owner: "travel-desk" }], compensators: [{ name: "cancel_room" }] },
  response: ZDeclarationResult,
});
