/**
 * A team's agent token declares its own tools (Bearer). Declared tools land unreviewed: every call is
 * held. Apart from the admin's tool-table endpoints, so the agent-side client loads nothing of them.
 */
import { defineEndpoint } from "../endpoint";
import { ZDeclarationResult, ZToolManifest } from "../manifest";

const tags = ["tools"];

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
