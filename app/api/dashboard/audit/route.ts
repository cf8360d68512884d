import * as api from "@/lib/delivery/contracts/audit";
import { findAuditEvents } from "@/lib/desks/audit/find-audit-events";
import { userRoute } from "@/lib/delivery/user-route";

export const GET = userRoute(api.dashboardFindAuditEvents, "read", async ({ query, user }) => findAuditEvents({ actor: user, filters: query }));
