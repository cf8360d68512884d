"""A worker: claims the tasks the server queues for the tools this process holds, and works them."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from .errors import SagaboardApiError, ToolRejected
from .reconcile import look_up, reconcile
from .run import Run
from .tools import Json, Tool, external_ref
from .transport import TRACEPARENT, task_traceparent

if TYPE_CHECKING:
    from .client import Sagaboard


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
            trace = task_traceparent.set(parent if isinstance(parent, str) and TRACEPARENT.match(parent) else None)
            try:
                result = self._work(task)
            finally:
                task_traceparent.reset(trace)
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
            sent.append({"to": message["to"], "messageId": external_ref(result)})
        run.complete()
        return {"correctionId": payload.get("correctionId"), "sent": sent}

    def commit_plan(self, run_id: str, pivot_id: str) -> Json:
        """Commits an approved plan whose agent went quiet (a COMMIT_PLAN task): the same commit an agent makes."""
        result = Run(self.sb, run_id).commit_plan(pivot_id)
        if result["status"] == "held":
            raise SagaboardApiError(409, "APPROVAL_REQUIRED", f"plan item {result['index']} is held for a person: {result['answer'].get('message')}")
        if result["status"] == "already_committed":
            return {"pivotId": pivot_id, "alreadyCommitted": True}
        return {"pivotId": pivot_id, "runStatus": result["run"]["status"], "items": [{"index": i["index"], "tool": i["tool"]} for i in result["items"]]}

    def _tool(self, name: str) -> Tool:
        return self.sb.tools[self._registered(name, self.sb.tools)]

    def _registered(self, name: str, table: Dict[str, Any]) -> str:
        """The name this process registered a logged tool or compensator under. The log names a team's tools
        `<namespace>.<tool>`; a worker that never declared has no namespace of its own, so the bare name is
        the one it registered."""
        local = self.sb.local(name)
        if local not in table and "." in name and name.split(".", 1)[1] in table:
            return name.split(".", 1)[1]
        return local

    def _compensate(self, action: Json) -> Json:
        name = action["compensation"]["tool"]
        send, verify = self.sb.compensators[self._registered(name, self.sb.compensators)]
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
                ref = external_ref(send(target, key, **args))
            except ToolRejected as e:  # the provider said no: unless it is already in effect, a person decides
                if verify(target, key, **args):
                    return report({"done": True, "compensationRef": None, "how": "already in effect"})
                return report({"done": False, "reason": e.reason, "message": e.message, "remaining": target})
            except Exception as e:  # timeout: the real system says what happened
                last = str(e) or type(e).__name__
            if verify(target, key, **args) or (time.sleep(self.sb.recheck_after) or verify(target, key, **args)):
                return report({"done": True, "compensationRef": ref, "how": "read back"})
        return report({"done": False, "reason": "not_confirmed", "message": last, "remaining": target})
