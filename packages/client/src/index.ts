/**
 * @sagaboard/client: the agent side of Sagaboard. Define tools, run them through the saga log of a
 * Sagaboard server (`new SagaEngine({ store: new HttpSagaStore({ baseUrl, token }), registry })`),
 * declare a team's tools, commit an approved plan, and run a worker for the team's own connectors.
 * Built from its own folder (src/), the same files the server imports; nothing in it loads a database
 * or a web framework. The ports between the engine and whoever decides, and the decisions people make
 * (pivots, held calls), are the server's: not exported. The adapters are subpaths
 * (`@sagaboard/client/openai-agents`, `/langgraph`, `/ai-sdk`); the types they share are here too, so a
 * team's own declarations that wrap them can name them.
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
export type { Actor, PivotRecord, RunRecord, StepRecord, EscalationRecord } from "./saga/store";
export type { ReconcileReport, UnwindReport } from "./saga/messages";
export type { UnwindOptions } from "./saga/unwind";
export { HttpSagaStore, type HttpSagaStoreOptions } from "./agent/client/http-store";
export { HttpTaskQueue } from "./agent/client/http-task-queue";
export { SagaboardApiError, type TransportOptions } from "./agent/client/transport";
export { declareTools, manifestOf, type DeclarationExtras } from "./agent/client/declare-tools";
export type { TDeclarationResult, TToolManifest } from "./protocol/manifest";
export { Worker, type WorkerOptions, type TaskTracer } from "./agent/worker";
export type { WorkerEngine } from "./agent/worker-tasks";
export { WorkerTaskKind } from "./protocol/tasks/vocabulary";
export type { HeldCall, JournaledOutcome, JournaledRun, JournaledSagaRun, JournalEntry, RunJournal, SagaToolPolicy } from "./agent/adapters/run-journal";
