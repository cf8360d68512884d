import * as api from "@/lib/delivery/contracts/tools";
import { userRoute } from "@/lib/delivery/user-route";
import { getTool } from "@/lib/server/tools/get-tool";
import { updateTool } from "@/lib/server/tools/update-tool";

export const GET = userRoute(api.dashboardGetTool, "read", async ({ params, user }) => getTool({ actor: user, name: params.name }));

// Someone else's edit since the page loaded is an answer (200, ok: false, current), not an error.
export const POST = userRoute(api.dashboardUpdateTool, "tools.edit", async ({ params, body, user }) => updateTool({ actor: user, name: params.name, ...body }));
