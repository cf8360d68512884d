"""Tools as this process registers them: their classes, what a call receives, and argument schemas."""
from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

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


def external_ref(result: Any) -> Optional[str]:
    """The provider's id for its record (its `id`), which the log keeps as the step's externalRef."""
    return str(result["id"]) if isinstance(result, dict) and result.get("id") is not None else None
