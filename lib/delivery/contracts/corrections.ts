/**
 * Contracts of the correction desk's JSON routes (app/api/dashboard/corrections/**): the queue, one
 * correction, and the commands support staff send. Session-authenticated (auth "user"); reading
 * needs `read`, changing needs `correction.handle`, and each lib use case authorises again.
 */
import * as z from "zod";
import { DashboardPath } from "@/lib/delivery/dashboard-paths";
import { defineEndpoint } from "@/packages/client/src/protocol/endpoint";
import { ZDismissCorrection } from "@/lib/desks/corrections/dismiss-correction";
import { ZEditCorrection } from "@/lib/desks/corrections/edit-correction";
import { ZFindCorrectionsRequest } from "@/lib/desks/corrections/find-corrections";
import { ZSendCorrection } from "@/lib/desks/corrections/send-correction";
import { ZCorrectionClaimResult, ZCorrectionDetail, ZCorrectionQueue, ZCorrectionQueueItem, ZSendCorrectionResult } from "@/lib/desks/corrections/views";

const tags = ["dashboard"];
const CorrectionParams = z.object({ correctionId: z.string().trim().min(1).max(80) });

export const dashboardFindCorrections = defineEndpoint({
  method: "GET",
  path: DashboardPath.findCorrections,
  operationId: "dashboardFindCorrections",
  summary: "The correction queue, internal first and customer last, oldest first within a rank",
  tags,
  auth: "user",
  query: ZFindCorrectionsRequest,
  response: ZCorrectionQueue,
});

export const dashboardGetCorrection = defineEndpoint({
  method: "GET",
  path: DashboardPath.getCorrection,
  operationId: "dashboardGetCorrection",
  summary: "One correction: what it answers, the draft, where its send stands, its history",
  tags,
  auth: "user",
  params: CorrectionParams,
  response: ZCorrectionDetail,
});

export const dashboardClaimCorrection = defineEndpoint({
  method: "POST",
  path: DashboardPath.claimCorrection,
  operationId: "dashboardClaimCorrection",
  summary: "Claim a correction draft (once: a second person is told who holds it)",
  tags,
  auth: "user",
  params: CorrectionParams,
  response: ZCorrectionClaimResult,
});

export const dashboardReleaseCorrection = defineEndpoint({
  method: "POST",
  path: DashboardPath.releaseCorrection,
  operationId: "dashboardReleaseCorrection",
  summary: "Give a claimed correction back to the queue",
  tags,
  auth: "user",
  params: CorrectionParams,
  response: ZCorrectionClaimResult,
});

export const dashboardEditCorrection = defineEndpoint({
  method: "POST",
  path: DashboardPath.editCorrection,
  operationId: "dashboardEditCorrection",
  summary: "Edit the subject, body or recipients of a draft you hold (fenced on its version)",
  tags,
  auth: "user",
  params: CorrectionParams,
  body: ZEditCorrection,
  response: ZCorrectionQueueItem,
});

export const dashboardDismissCorrection = defineEndpoint({
  method: "POST",
  path: DashboardPath.dismissCorrection,
  operationId: "dashboardDismissCorrection",
  summary: "Dismiss a draft you hold, with the reason nothing is sent",
  tags,
  auth: "user",
  params: CorrectionParams,
  body: ZDismissCorrection,
  response: ZCorrectionQueueItem,
});

export const dashboardSendCorrection = defineEndpoint({
  method: "POST",
  path: DashboardPath.sendCorrection,
  operationId: "dashboardSendCorrection",
  summary: "Approve and send a draft you hold: a logged irreversible step, sent once by the worker",
  tags,
  auth: "user",
  params: CorrectionParams,
  body: ZSendCorrection,
  response: ZSendCorrectionResult,
});
