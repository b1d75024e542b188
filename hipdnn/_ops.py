"""The backend's table of operations, read once from ``_C.op_table()``.

Every op wrapper in pygraph lowers through it: ports and parameters are looked up here by
the names the table gives them ("x", "pre_padding"), never by attribute numbers written
into Python, so an op added to the table needs only its wrapper in pygraph.  The
pointwise modes are the SDK's table's too, written here by tools/gen_python_constants.py.
"""
from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, TypeVar

from . import _C


class Port(NamedTuple):
    name: str
    attr: int
    optional: bool
    frontend_name: str  # cuDNN frontend's keyword for the port ("image")
    frontend_suffix: Optional[str]  # "<node>::<suffix>" of an unnamed tensor, or None


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

# Pointwise modes by the names pygraph methods carry (cuDNN frontend's), and how many
# operands each takes: the SDK's table of modes (csrc/sdk/op_table.c), every mode of
# cuDNN's but ATAN2.
# BEGIN GENERATED: the SDK's pointwise modes, by tools/gen_python_constants.py; do not edit
POINTWISE_MODES: Dict[str, int] = {
    "add": _C.POINTWISE_ADD,
    "mul": _C.POINTWISE_MUL,
    "min": _C.POINTWISE_MIN,
    "max": _C.POINTWISE_MAX,
    "sqrt": _C.POINTWISE_SQRT,
    "add_square": _C.POINTWISE_ADD_SQUARE,
    "div": _C.POINTWISE_DIV,
    "mod": _C.POINTWISE_MOD,
    "pow": _C.POINTWISE_POW,
    "sub": _C.POINTWISE_SUB,
    "abs": _C.POINTWISE_ABS,
    "ceil": _C.POINTWISE_CEIL,
    "cos": _C.POINTWISE_COS,
    "exp": _C.POINTWISE_EXP,
    "floor": _C.POINTWISE_FLOOR,
    "log": _C.POINTWISE_LOG,
    "neg": _C.POINTWISE_NEG,
    "rsqrt": _C.POINTWISE_RSQRT,
    "sin": _C.POINTWISE_SIN,
    "tan": _C.POINTWISE_TAN,
    "erf": _C.POINTWISE_ERF,
    "identity": _C.POINTWISE_IDENTITY,
    "reciprocal": _C.POINTWISE_RECIPROCAL,
    "relu": _C.POINTWISE_RELU_FWD,
    "tanh": _C.POINTWISE_TANH_FWD,
    "sigmoid": _C.POINTWISE_SIGMOID_FWD,
    "elu": _C.POINTWISE_ELU_FWD,
    "gelu": _C.POINTWISE_GELU_FWD,
    "softplus": _C.POINTWISE_SOFTPLUS_FWD,
    "swish": _C.POINTWISE_SWISH_FWD,
    "gelu_approx_tanh": _C.POINTWISE_GELU_APPROX_TANH_FWD,
    "relu_backward": _C.POINTWISE_RELU_BWD,
    "tanh_backward": _C.POINTWISE_TANH_BWD,
    "sigmoid_backward": _C.POINTWISE_SIGMOID_BWD,
    "elu_backward": _C.POINTWISE_ELU_BWD,
    "gelu_backward": _C.POINTWISE_GELU_BWD,
    "softplus_backward": _C.POINTWISE_SOFTPLUS_BWD,
    "swish_backward": _C.POINTWISE_SWISH_BWD,
    "gelu_approx_tanh_backward": _C.POINTWISE_GELU_APPROX_TANH_BWD,
    "cmp_eq": _C.POINTWISE_CMP_EQ,
    "cmp_neq": _C.POINTWISE_CMP_NEQ,
    "cmp_gt": _C.POINTWISE_CMP_GT,
    "cmp_ge": _C.POINTWISE_CMP_GE,
    "cmp_lt": _C.POINTWISE_CMP_LT,
    "cmp_le": _C.POINTWISE_CMP_LE,
    "logical_and": _C.POINTWISE_LOGICAL_AND,
    "logical_or": _C.POINTWISE_LOGICAL_OR,
    "logical_not": _C.POINTWISE_LOGICAL_NOT,
    "gen_index": _C.POINTWISE_GEN_INDEX,
    "binary_select": _C.POINTWISE_BINARY_SELECT,
}
POINTWISE_ARITY: Dict[str, int] = {
    "add": 2,
    "mul": 2,
    "min": 2,
    "max": 2,
    "sqrt": 1,
    "add_square": 2,
    "div": 2,
    "mod": 2,
    "pow": 2,
    "sub": 2,
    "abs": 1,
    "ceil": 1,
    "cos": 1,
    "exp": 1,
    "floor": 1,
    "log": 1,
    "neg": 1,
    "rsqrt": 1,
    "sin": 1,
    "tan": 1,
    "erf": 1,
    "identity": 1,
    "reciprocal": 1,
    "relu": 1,
    "tanh": 1,
    "sigmoid": 1,
    "elu": 1,
    "gelu": 1,
    "softplus": 1,
    "swish": 1,
    "gelu_approx_tanh": 1,
    "relu_backward": 2,
    "tanh_backward": 2,
    "sigmoid_backward": 2,
    "elu_backward": 2,
    "gelu_backward": 2,
    "softplus_backward": 2,
    "swish_backward": 2,
    "gelu_approx_tanh_backward": 2,
    "cmp_eq": 2,
    "cmp_neq": 2,
    "cmp_gt": 2,
    "cmp_ge": 2,
    "cmp_lt": 2,
    "cmp_le": 2,
    "logical_and": 2,
    "logical_or": 2,
    "logical_not": 1,
    "gen_index": 1,
    "binary_select": 3,
}
# END GENERATED
POINTWISE_NAMES: Dict[int, str] = {v: k for k, v in POINTWISE_MODES.items()}


def param_value(desc: Any, p: Param) -> Any:
    """A parameter read back from an operation descriptor: a list, or one value."""
    values = desc.get(p.attr, p.type)
    if p.kind == _C.OP_ATTR_INT64_LIST:
        return list(values)
    return values[0] if values else None
