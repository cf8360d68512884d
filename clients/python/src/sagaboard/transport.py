"""The HTTP side of the client: one request to the server, its retries, and the trace context it carries."""
from __future__ import annotations

import contextvars
import json
import re
import time
import urllib.error
import urllib.request
import uuid
from typing import Any, Callable, Dict, Optional

from .errors import api_error

# The trace context of the worker task in progress (its payload's `traceparent`): sent with the task's
# requests when the client's own `traceparent` gives none, so the server's spans join the run's trace.
task_traceparent: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar("sagaboard_task_traceparent", default=None)
TRACEPARENT = re.compile(r"^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$")


class Transport:
    """One agent token's connection to a Sagaboard server: how requests are sent, retried and traced."""

    def __init__(self, url: str, token: str, *, backoff: float, timeout: float, traceparent: Optional[Callable[[], Optional[str]]]) -> None:
        self.url, self.token = url.rstrip("/"), token
        self.traceparent = traceparent
        self.backoff, self.timeout = backoff, timeout

    def request(self, method: str, path: str, body: Any = None, *, idempotent: bool = False, timeout: Optional[float] = None) -> Any:
        """One API request; raises SagaboardApiError (SagaError for the engine's codes) with the server's code. `idempotent` retries under one Idempotency-Key."""
        headers: Dict[str, str] = {"authorization": f"Bearer {self.token}", "accept": "application/json"}
        data = None
        if body is not None:
            data, headers["content-type"] = json.dumps(body).encode(), "application/json"
        if idempotent:
            headers["idempotency-key"] = str(uuid.uuid4())  # the same key on every retry: applied once
        parent = (self.traceparent() if self.traceparent else None) or task_traceparent.get()
        if parent:
            headers["traceparent"] = parent
        for attempt in range(1, 4):
            req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=timeout or self.timeout) as res:
                    return json.loads(res.read() or b"null")
            except urllib.error.HTTPError as e:
                try:
                    payload = json.loads(e.read() or b"null")
                except ValueError:  # not Sagaboard's JSON (a proxy's page): the status alone speaks
                    payload = None
                if e.code >= 500 and idempotent and attempt < 3:
                    # A 503 says when to come back (Sagaboard's database is away for a moment): wait at least that.
                    time.sleep(max(self.backoff * attempt, _retry_after(e)))
                    continue
                raise api_error(e.code, payload, str(e)) from None
            except (urllib.error.URLError, TimeoutError, ConnectionError):
                if not idempotent or attempt == 3:
                    raise
                time.sleep(self.backoff * attempt)
        raise AssertionError("unreachable")


def _retry_after(e: urllib.error.HTTPError) -> float:
    """The Retry-After header's delay in seconds (seconds form only), capped at 30; 0 without one."""
    try:
        return min(30.0, max(0.0, float(e.headers.get("retry-after") or 0)))
    except ValueError:
        return 0.0
