/**
 * `@sagaboard/client/wire`: the agent API one level down, for a tool that speaks it itself rather than
 * through `SagaEngine` (the MCP gateway is one): the endpoint contracts, the HTTP transport, the call
 * commands over HTTP with their outcome pipeline, the key and hash functions both sides compute, W3C
 * trace context, and the messages the commands exchange. The ports between an engine and whoever
 * decides are named here (not at the root) so declarations that reach them stay nameable. An agent
 * needs the root export, not this.
 */
export * as declarationsApi from "./protocol/contracts/declarations";
export * as callsApi from "./protocol/contracts/calls";
export * as runsApi from "./protocol/contracts/runs";
export { fillPath } from "./protocol/endpoint";
export { DATE_FIELDS, fromWire } from "./protocol/schemas/saga";
export { definitionHash } from "./protocol/manifest";
export { isTraceparent, withTraceparent, currentTraceparent } from "./protocol/trace-scope";
export { Transport, SagaboardApiError, type TransportOptions } from "./agent/client/transport";
export { httpCallPort } from "./agent/client/http-calls";
export { OutcomePipeline } from "./agent/client/outcome-pipeline";
export { argsHash } from "./saga/keys";
export type { AgentPort, CallPort, PivotPort, SagaServer, UnwindPort } from "./saga/agent-port";
export type { AuditEventRecord, AuditInput, CorrectionRecord, NewRun, SagaStore } from "./saga/store";
export type { ClaimedTask, TaskQueue, WorkerTaskRecord } from "./protocol/tasks/task";
export type { TDeclaredTool } from "./protocol/manifest";
export type { BeginCallAnswer, CallOutcomeReport, PlanItemAddress, ReconcileReport } from "./saga/messages";
export type { CompensationPlan } from "./saga/tools";
