import * as api from "@/lib/api/contracts/audit";
import { findAuditEvents } from "@/lib/audit/find-audit-events";
import { userRoute } from "@/lib/auth/user-route";

export const GET = userRoute(api.dashboardFindAuditEvents, "read", async ({ query }) => findAuditEvents(query));
