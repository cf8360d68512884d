/**
 * An agent process that makes one confirmed call and then ends badly, 10 ms later, for the
 * lost-outcome tests. Env:
 *   SAGABOARD_URL, SAGABOARD_TOKEN   where and who
 *   LINGER_MS                        outcomeLingerMs (absent: the client's default)
 *   END                              throw | reject | exit | sigterm
 * Prints {"run": id} once the call returned.
 */
import { HttpSagaStore } from "@/packages/client/src/agent/client/http-store";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { RemoteWorld } from "@/lib/demo/sim/remote";

const url = process.env.SAGABOARD_URL!;
const linger = process.env.LINGER_MS === undefined ? {} : { outcomeLingerMs: Number(process.env.LINGER_MS) };
const engine = new SagaEngine({
  store: new HttpSagaStore({ baseUrl: url, token: process.env.SAGABOARD_TOKEN!, ...linger }),
  registry: createSupportToolRegistry(new RemoteWorld(url)),
});

const run = await engine.startRun({ title: "Order 7001 arrived damaged", agent: "exiting-agent" });
await run.call("create_ticket", { summary: "Order 7001 arrived damaged", orderId: "7001" });
console.log(JSON.stringify({ run: run.runId }));

const end = process.env.END;
if (end === "sigterm") setInterval(() => undefined, 1000); // a server-like process that waits to be stopped
setTimeout(() => {
  if (end === "throw") throw new Error("the agent's own bug, 10 ms after a confirmed call");
  if (end === "reject") void Promise.reject(new Error("an unhandled rejection, 10 ms after a confirmed call"));
  if (end === "exit") process.exit(3);
  if (end === "sigterm") process.kill(process.pid, "SIGTERM");
}, 10);
