/**
 * Who may work an escalation. Items are routed to the team the tool table names as the tool's owner:
 * reviewers (and admins) work the whole queue; support staff work the items a support team owns
 * (a name starting with "support", e.g. support-leads), except approving a held call, which changes
 * what the world sees next and stays with reviewers. One rule for the queue's buttons and the server.
 */
import { ApiError } from "@/packages/client/src/protocol/errors";
import type { CurrentUser } from "@/lib/server/auth/current-user";
import { assertCan, can, Role } from "@/lib/server/auth/roles";
import { SagaError } from "@/packages/client/src/saga/errors";
import { EscalationKind } from "@/packages/client/src/saga/vocabulary";
import { withDb } from "@/lib/desks/dashboard/context";
import { escalationOwner, toolSystems } from "./escalation-view";

/** Whether an owner names a support team. */
export function isSupportTeam(owner: string | null): boolean {
  return owner !== null && /^support([-_ .]|$)/i.test(owner.trim());
}

/** Whether `role` may claim, check and resolve an escalation of `kind` owned by `owner`. */
export function mayWorkEscalation(role: Role, item: { owner: string | null; kind: string }): boolean {
  if (can(role, "escalation.claim") && can(role, "escalation.resolve")) return true;
  return role === Role.SUPPORT && isSupportTeam(item.owner) && item.kind !== EscalationKind.APPROVAL_REQUIRED;
}

/** Refuses unless `user` may work this escalation: 403 saying who may, 404 when it does not exist. */
export async function assertEscalationWorker(user: CurrentUser, escalationId: string): Promise<void> {
  assertCan(user, "read");
  const found = await withDb((prisma) => prisma.escalation.findUnique({ where: { id: escalationId }, select: { owner: true, kind: true, detail: true, step: { select: { tool: true } } } }));
  if (!found) throw new SagaError("ESCALATION_NOT_FOUND", `Escalation ${escalationId} does not exist; reload the queue.`);
  const row = { kind: found.kind, owner: escalationOwner(found, await toolSystems([found])) };
  if (!mayWorkEscalation(user.role, row)) {
    const why =
      user.role === Role.SUPPORT && row.kind === EscalationKind.APPROVAL_REQUIRED
        ? "approving a held call needs the reviewer role"
        : user.role === Role.SUPPORT
          ? `it is routed to ${row.owner ?? "nobody in particular"}, not a support team`
          : "working escalations needs the reviewer role (support staff work the items support teams own)";
    throw new ApiError("FORBIDDEN", `Your role (${user.role}) cannot work this escalation: ${why}. Ask an admin if you should.`);
  }
}
