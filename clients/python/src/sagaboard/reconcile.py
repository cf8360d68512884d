"""Reconciling a step whose outcome is unknown: its key is looked up in the real system and reported."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .tools import Json, Tool, external_ref

if TYPE_CHECKING:
    from .client import Sagaboard


class _LookupError:
    """A lookup that could not answer (it kept failing, or the tool has none): the reconcile body says why."""

    def __init__(self, message: str) -> None:
        self.message = message


def reconcile(sb: Sagaboard, t: Tool, step: Json) -> Json:
    """Looks an unsettled step's key up and reports it; absent twice (search indexes lag) means it never happened."""
    settled: Json = sb.request("POST", f"/api/v1/steps/{step['id']}/reconcile", look_up(sb, t, step))["step"]
    return settled


def look_up(sb: Sagaboard, t: Tool, step: Json) -> Json:
    """Looks a step's key up (again after the search lag when absent): found, absent, or the lookup failing, as the reconcile body."""
    found, lookups = _lookup(sb, t, step), 1
    if found is None:
        time.sleep(sb.recheck_after)
        found, lookups = _lookup(sb, t, step), 2
    body: Json
    if isinstance(found, _LookupError):
        body = {"found": None, "message": found.message, "attempts": sb.max_attempts}
    elif found is None:
        body = {"found": False, "lookups": lookups}
    else:
        body = {"found": True, "externalRef": external_ref(found), "result": found, "lookups": lookups}
    return body


def _lookup(sb: Sagaboard, t: Tool, step: Json) -> Any:
    if t.lookup is None:  # declared without one: the server never asks, but say so rather than crash
        return _LookupError(f"{t.name} has no lookup, so its key cannot be looked up")
    last = None
    for attempt in range(1, sb.max_attempts + 1):
        try:
            return t.lookup(step["stepKey"], step["args"])
        except Exception as e:
            last = _LookupError(str(e) or type(e).__name__)
            if attempt < sb.max_attempts:
                time.sleep(sb.backoff * 2 ** (attempt - 1))
    return last
