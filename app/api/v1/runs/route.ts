import * as api from "@/packages/client/src/protocol/contracts/runs";
import { agentRoute, withStatus } from "@/lib/delivery/route";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { createRunForAgent } from "@/lib/server/agent-api/create-run";
import { findRunsForAgent } from "@/lib/server/agent-api/find-runs";

export const POST = agentRoute(api.createRun, async ({ prisma, principal, body }) =>
  withStatus(201, { run: toWire(await createRunForAgent({ prisma, principal, run: body })) }),
);

export const GET = agentRoute(api.listRuns, async ({ prisma, principal, query }) => {
  const page = await findRunsForAgent({ prisma, principal, page: query });
  return { runs: page.runs.map(toWire), nextCursor: page.nextCursor };
});
