import * as api from "@/lib/api/contracts/runs";
import { agentRoute } from "@/lib/api/route";
import { toWire } from "@/lib/api/schemas/saga";
import { setRunStatusForAgent } from "@/lib/agent-api/set-run-status";

export const POST = agentRoute(api.setRunStatus, async ({ prisma, principal, params, body }) => {
  const run = await setRunStatusForAgent({ prisma, principal, runId: params.runId, move: { from: body.from, to: body.to, type: body.event.type, data: body.event.data } });
  return { run: run ? toWire(run) : null };
});
