"""What the client raises: the server's refusals, and a tool call's outcomes that are not a result."""
from __future__ import annotations

from typing import List, Optional

from .tools import Json


class SagaboardError(Exception):
    """The server refused a request: `code` is from the API's closed list, `details` name the fields."""

    def __init__(self, status: int, code: str, message: str, details: Optional[List[Json]] = None) -> None:
        super().__init__(f"{code} ({status}): {message}")
        self.status, self.code, self.message, self.details = status, code, message, details or []


class Rejected(Exception):
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


class ApprovalRequired(Exception):
    """A person decides first (a pivot waits, or the call is held). Wait, then call again."""

    def __init__(self, tool: str, answer: Json) -> None:
        super().__init__(f"{tool}: {answer.get('message')}")
        self.tool, self.answer, self.reason = tool, answer, answer.get("reason")
        self.escalation_id, self.pivot_id = answer.get("escalationId"), answer.get("pivotId")
