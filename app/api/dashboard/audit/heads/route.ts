import * as api from "@/lib/api/contracts/audit";
import { exportChainHeads } from "@/lib/audit/export-chain-heads";
import { userRoute } from "@/lib/auth/user-route";

export const GET = userRoute(api.dashboardExportChainHeads, "read", async () => exportChainHeads());
