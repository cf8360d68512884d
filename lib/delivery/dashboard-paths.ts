import { fillPath } from "@/packages/client/src/protocol/endpoint";

/**
 * The paths of the dashboard API (app/api/dashboard/**), one per operation, apart from the endpoint
 * contracts that use them: the contracts import use-case modules for their schemas, which a client
 * component must not load, so the screens take their URLs from here (`fillPath(DashboardPath.getRunTimeline,
 * { runId })`) and parse the answers with the view schemas. A contract and a screen can never name
 * two different URLs for one operation.
 */
export const DashboardPath = {
  findRuns: "/api/dashboard/runs",
  getRunTimeline: "/api/dashboard/runs/:runId",
  getPivotScreen: "/api/dashboard/pivots/:pivotId",
  approvePivot: "/api/dashboard/pivots/:pivotId/approve",
  rejectPivot: "/api/dashboard/pivots/:pivotId/reject",
  editPlanItem: "/api/dashboard/pivots/:pivotId/edit",
  findEscalations: "/api/dashboard/escalations",
  getEscalation: "/api/dashboard/escalations/:escalationId",
  claimEscalation: "/api/dashboard/escalations/:escalationId/claim",
  releaseEscalation: "/api/dashboard/escalations/:escalationId/release",
  checkRealSystem: "/api/dashboard/escalations/:escalationId/check",
  getRealSystemCheck: "/api/dashboard/escalations/:escalationId/check",
  decideHeldCalls: "/api/dashboard/escalations/decide",
  resolveEscalation: "/api/dashboard/escalations/:escalationId/resolve",
  findUsers: "/api/dashboard/admin/users",
  createUser: "/api/dashboard/admin/users",
  setUserRole: "/api/dashboard/admin/users/role",
  disableUser: "/api/dashboard/admin/users/disable",
  enableUser: "/api/dashboard/admin/users/enable",
  findTokens: "/api/dashboard/admin/tokens",
  createToken: "/api/dashboard/admin/tokens",
  revokeToken: "/api/dashboard/admin/tokens/revoke",
  setTokenLifetime: "/api/dashboard/admin/tokens/lifetime",
  signOutEverywhere: "/api/dashboard/me/sign-out-everywhere",
  findAuditEvents: "/api/dashboard/audit",
  /** The audit log as a CSV or JSON Lines file (a download, not a JSON answer: no contract). */
  exportAuditEvents: "/api/dashboard/audit/export",
  verifyAuditChains: "/api/dashboard/audit/verify",
  exportChainHeads: "/api/dashboard/audit/heads",
  checkChainHeads: "/api/dashboard/audit/heads/check",
  findCorrections: "/api/dashboard/corrections",
  getCorrection: "/api/dashboard/corrections/:correctionId",
  claimCorrection: "/api/dashboard/corrections/:correctionId/claim",
  releaseCorrection: "/api/dashboard/corrections/:correctionId/release",
  editCorrection: "/api/dashboard/corrections/:correctionId/edit",
  dismissCorrection: "/api/dashboard/corrections/:correctionId/dismiss",
  sendCorrection: "/api/dashboard/corrections/:correctionId/send",
  findNotificationSettings: "/api/dashboard/admin/webhooks",
  getOperations: "/api/dashboard/admin/operations",
  createWebhook: "/api/dashboard/admin/webhooks",
  replayDelivery: "/api/dashboard/admin/webhooks/replay",
  setWebhookEnabled: "/api/dashboard/admin/webhooks/enabled",
  deleteWebhook: "/api/dashboard/admin/webhooks/delete",
  saveSlaRule: "/api/dashboard/admin/webhooks/sla-rules",
  saveNotificationTeam: "/api/dashboard/admin/webhooks/teams",
  getRevokeOptions: "/api/dashboard/runs/:runId/revokes",
  pullRunRevoke: "/api/dashboard/runs/:runId/revoke",
  pullStepRevoke: "/api/dashboard/steps/:stepId/revoke",
  findRevokes: "/api/dashboard/revokes",
  findTools: "/api/dashboard/admin/tools",
  getTool: "/api/dashboard/admin/tools/:name",
  updateTool: "/api/dashboard/admin/tools/:name",
  decideToolProposal: "/api/dashboard/admin/tools/:name/proposal",
  getSsoSettings: "/api/dashboard/admin/sso",
  saveGroupRoles: "/api/dashboard/admin/sso/group-roles",
  createScimToken: "/api/dashboard/admin/sso/scim-tokens",
  revokeScimToken: "/api/dashboard/admin/sso/scim-tokens/revoke",
  setBreakGlass: "/api/dashboard/admin/users/break-glass",
} as const;

/**
 * A dashboard URL: the path's `:name` parameters filled, URL-encoded, and the query string appended
 * when it has anything in it (`dashboardUrl(DashboardPath.findRuns, {}, "status=RUNNING")`).
 */
export function dashboardUrl(path: (typeof DashboardPath)[keyof typeof DashboardPath], params: Record<string, string> = {}, query = ""): string {
  const filled = fillPath(path, params);
  const search = query.replace(/^\?/, "");
  return search ? `${filled}?${search}` : filled;
}
