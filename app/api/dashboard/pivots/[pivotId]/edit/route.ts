import * as api from "@/lib/delivery/contracts/dashboard";
import { userRoute } from "@/lib/delivery/user-route";
import { editPlanItem } from "@/lib/desks/pivots/edit-plan-item";

// A plan that changed since the page loaded is an answer (200, ok: false), not an error.
export const POST = userRoute(api.dashboardEditPlanItem, "pivot.decide", async ({ params, body, user }) => editPlanItem({ actor: user, pivotId: params.pivotId, ...body }));
