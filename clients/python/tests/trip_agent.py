"""A trip-booking agent on Sagaboard, against fake systems this file defines: the tests' agent, and a script.

The tests (test_trip.py) import it; tests/process/python-client.test.ts and the tests run it as a
script, each call a new process:
  python trip_agent.py declare                      declares the four tools (an admin then accepts them)
  python trip_agent.py worker WORKER_ID             one round of a worker holding the four tools (and send_email)
  python trip_agent.py crash-child RUN_ID TOOL      resumes a run and dies right after TOOL's effect
  python trip_agent.py commit-child RUN_ID PIVOT_ID commits an approved plan from the two ids alone
Each fake system keeps a ledger on disk (SAGABOARD_LEDGER), so a crashed process and its successor
count the same effects: correctness is counted per key, in the systems, not in the log.
"""
import json
import os
import sys
import tempfile
import threading
from typing import Any, Dict, List, Optional, Tuple

from sagaboard import Sagaboard, Worker

# A process that is not told where the ledger is makes its own and hands it to its children.
LEDGER = os.environ.setdefault("SAGABOARD_LEDGER", os.path.join(tempfile.gettempdir(), f"sagaboard-trip-ledger-{os.getpid()}.json"))
_lock = threading.Lock()
Record = Dict[str, Any]


# -- the fake systems: one ledger of effects per system, keyed by the idempotency key ------------------
def read_ledger() -> Dict[str, Any]:
    try:
        with open(LEDGER) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def _write(ledger: Dict[str, Any]) -> None:
    with open(LEDGER + ".tmp", "w") as f:  # whole or not at all: the harness reads it while we run
        json.dump(ledger, f)
    os.replace(LEDGER + ".tmp", LEDGER)


def effect(system: str, key: str, record: Record, fault: Optional[str] = None) -> Record:
    """Applies an effect once per key (the provider's idempotency), then plays the armed fault."""
    with _lock:
        ledger = read_ledger()
        rows = ledger.setdefault(system, {})
        if key not in rows:
            rows[key] = {"id": f"{system}-{len(rows) + 1}", **record}
        _write(ledger)
    if fault == "timeout-after":
        raise TimeoutError(f"{system} did not answer in time")
    if fault == "crash-after":
        os._exit(137)  # the process dies between the effect and its record
    return rows[key]


def release(system: str, target: Record, key: str) -> Record:
    """Undoes the effect of step `target` once per compensation key (the provider's idempotency)."""
    with _lock:
        ledger = read_ledger()
        undone = ledger.setdefault("released", [])
        if not any(r["key"] == key for r in undone):
            undone.append({"system": system, "target": target["stepKey"], "key": key})
        _write(ledger)
    return {"id": f"undo-{key[:8]}"}


def ask_review(pivot_id: str) -> None:
    """Tells the reviewer (the harness, or a person reading the ledger) this pivot may now be decided."""
    with _lock:
        ledger = read_ledger()
        ledger.setdefault("review", []).append(pivot_id)
        _write(ledger)


def released(system: str, target: Record) -> bool:
    return any(r["system"] == system and r["target"] == target["stepKey"] for r in read_ledger().get("released", []))


def find(system: str, key: str) -> Optional[Record]:
    return read_ledger().get(system, {}).get(key)


def count(system: str, **match: Any) -> int:
    return sum(1 for r in read_ledger().get(system, {}).values() if all(r.get(k) == v for k, v in match.items()))


FAULTS: Dict[str, str] = {}  # tool -> fault for its next call in this process
RECHECK = float(os.environ.get("SAGABOARD_RECHECK", "2"))

# -- the glue: what an agent writes to adopt Sagaboard for four tools -------------------------------
sb = Sagaboard(os.environ.get("SAGABOARD_URL", "http://localhost:3000"), os.environ.get("SAGABOARD_TOKEN", ""), recheck_after=RECHECK)


@sb.tool("COMPENSATABLE", lookup=lambda key, a: find("hotel", key), compensate=("cancel_hotel", lambda a: {"city": a["city"]}))
def book_hotel(call, city: str, nights: int):
    return effect("hotel", call.key, {"city": city, "nights": nights}, FAULTS.pop("book_hotel", None))


@sb.tool("COMPENSATABLE", lookup=lambda key, a: find("flight", key), compensate=("release_seat", lambda a: {"flight": a["flight"]}))
def hold_seat(call, flight: str):
    return effect("flight", call.key, {"flight": flight}, FAULTS.pop("hold_seat", None))


@sb.tool("REVERSIBLE", lookup=lambda key, a: find("car", key), compensate=("release_car", lambda a: {}))
def hold_car(call, city: str):
    return effect("car", call.key, {"city": city}, FAULTS.pop("hold_car", None))


@sb.tool("IRREVERSIBLE", lookup=lambda key, a: find("email", key), owner="travel-desk", audience=["customer"],
         correction={"subject": "About your trip to {{city}}", "body": "Please disregard our earlier email."})
def send_itinerary(call, to: str, city: str):
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


def glue_lines() -> Tuple[int, int]:
    """The glue's lines between its two marker comments above: (not blank, all), the figure the tests print."""
    with open(__file__) as f:
        text = f.read()
    body = text.split("# -- the glue:", 1)[1].split("# -- end of the glue", 1)[0].splitlines()[1:]
    return sum(1 for line in body if line.strip()), len(body)


SERVER_ENV = ("SAGABOARD_URL", "SAGABOARD_TOKEN", "SAGABOARD_WORKER_TOKEN", "SAGABOARD_NAMESPACE")


def missing_server_env() -> List[str]:
    """The variables naming a server that are not set (the trip tests skip, saying which)."""
    return [name for name in SERVER_ENV if not os.environ.get(name)]


def worker_client() -> Sagaboard:
    """The same tools and compensators, held by a worker token (a worker's process registers the same code)."""
    worker_sb = Sagaboard(sb.url, os.environ["SAGABOARD_WORKER_TOKEN"], recheck_after=RECHECK)
    worker_sb.tools, worker_sb.compensators, worker_sb.namespace = dict(sb.tools), sb.compensators, os.environ["SAGABOARD_NAMESPACE"]
    return worker_sb


def main(argv: List[str]) -> int:
    command = argv[0] if argv else ""
    if command == "declare":
        print(json.dumps(sb.declare()))
        return 0
    if command == "commit-child":  # a fresh process that commits an approved plan from the run and pivot ids alone: no namespace
        return 0 if sb.resume(argv[1]).commit_plan(argv[2])["status"] == "committed" else 1
    sb.namespace = os.environ["SAGABOARD_NAMESPACE"]
    if command == "worker":  # one round of a worker holding the four tools: prints what it did
        worker_sb = worker_client()

        # The email provider the correction desk sends through lives with the worker, not the agent:
        # the server's send_email, answered here (SEND_CORRECTION tasks), counted in the "mail" ledger.
        @worker_sb.tool("IRREVERSIBLE", lookup=lambda key, a: find("mail", key), correction={"subject": "Correction: {{subject}}", "body": "Please disregard our earlier email."})
        def send_email(call, to: str, subject: str, body: str) -> Record:
            return effect("mail", call.key, {"to": to, "subject": subject}, FAULTS.pop("send_email", None))

        print(json.dumps(Worker(worker_sb, argv[1]).run_once()))
        return 0
    if command == "crash-child":  # resumes the run and dies right after the effect of argv[2]
        FAULTS[argv[2]] = "crash-after"
        child = sb.resume(argv[1])
        child.call("hold_car", city="Porto")
        child.call("hold_seat", flight="TP-1942")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
