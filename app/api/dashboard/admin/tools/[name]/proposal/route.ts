import * as api from "@/lib/delivery/contracts/tools";
import { userRoute } from "@/lib/delivery/user-route";
import { decideToolProposal } from "@/lib/server/tools/decide-tool-proposal";

// Someone else's decision or edit since the page loaded is an answer (200, ok: false, current), not an error.
export const POST = userRoute(api.dashboardDecideToolProposal, "tools.edit", async ({ params, body, user }) => decideToolProposal({ actor: user, name: params.name, ...body }));
