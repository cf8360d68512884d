/**
 * A team's own connector, for the tests that declare tools: cases in the simulated ticketing system
 * (in-process World or the server's hosted one), closed by the team's own compensator, in the
 * namespace `ns` (`ns.open_case`, `ns.close_case`), and the manifest that declares them.
 */
import { z } from "zod";
import { sagaLabel } from "@/lib/demo/connectors/sim-tools";
import { defineCompensator, defineTool, ToolRegistry } from "@/packages/client/src/saga/tools";
import { ToolClass } from "@/packages/client/src/saga/vocabulary";
import type { WorldLike } from "@/lib/demo/sim/remote";

/** The connector's registry over `world`. */
export function teamRegistry(world: WorldLike, ns: string): ToolRegistry {
  const openCase = defineTool({
    name: `${ns}.open_case`,
    class: ToolClass.COMPENSATABLE,
    args: z.object({ summary: z.string(), orderId: z.string() }),
    call: async (args, ctx) => {
      const t = await world.ticketing.create({ ...args, labels: [sagaLabel(ctx.stepKey)] });
      return { externalRef: t.id, result: { id: t.id } };
    },
    lookup: async (key) => {
      const [t] = await world.ticketing.searchByLabel(sagaLabel(key));
      return t ? { externalRef: t.id, result: { id: t.id } } : null;
    },
    compensation: { with: `${ns}.close_case`, build: () => ({ reason: "rolled back" }) },
  });
  const closeCase = defineCompensator({
    name: `${ns}.close_case`,
    args: z.object({ reason: z.string() }),
    run: async (a, ctx) => {
      await world.ticketing.close(ctx.target.externalRef ?? "", a.reason);
      return {};
    },
    verify: async (_a, ctx) => ({ done: (await world.ticketing.get(ctx.target.externalRef ?? ""))?.status === "closed" }),
  });
  return new ToolRegistry([openCase], [closeCase]);
}

/** The manifest that declares the connector's tool and compensator (names without the namespace). */
export const TEAM_MANIFEST = {
  tools: [{ name: "open_case", class: "COMPENSATABLE", lookup: true, compensation: { tool: "close_case", args: { reason: "rolled back" } }, owner: "team-ops", audience: ["internal"], description: "Open a case in the team's queue", argsSchema: { type: "object", properties: { summary: { type: "string" }, orderId: { type: "string" } }, required: ["summary", "orderId"] } }],
  compensators: [{ name: "close_case", description: "Close the case with a reason" }],
};
