"""A pygraph node before it is lowered (``_Op``), and the names users see for its ports:
cuDNN frontend's keywords for the op table's ports, and the names cuDNN frontend gives
the tensors of a node left unnamed ("<node name>::<suffix>"), both read from the op table
(csrc/sdk/op_table.c's frontend_name and frontend_suffix of each port)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Optional, Tuple

from .. import _ops
from ..enums import data_type

if TYPE_CHECKING:
    from ..pygraph import Tensor


class _Op:
    """An operation waiting to be lowered: its descriptor type, ports and parameters."""

    __slots__ = ("info", "op", "name", "inputs", "outputs", "params", "compute", "suffixes",
                 "lacks")

    def __init__(self, info: "_ops.OpInfo", op: str, name: str,
                 compute: Optional[data_type]):
        self.info = info
        self.op = op  # "conv_fprop", "add", ...
        self.name = name
        self.inputs: List[Tuple[str, int, Tensor]] = []  # (port, attribute, tensor)
        self.outputs: List[Tuple[str, int, Tensor]] = []
        self.params: List[Tuple[int, int, Any]] = []  # (attribute, type, values)
        self.compute = compute
        # The names cuDNN frontend gives unnamed tensors, by table port, where they
        # depend on more than the op (a pointwise mode's operands); else the op table's.
        self.suffixes: Optional[Dict[str, str]] = None
        # Features asked for that no engine has yet: validate() raises naming them, as a
        # graph cuDNN cannot run is reported there.
        self.lacks: List[str] = []

    def label(self) -> str:
        return f"{self.op} '{self.name}'"


def _ports(info: "_ops.OpInfo") -> List["_ops.Port"]:
    return info.inputs + info.outputs


def _op_suffixes(info: "_ops.OpInfo") -> Dict[str, str]:
    """The op table's suffixes of an op's ports (its frontend_suffix fields)."""
    return {p.name: p.frontend_suffix for p in _ports(info) if p.frontend_suffix}


# Ops whose unnamed inputs cuDNN frontend names too (matmul, pointwise): those whose
# input ports carry a suffix in the op table; other ops name only their outputs.
_NAMES_INPUTS: FrozenSet[str] = frozenset(info.name for info in _ops.OPS.values()
                          if any(p.frontend_suffix for p in info.inputs))


def _suffixes(op: _Op) -> Dict[str, str]:
    """The op's own suffixes (a pointwise mode's), else its op's."""
    if op.suffixes is not None:
        return op.suffixes
    return _op_suffixes(op.info)


def _user_port(info: "_ops.OpInfo", port: str, unary: bool = False) -> str:
    """The name users see for a table port, cuDNN frontend's keyword from the op table
    (a unary pointwise op's x is "input")."""
    if unary and port == "x":
        return "input"
    for p in _ports(info):
        if p.name == port:
            return p.frontend_name
    return port
