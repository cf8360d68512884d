import * as api from "@/lib/delivery/contracts/audit";
import { exportChainHeads } from "@/lib/desks/audit/export-chain-heads";
import { userRoute } from "@/lib/delivery/user-route";

export const GET = userRoute(api.dashboardExportChainHeads, "read", async ({ user }) => exportChainHeads({ actor: user }));
