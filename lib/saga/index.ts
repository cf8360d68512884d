/** The saga engine's public surface. */
export * from "./clock";
export * from "./crash-points";
export * from "./engine";
export * from "./errors";
export { ApprovalReason, type GateDecision } from "./gate";
export * from "./ids";
export * from "./keys";
export * from "./memory-store";
export * from "./metrics";
export * from "./store";
export * from "./tools";
export type { UnwindReport } from "./unwind";
export * from "./vocabulary";
