"""The client's entry point: a server, one token, and the tools and compensators this process holds."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

from .run import Run
from .tools import CLASSES, Compensation, F, Json, Lookup, Send, Tool, Verify, args_schema
from .transport import Transport


class Sagaboard(Transport):
    """A connection to a Sagaboard server with one agent token, and the tools this process holds."""

    def __init__(self, url: str, token: str, *, recheck_after: float = 2.0, max_attempts: int = 3, backoff: float = 0.2, timeout: float = 30.0,
                 traceparent: Optional[Callable[[], Optional[str]]] = None, outcome_linger: float = 0.0) -> None:
        """`traceparent`: returns the W3C traceparent of the agent's current span, sent with every request so
        the server's spans join the agent's trace. With OpenTelemetry: `lambda: (lambda c: (inject(c), c.get("traceparent"))[1])({})`
        (`from opentelemetry.propagate import inject`).

        `outcome_linger`: pipelining, opt-in. How long (seconds) a confirmed call's outcome may wait to go to
        the server with the run's next call or its completion, so a step costs one request; after that it is
        sent alone (0.25 is a good value). The default, 0, sends every outcome in its own request before the
        call returns. A waiting outcome's timer is not a daemon thread, so an interpreter that exits (normally,
        by sys.exit or an uncaught exception) sends it first."""
        super().__init__(url, token, backoff=backoff, timeout=timeout, traceparent=traceparent)
        self.outcome_linger = outcome_linger
        self.recheck_after, self.max_attempts = recheck_after, max_attempts
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

    def local(self, name: str, namespace: Optional[str] = None) -> str:
        """The name this process registered a tool under (the server's name without the namespace).
        `namespace`: the one to assume while this process has none (a run's agent)."""
        ns = self.namespace or namespace
        return name.split(".", 1)[1] if ns and name.startswith(ns + ".") else name

    def qualified(self, name: str, namespace: Optional[str] = None) -> str:
        """The name the server knows a tool or compensator by (`<namespace>.<name>` once declared).
        `namespace`: the one to assume while this process has none (a run's agent)."""
        ns = self.namespace or namespace
        ours = name in self.tools or any(t.compensate and t.compensate[0] == name for t in self.tools.values())
        if ours and ns and not name.startswith(ns + "."):
            return f"{ns}.{name}"
        return name

    # -- runs -----------------------------------------------------------------------------------
    def start_run(self, title: str, on_behalf_of: Optional[str] = None) -> Run:
        """Starts a run (retried safely: one run however often the request is sent)."""
        body = {"title": title, **({"onBehalfOf": on_behalf_of} if on_behalf_of else {})}
        run: Json = self.request("POST", "/api/v1/runs", body, idempotent=True)["run"]
        return Run(self, run["id"], agent=run.get("agent"))

    def resume(self, run_id: str) -> Run:
        """Continues a run from its log alone: recorded steps return their recorded results."""
        run: Json = self.request("GET", f"/api/v1/runs/{run_id}")["run"]
        return Run(self, run_id, agent=run.get("agent"))
