import * as api from "@/lib/api/contracts/dashboard";
import { userRoute } from "@/lib/auth/user-route";
import { decideHeldCalls } from "@/lib/escalations/decide-held-calls";

// Each item is decided on its own; skipped and failed items are reported in the answer.
export const POST = userRoute(api.dashboardDecideHeldCalls, "escalation.resolve", async ({ body }) => decideHeldCalls(body));
