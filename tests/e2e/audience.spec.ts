/**
 * Issue 28, item 1: an effect's audience is never "nobody" where it can be known. An agent that
 * states no audience (as a client with only declared tools does) gets the tool table's rule applied
 * to its arguments ("customer if to is outside the company's domains"), and an effect whose audience
 * nothing states reads and counts as customer-facing: on the pivot's blast radius and on the tool page.
 */
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import { SagaEngine } from "@/packages/client/src/saga/engine";
import { ToolRegistry } from "@/packages/client/src/saga/tools";
import type { WorldLike } from "@/lib/demo/sim/remote";
import { customerFor, expect, test, uniqueTag, type TestAgent } from "./agent";
import { shootBothWidths, signIn } from "./fixtures";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

/** The same agent, with connectors that state no audience: the server decides it from the tool table. */
function silentAgent(agent: TestAgent, world: WorldLike): SagaEngine {
  const full = createSupportToolRegistry(world);
  const silent = new ToolRegistry(
    full.list().map((def) => ({ ...def, audience: undefined })),
    full.listCompensators(),
  );
  return new SagaEngine({ store: agent.store, registry: silent, recheckAfterMs: 500, backoffMs: 50, maxAttempts: 3 });
}

test.describe("who saw an effect", () => {
  test("a customer email from an agent that states no audience is recorded and corrected as customer-facing", async ({ page, seedUser, db, agent, world }) => {
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const engine = silentAgent(agent, world);
    const run = await engine.startRun({ title: `Tell ${customer} about order ${tag}`, agent: agent.name, onBehalfOf: customer });
    const mail = { to: customer, subject: `Order ${tag} ships today`, body: "Your order ships today." };
    const pivot = await run.requestPivot({ summary: "email the customer", plan: [{ tool: "send_email", args: mail }] });
    await new ReviewerEngine({ store: new PrismaSagaStore(db), registry: createSupportToolRegistry(world) }).decidePivot(pivot.id, {
      approve: true,
      actor: { type: "user", id: "rita@example.com" },
      planHash: pivot.planHash,
    });
    expect((await run.call("send_email", mail)).status).toBe("ok");
    await run.unwind("the order was cancelled after the email went out");

    // The rows: the tool table's rule, applied to `to`, recorded the customer on the step and the correction.
    const step = await db.step.findFirstOrThrow({ where: { runId: run.runId, tool: "send_email" } });
    expect(step.audience).toEqual(["customer"]);
    const correction = await db.correction.findFirstOrThrow({ where: { runId: run.runId } });
    expect(correction.audience).toEqual(["customer"]);
    expect(correction.rank).toBe(2);

    const sam = await seedUser("support", { name: `Sam Support ${tag}` });
    await signIn(page, sam, `/corrections/${correction.id}`);
    await expect(page.getByText("Its audience (customer) saw it")).toBeVisible();
    await expect(page.getByText("nobody outside the company saw it")).toHaveCount(0);
    await expect(page.locator(".radius").first()).toHaveText(/customer/i);
    await shootBothWidths(page, "audience-correction");
  });

  test("a staged effect whose audience nothing states counts as customer-facing on the pivot, and the tool page states each rule", async ({ page, seedUser, db, agent, world }) => {
    const tag = uniqueTag();
    const customer = customerFor(tag);
    const engine = silentAgent(agent, world);
    const run = await engine.startRun({ title: `Charge ${customer} for order ${tag}`, agent: agent.name, onBehalfOf: customer });
    // A charge_card row that states no audience (the demo's table says "customer if receipt, else
    // finance"; this test is about a row that says nothing, so it clears the rule and puts it back).
    const seeded = (await db.toolPolicy.findUniqueOrThrow({ where: { name: "charge_card" } })).audienceRule;
    await db.toolPolicy.update({ where: { name: "charge_card" }, data: { audienceRule: null } });
    try {
      expect((await run.call("charge_card", { customerId: "cus_bo", amount: 1800, currency: "eur", reason: `order ${tag}` })).status).toBe("ok");
      const pivot = await run.requestPivot({ summary: `Tell ${customer}`, plan: [{ tool: "send_email", args: { to: customer, subject: `Charged ${tag}`, body: "We charged your card." } }] });

      const charge = await db.step.findFirstOrThrow({ where: { runId: run.runId, tool: "charge_card" } });
      expect(charge.audience).toEqual([]);
      expect((await db.toolPolicy.findUniqueOrThrow({ where: { name: "charge_card" } })).audienceRule).toBeNull();

      const rita = await seedUser("reviewer", { name: `Rita Reviewer ${tag}` });
      await signIn(page, rita, `/pivots/${pivot.id}`);
      const radius = page.getByLabel("Blast radius");
      await expect(radius).toContainText("1 effect (audience unknown, counted as customer-facing)");
      await expect(radius).not.toContainText("nobody");
      await expect(radius.locator(".radius").first()).toHaveText(/customer/i);
      await shootBothWidths(page, "audience-pivot");

      const admin = await seedUser("admin", { name: `Ada Admin ${tag}` });
      await page.context().clearCookies();
      await signIn(page, admin, "/admin/tools/send_email");
      await expect(page.getByText("customer when the `to` argument is outside the company's domains").first()).toBeVisible();
      await page.goto("/admin/tools/charge_card");
      await expect(page.getByText("not stated: every effect counts as customer-facing").first()).toBeVisible();
    } finally {
      await db.toolPolicy.update({ where: { name: "charge_card" }, data: { audienceRule: seeded } });
    }
  });
});
