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

import contextvars
import inspect
import json
import re
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

# The trace context of the worker task in progress (its payload's `traceparent`): sent with the task's
# requests when the client's own `traceparent` gives none, so the server's spans join the run's trace.
_task_traceparent: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar("sagaboard_task_traceparent", default=None)
_TRACEPARENT = re.compile(r"^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$")

__all__ = [
    "Sagaboard", "Run", "Worker", "Call", "Tool", "Rejected", "SagaboardError", "ToolOutcomeUnknown", "ToolCallFailed", "ApprovalRequired",
    "args_schema", "reconcile", "look_up", "CLASSES",
]

Json = Dict[str, Any]
"""A JSON object as the server sends and receives it."""
Lookup = Callable[[str, Json], Optional[Json]]
"""lookup(step_key, args): the provider's record made under that idempotency key, or None when there is none."""
Compensation = Tuple[str, Callable[[Json], Json]]
"""(compensator name, build_args): how a step is undone, built from the call's arguments."""
Send = Callable[..., Any]
"""send(target, key, **args): sends a compensation under its own key; returns the provider's record."""
Verify = Callable[..., bool]
"""verify(target, key, **args): reads the real system back; True when the compensation is in effect."""
F = TypeVar("F", bound=Callable[..., Any])

CLASSES = ("PURE", "REVERSIBLE", "COMPENSATABLE", "IRREVERSIBLE")


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


@dataclass
class Call:
    """What a tool receives: send `key` as the provider's idempotency key and `metadata` as its labels."""

    key: str
    """The step's idempotency key: send it to the provider (header, label, metadata)."""
    metadata: Json
    """Labels for the provider's record (sagaboard_step_key, run id...)."""
    run_id: str
    """The run this call belongs to."""


@dataclass
class Tool:
    """A tool this process registered with `Sagaboard.tool`."""

    name: str
    """Its name in this process (the server's is `<namespace>.<name>` once declared)."""
    cls: str
    """One of CLASSES: PURE, REVERSIBLE, COMPENSATABLE, IRREVERSIBLE."""
    fn: Callable[..., Any]
    """fn(call, **args): calls the provider with call.key as the idempotency key."""
    lookup: Optional[Lookup] = None
    """Finds the provider's record by key (reconcile cannot work without it)."""
    compensate: Optional[Compensation] = None
    """(compensator name, build_args), for REVERSIBLE and COMPENSATABLE tools."""
    correction: Optional[Json] = None
    """{"subject", "body"} with {{arg}} placeholders, for IRREVERSIBLE tools."""
    audience: List[str] = field(default_factory=list)
    """Who sees the effect (e.g. "customer"), as the tool table records it."""
    owner: Optional[str] = None
    """The team that answers for the tool."""


_JSON_TYPES: Dict[Any, Json] = {str: {"type": "string"}, int: {"type": "integer"}, float: {"type": "number"}, bool: {"type": "boolean"}, dict: {"type": "object"}, list: {"type": "array"}}


def args_schema(fn: Callable[..., Any]) -> Json:
    """The JSON Schema of a tool's arguments, from its signature after `call`: each parameter a
    property (typed when annotated with str, int, float, bool, dict or list), the ones without a
    default required, nothing else accepted unless it takes **kwargs."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    try:  # string annotations (`from __future__ import annotations`) resolved; Python 3.9 has no eval_str
        hints = typing.get_type_hints(fn)
    except Exception:  # an annotation that does not resolve: that argument is simply untyped
        hints = {}
    named = [p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    return {
        "type": "object",
        "properties": {p.name: _JSON_TYPES.get(hints.get(p.name), {}) for p in named},
        "required": [p.name for p in named if p.default is p.empty],
        "additionalProperties": any(p.kind == p.VAR_KEYWORD for p in params),
    }


def _ref(result: Any) -> Optional[str]:
    return str(result["id"]) if isinstance(result, dict) and result.get("id") is not None else None


class Sagaboard:
    """A connection to a Sagaboard server with one agent token, and the tools this process holds."""

    def __init__(self, url: str, token: str, *, recheck_after: float = 2.0, max_attempts: int = 3, backoff: float = 0.2, timeout: float = 30.0,
                 traceparent: Optional[Callable[[], Optional[str]]] = None, outcome_linger: float = 0.25) -> None:
        """`traceparent`: returns the W3C traceparent of the agent's current span, sent with every request so
        the server's spans join the agent's trace. With OpenTelemetry: `lambda: (lambda c: (inject(c), c.get("traceparent"))[1])({})`
        (`from opentelemetry.propagate import inject`).

        `outcome_linger`: how long (seconds) a confirmed call's outcome may wait to go to the server with the
        run's next call or its completion, so a step costs one request; after that it is sent alone. 0 sends
        every outcome in its own request before the call returns."""
        self.outcome_linger = outcome_linger
        self.url, self.token = url.rstrip("/"), token
        self.traceparent = traceparent
        self.recheck_after, self.max_attempts, self.backoff, self.timeout = recheck_after, max_attempts, backoff, timeout
        self.tools: Dict[str, Tool] = {}
        self.compensators: Dict[str, Tuple[Send, Verify]] = {}
        self.namespace: Optional[str] = None

    # -- registration ---------------------------------------------------------------------------
    def tool(self, cls: str, *, name: Optional[str] = None, lookup: Optional[Lookup] = None, compensate: Optional[Compensation] = None,
             correction: Optional[Json] = None, audience: Optional[List[str]] = None, owner: Optional[str] = None) -> Callable[[F], F]:
        """Registers a tool (a decorator). Logged classes need `lookup`; REVERSIBLE/COMPENSATABLE need `compensate`."""
        if cls not in CLASSES:
            raise ValueError(f"class must be one of {', '.join(CLASSES)}, not {cls!r}")

        def register(fn: F) -> F:
            tool_name = name or fn.__name__
            if cls != "PURE" and lookup is None:
                raise ValueError(f"{tool_name}: a {cls} tool needs a lookup by key (reconcile cannot work without it)")
            if cls in ("REVERSIBLE", "COMPENSATABLE") and compensate is None:
                raise ValueError(f"{tool_name}: a {cls} tool needs compensate=(compensator, build_args), written before any call")
            if cls == "IRREVERSIBLE" and correction is None:
                raise ValueError(f"{tool_name}: an IRREVERSIBLE tool needs a correction template")
            self.tools[tool_name] = Tool(tool_name, cls, fn, lookup, compensate, correction, list(audience or []), owner)
            return fn

        return register

    def compensator(self, name: str, *, verify: Verify) -> Callable[[F], F]:
        """Registers a compensator a worker runs (a decorator on its send function).

        send(target, key, **args) sends it under `key` (the compensation's own idempotency key) and
        verify(target, key, **args) reads the real system back: True when it is in effect. `target`
        is the step being undone: its stepKey, externalRef, tool and args.
        """

        def register(fn: F) -> F:
            self.compensators[name] = (fn, verify)
            return fn

        return register

    def declare(self) -> Json:
        """Declares the registered tools into the token's namespace; they are held until an admin accepts them."""
        tools = []
        for t in self.tools.values():
            entry: Json = {"name": t.name, "class": t.cls, "lookup": t.lookup is not None, "argsSchema": args_schema(t.fn)}
            if t.compensate:
                entry["compensation"] = {"tool": t.compensate[0]}
            if t.correction:
                entry["correction"] = t.correction
            if t.audience:
                entry["audience"] = t.audience
            if t.owner:
                entry["owner"] = t.owner
            tools.append(entry)
        compensators = sorted({t.compensate[0] for t in self.tools.values() if t.compensate})
        manifest = {"tools": tools, "compensators": [{"name": c} for c in compensators]}
        result: Json = self.request("POST", "/api/v1/tools/declarations", manifest)
        self.namespace = result["namespace"]
        return result

    def local(self, name: str) -> str:
        """The name this process registered a tool under (the server's name without the namespace)."""
        return name.split(".", 1)[1] if self.namespace and name.startswith(self.namespace + ".") else name

    def qualified(self, name: str) -> str:
        """The name the server knows a tool or compensator by (`<namespace>.<name>` once declared)."""
        ours = name in self.tools or any(t.compensate and t.compensate[0] == name for t in self.tools.values())
        if ours and self.namespace and not name.startswith(self.namespace + "."):
            return f"{self.namespace}.{name}"
        return name

    # -- runs -----------------------------------------------------------------------------------
    def start_run(self, title: str, on_behalf_of: Optional[str] = None) -> Run:
        """Starts a run (retried safely: one run however often the request is sent)."""
        body = {"title": title, **({"onBehalfOf": on_behalf_of} if on_behalf_of else {})}
        return Run(self, self.request("POST", "/api/v1/runs", body, idempotent=True)["run"]["id"])

    def resume(self, run_id: str) -> Run:
        """Continues a run from its log alone: recorded steps return their recorded results."""
        self.request("GET", f"/api/v1/runs/{run_id}")
        return Run(self, run_id)

    # -- HTTP -----------------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, *, idempotent: bool = False, timeout: Optional[float] = None) -> Any:
        """One API request; raises SagaboardError with the server's code. `idempotent` retries under one Idempotency-Key."""
        headers: Dict[str, str] = {"authorization": f"Bearer {self.token}", "accept": "application/json"}
        data = None
        if body is not None:
            data, headers["content-type"] = json.dumps(body).encode(), "application/json"
        if idempotent:
            headers["idempotency-key"] = str(uuid.uuid4())  # the same key on every retry: applied once
        parent = (self.traceparent() if self.traceparent else None) or _task_traceparent.get()
        if parent:
            headers["traceparent"] = parent
        for attempt in range(1, 4):
            req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=timeout or self.timeout) as res:
                    return json.loads(res.read() or b"null")
            except urllib.error.HTTPError as e:
                payload = json.loads(e.read() or b"{}").get("error", {})
                if e.code >= 500 and idempotent and attempt < 3:
                    # A 503 says when to come back (Sagaboard's database is away for a moment): wait at least that.
                    time.sleep(max(self.backoff * attempt, _retry_after(e)))
                    continue
                raise SagaboardError(e.code, payload.get("code", "HTTP_%d" % e.code), payload.get("message", str(e)), payload.get("details")) from None
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


class Run:
    """One run as this process drives it: call tools, ask for the pivot, finish."""

    def __init__(self, sb: Sagaboard, run_id: str) -> None:
        self.sb, self.id, self.cursor = sb, run_id, 0
        # A confirmed outcome waiting for this run's next call or completion (`previous`), and the timer that
        # sends it alone after `outcome_linger`; the lock is held while either sends it.
        self._waiting: Optional[Json] = None
        self._timer: Optional[threading.Timer] = None
        self._lock = threading.Lock()
        self._refused: Optional[SagaboardError] = None

    # -- outcomes sent with the next command ----------------------------------------------------
    def _hold(self, previous: Json) -> None:
        with self._lock:
            self._waiting = previous
            self._timer = threading.Timer(self.sb.outcome_linger, self._send_alone, (previous,))
            self._timer.start()

    def _send_alone(self, previous: Json) -> None:
        with self._lock:
            if self._waiting is not previous:
                return  # the next command took it
            self._waiting = None
            try:
                self._post_outcome(previous)
            except SagaboardError as e:
                if e.status < 500:
                    self._refused = e  # the log disagrees: the run's next command raises it
                else:
                    self._waiting = previous  # unanswered: it goes with the next command
            except Exception:
                self._waiting = previous

    def _post_outcome(self, previous: Json) -> None:
        body = {k: v for k, v in previous.items() if k != "stepId"}
        self.sb.request("POST", f"/api/v1/steps/{previous['stepId']}/outcome", body)

    def _take(self) -> Optional[Json]:
        """The waiting outcome, for the request about to be sent (which then carries it as `previous`)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._refused is not None:
                refused, self._refused = self._refused, None
                raise refused
            previous, self._waiting = self._waiting, None
            return previous

    def _give_back(self, previous: Optional[Json], error: BaseException) -> None:
        """Puts an outcome back when its request got no answer (the network, a 5xx); sending it again is answered from the log."""
        if previous is not None and not (isinstance(error, SagaboardError) and error.status < 500):
            with self._lock:
                if self._waiting is None:
                    self._waiting = previous

    def flush(self) -> None:
        """Sends the confirmed outcome still waiting for this run's next call, now. Reads and pivots do it first."""
        previous = self._take()
        if previous is not None:
            try:
                self._post_outcome(previous)
            except BaseException as e:
                self._give_back(previous, e)
                raise

    def call(self, tool: str, **args: Any) -> Any:
        """Calls a tool through the saga log and returns its result (recorded or new)."""
        t = self.sb.tools.get(tool)
        if t is None:
            raise KeyError(f"tool {tool!r} is not registered in this process; known: {', '.join(self.sb.tools) or 'none'}")
        if t.cls == "PURE":
            return t.fn(Call("", {}, self.id), **args)
        return self._call(self.sb.qualified(tool), t, args)

    def _call(self, server_name: str, t: Tool, args: Json, plan_item: Optional[Json] = None) -> Any:
        """The logged call of `t` under the name the server knows it by (or of an approved plan's item)."""
        tool = t.name
        address = {"planItem": plan_item} if plan_item else {"cursor": self.cursor}
        body: Json = {"tool": server_name, "args": args, **address}
        if t.compensate:
            try:
                body["compensation"] = {"tool": self.sb.qualified(t.compensate[0]), "args": t.compensate[1](args)}
            except Exception:  # unbuildable for these args: the server holds the call for a person
                body["compensation"] = None
        if t.audience:
            body["audience"] = t.audience
        for _ in range(5):
            previous = self._take()
            try:
                answer = self.sb.request("POST", f"/api/v1/runs/{self.id}/calls", {**body, "previous": previous} if previous else body, idempotent=True)
            except BaseException as e:
                self._give_back(previous, e)
                raise
            if not plan_item:  # a plan item is found by its pivot; the cursor is for free-form calls
                self.cursor = body["cursor"] = answer["cursor"]
            kind, step = answer["answer"], answer.get("step")
            if kind == "replay":
                return step["result"]
            if kind == "failed":
                error = step.get("error") or {}
                raise ToolCallFailed(tool, step["stepIdx"], error.get("reason", "rejected"), error.get("message", ""))
            if kind == "held":
                raise ApprovalRequired(tool, answer)
            if kind == "reconcile":
                # A commit is answered with whichever step is unsettled first: look it up with its own tool.
                owner = t if step["tool"] == server_name else self.sb.tools[self.sb.local(step["tool"])]
                settled = self._reconcile(owner, step)
                if settled["status"] in ("INTENDED", "UNKNOWN"):
                    raise ToolOutcomeUnknown(owner.name, step["stepIdx"], step["stepKey"])
                continue  # CONFIRMED now replays; NOT_EXECUTED retries under the same key
            result = self._execute(t, args, step, answer["send"])
            if result is not _MOVED:
                return result
        raise SagaboardError(409, "CONFLICT", f"step {self.cursor} kept changing while {tool} was called; call it again")

    def _execute(self, t: Tool, args: Json, step: Json, send: Json) -> Any:
        call = Call(send["idempotencyKey"], send["metadata"], self.id)
        for attempt in range(1, self.sb.max_attempts + 1):
            try:
                result = t.fn(call, **args)
            except Rejected as e:
                if e.retryable and attempt < self.sb.max_attempts:
                    time.sleep(self.sb.backoff * 2 ** (attempt - 1))
                    continue
                if self._report(step, {"outcome": "failed", "reason": e.reason, "message": e.message, "retryable": e.retryable, "attempts": step["attempts"] + attempt}) is _MOVED:
                    return _MOVED
                self.cursor = step["stepIdx"] + 1
                raise ToolCallFailed(t.name, step["stepIdx"], e.reason, e.message) from None
            except Exception as e:  # timeout, reset, 5xx, anything else: unknown, the safe default
                self._report(step, {"outcome": "unknown", "message": str(e) or type(e).__name__, "attempts": step["attempts"] + attempt})
                raise ToolOutcomeUnknown(t.name, step["stepIdx"], step["stepKey"], e) from e
            confirmed = {"outcome": "confirmed", "externalRef": _ref(result), "result": result, "attempts": step["attempts"] + attempt}
            if self.sb.outcome_linger > 0:
                self._hold({"stepId": step["id"], **confirmed})  # sent with the run's next call or completion
            elif self._report(step, confirmed) is _MOVED:
                return _MOVED
            self.cursor = step["stepIdx"] + 1
            return result

    def _report(self, step: Json, body: Json) -> Any:
        try:
            return self.sb.request("POST", f"/api/v1/steps/{step['id']}/outcome", body)["step"]
        except SagaboardError as e:
            if e.code == "STEP_NOT_IN_FLIGHT":
                return _MOVED  # someone settled it first: the log wins, begin again
            raise

    def _reconcile(self, t: Tool, step: Json) -> Json:
        return reconcile(self.sb, t, step)

    # -- the pivot ------------------------------------------------------------------------------
    def request_pivot(self, summary: str, plan: List[Tuple[str, Json]]) -> Json:
        """Asks for the one human approval: everything staged so far plus the commit calls [(tool, args)]."""
        body = {"summary": summary, "plan": [{"tool": self.sb.qualified(tool), "args": args} for tool, args in plan]}
        self.flush()
        return self.sb.request("POST", f"/api/v1/runs/{self.id}/pivots", body)["pivot"]

    def wait_pivot(self, pivot_id: str, timeout: float = 300.0) -> Json:
        """Long-polls until the pivot is decided (or `timeout` seconds pass); returns it either way."""
        deadline = time.monotonic() + timeout
        while True:
            wait_ms = int(max(0, min(25.0, deadline - time.monotonic())) * 1000)
            pivot: Json = self.sb.request("GET", f"/api/v1/pivots/{pivot_id}?waitMs={wait_ms}", timeout=wait_ms / 1000 + 30)["pivot"]
            if pivot["status"] != "PENDING" or time.monotonic() >= deadline:
                return pivot

    def commit_plan(self, pivot_id: str) -> Json:
        """Commits an approved plan: its items in plan order, each once whoever else tries, then completes the run.

        Each item's step is found by the pivot and its place in the plan, not by this process's cursor,
        so a fresh process commits without replaying the earlier steps, and whoever commits second gets
        what is done from the log. Returns {"status": "committed", "items": [...], "run": ...},
        {"status": "already_committed"} when the run is COMPLETED, or {"status": "held", "index": i, ...}
        when an item waits for a person (its tool's policy changed since the approval). Raises
        ToolCallFailed (a person decides on the stuck item), ToolOutcomeUnknown (commit again to
        reconcile), SagaboardError PIVOT_NOT_APPROVED / PLAN_ORDER / RUN_CLOSED.
        """
        pivot = self.sb.request("GET", f"/api/v1/pivots/{pivot_id}")["pivot"]
        items: List[Json] = []
        try:
            for index, item in enumerate(pivot["plan"]):
                t = self.sb.tools.get(self.sb.local(item["tool"]))
                if t is None:
                    raise KeyError(f"plan item {index} calls {item['tool']!r}, which this process does not register; register it to commit the plan")
                try:
                    result = self._call(item["tool"], t, item["args"], {"pivotId": pivot_id, "index": index})
                except ApprovalRequired as held:
                    return {"status": "held", "pivotId": pivot_id, "index": index, "answer": held.answer}
                items.append({"index": index, "tool": item["tool"], "result": result})
            return {"status": "committed", "pivotId": pivot_id, "items": items, "run": self.complete()}
        except SagaboardError as e:
            if e.code == "PLAN_ALREADY_COMMITTED":
                return {"status": "already_committed", "pivotId": pivot_id, "message": e.message}
            raise

    def complete(self) -> Json:
        """Finishes the run (with the last call's outcome, when it waits); refused (RUN_NOT_SETTLED) while a step's outcome is unknown."""
        previous = self._take()
        try:
            run: Json = self.sb.request("POST", f"/api/v1/runs/{self.id}/complete", {"previous": previous} if previous else None, idempotent=previous is not None)["run"]
        except BaseException as e:
            self._give_back(previous, e)
            raise
        return run

    def unwind(self, reason: str) -> Json:
        """Asks a worker to pull the run back in reverse (one task per run)."""
        self.flush()
        answer: Json = self.sb.request("POST", f"/api/v1/runs/{self.id}/unwind", {"reason": reason})
        return answer


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
        body = {"found": True, "externalRef": _ref(found), "result": found, "lookups": lookups}
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


class Worker:
    """Pulls runs back for the tools this process holds, with a worker token.

    It claims UNWIND tasks and asks the server what to do next: reconcile a step (look its key up) or
    compensate one (send it under its key, read it back). The server decides the order, what is
    skipped, the escalations, the corrections and the final status. It also answers COMPENSATE tasks
    (a person pulled one step back: the same walk for that step), LOOKUP tasks (a person's "check
    the real system" for a tool whose connector only this process holds: the lookup runs here and
    changes nothing) and, when this process registers a `send_email` tool, SEND_CORRECTION tasks
    (a correction support staff approved: sent here, where the email provider's credentials are),
    and COMMIT_PLAN tasks (an approved plan whose agent went quiet, committed here once a person said so).
    """
    KINDS = ("UNWIND", "COMPENSATE", "LOOKUP", "SEND_CORRECTION", "COMMIT_PLAN")

    def __init__(self, sb: Sagaboard, worker_id: str, lease_ms: int = 30_000) -> None:
        self.sb, self.worker_id, self.lease_ms = sb, worker_id, lease_ms

    def run_once(self, max_tasks: int = 4) -> List[Json]:
        """Claims what is waiting, works it, and returns each task's result."""
        tasks = self.sb.request("POST", "/api/v1/worker/claim", {"workerId": self.worker_id, "max": max_tasks, "leaseMs": self.lease_ms})["tasks"]
        results: List[Json] = []
        for task in tasks:
            parent = (task.get("payload") or {}).get("traceparent") if isinstance(task.get("payload"), dict) else None
            trace = _task_traceparent.set(parent if isinstance(parent, str) and _TRACEPARENT.match(parent) else None)
            try:
                result = self._work(task)
            finally:
                _task_traceparent.reset(trace)
            if result is not None:
                results.append(result)
        return results

    def _work(self, task: Json) -> Optional[Json]:
        """One claimed task: worked and completed (its result), or handed back for another worker (None)."""
        fence = {"attempt": task["attempt"], "workerId": self.worker_id}
        if task["kind"] not in self.KINDS:
            self.sb.request("POST", f"/api/v1/worker/tasks/{task['id']}/fail", {**fence, "error": {"message": f"this worker runs {', '.join(self.KINDS)} tasks, not {task['kind']}"}, "retry": True}, idempotent=True)
            return None
        if task["kind"] == "SEND_CORRECTION" and "send_email" not in self.sb.tools:
            self.sb.request("POST", f"/api/v1/worker/tasks/{task['id']}/fail", {**fence, "error": {"message": "this worker registers no send_email tool, so it cannot send a correction; another worker may"}, "retry": True}, idempotent=True)
            return None
        result: Json
        if task["kind"] == "SEND_CORRECTION":
            result = self.send_correction(task["runId"], task.get("payload") or {})
        elif task["kind"] == "COMMIT_PLAN":
            result = self.commit_plan(task["runId"], (task.get("payload") or {}).get("pivotId"))
        elif task["kind"] == "COMPENSATE":
            result = self.compensate_step(task["stepId"], (task.get("payload") or {}).get("draftedBy"))
        elif task["kind"] == "LOOKUP":
            step = self.sb.request("GET", f"/api/v1/steps/{task['stepId']}")["step"]
            result = {"stepId": step["id"], "lookup": look_up(self.sb, self._tool(step["tool"]), step)}
        else:
            payload = task.get("payload") or {}
            result = self.unwind(task["runId"], payload.get("reason") or "unwind requested", payload.get("skipStepIds"), payload.get("draftedBy"))
        # Completion and failure carry an Idempotency-Key: when the answer is lost after the server
        # recorded it, the re-send is answered "settled" instead of being refused by the task's own fence.
        self.sb.request("POST", f"/api/v1/worker/tasks/{task['id']}/complete", {**fence, "result": result}, idempotent=True)
        return result

    def unwind(self, run_id: str, reason: str, skip_step_ids: Optional[List[str]] = None, drafted_by: Optional[str] = None) -> Json:
        """Unwinds a run as the server says, leaving `skip_step_ids` as they are (a whole-run revoke's steps past their window)."""
        body = {"reason": reason, **({"skipStepIds": skip_step_ids} if skip_step_ids else {}), **({"draftedBy": drafted_by} if drafted_by else {})}
        while True:
            action: Json = self.sb.request("POST", f"/api/v1/runs/{run_id}/unwind/next", body)
            if action["action"] == "done":
                return action
            step = action["step"]
            if action["action"] == "reconcile":
                reconcile(self.sb, self._tool(step["tool"]), step)
            else:
                self._compensate(action)

    def compensate_step(self, step_id: str, drafted_by: Optional[str] = None) -> Json:
        """Pulls one step back: reconcile or compensate it as the server says, until it says done."""
        body = {"draftedBy": drafted_by} if drafted_by else {}
        while True:
            action: Json = self.sb.request("POST", f"/api/v1/steps/{step_id}/compensate/next", body)
            if action["action"] == "done":
                step = action["step"]
                return {"stepId": step["id"], "stepIdx": step["stepIdx"], "tool": step["tool"], "status": step["status"], "compensationState": step["compensationState"], "compensationRef": step.get("compensationRef")}
            if action["action"] == "reconcile":
                reconcile(self.sb, self._tool(action["step"]["tool"]), action["step"])
            else:
                self._compensate(action)

    def send_correction(self, run_id: str, payload: Json) -> Json:
        """Sends a correction a person approved: the `send_email` calls of its run's pivot, exactly as approved, in plan order.

        The server lets each approved call through once: one already sent replays from the log, and one
        a timeout left unknown is looked up by its key before anything is sent again (it raises
        ToolOutcomeUnknown, and the task goes to another attempt, rather than sending blindly).
        """
        if self.sb.request("GET", f"/api/v1/runs/{run_id}")["run"]["status"] == "COMPLETED":
            return {"correctionId": payload.get("correctionId"), "alreadySent": True}
        run, email = Run(self.sb, run_id), self.sb.tools["send_email"]
        sent = []
        for message in payload.get("messages") or []:
            result = run._call("send_email", email, {"to": message["to"], "subject": message["subject"], "body": message["body"]})
            sent.append({"to": message["to"], "messageId": _ref(result)})
        run.complete()
        return {"correctionId": payload.get("correctionId"), "sent": sent}

    def commit_plan(self, run_id: str, pivot_id: str) -> Json:
        """Commits an approved plan whose agent went quiet (a COMMIT_PLAN task): the same commit an agent makes."""
        result = Run(self.sb, run_id).commit_plan(pivot_id)
        if result["status"] == "held":
            raise SagaboardError(409, "APPROVAL_REQUIRED", f"plan item {result['index']} is held for a person: {result['answer'].get('message')}")
        if result["status"] == "already_committed":
            return {"pivotId": pivot_id, "alreadyCommitted": True}
        return {"pivotId": pivot_id, "runStatus": result["run"]["status"], "items": [{"index": i["index"], "tool": i["tool"]} for i in result["items"]]}

    def _tool(self, name: str) -> Tool:
        return self.sb.tools[self.sb.local(name)]

    def _compensate(self, action: Json) -> Json:
        name = action["compensation"]["tool"]
        send, verify = self.sb.compensators[self.sb.local(name)]
        target, key, args = action["target"], action["compensationKey"], action["compensation"]["args"]

        def report(body: Json) -> Json:
            answer: Json = self.sb.request("POST", f"/api/v1/steps/{action['step']['id']}/compensation", body)
            return answer

        if action["verifyFirst"] and verify(target, key, **args):
            return report({"done": True, "compensationRef": None, "how": "verified after resume"})
        last = "compensation not confirmed"
        for _ in range(self.sb.max_attempts):
            ref = None
            try:
                ref = _ref(send(target, key, **args))
            except Rejected as e:  # the provider said no: unless it is already in effect, a person decides
                if verify(target, key, **args):
                    return report({"done": True, "compensationRef": None, "how": "already in effect"})
                return report({"done": False, "reason": e.reason, "message": e.message, "remaining": target})
            except Exception as e:  # timeout: the real system says what happened
                last = str(e) or type(e).__name__
            if verify(target, key, **args) or (time.sleep(self.sb.recheck_after) or verify(target, key, **args)):
                return report({"done": True, "compensationRef": ref, "how": "read back"})
        return report({"done": False, "reason": "not_confirmed", "message": last, "remaining": target})


class _LookupError:
    def __init__(self, message: str) -> None:
        self.message = message


_MOVED = object()
