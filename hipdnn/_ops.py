"""The backend's table of operations, read once from ``_C.op_table()``.

Every op wrapper in pygraph lowers through it: ports and parameters are looked up here by
the names the table gives them ("x", "pre_padding"), never by attribute numbers written
into Python, so an op added to the table needs only its wrapper here.
"""
from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Sequence, Tuple, TypeVar

from . import _C


class Port(NamedTuple):
    name: str
    attr: int
    optional: bool


class Param(NamedTuple):
    name: str
    attr: int
    type: int  # hipdnnBackendAttributeType_t
    kind: int  # hipdnnOpAttrKind_ext_t
    max_count: int
    min_value: int
    max_value: int
    default: float


class OpInfo(NamedTuple):
    kind: int
    name: str
    descriptor_type: int
    descriptor_name: str
    inputs: List[Port]
    outputs: List[Port]
    params: List[Param]

    def input(self, name: str) -> Port:
        return _find(self.inputs, name, self.name)

    def output(self, name: str) -> Port:
        return _find(self.outputs, name, self.name)

    def param(self, name: str) -> Param:
        return _find(self.params, name, self.name)


_Item = TypeVar("_Item", "Port", "Param")


def _find(items: Sequence[_Item], name: str, op: str) -> _Item:
    for it in items:
        if it.name == name:
            return it
    raise KeyError(f"op table: {op} has no '{name}'")


def _load() -> Tuple[Dict[str, OpInfo], Dict[int, OpInfo]]:
    by_name: Dict[str, OpInfo] = {}
    by_type: Dict[int, OpInfo] = {}
    for e in _C.op_table():
        info = OpInfo(e["kind"], e["name"], e["descriptor_type"], e["descriptor_name"],
                      [Port(*p) for p in e["inputs"]], [Port(*p) for p in e["outputs"]],
                      [Param(*a) for a in e["attrs"]])
        by_name[info.name] = info
        by_type[info.descriptor_type] = info
    return by_name, by_type


OPS, BY_DESCRIPTOR_TYPE = _load()

# Pointwise modes by the names pygraph methods carry (cuDNN frontend's).
POINTWISE_MODES: Dict[str, int] = {
    "add": _C.POINTWISE_ADD, "sub": _C.POINTWISE_SUB, "mul": _C.POINTWISE_MUL,
    "div": _C.POINTWISE_DIV, "max": _C.POINTWISE_MAX, "min": _C.POINTWISE_MIN,
    "identity": _C.POINTWISE_IDENTITY, "relu": _C.POINTWISE_RELU_FWD,
    "sigmoid": _C.POINTWISE_SIGMOID_FWD, "tanh": _C.POINTWISE_TANH_FWD,
    "gelu": _C.POINTWISE_GELU_FWD, "exp": _C.POINTWISE_EXP,
}
POINTWISE_NAMES: Dict[int, str] = {v: k for k, v in POINTWISE_MODES.items()}


def param_value(desc: Any, p: Param) -> Any:
    """A parameter read back from an operation descriptor: a list, or one value."""
    values = desc.get(p.attr, p.type)
    if p.kind == _C.OP_ATTR_INT64_LIST:
        return list(values)
    return values[0] if values else None
