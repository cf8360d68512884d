/** Admin settings of the SLA loop: rules per target, and where each team's notifications go. */
import * as z from "zod";
import type { PrismaClient } from "@/generated/prisma";
import { databaseNow } from "@/lib/core/db/dialect";
import { onConnection } from "@/lib/core/db/transactions";
import { ZSlaRuleInput, type TSlaRuleInput } from "./sla-rules";

/** A team's addresses as an admin sets them (an empty list removes the team). */
export const ZTeamInput = z.object({
  name: z.string().trim().min(1, "name the team as the tool table's owner column does").max(120),
  emails: z.array(z.email("each address must be an email address")).max(50),
});
export type TTeamInput = z.infer<typeof ZTeamInput>;

/** Sets (or, with `remove`, deletes) one SLA rule. */
export async function saveSlaRule(prisma: PrismaClient, input: TSlaRuleInput & { by: string; remove?: boolean }): Promise<void> {
  const rule = ZSlaRuleInput.parse(input);
  await onConnection(prisma, async () => {
    if (input.remove) {
      await prisma.slaRule.deleteMany({ where: { target: rule.target } });
      return;
    }
    const now = await databaseNow(prisma);
    const data = { slaSec: rule.slaSec, reminderAt: rule.reminderAt, backupTeam: rule.backupTeam, expireSec: rule.expireSec, updatedBy: input.by, updatedAt: now };
    await prisma.slaRule.upsert({ where: { target: rule.target }, create: { target: rule.target, ...data }, update: data });
  });
}

/** Sets a team's addresses; an empty list removes the team. */
export async function saveNotificationTeam(prisma: PrismaClient, input: TTeamInput & { by: string }): Promise<void> {
  const team = ZTeamInput.parse(input);
  await onConnection(prisma, async () => {
    if (team.emails.length === 0) {
      await prisma.notificationTeam.deleteMany({ where: { name: team.name } });
      return;
    }
    const now = await databaseNow(prisma);
    const data = { emails: [...new Set(team.emails)], updatedBy: input.by, updatedAt: now };
    await prisma.notificationTeam.upsert({ where: { name: team.name }, create: { name: team.name, ...data }, update: data });
  });
}
