/**
 * Every dashboard screen with something on it, for the suites that walk them all (the phone layout
 * and the accessibility check): seeds a pivot waiting for a reviewer, an approved run that stopped
 * in COMMITTING, a held irreversible call and a correction draft, and names each page with the role
 * that uses it.
 */
import type { PrismaClient } from "@/generated/prisma";
import { createSupportToolRegistry } from "@/lib/demo/connectors/sim-tools";
import { PrismaSagaStore } from "@/lib/core/db/prisma-saga-store";
import type { RemoteWorld } from "@/lib/demo/sim/remote";
import type { Role } from "@/lib/server/auth/roles";
import { customerFor, stageReship, type TestAgent } from "./agent";
import { ReviewerEngine } from "@/packages/client/src/saga/reviewer-engine";

/** One screen and who reads it. */
export interface Screen {
  /** A short name for screenshots and messages. */
  name: string;
  /** Its address. */
  path: string;
  /** The role that uses it. */
  role: Role;
  /** Text that shows the page has rendered its content (not a loading state or an error). */
  ready: string | RegExp;
}

/** What `seedScreens` recorded. */
export interface SeededScreens {
  /** Every screen, in the order a person would visit them. */
  screens: Screen[];
  /** The run that was approved and then stopped in COMMITTING. */
  committingRunId: string;
}

/** Seeds one of everything a screen shows, with titles carrying `tag`. */
export async function seedScreens(db: PrismaClient, agent: TestAgent, world: RemoteWorld, tag: string): Promise<SeededScreens> {
  const customer = customerFor(tag);
  const reviewer = new ReviewerEngine({ store: new PrismaSagaStore(db), registry: createSupportToolRegistry(world) });
  const mail = { to: customer, subject: `Your replacement ships today (${tag})`, body: "We re-shipped order 2001 and waived the fee." };

  // A pivot waiting for a reviewer.
  const waiting = await agent.engine.startRun({ title: `Reship order 2001 for ${customer}`, agent: agent.name, onBehalfOf: customer });
  const staged = await stageReship(waiting, customer, tag);
  const pivot = await waiting.requestPivot({
    summary: "Capture the hold and tell the customer.",
    plan: [
      { tool: "capture_payment", args: { paymentIntentId: staged.paymentIntentId, amount: staged.amount } },
      { tool: "send_email", args: mail },
    ],
  });

  // An approved run whose agent captured the payment and then went quiet before the email.
  const quiet = await agent.engine.startRun({ title: `Approved reship for ${customer}`, agent: agent.name, onBehalfOf: customer });
  const quietStaged = await stageReship(quiet, customer, `${tag}q`);
  const plan = [
    { tool: "capture_payment", args: { paymentIntentId: quietStaged.paymentIntentId, amount: quietStaged.amount } },
    { tool: "send_email", args: { ...mail, subject: `Approved: ${mail.subject}` } },
  ];
  const approved = await quiet.requestPivot({ summary: "Capture the hold and tell the customer.", plan });
  await reviewer.decidePivot(approved.id, { approve: true, actor: { type: "user", id: "rita@example.com" }, planHash: approved.planHash });
  const captured = await quiet.call("capture_payment", plan[0]!.args);
  if (captured.status !== "ok") throw new Error(`the approved capture should run, got ${JSON.stringify(captured)}`);

  // A held irreversible call in the queue.
  const heldRun = await agent.engine.startRun({ title: `Tell ${customer} about a delay`, agent: agent.name, onBehalfOf: customer });
  const held = await heldRun.call("send_email", { ...mail, subject: `Delay on order 2001 (${tag})` });
  if (held.status !== "approval_required" || !held.escalationId) throw new Error("the email should be held in the queue");

  // A correction draft: an email that went out after an approved pivot, then the run was unwound.
  const sent = await agent.engine.startRun({ title: `Tell ${customer} about order ${tag}`, agent: agent.name, onBehalfOf: customer });
  const sentMail = { to: customer, subject: `Your order ${tag} ships today`, body: "Your order ships today." };
  const sentPivot = await sent.requestPivot({ summary: "email the customer", plan: [{ tool: "send_email", args: sentMail }] });
  await reviewer.decidePivot(sentPivot.id, { approve: true, actor: { type: "user", id: "rita@example.com" }, planHash: sentPivot.planHash });
  if ((await sent.call("send_email", sentMail)).status !== "ok") throw new Error("the approved email should be sent");
  await sent.unwind("the order was cancelled after the email went out");
  const correction = await db.correction.findFirstOrThrow({ where: { runId: sent.runId } });

  const screens: Screen[] = [
    { name: "runs", path: "/", role: "reviewer", ready: `Reship order 2001 for ${customer}` },
    { name: "run-committing", path: `/runs/${quiet.runId}`, role: "reviewer", ready: `Approved reship for ${customer}` },
    { name: "run-unwound", path: `/runs/${sent.runId}`, role: "reviewer", ready: `Tell ${customer} about order ${tag}` },
    { name: "pivot", path: `/pivots/${pivot.id}`, role: "reviewer", ready: `Reship order 2001 for ${customer}` },
    { name: "escalations", path: "/escalations", role: "reviewer", ready: `Tell ${customer} about a delay` },
    { name: "escalation", path: `/escalations/${held.escalationId}`, role: "reviewer", ready: `Delay on order 2001 (${tag})` },
    { name: "corrections", path: "/corrections", role: "support", ready: /Correction/ },
    { name: "correction", path: `/corrections/${correction.id}`, role: "support", ready: `Your order ${tag} ships today` },
    { name: "revokes", path: "/revokes", role: "reviewer", ready: /Revoke/ },
    { name: "audit", path: `/audit?run=${encodeURIComponent(quiet.runId)}`, role: "viewer", ready: /Audit/ },
    { name: "tools", path: "/admin/tools", role: "admin", ready: "send_email" },
    { name: "tool", path: "/admin/tools/send_email", role: "admin", ready: "send_email" },
    { name: "users", path: "/admin/users", role: "admin", ready: /People|Users/ },
    { name: "tokens", path: "/admin/tokens", role: "admin", ready: agent.name },
  ];
  return { screens, committingRunId: quiet.runId };
}
