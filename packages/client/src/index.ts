/**
 * @sagaboard/client: the agent side of Sagaboard. Define tools, run them through the saga log of a
 * Sagaboard server (`new SagaEngine({ store: new HttpSagaStore({ baseUrl, token }), registry })`),
 * declare a team's tools, commit an approved plan, and run a worker for the team's own connectors.
 * Built from the same source files the server runs; nothing in it loads a database or a web framework.
 */
export { SagaEngine, type SagaEngineOptions } from "@/lib/saga/engine";
export type { RunContext, CallOutcome, CommitPlanResult, PivotRequest, ProposedPlanItem } from "@/lib/saga/run-context";
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
} from "@/lib/saga/tools";
export { SagaError, SagaErrorCode, ToolRejected, ToolOutcomeUnknown, ToolCallFailed, ApprovalRequiredError, type FieldIssue } from "@/lib/saga/errors";
export { ToolClass, StepStatus, RunStatus, PivotStatus, EscalationKind, EscalationStatus, Phase } from "@/lib/saga/vocabulary";
export type { PivotRecord, RunRecord, StepRecord, EscalationRecord } from "@/lib/saga/store";
export type { SagaServer, AgentPort, CallPort, PivotPort, UnwindPort } from "@/lib/saga/agent-port";
export { HttpSagaStore, type HttpSagaStoreOptions } from "@/lib/agent/client/http-store";
export { HttpTaskQueue } from "@/lib/agent/client/http-task-queue";
export { SagaboardApiError, type TransportOptions } from "@/lib/agent/client/transport";
export { declareTools, manifestOf, type DeclarationExtras } from "@/lib/agent/client/declare-tools";
export type { TDeclarationResult, TToolManifest } from "@/lib/protocol/manifest";
export { Worker, type WorkerOptions, type TaskTracer } from "@/lib/agent/worker";
export type { WorkerEngine } from "@/lib/agent/worker-tasks";
export { WorkerTaskKind } from "@/lib/protocol/tasks/vocabulary";
