"""Sagaboard for Python agents: every side-effecting tool call goes through the saga log.

Standard library only: `pip install clients/python` (offline; see its README). The server owns
every decision: it assigns the step, derives the idempotency key, hashes the arguments, reads the
tool table and runs the pivot gate. This client keeps one number per run (the cursor), calls the
tool when the server says "call", looks the key up when it says "reconcile", and returns the recorded
result when it says "replay".

    sb = Sagaboard(url, token)

    @sb.tool("COMPENSATABLE", lookup=find_booking, compensate=("cancel_booking", lambda a: {"city": a["city"]}))
    def book_hotel(call, city, nights):
        return hotels.book(city, nights, idempotency_key=call.key)   # -> {"id": ..., ...}

    sb.declare()                                  # into the token's namespace, unreviewed until an admin accepts
    run = sb.start_run("Trip to Lisbon")          # or sb.resume(run_id) after a crash
    run.call("book_hotel", city="Lisbon", nights=3)
"""
from __future__ import annotations

from .client import Sagaboard
from .errors import (
    SAGA_ERROR_CODES, ApprovalRequired, ApprovalRequiredError, Rejected, SagaboardApiError, SagaboardError, SagaError, ToolCallFailed,
    ToolOutcomeUnknown, ToolRejected,
)
from .reconcile import look_up, reconcile
from .run import Run
from .tools import CLASSES, Call, Compensation, F, Json, Lookup, Send, Tool, Verify, args_schema
from .worker import Worker

__all__ = [
    "Sagaboard", "Run", "Worker", "Call", "Tool",
    "SagaboardApiError", "SagaError", "ToolRejected", "ToolOutcomeUnknown", "ToolCallFailed", "ApprovalRequiredError", "SAGA_ERROR_CODES",
    "SagaboardError", "Rejected", "ApprovalRequired",  # the former names of SagaboardApiError, ToolRejected, ApprovalRequiredError
    "args_schema", "reconcile", "look_up", "CLASSES",
]
