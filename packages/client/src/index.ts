/**
 * @sagaboard/client: the agent side of Sagaboard. Define tools, run them through the saga log of a
 * Sagaboard server (`new SagaEngine({ store: new HttpSagaStore({ baseUrl, token }), registry })`),
 * declare a team's tools, commit an approved plan, and run a worker for the team's own connectors.
 * Built from the same source files the server runs; nothing in it loads a database or a web framework.
 */
export { SagaEngine, type SagaEngineOptions } from "./saga/engine";
export type { RunContext, CallOutcome, CommitPlanResult, PivotRequest, ProposedPlanItem } from "./saga/run-context";
export {
  defineTool,
  defineCompensator,
  ToolRegistry,
  type ToolDefinition,
  type CompensatorDefinition,
  type CompensationSpec,
  type CompensationContext,
  type CompensationCheck,
  type CorrectionDraft,
  type Json,
  type ToolCallContext,
  type ToolEffect,
} from "./saga/tools";
export { SagaError, SagaErrorCode, ToolRejected, ToolOutcomeUnknown, ToolCallFailed, ApprovalRequiredError, type FieldIssue } from "./saga/errors";
export { ToolClass, StepStatus, RunStatus, PivotStatus, EscalationKind, EscalationStatus, Phase } from "./saga/vocabulary";
export type { PivotRecord, RunRecord, StepRecord, EscalationRecord } from "./saga/store";
export type { SagaServer, AgentPort, CallPort, PivotPort, UnwindPort } from "./saga/agent-port";
export { HttpSagaStore, type HttpSagaStoreOptions } from "./agent/client/http-store";
export { HttpTaskQueue } from "./agent/client/http-task-queue";
export { SagaboardApiError, type TransportOptions } from "./agent/client/transport";
export { declareTools, manifestOf, type DeclarationExtras } from "./agent/client/declare-tools";
export type { TDeclarationResult, TToolManifest } from "./protocol/manifest";
export { Worker, type WorkerOptions, type TaskTracer } from "./agent/worker";
export type { WorkerEngine } from "./agent/worker-tasks";
export { WorkerTaskKind } from "./protocol/tasks/vocabulary";
