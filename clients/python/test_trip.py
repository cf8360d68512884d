"""A trip-booking agent on Sagaboard with faults, against fake systems this test defines.

Run by tests/process/python-client.test.ts against a real server:
  python3 test_trip.py declare          declares the four tools (the harness then accepts them as an admin)
  python3 -m unittest test_trip         the scenarios; the harness approves pivots as a reviewer
Each fake system keeps a ledger on disk (SAGABOARD_LEDGER), so a crashed process and its successor
count the same effects: correctness is counted per key, in the systems, not in the log.
"""
import json
import os
import subprocess
import sys
import threading
import unittest

from sagaboard import ApprovalRequired, Sagaboard, ToolOutcomeUnknown

LEDGER = os.environ.get("SAGABOARD_LEDGER", "/tmp/sagaboard-trip-ledger.json")
_lock = threading.Lock()


# -- the fake systems: one ledger of effects per system, keyed by the idempotency key ------------------
def _read():
    try:
        with open(LEDGER) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def effect(system, key, record, fault=None):
    """Applies an effect once per key (the provider's idempotency), then plays the armed fault."""
    with _lock:
        ledger = _read()
        rows = ledger.setdefault(system, {})
        if key not in rows:
            rows[key] = {"id": f"{system}-{len(rows) + 1}", **record}
        with open(LEDGER, "w") as f:
            json.dump(ledger, f)
    if fault == "timeout-after":
        raise TimeoutError(f"{system} did not answer in time")
    if fault == "crash-after":
        os._exit(137)  # the process dies between the effect and its record
    return rows[key]


def release(system, target, key):
    """Undoes the effect of step `target` once per compensation key (the provider's idempotency)."""
    with _lock:
        ledger = _read()
        undone = ledger.setdefault("released", [])
        if not any(r["key"] == key for r in undone):
            undone.append({"system": system, "target": target["stepKey"], "key": key})
        with open(LEDGER, "w") as f:
            json.dump(ledger, f)
    return {"id": f"undo-{key[:8]}"}


def ask_review(pivot_id):
    """Tells the harness's reviewer this pivot may now be decided (so it cannot race the PENDING check)."""
    with _lock:
        ledger = _read()
        ledger.setdefault("review", []).append(pivot_id)
        with open(LEDGER, "w") as f:
            json.dump(ledger, f)


def released(system, target):
    return any(r["system"] == system and r["target"] == target["stepKey"] for r in _read().get("released", []))


def find(system, key):
    return _read().get(system, {}).get(key)


def count(system, **match):
    return sum(1 for r in _read().get(system, {}).values() if all(r.get(k) == v for k, v in match.items()))


FAULTS = {}  # tool -> fault for its next call in this process

# -- the glue: what an agent writes to adopt Sagaboard for four tools (counted in the issue note) ----
sb = Sagaboard(os.environ["SAGABOARD_URL"], os.environ["SAGABOARD_TOKEN"], recheck_after=float(os.environ.get("SAGABOARD_RECHECK", "2")))


@sb.tool("COMPENSATABLE", lookup=lambda key, a: find("hotel", key), compensate=("cancel_hotel", lambda a: {"city": a["city"]}))
def book_hotel(call, city, nights):
    return effect("hotel", call.key, {"city": city, "nights": nights}, FAULTS.pop("book_hotel", None))


@sb.tool("COMPENSATABLE", lookup=lambda key, a: find("flight", key), compensate=("release_seat", lambda a: {"flight": a["flight"]}))
def hold_seat(call, flight):
    return effect("flight", call.key, {"flight": flight}, FAULTS.pop("hold_seat", None))


@sb.tool("REVERSIBLE", lookup=lambda key, a: find("car", key), compensate=("release_car", lambda a: {}))
def hold_car(call, city):
    return effect("car", call.key, {"city": city}, FAULTS.pop("hold_car", None))


@sb.tool("IRREVERSIBLE", lookup=lambda key, a: find("email", key), owner="travel-desk", audience=["customer"],
         correction={"subject": "About your trip to {{city}}", "body": "Please disregard our earlier email."})
def send_itinerary(call, to, city):
    return effect("email", call.key, {"to": to, "city": city}, FAULTS.pop("send_itinerary", None))


@sb.compensator("cancel_hotel", verify=lambda target, key, **a: released("hotel", target))
def cancel_hotel(target, key, city):
    return release("hotel", target, key)


@sb.compensator("release_seat", verify=lambda target, key, **a: released("flight", target))
def release_seat(target, key, flight):
    return release("flight", target, key)


@sb.compensator("release_car", verify=lambda target, key, **a: released("car", target))
def release_car(target, key):
    return release("car", target, key)
# -- end of the glue ------------------------------------------------------------------------------


def resume_in_child(run_id, fault_tool):
    """Runs the first two calls in a new process that dies right after the effect of `fault_tool`."""
    code = subprocess.run([sys.executable, __file__, "crash-child", run_id, fault_tool], env=os.environ).returncode
    return code


class TripBooking(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sb.namespace = os.environ["SAGABOARD_NAMESPACE"]

    def test_timeout_after_success_with_reworded_retry_books_once(self):
        run = sb.start_run("Trip to Lisbon: hotel times out after booking")
        FAULTS["book_hotel"] = "timeout-after"
        with self.assertRaises(ToolOutcomeUnknown):
            run.call("book_hotel", city="Lisbon", nights=3)
        # The model retries with new wording: the server says "reconcile", the lookup finds the booking.
        again = run.call("book_hotel", city="Lisbon, Portugal", nights=3)
        self.assertEqual(again["city"], "Lisbon")
        self.assertEqual(count("hotel", nights=3), 1)
        self.assertEqual(run.complete()["status"], "COMPLETED")

    def test_crash_after_the_effect_resumes_with_one_effect(self):
        run = sb.start_run("Trip to Porto: the worker dies after holding the seat")
        self.assertEqual(resume_in_child(run.id, "hold_seat"), 137)
        self.assertEqual(count("flight", flight="TP-1942"), 1)
        resumed = sb.resume(run.id)  # a new process: nothing but the run id
        self.assertEqual(resumed.call("hold_car", city="Porto")["city"], "Porto")  # replayed from the log
        self.assertEqual(resumed.call("hold_seat", flight="TP-1942")["flight"], "TP-1942")  # reconciled: found
        self.assertEqual(count("car", city="Porto"), 1)
        self.assertEqual(count("flight", flight="TP-1942"), 1)

    def test_irreversible_email_is_held_until_a_reviewer_approves_then_sent_once(self):
        run = sb.start_run("Trip to Faro: confirm by email")
        run.call("hold_car", city="Faro")
        with self.assertRaises(ApprovalRequired) as held:
            run.call("send_itinerary", to="ada@example.com", city="Faro")
        self.assertEqual(held.exception.reason, "IRREVERSIBLE")
        pivot = run.request_pivot("Car held in Faro; email the itinerary to the customer.", [("send_itinerary", {"to": "ada@example.com", "city": "Faro"})])
        with self.assertRaises(ApprovalRequired) as waiting:
            run.call("send_itinerary", to="ada@example.com", city="Faro")
        self.assertEqual(waiting.exception.reason, "PIVOT_PENDING")
        self.assertEqual(count("email", city="Faro"), 0)
        ask_review(pivot["id"])
        decided = run.wait_pivot(pivot["id"], timeout=60)  # the harness approves as a reviewer
        self.assertEqual(decided["status"], "APPROVED")
        run.call("send_itinerary", to="ada@example.com", city="Faro")
        self.assertEqual(count("email", city="Faro"), 1)
        # A resumed process replays the sent email instead of sending it again.
        resumed = sb.resume(run.id)
        resumed.call("hold_car", city="Faro")
        resumed.call("send_itinerary", to="ada@example.com", city="Faro")
        self.assertEqual(count("email", city="Faro"), 1)
        self.assertEqual(resumed.complete()["status"], "COMPLETED")

    def test_a_fresh_process_commits_an_approved_plan(self):
        run = sb.start_run("Trip to Braga: the agent dies after the approval")
        run.call("hold_car", city="Braga")
        run.call("book_hotel", city="Braga", nights=2)
        plan = [("hold_seat", {"flight": "TP-1010"}), ("send_itinerary", {"to": "bo@example.com", "city": "Braga"})]
        pivot = run.request_pivot("Car and hotel held in Braga; hold the seat and email the itinerary.", plan)
        ask_review(pivot["id"])
        self.assertEqual(run.wait_pivot(pivot["id"], timeout=60)["status"], "APPROVED")
        # The agent dies here. A fresh process knows the run and the pivot only, and replays nothing.
        code = subprocess.run([sys.executable, __file__, "commit-child", run.id, pivot["id"]], env=os.environ).returncode
        self.assertEqual(code, 0)
        self.assertEqual(count("flight", flight="TP-1010"), 1)
        self.assertEqual(count("email", city="Braga"), 1)
        self.assertEqual(count("car", city="Braga"), 1)
        self.assertEqual(sb.request("GET", f"/api/v1/runs/{run.id}")["run"]["status"], "COMPLETED")
        # The agent coming back and committing again changes nothing.
        self.assertEqual(sb.resume(run.id).commit_plan(pivot["id"])["status"], "already_committed")
        self.assertEqual(count("email", city="Braga"), 1)

    def test_unwind_in_reverse_releases_each_hold_once(self):
        from sagaboard import Worker

        run = sb.start_run("Trip to Madeira: the customer cancels")
        car = run.call("hold_car", city="Funchal")
        run.call("hold_seat", flight="TP-1690")
        run.call("book_hotel", city="Funchal", nights=2)
        run.unwind("the customer cancelled the trip")
        worker_sb = Sagaboard(sb.url, os.environ["SAGABOARD_WORKER_TOKEN"], recheck_after=sb.recheck_after)
        worker_sb.tools, worker_sb.compensators, worker_sb.namespace = sb.tools, sb.compensators, sb.namespace
        [result] = Worker(worker_sb, "python-worker-1").run_once()
        self.assertEqual(result["status"], "UNWOUND")
        undone = [r["system"] for r in _read()["released"] if r["target"] in {s["stepKey"] for s in sb.request("GET", f"/api/v1/runs/{run.id}")["steps"]}]
        self.assertEqual(undone, ["hotel", "flight", "car"])  # the reverse of the calls, each once
        self.assertEqual(Worker(worker_sb, "python-worker-2").run_once(), [])  # nothing left to claim
        self.assertEqual(len(_read()["released"]), len({r["key"] for r in _read()["released"]}))
        self.assertEqual(car["city"], "Funchal")

    def test_bad_input_gets_a_named_refusal(self):
        from sagaboard import SagaboardError

        run = sb.start_run("Trip with a typo")
        with self.assertRaises(SagaboardError) as bad:
            sb.request("POST", f"/api/v1/runs/{run.id}/calls", {"tool": "trip.no_such_tool", "args": {}, "cursor": 0})
        self.assertIn(bad.exception.status, (403, 404))
        with self.assertRaises(SagaboardError) as unknown_field:
            sb.request("POST", f"/api/v1/runs/{run.id}/calls", {"tool": sb.qualified("hold_car"), "args": {"city": "X"}, "cursor": 0, "stepKey": "mine"})
        self.assertEqual(unknown_field.exception.status, 400)
        self.assertIn("stepKey", unknown_field.exception.message + json.dumps(unknown_field.exception.details))
        # The declared schema (from the function's signature) names a misspelt or missing argument.
        with self.assertRaises(SagaboardError) as misspelt:
            run.call("hold_car", town="Porto")
        self.assertEqual(misspelt.exception.status, 400)
        self.assertIn("args.city", json.dumps(misspelt.exception.details))


if __name__ == "__main__":
    if sys.argv[1] == "declare":
        print(json.dumps(sb.declare()))
    elif sys.argv[1] == "worker":  # one round of a worker holding the four tools: prints what it did
        from sagaboard import Worker

        worker_sb = Sagaboard(sb.url, os.environ["SAGABOARD_WORKER_TOKEN"], recheck_after=sb.recheck_after)
        worker_sb.tools, worker_sb.compensators, worker_sb.namespace = dict(sb.tools), sb.compensators, os.environ["SAGABOARD_NAMESPACE"]

        # The email provider the correction desk sends through lives with the worker, not the agent:
        # the server's send_email, answered here (SEND_CORRECTION tasks), counted in the "mail" ledger.
        @worker_sb.tool("IRREVERSIBLE", lookup=lambda key, a: find("mail", key), correction={"subject": "Correction: {{subject}}", "body": "Please disregard our earlier email."})
        def send_email(call, to, subject, body):
            return effect("mail", call.key, {"to": to, "subject": subject}, FAULTS.pop("send_email", None))

        print(json.dumps(Worker(worker_sb, sys.argv[2]).run_once()))
    elif sys.argv[1] == "commit-child":  # a fresh process that commits an approved plan from the run and pivot ids alone
        sb.namespace = os.environ["SAGABOARD_NAMESPACE"]
        sys.exit(0 if sb.resume(sys.argv[2]).commit_plan(sys.argv[3])["status"] == "committed" else 1)
    elif sys.argv[1] == "crash-child":
        sb.namespace = os.environ["SAGABOARD_NAMESPACE"]
        FAULTS[sys.argv[3]] = "crash-after"
        child = sb.resume(sys.argv[2])
        child.call("hold_car", city="Porto")
        child.call("hold_seat", flight="TP-1942")
        sys.exit(0)
