"""The client without a Sagaboard server: argument schemas, registration rules, names, and answers
from a stand-in HTTP server (the standard library's) for the paths a real server rarely takes."""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, Dict, Iterator, List, Tuple

import pytest

import sagaboard
from sagaboard import ApprovalRequiredError, Run, Sagaboard, SagaboardApiError, SagaError, Worker, args_schema


def test_args_schema_comes_from_the_signature_after_call():
    def book(call, city: str, nights: int, note: str = "", *, rooms: int = 1):
        return None

    assert args_schema(book) == {
        "type": "object",
        "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}, "note": {"type": "string"}, "rooms": {"type": "integer"}},
        "required": ["city", "nights"],
        "additionalProperties": False,
    }
    assert args_schema(lambda call, anything, **more: None)["additionalProperties"] is True


def test_registration_refuses_a_tool_that_cannot_be_reconciled_or_undone():
    sb = Sagaboard("http://127.0.0.1:9", "tok")
    with pytest.raises(ValueError, match="needs a lookup"):
        sb.tool("COMPENSATABLE", compensate=("undo", lambda a: {}))(lambda call: None)
    with pytest.raises(ValueError, match="needs compensate"):
        sb.tool("REVERSIBLE", lookup=lambda key, a: None)(lambda call: None)
    with pytest.raises(ValueError, match="needs a correction"):
        sb.tool("IRREVERSIBLE", lookup=lambda key, a: None)(lambda call: None)
    with pytest.raises(ValueError, match="class must be one of"):
        sb.tool("SOMETIMES")


def test_names_are_qualified_by_the_namespace_only_for_this_process_tools():
    sb = Sagaboard("http://127.0.0.1:9", "tok")

    @sb.tool("COMPENSATABLE", lookup=lambda key, a: None, compensate=("cancel_hotel", lambda a: {}))
    def book_hotel(call, city: str):
        return None

    sb.namespace = "trip"
    assert [sb.qualified("book_hotel"), sb.qualified("cancel_hotel"), sb.qualified("send_email")] == ["trip.book_hotel", "trip.cancel_hotel", "send_email"]
    assert [sb.local("trip.book_hotel"), sb.local("send_email")] == ["book_hotel", "send_email"]


Answer = Any  # (status, body), (status, body, headers), or a list of them answered in turn


@pytest.fixture
def stand_in() -> Iterator[Tuple[str, Dict[str, Answer], List[Tuple[str, str, Any]]]]:
    """A server answering each "METHOD path" from a table, recording what it was sent."""
    answers: Dict[str, Answer] = {}
    seen: List[Tuple[str, str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            seen.append((self.command, self.path, json.loads(self.rfile.read(length)) if length else None))
            answer = answers.get(f"{self.command} {self.path}", (404, {"error": {"code": "NOT_FOUND", "message": self.path}}))
            if isinstance(answer, list):  # answers in turn, the last one from then on
                answer = answer.pop(0) if len(answer) > 1 else answer[0]
            status, body, headers = answer if len(answer) == 3 else (*answer, {})
            data = json.dumps(body).encode()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()  # shutdown waits one poll
    yield f"http://127.0.0.1:{server.server_port}", answers, seen
    server.shutdown()
    server.server_close()


def test_a_refusal_carries_the_code_and_the_fields_under_the_typescript_clients_names(stand_in):
    url, answers, _ = stand_in
    answers["POST /api/v1/runs"] = (400, {"error": {"code": "VALIDATION_FAILED", "message": "title: required", "details": [{"path": "title", "message": "required"}]}})
    with pytest.raises(SagaboardApiError) as refused:
        Sagaboard(url, "tok").start_run("")
    assert (refused.value.status, refused.value.code, refused.value.details) == (400, "VALIDATION_FAILED", [{"path": "title", "message": "required"}])
    assert not isinstance(refused.value, SagaError)  # the API's own check, not the engine's
    # The engine's codes arrive as SagaError (as packages/client/src/agent/client does), with the body's other members kept.
    answers["POST /api/v1/runs/run_1/complete"] = (409, {"error": {"code": "RUN_NOT_SETTLED", "message": "step 2 is unknown: reconcile it first", "details": [], "stepId": "stp_2"}})
    with pytest.raises(SagaError) as unsettled:
        Run(Sagaboard(url, "tok"), "run_1").complete()
    assert (unsettled.value.code, unsettled.value.issues, unsettled.value.extra) == ("RUN_NOT_SETTLED", [], {"stepId": "stp_2"})
    # The names this package had before still catch the same errors.
    assert (sagaboard.SagaboardError, sagaboard.Rejected, sagaboard.ApprovalRequired) == (SagaboardApiError, sagaboard.ToolRejected, ApprovalRequiredError)


def test_commit_plan_says_which_item_is_held_and_sends_nothing(stand_in):
    url, answers, seen = stand_in
    sb = Sagaboard(url, "tok")
    sent: List[str] = []

    @sb.tool("IRREVERSIBLE", lookup=lambda key, a: None, correction={"subject": "s", "body": "b"})
    def send_itinerary(call, to: str):
        sent.append(to)

    sb.namespace = "trip"
    answers["GET /api/v1/pivots/piv_1"] = (200, {"pivot": {"id": "piv_1", "status": "APPROVED", "plan": [{"tool": "trip.send_itinerary", "args": {"to": "ada@example.com"}}]}})
    held = {"answer": "held", "cursor": 3, "reason": "TOOL_UNREVIEWED", "message": "trip.send_itinerary waits for a review", "escalationId": "esc_1"}
    answers["POST /api/v1/runs/run_1/calls"] = (200, held)
    result = Run(sb, "run_1").commit_plan("piv_1")
    assert result == {"status": "held", "pivotId": "piv_1", "index": 0, "answer": held}
    assert sent == []
    assert seen[-1][2]["planItem"] == {"pivotId": "piv_1", "index": 0}
    assert isinstance(ApprovalRequiredError("trip.send_itinerary", held).answer, dict)


def test_a_process_that_never_declared_commits_a_plan_in_the_namespace_of_the_runs_agent(stand_in):
    url, answers, seen = stand_in
    sb = Sagaboard(url, "tok", outcome_linger=0)  # a worker's process: bare names, no namespace, no run record
    booked: List[str] = []

    @sb.tool("COMPENSATABLE", lookup=lambda key, a: None, compensate=("cancel_hotel", lambda a: {"city": a["city"]}))
    def book_hotel(call, city: str):
        booked.append(call.key)
        return {"id": f"bk-{city}"}

    answers["GET /api/v1/pivots/piv_1"] = (200, {"pivot": {"id": "piv_1", "status": "APPROVED", "plan": [{"tool": "trip.book_hotel", "args": {"city": "Braga"}}]}})
    answers["GET /api/v1/runs/run_1"] = (200, {"run": {"id": "run_1", "agent": "trip", "status": "RUNNING"}, "steps": []})
    answers["POST /api/v1/runs/run_1/calls"] = _call_answer("stp_1", 0)
    answers["POST /api/v1/steps/stp_1/outcome"] = (200, {"step": {"id": "stp_1", "status": "CONFIRMED"}})
    answers["POST /api/v1/runs/run_1/complete"] = (200, {"run": {"id": "run_1", "status": "COMPLETED"}})
    assert Run(sb, "run_1").commit_plan("piv_1")["status"] == "committed"
    assert booked == ["key-0"]
    [call] = [body for method, path, body in seen if path == "/api/v1/runs/run_1/calls"]
    assert (call["tool"], call["compensation"]["tool"]) == ("trip.book_hotel", "trip.cancel_hotel")


TASK_PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
TASK_ANSWERS: Dict[str, Any] = {
    "/api/v1/worker/claim": {"tasks": [{"id": "tsk_1", "kind": "UNWIND", "runId": "run_1", "stepId": None, "attempt": 1, "payload": {"reason": "pulled back", "traceparent": TASK_PARENT}}]},
    "/api/v1/runs/run_1/unwind/next": {"action": "done", "status": "UNWOUND"},
    "/api/v1/worker/tasks/tsk_1/complete": {"settled": True, "task": None},
}


def test_every_request_carries_the_agents_traceparent_when_given_one_and_a_workers_its_tasks():
    got: List[Any] = []
    paths: List[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            got.append(self.headers.get("traceparent"))
            paths.append(self.path)
            data = json.dumps(TASK_ANSWERS.get(self.path, {"run": {"id": "run_1"}})).encode()
            self.send_response(201)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}"
        parents = iter(["00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", None])
        sb = Sagaboard(url, "tok", traceparent=lambda: next(parents))
        sb.request("POST", "/api/v1/runs", {"title": "t"})
        sb.request("POST", "/api/v1/runs", {"title": "t"})
        Sagaboard(url, "tok").request("POST", "/api/v1/runs", {"title": "t"})
        assert got == ["00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", None, None]
        # A worker sends its task's trace context (from the task's payload) with that task's requests, not with the claim.
        del got[:], paths[:]
        assert Worker(Sagaboard(url, "tok"), "w-1").run_once() == [{"action": "done", "status": "UNWOUND"}]
        assert list(zip(paths, got)) == [("/api/v1/worker/claim", None), ("/api/v1/runs/run_1/unwind/next", TASK_PARENT), ("/api/v1/worker/tasks/tsk_1/complete", TASK_PARENT)]
    finally:
        server.shutdown()
        server.server_close()


def test_a_503_is_sent_again_no_sooner_than_its_retry_after_and_so_is_a_workers_completion(stand_in):
    url, answers, seen = stand_in
    unavailable = (503, {"error": {"code": "UNAVAILABLE", "message": "Sagaboard cannot reach its database right now."}}, {"retry-after": "1"})
    answers["POST /api/v1/runs"] = [unavailable, (201, {"run": {"id": "run_1"}})]
    sb = Sagaboard(url, "tok", backoff=0.01)
    started = time.monotonic()
    assert sb.start_run("Trip to Porto").id == "run_1"
    assert time.monotonic() - started >= 0.95  # Retry-After, not the 10 ms backoff
    assert [path for _, path, _ in seen] == ["/api/v1/runs", "/api/v1/runs"]
    # A completion whose answer is lost is sent again (under its Idempotency-Key), not dropped.
    del seen[:]
    answers["POST /api/v1/worker/claim"] = (200, TASK_ANSWERS["/api/v1/worker/claim"])
    answers["POST /api/v1/runs/run_1/unwind/next"] = (200, TASK_ANSWERS["/api/v1/runs/run_1/unwind/next"])
    answers["POST /api/v1/worker/tasks/tsk_1/complete"] = [unavailable, (200, TASK_ANSWERS["/api/v1/worker/tasks/tsk_1/complete"])]
    assert Worker(sb, "w-1").run_once() == [{"action": "done", "status": "UNWOUND"}]
    assert [path for _, path, _ in seen].count("/api/v1/worker/tasks/tsk_1/complete") == 2


def _call_answer(step_id: str, idx: int) -> Any:
    step = {"id": step_id, "runId": "run_1", "stepIdx": idx, "stepKey": f"key-{idx}", "tool": "trip.book_hotel", "attempts": 0, "status": "INTENDED"}
    return (200, {"answer": "call", "cursor": idx, "nextCursor": idx, "step": step, "send": {"idempotencyKey": f"key-{idx}", "header": "Idempotency-Key", "metadata": {}}})


def _booking_agent(url: str, answers: Dict[str, Answer], outcome_linger: float) -> Sagaboard:
    """An agent with one staging tool whose run's first two calls the stand-in answers `call`."""
    sb = Sagaboard(url, "tok", outcome_linger=outcome_linger)

    @sb.tool("COMPENSATABLE", lookup=lambda key, a: None, compensate=("cancel_hotel", lambda a: {"city": a["city"]}))
    def book_hotel(call, city: str):
        return {"id": f"bk-{city}"}

    sb.namespace = "trip"
    answers["POST /api/v1/runs/run_1/calls"] = [_call_answer("stp_1", 0), _call_answer("stp_2", 1)]
    return sb


def test_a_confirmed_outcome_goes_with_the_next_call_and_the_last_with_the_finish(stand_in):
    url, answers, seen = stand_in
    sb = _booking_agent(url, answers, outcome_linger=30.0)
    answers["POST /api/v1/runs/run_1/complete"] = (200, {"run": {"id": "run_1", "status": "COMPLETED"}})
    run = Run(sb, "run_1")
    assert run.call("book_hotel", city="Lisbon") == {"id": "bk-Lisbon"}
    assert run.call("book_hotel", city="Porto") == {"id": "bk-Porto"}
    run.complete()
    assert [(m, p) for m, p, _ in seen] == [("POST", "/api/v1/runs/run_1/calls")] * 2 + [("POST", "/api/v1/runs/run_1/complete")]
    assert "previous" not in seen[0][2]
    assert seen[1][2]["previous"] == {"stepId": "stp_1", "outcome": "confirmed", "externalRef": "bk-Lisbon", "result": {"id": "bk-Lisbon"}, "attempts": 1}
    assert seen[2][2]["previous"]["stepId"] == "stp_2"


def test_an_outcome_waits_no_longer_than_the_linger_and_a_refusal_reaches_the_next_call(stand_in):
    url, answers, seen = stand_in
    sb = _booking_agent(url, answers, outcome_linger=0.05)
    answers["POST /api/v1/steps/stp_1/outcome"] = (200, {"step": {"id": "stp_1", "status": "CONFIRMED"}, "nextCursor": 1})
    answers["POST /api/v1/steps/stp_2/outcome"] = (409, {"error": {"code": "STEP_NOT_IN_FLIGHT", "message": "Step 1 is NOT_EXECUTED"}})
    run = Run(sb, "run_1")
    run.call("book_hotel", city="Lisbon")
    time.sleep(0.3)
    assert [(m, p) for m, p, _ in seen] == [("POST", "/api/v1/runs/run_1/calls"), ("POST", "/api/v1/steps/stp_1/outcome")]
    run.call("book_hotel", city="Porto")
    time.sleep(0.3)
    with pytest.raises(SagaboardApiError) as refused:
        run.call("book_hotel", city="Faro")
    assert refused.value.code == "STEP_NOT_IN_FLIGHT"
    assert len(seen) == 4  # the refusal was raised before anything more was sent


def test_a_worker_that_never_declared_finds_the_logged_tools_and_compensators_by_their_bare_names():
    sb = Sagaboard("http://127.0.0.1:9", "tok", outcome_linger=0)  # a worker's process: no namespace

    @sb.tool("COMPENSATABLE", lookup=lambda key, a: None, compensate=("cancel_hotel", lambda a: {"city": a["city"]}))
    def book_hotel(call, city: str):
        return {"id": f"bk-{city}"}

    @sb.compensator("cancel_hotel", verify=lambda target, key, city: True)
    def cancel_hotel(target, key, city: str):
        return None

    worker = Worker(sb, "w1")
    assert worker._tool("trip.book_hotel") is sb.tools["book_hotel"]
    assert worker._tool("book_hotel") is sb.tools["book_hotel"]
    assert worker._registered("trip.cancel_hotel", sb.compensators) == "cancel_hotel"
    sb.namespace = "trip"
    assert worker._tool("trip.book_hotel") is sb.tools["book_hotel"]
