import * as api from "@/packages/client/src/protocol/contracts/runs";
import { agentRoute, withStatus } from "@/lib/delivery/route";
import { toWire } from "@/packages/client/src/protocol/schemas/saga";
import { draftCorrectionForAgent } from "@/lib/server/agent-api/draft-correction";
import { listCorrectionsForAgent } from "@/lib/server/agent-api/list-corrections";

export const GET = agentRoute(api.listCorrections, async ({ prisma, principal, params }) => ({
  corrections: (await listCorrectionsForAgent({ prisma, principal, runId: params.runId })).map(toWire),
}));

export const POST = agentRoute(api.draftCorrection, async ({ prisma, principal, params, body }) =>
  withStatus(201, { correction: toWire(await draftCorrectionForAgent({ prisma, principal, runId: params.runId, correction: body.correction, event: body.event })) }),
);
