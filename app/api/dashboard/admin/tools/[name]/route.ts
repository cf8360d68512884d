import * as api from "@/lib/api/contracts/tools";
import { userRoute } from "@/lib/auth/user-route";
import { getTool } from "@/lib/tools/get-tool";
import { updateTool } from "@/lib/tools/update-tool";

export const GET = userRoute(api.dashboardGetTool, "read", async ({ params }) => getTool(params.name));

// Someone else's edit since the page loaded is an answer (200, ok: false, current), not an error.
export const POST = userRoute(api.dashboardUpdateTool, "tools.edit", async ({ params, body }) => updateTool({ name: params.name, ...body }));
