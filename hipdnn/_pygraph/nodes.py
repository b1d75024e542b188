"""A pygraph node before it is lowered (``_Op``), and the names users see for its ports:
cuDNN frontend's keywords for the op table's ports, and the names cuDNN frontend gives
the tensors of a node left unnamed ("<node name>::<suffix>")."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from .. import _ops
from ..enums import data_type

if TYPE_CHECKING:
    from ..pygraph import Tensor


class _Op:
    """An operation waiting to be lowered: its descriptor type, ports and parameters."""

    __slots__ = ("info", "op", "name", "inputs", "outputs", "params", "compute", "suffixes")

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
        # depend on more than the op (a pointwise mode's operands); else _CUDNN_SUFFIX.
        self.suffixes: Optional[Dict[str, str]] = None

    def label(self) -> str:
        return f"{self.op} '{self.name}'"


# Port names for users, by op: cuDNN frontend's keywords, mapped onto the table's ports.
_USER_PORTS = {
    "conv_fprop": {"x": "image", "w": "weight"},
    "conv_dgrad": {"dy": "loss", "w": "filter"},
    "conv_wgrad": {"x": "image", "dy": "loss"},
    "matmul": {"a": "A", "b": "B", "c": "C"},
    "pointwise": {"x": "a"},
    "batchnorm_inference": {"x": "input"},
    "reduction": {"x": "input"},
    "norm_forward": {"x": "input", "output_running_mean": "next_running_mean",
                     "output_running_var": "next_running_var",
                     "input_running_mean": "in_running_mean",
                     "input_running_var": "in_running_var", "exp_avg_factor": "momentum"},
    "norm_backward": {"x": "input", "dy": "grad"},
    "genstats": {"x": "input"},
    "resample_fwd": {"x": "input", "idx": "index"},
    "resample_bwd": {"dy": "grad", "x": "input", "y": "output", "idx": "index"},
    "reshape": {"x": "input"},
    "sdpa_backward": {"d_o": "dO", "dq": "dQ", "dk": "dK", "dv": "dV"},
}


# The names cuDNN frontend gives an op's tensors, "<node name>::<suffix>", by table port:
# always its output; inputs left unnamed only for pointwise ops and matmul (as it does).
_CUDNN_SUFFIX = {
    "conv_fprop": {"y": "Y"},
    "conv_dgrad": {"dx": "DX"},
    "conv_wgrad": {"dw": "DW"},
    "matmul": {"a": "A", "b": "B", "c": "C"},
    "pointwise": {"x": "IN_0", "b": "IN_1", "y": "OUT_0"},
    "batchnorm_inference": {"y": "Y"},
    "reduction": {"y": "Y"},
    "norm_forward": {"y": "Y", "mean": "MEAN", "inv_variance": "INV_VARIANCE",
                     "output_running_mean": "NEXT_RUNNING_MEAN",
                     "output_running_var": "NEXT_RUNNING_VAR"},
    "norm_backward": {"dx": "DX", "dscale": "DSCALE", "dbias": "DBIAS"},
    "genstats": {"sum": "SUM", "sq_sum": "SQ_SUM"},
    "resample_fwd": {"y": "Y", "idx": "Index"},
    "resample_bwd": {"dx": "DX"},
    "reshape": {"y": "Y"},
    "sdpa": {"o": "O", "stats": "Stats"},
    "sdpa_backward": {"dq": "dQ", "dk": "dK", "dv": "dV"},
}
_NAMES_INPUTS = ("matmul", "pointwise")


def _suffixes(op: _Op) -> Dict[str, str]:
    """The op's own suffixes (a pointwise mode's), else its op's."""
    if op.suffixes is not None:
        return op.suffixes
    return _CUDNN_SUFFIX.get(op.info.name, {})


def _user_port(info: "_ops.OpInfo", port: str, unary: bool = False) -> str:
    """The name users see for a table port (a unary pointwise op's x is "input")."""
    if unary and port == "x":
        return "input"
    return _USER_PORTS.get(info.name, {}).get(port, port)
