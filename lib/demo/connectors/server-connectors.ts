/**
 * The connectors this server holds, chosen at boot: the one place the product picks the demo's
 * simulated systems. With SAGABOARD_SIM on (the demo, the tests) the server hosts the simulated
 * systems and holds the support agent's connectors over them, so a person's "check the real system"
 * can run here. Off (a real deployment), the server holds no connector: the tools' credentials live
 * with the worker, and the dashboard says that no connector here holds the tool.
 */
import { ToolRegistry } from "@/packages/client/src/saga/tools";
import { getHostedWorld, hostedSearchLagMs, simEnabled } from "@/lib/demo/sim/host";
import type { World } from "@/lib/demo/sim/world";
import { createSupportToolRegistry } from "./sim-tools";

/** The pause before a lookup's second look when the connectors name none (search indexes lag). */
const DEFAULT_RECHECK_MS = 2_000;

// One registry per hosted world: `resetHostedWorld` replaces the world, and lookups must read the new one.
const registries = new WeakMap<World, ToolRegistry>();
const none = new ToolRegistry([], []);

/** The tools this server has connectors for (none unless SAGABOARD_SIM is on). */
export function serverToolRegistry(env: Readonly<Record<string, string | undefined>> = process.env): ToolRegistry {
  if (!simEnabled(env)) return none;
  const world = getHostedWorld();
  let registry = registries.get(world);
  if (!registry) registries.set(world, (registry = createSupportToolRegistry(world)));
  return registry;
}

/** How long this server's connectors' search indexes may lag a write, milliseconds. */
export function serverSearchLagMs(env: Readonly<Record<string, string | undefined>> = process.env): number {
  return simEnabled(env) ? hostedSearchLagMs(env) : DEFAULT_RECHECK_MS;
}
