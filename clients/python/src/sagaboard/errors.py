"""What the client raises: the server's refusals, and a tool call's outcomes that are not a result.

The names are the TypeScript client's (packages/client/src/agent/client/transport.ts, packages/client/src/saga/errors.ts), so a team
with agents in both languages reads one vocabulary. The names this package used before stay as
aliases: SagaboardError, Rejected, ApprovalRequired.
"""
from __future__ import annotations

from typing import Any, List, Optional

from .tools import Json

SAGA_ERROR_CODES = (
    "UNKNOWN_TOOL", "INVALID_ARGS", "INVALID_TOOL_DEFINITION", "RUN_NOT_FOUND", "STEP_NOT_FOUND", "PIVOT_NOT_FOUND",
    "ESCALATION_NOT_FOUND", "STEP_UNRESOLVED", "DETERMINISM", "RUN_CLOSED", "PIVOT_CONFLICT", "CONFLICT",
    "ESCALATION_CONFLICT", "TOOL_DISABLED", "STEP_NOT_IN_FLIGHT", "RUN_NOT_SETTLED", "PIVOT_NOT_APPROVED",
    "PLAN_ALREADY_COMMITTED", "PLAN_ITEM_MISMATCH", "PLAN_ORDER", "OUTCOME_CONFLICT",
)
"""The saga engine's closed list of codes (packages/client/src/saga/errors.ts's SagaErrorCode; npm test checks the two agree)."""


class SagaboardApiError(Exception):
    """The server refused a request: `code` is from the API's closed list, `details` name the fields, `extra`
    holds the error body's other members (`escalationId`, `reason`)."""

    def __init__(self, status: int, code: str, message: str, details: Optional[List[Json]] = None, extra: Optional[Json] = None) -> None:
        super().__init__(f"{code} ({status}): {message}")
        self.status, self.code, self.message, self.details = status, code, message, details or []
        self.extra: Json = extra or {}


class SagaError(SagaboardApiError):
    """A refusal of the saga engine itself (a code of SAGA_ERROR_CODES: RUN_CLOSED, PLAN_ORDER, ...);
    `issues` are the fields at fault. Still a SagaboardApiError, so one `except` catches every refusal."""

    @property
    def issues(self) -> List[Json]:
        """The fields at fault, as the engine names them (the same list as `details`)."""
        return self.details


def api_error(status: int, body: Any, fallback: str) -> SagaboardApiError:
    """The error for a refusal's parsed body (`{"error": {"code", "message", "details", ...}}`): a SagaError
    for the engine's codes; `fallback` is the message when the body has none (a proxy's HTML page)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        error = {}
    code, message = str(error.get("code", f"HTTP_{status}")), str(error.get("message", fallback))
    extra = {k: v for k, v in error.items() if k not in ("code", "message", "details")}
    kind = SagaError if code in SAGA_ERROR_CODES else SagaboardApiError
    return kind(status, code, message, error.get("details"), extra)


class ToolRejected(Exception):
    """Raise from a tool when the provider said no (a 4xx): nothing happened. `retryable` for a 429."""

    def __init__(self, reason: str, message: str = "", retryable: bool = False) -> None:
        super().__init__(message or reason)
        self.reason, self.message, self.retryable = reason, message or reason, retryable


class ToolOutcomeUnknown(Exception):
    """The call may or may not have happened (timeout, reset, 5xx). Call again: it is reconciled first."""

    def __init__(self, tool: str, step_idx: int, step_key: str, cause: Optional[BaseException] = None) -> None:
        super().__init__(f"{tool} (step {step_idx}): outcome unknown; call it again to reconcile key {step_key}")
        self.tool, self.step_idx, self.step_key, self.cause = tool, step_idx, step_key, cause


class ToolCallFailed(Exception):
    """The provider refused the call; the failure is recorded and replayed on resume."""

    def __init__(self, tool: str, step_idx: int, reason: str, message: str) -> None:
        super().__init__(f"{tool} (step {step_idx}) failed: {reason}: {message}")
        self.tool, self.step_idx, self.reason, self.message = tool, step_idx, reason, message


class ApprovalRequiredError(Exception):
    """A person decides first (a pivot waits, or the call is held). Wait, then call again."""

    def __init__(self, tool: str, answer: Json) -> None:
        super().__init__(f"{tool}: {answer.get('message')}")
        self.tool, self.answer, self.reason = tool, answer, answer.get("reason")
        self.escalation_id, self.pivot_id = answer.get("escalationId"), answer.get("pivotId")


SagaboardError = SagaboardApiError
"""The former name of SagaboardApiError."""
Rejected = ToolRejected
"""The former name of ToolRejected."""
ApprovalRequired = ApprovalRequiredError
"""The former name of ApprovalRequiredError."""
