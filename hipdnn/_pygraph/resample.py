"""pygraph's resample (pooling) family: ``resample`` and ``resample_backward``.

cuDNN frontend builds resample nodes from C++ ``Resample_attributes`` (its Python module
has no binding yet); these methods take the same attributes as keywords
(``resampling_mode``, ``padding_mode``, ``window``, ``stride``, ``pre_padding``,
``post_padding``, ``generate_index``) and return what ``graph.resample`` returns there,
``[Y, Index]``.  pygraph takes the methods from the mixin ``ResampleOps``.  docs/python.md
gives the definitions (output size, padding, index encoding, NaN).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence

from .. import _C
from ..enums import padding_mode as _padding_mode
from ..enums import resample_mode as _resample_mode
from .args import _bool_arg, _fe_enum, _int_list
from .base import GraphBase
from .nodes import _Op

if TYPE_CHECKING:
    from ..pygraph import DataTypeLike, Tensor

# cuDNN frontend's enum values -> the backend's (cuDNN's) values.
_MODES = {
    _resample_mode.AVGPOOL_EXCLUDE_PADDING: _C.RESAMPLE_AVGPOOL_EXCLUDE_PADDING,
    _resample_mode.AVGPOOL_INCLUDE_PADDING: _C.RESAMPLE_AVGPOOL_INCLUDE_PADDING,
    _resample_mode.BILINEAR: _C.RESAMPLE_BILINEAR,
    _resample_mode.NEAREST: _C.RESAMPLE_NEAREST,
    _resample_mode.MAXPOOL: _C.RESAMPLE_MAXPOOL,
}
_PADDINGS = {
    _padding_mode.EDGE_VAL_PAD: _C.EDGE_VAL_PAD,
    _padding_mode.NEG_INF_PAD: _C.NEG_INF_PAD,
    _padding_mode.ZERO_PAD: _C.ZERO_PAD,
}


def _params(g: GraphBase, op: _Op, resampling_mode: Any, window: Any, stride: Any,
            padding_mode: Any, pre_padding: Any, post_padding: Any) -> int:
    """Checks and records the resample parameters; returns the frontend mode.  An unset
    padding_mode is NEG_INF_PAD for MAXPOOL (padding never wins) and ZERO_PAD otherwise."""
    mode = _fe_enum(resampling_mode, _resample_mode, op.label(), "resampling_mode")
    pad: int
    if padding_mode is None:
        pad = _padding_mode.NEG_INF_PAD if mode == _resample_mode.MAXPOOL \
            else _padding_mode.ZERO_PAD
    else:
        pad = _fe_enum(padding_mode, _padding_mode, op.label(), "padding_mode")
    lists = {"window": _int_list(window, f"{op.label()}: window"),
             "stride": _int_list(stride, f"{op.label()}: stride")}
    for what, value in (("pre_padding", pre_padding), ("post_padding", post_padding)):
        if value is not None:
            lists[what] = _int_list(value, f"{op.label()}: {what}")
    lengths = {k: len(v) for k, v in lists.items()}
    if len(set(lengths.values())) != 1 or not lengths["window"]:
        raise ValueError(f"{op.label()}: window, stride and paddings need one entry per "
                         f"spatial dim; got lengths {lengths}")
    g._param(op, "mode", _MODES[_resample_mode(mode)])
    g._param(op, "padding_mode", _PADDINGS[_padding_mode(pad)])
    for what, values in lists.items():
        g._param(op, what, values)
    return mode


class ResampleOps(GraphBase):
    """pygraph's resample (pooling) methods."""

    def resample(self, input: "Tensor", resampling_mode: Any, window: Sequence[int],
                 stride: Sequence[int], padding_mode: Any = None,
                 pre_padding: Optional[Sequence[int]] = None,
                 post_padding: Optional[Sequence[int]] = None, generate_index: bool = False,
                 compute_data_type: Optional["DataTypeLike"] = None,
                 name: Optional[str] = None) -> List[Optional["Tensor"]]:
        """[Y, Index]: input [N, C, spatial...] pooled over windows (one entry per spatial dim
        in window, stride and the paddings, which default to 0).  resampling_mode is a
        hipdnn.resample_mode (MAXPOOL, AVGPOOL_INCLUDE_PADDING, AVGPOOL_EXCLUDE_PADDING);
        padding_mode a hipdnn.padding_mode (default NEG_INF_PAD for MAXPOOL, ZERO_PAD
        otherwise).  Y's spatial dims are (in + pre + post - window) // stride + 1 unless
        given rounded up (ceil mode).  Index (MAXPOOL with generate_index, else None) holds
        the row-major position of each window's first maximum, INT8 unless set otherwise."""
        op = self._op("resample_fwd", "resample", name, compute_data_type)
        mode = _params(self, op, resampling_mode, window, stride, padding_mode, pre_padding,
                       post_padding)
        index = _bool_arg(generate_index, f"{op.label()}: generate_index") and \
            mode == _resample_mode.MAXPOOL
        outs = self._finish_all(op, [("x", input)], ["y", "idx"] if index else ["y"])
        if index:  # cuDNN's index type, not the graph's intermediate one
            outs[1]._a["data_type"] = _C.DATA_INT8
        return [outs[0], outs[1] if index else None]

    def resample_backward(self, grad: "Tensor", resampling_mode: Any,
                          window: Sequence[int], stride: Sequence[int], padding_mode: Any = None,
                          pre_padding: Optional[Sequence[int]] = None,
                          post_padding: Optional[Sequence[int]] = None,
                          input: Optional["Tensor"] = None, output: Optional["Tensor"] = None,
                          index: Optional["Tensor"] = None,
                          compute_data_type: Optional["DataTypeLike"] = None,
                          name: Optional[str] = None) -> "Tensor":
        """dx, the gradient of resample(input, ...) = output with respect to input, from grad
        = dY; the parameters are the forward's.  The averaging modes spread grad over each
        window; MAXPOOL routes it to each window's first maximum, from the forward's index
        or recomputed from input (give one of them).  dx takes input's dims; without input,
        give dx its dims (``dx.set_dim([...])``).  output is accepted as cuDNN's port and is
        not read."""
        op = self._op("resample_bwd", "resample_backward", name, compute_data_type)
        _params(self, op, resampling_mode, window, stride, padding_mode, pre_padding,
                post_padding)
        return self._finish(op, [("dy", grad), ("x", input), ("y", output), ("idx", index)], "dx")
