"""One run as this process drives it: logged calls, the outcomes they carry, the pivot and the plan's commit."""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from .errors import ApprovalRequiredError, SagaboardApiError, SagaError, ToolCallFailed, ToolOutcomeUnknown, ToolRejected
from .reconcile import reconcile
from .tools import Call, Json, Tool, external_ref

if TYPE_CHECKING:
    from .client import Sagaboard

# Answered when someone else settled the step first: the call begins again from the log.
_MOVED = object()


class Run:
    """One run as this process drives it: call tools, ask for the pivot, finish."""

    def __init__(self, sb: Sagaboard, run_id: str, agent: Optional[str] = None) -> None:
        """`agent`: the token that started the run, when this process has read the run (start_run, resume)."""
        self.sb, self.id, self.cursor = sb, run_id, 0
        # The server puts a token's tools in the namespace of the token's name, so the run's agent names
        # the namespace of its tools: the one assumed while this process has none (it never declared).
        self.agent = agent
        # A confirmed outcome waiting for this run's next call or completion (`previous`), and the timer that
        # sends it alone after `outcome_linger`; the lock is held while either sends it.
        self._waiting: Optional[Json] = None
        self._timer: Optional[threading.Timer] = None
        self._lock = threading.Lock()
        self._refused: Optional[SagaboardApiError] = None

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
            except SagaboardApiError as e:
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
        if previous is not None and not (isinstance(error, SagaboardApiError) and error.status < 500):
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
        return self._call(self.sb.qualified(tool, self.agent), t, args)

    def _call(self, server_name: str, t: Tool, args: Json, plan_item: Optional[Json] = None) -> Any:
        """The logged call of `t` under the name the server knows it by (or of an approved plan's item)."""
        tool = t.name
        address = {"planItem": plan_item} if plan_item else {"cursor": self.cursor}
        body: Json = {"tool": server_name, "args": args, **address}
        if t.compensate:
            try:
                body["compensation"] = {"tool": self.sb.qualified(t.compensate[0], self.agent), "args": t.compensate[1](args)}
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
                raise ApprovalRequiredError(tool, answer)
            if kind == "reconcile":
                # A commit is answered with whichever step is unsettled first: look it up with its own tool.
                owner = t if step["tool"] == server_name else self.sb.tools[self.sb.local(step["tool"], self.agent)]
                settled = self._reconcile(owner, step)
                if settled["status"] in ("INTENDED", "UNKNOWN"):
                    raise ToolOutcomeUnknown(owner.name, step["stepIdx"], step["stepKey"])
                continue  # CONFIRMED now replays; NOT_EXECUTED retries under the same key
            result = self._execute(t, args, step, answer["send"])
            if result is not _MOVED:
                return result
        raise SagaError(409, "CONFLICT", f"step {self.cursor} kept changing while {tool} was called; call it again")

    def _execute(self, t: Tool, args: Json, step: Json, send: Json) -> Any:
        call = Call(send["idempotencyKey"], send["metadata"], self.id)
        for attempt in range(1, self.sb.max_attempts + 1):
            try:
                result = t.fn(call, **args)
            except ToolRejected as e:
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
            confirmed = {"outcome": "confirmed", "externalRef": external_ref(result), "result": result, "attempts": step["attempts"] + attempt}
            if self.sb.outcome_linger > 0:
                self._hold({"stepId": step["id"], **confirmed})  # sent with the run's next call or completion
            elif self._report(step, confirmed) is _MOVED:
                return _MOVED
            self.cursor = step["stepIdx"] + 1
            return result

    def _report(self, step: Json, body: Json) -> Any:
        try:
            return self.sb.request("POST", f"/api/v1/steps/{step['id']}/outcome", body)["step"]
        except SagaboardApiError as e:
            if e.code == "STEP_NOT_IN_FLIGHT":
                return _MOVED  # someone settled it first: the log wins, begin again
            raise

    def _reconcile(self, t: Tool, step: Json) -> Json:
        return reconcile(self.sb, t, step)

    # -- the pivot ------------------------------------------------------------------------------
    def request_pivot(self, summary: str, plan: List[Tuple[str, Json]]) -> Json:
        """Asks for the one human approval: everything staged so far plus the commit calls [(tool, args)]."""
        body = {"summary": summary, "plan": [{"tool": self.sb.qualified(tool, self.agent), "args": args} for tool, args in plan]}
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
        reconcile), SagaError PIVOT_NOT_APPROVED / PLAN_ORDER / RUN_CLOSED.
        """
        pivot = self.sb.request("GET", f"/api/v1/pivots/{pivot_id}")["pivot"]
        if self.sb.namespace is None and self.agent is None:  # a worker's Run(sb, id): read whose run it is
            self.agent = self.sb.request("GET", f"/api/v1/runs/{self.id}")["run"].get("agent")
        items: List[Json] = []
        try:
            for index, item in enumerate(pivot["plan"]):
                t = self.sb.tools.get(self.sb.local(item["tool"], self.agent))
                if t is None:
                    registered = ", ".join(self.sb.tools) or "none"
                    raise KeyError(f"plan item {index} calls {item['tool']!r}, which this process does not register (it registers {registered}); "
                                   "register it to commit the plan, or set sb.namespace to the namespace its tools were declared in")
                try:
                    result = self._call(item["tool"], t, item["args"], {"pivotId": pivot_id, "index": index})
                except ApprovalRequiredError as held:
                    return {"status": "held", "pivotId": pivot_id, "index": index, "answer": held.answer}
                items.append({"index": index, "tool": item["tool"], "result": result})
            return {"status": "committed", "pivotId": pivot_id, "items": items, "run": self.complete()}
        except SagaboardApiError as e:
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
