import * as api from "@/lib/delivery/contracts/dashboard";
import { userRoute } from "@/lib/delivery/user-route";
import { decideHeldCalls } from "@/lib/desks/escalations/decide-held-calls";

// Each item is decided on its own; skipped and failed items are reported in the answer.
export const POST = userRoute(api.dashboardDecideHeldCalls, "escalation.resolve", async ({ body, user }) => decideHeldCalls({ actor: user, ...body }));
