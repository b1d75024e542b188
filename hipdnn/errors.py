"""The exception hierarchy.

``HipdnnError`` (a ``RuntimeError``) is the base and carries the backend's ``status`` and
``status_name``.  ``InvalidGraphError`` is also a ``ValueError``; ``NotSupportedError``
is raised for a NOT_SUPPORTED status and ``GraphNotSupportedError`` when no engine can
run a graph, with each engine's reason; ``FeatureNotSupportedError``, one of those and a
``NotImplementedError`` too, when the graph uses a feature no engine of hipdnn has yet
(raised by ``validate()``, where cuDNN frontend code looks for an unsupported graph).
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from . import _C

__all__ = ["HipdnnError", "InvalidGraphError", "NotSupportedError", "GraphNotSupportedError",
           "FeatureNotSupportedError"]

HipdnnError = _C.HipdnnError
InvalidGraphError = _C.InvalidGraphError
NotSupportedError = _C.NotSupportedError


class GraphNotSupportedError(NotSupportedError):
    """No engine can run the graph.  ``reasons`` maps each engine's name to why it
    declined; ``str()`` lists them one per line."""

    def __init__(self, graph_name: str, reasons: Dict[str, str], detail: Optional[str] = None):
        self.graph_name = graph_name
        self.reasons = dict(reasons)
        self.status = _C.STATUS_NOT_SUPPORTED
        self.status_name = _C.status_name(_C.STATUS_NOT_SUPPORTED)
        label = f"graph '{graph_name}'" if graph_name else "the graph"
        if reasons:
            lines = [f"no engine supports {label}:"]
            lines += [f"  {name}: {why}" for name, why in reasons.items()]
        else:
            lines = [f"no engine supports {label}: no engines are loaded "
                     "(see `python -m hipdnn info`)"]
        if detail:
            lines.append(detail)
        super().__init__("\n".join(lines))

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (self.graph_name, self.reasons))


class FeatureNotSupportedError(GraphNotSupportedError, NotImplementedError):
    """The graph uses a feature that no engine of hipdnn has yet (sdpa's block masks,
    score modifiers, a (mask, scale) dropout...): ``reasons`` maps each node or tensor that
    uses one to what it lacks."""
