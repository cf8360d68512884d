"""The trip agent's scenarios against a real server: faults, a crash, approvals, an unwind, refusals.

Needs SAGABOARD_URL, SAGABOARD_TOKEN (an agent token of the namespace), SAGABOARD_WORKER_TOKEN and
SAGABOARD_NAMESPACE, the four tools declared (`python trip_agent.py declare`) and accepted by an admin,
and a reviewer who approves each pivot listed under "review" in the ledger (SAGABOARD_LEDGER);
tests/process/python-client.test.ts sets all of it up and plays the reviewer.
"""
import json
import os
import subprocess
import sys

import pytest

from sagaboard import ApprovalRequiredError, SagaboardApiError, ToolOutcomeUnknown, Worker
from trip_agent import FAULTS, ask_review, count, missing_server_env, read_ledger, sb, worker_client

pytestmark = pytest.mark.skipif(
    bool(missing_server_env()),
    reason=f"no Sagaboard server configured: set {', '.join(missing_server_env())} (npm test's tests/process/python-client.test.ts starts one and sets them)",
)
REVIEW_TIMEOUT = float(os.environ.get("SAGABOARD_REVIEW_TIMEOUT", "60"))


@pytest.fixture(autouse=True)
def namespace():
    sb.namespace = os.environ["SAGABOARD_NAMESPACE"]


def child(*args: str, knows_namespace: bool = True) -> int:
    """Runs trip_agent.py as a new process (nothing shared with this one but the server and the ledger)."""
    env = {k: v for k, v in os.environ.items() if knows_namespace or k != "SAGABOARD_NAMESPACE"}
    return subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "trip_agent.py"), *args], env=env).returncode


def test_timeout_after_success_with_reworded_retry_books_once():
    run = sb.start_run("Trip to Lisbon: hotel times out after booking")
    FAULTS["book_hotel"] = "timeout-after"
    with pytest.raises(ToolOutcomeUnknown):
        run.call("book_hotel", city="Lisbon", nights=3)
    # The model retries with new wording: the server says "reconcile", the lookup finds the booking.
    again = run.call("book_hotel", city="Lisbon, Portugal", nights=3)
    assert again["city"] == "Lisbon"
    assert count("hotel", nights=3) == 1  # not two bookings under two wordings
    assert run.complete()["status"] == "COMPLETED"


def test_crash_after_the_effect_resumes_with_one_effect():
    run = sb.start_run("Trip to Porto: the worker dies after holding the seat")
    assert child("crash-child", run.id, "hold_seat") == 137
    assert count("flight", flight="TP-1942") == 1
    resumed = sb.resume(run.id)  # a new process: nothing but the run id
    assert resumed.call("hold_car", city="Porto")["city"] == "Porto"  # replayed from the log
    assert resumed.call("hold_seat", flight="TP-1942")["flight"] == "TP-1942"  # reconciled: found
    assert count("car", city="Porto") == 1
    assert count("flight", flight="TP-1942") == 1


def test_irreversible_email_is_held_until_a_reviewer_approves_then_sent_once():
    run = sb.start_run("Trip to Faro: confirm by email")
    run.call("hold_car", city="Faro")
    with pytest.raises(ApprovalRequiredError) as held:
        run.call("send_itinerary", to="ada@example.com", city="Faro")
    assert held.value.reason == "IRREVERSIBLE"
    pivot = run.request_pivot("Car held in Faro; email the itinerary to the customer.", [("send_itinerary", {"to": "ada@example.com", "city": "Faro"})])
    with pytest.raises(ApprovalRequiredError) as waiting:
        run.call("send_itinerary", to="ada@example.com", city="Faro")
    assert waiting.value.reason == "PIVOT_PENDING"
    assert count("email", city="Faro") == 0
    ask_review(pivot["id"])
    assert run.wait_pivot(pivot["id"], timeout=REVIEW_TIMEOUT)["status"] == "APPROVED"  # the reviewer approves
    run.call("send_itinerary", to="ada@example.com", city="Faro")
    assert count("email", city="Faro") == 1
    # A resumed process replays the sent email instead of sending it again.
    resumed = sb.resume(run.id)
    resumed.call("hold_car", city="Faro")
    resumed.call("send_itinerary", to="ada@example.com", city="Faro")
    assert count("email", city="Faro") == 1
    assert resumed.complete()["status"] == "COMPLETED"


def test_a_fresh_process_commits_an_approved_plan():
    run = sb.start_run("Trip to Braga: the agent dies after the approval")
    run.call("hold_car", city="Braga")
    run.call("book_hotel", city="Braga", nights=2)
    plan = [("hold_seat", {"flight": "TP-1010"}), ("send_itinerary", {"to": "bo@example.com", "city": "Braga"})]
    pivot = run.request_pivot("Car and hotel held in Braga; hold the seat and email the itinerary.", plan)
    ask_review(pivot["id"])
    assert run.wait_pivot(pivot["id"], timeout=REVIEW_TIMEOUT)["status"] == "APPROVED"
    # The agent dies here. A fresh process knows the run and the pivot only (not even the namespace its
    # tools were declared in: it never declared), and replays nothing.
    assert child("commit-child", run.id, pivot["id"], knows_namespace=False) == 0
    assert count("flight", flight="TP-1010") == 1
    assert count("email", city="Braga") == 1
    assert count("car", city="Braga") == 1
    log = sb.request("GET", f"/api/v1/runs/{run.id}")
    assert log["run"]["status"] == "COMPLETED"
    # The fresh process named the seat's undo in the namespace too, so a later unwind reaches our compensator.
    [seat] = [s for s in log["steps"] if s["tool"] == sb.qualified("hold_seat")]
    assert seat["compensation"]["tool"] == sb.qualified("release_seat")
    # The agent coming back and committing again changes nothing.
    assert sb.resume(run.id).commit_plan(pivot["id"])["status"] == "already_committed"
    assert count("email", city="Braga") == 1


def test_unwind_in_reverse_releases_each_hold_once():
    run = sb.start_run("Trip to Madeira: the customer cancels")
    car = run.call("hold_car", city="Funchal")
    run.call("hold_seat", flight="TP-1690")
    run.call("book_hotel", city="Funchal", nights=2)
    run.unwind("the customer cancelled the trip")
    worker_sb = worker_client()
    [result] = Worker(worker_sb, "python-worker-1").run_once()
    assert result["status"] == "UNWOUND"
    keys = {s["stepKey"] for s in sb.request("GET", f"/api/v1/runs/{run.id}")["steps"]}
    assert [r["system"] for r in read_ledger()["released"] if r["target"] in keys] == ["hotel", "flight", "car"]  # the reverse of the calls, each once
    assert Worker(worker_sb, "python-worker-2").run_once() == []  # nothing left to claim
    released = read_ledger()["released"]
    assert len(released) == len({r["key"] for r in released})
    assert car["city"] == "Funchal"


def test_bad_input_gets_a_named_refusal():
    run = sb.start_run("Trip with a typo")
    with pytest.raises(SagaboardApiError) as bad:
        sb.request("POST", f"/api/v1/runs/{run.id}/calls", {"tool": "trip.no_such_tool", "args": {}, "cursor": 0})
    assert bad.value.status in (403, 404)
    with pytest.raises(SagaboardApiError) as unknown_field:
        sb.request("POST", f"/api/v1/runs/{run.id}/calls", {"tool": sb.qualified("hold_car"), "args": {"city": "X"}, "cursor": 0, "stepKey": "mine"})
    assert unknown_field.value.status == 400
    assert "stepKey" in unknown_field.value.message + json.dumps(unknown_field.value.details)
    # The declared schema (from the function's signature) names a misspelt or missing argument.
    with pytest.raises(SagaboardApiError) as misspelt:
        run.call("hold_car", town="Porto")
    assert misspelt.value.status == 400
    assert "args.city" in json.dumps(misspelt.value.details)
