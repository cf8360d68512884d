import * as api from "@/packages/client/src/protocol/contracts/runs";
import { agentRoute } from "@/lib/delivery/route";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { setRunStatusForAgent } from "@/lib/server/agent-api/set-run-status";

export const POST = agentRoute(api.setRunStatus, async ({ prisma, principal, params, body }) => {
  const run = await setRunStatusForAgent({ prisma, principal, runId: params.runId, move: { from: body.from, to: body.to, type: body.event.type, data: body.event.data } });
  return { run: run ? toWire(run) : null };
});
