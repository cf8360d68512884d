import { SagaError } from "@/lib/saga/errors";

export { ApiError } from "@/lib/api/errors";

/** The run was not found, or belongs to another agent (indistinguishable on purpose). */
export function runNotFound(runId: string): SagaError {
  return new SagaError("RUN_NOT_FOUND", `Run ${runId} does not exist for this agent token.`);
}
