"""pygraph's convolution family: ``conv_fprop``, ``conv_dgrad`` and ``conv_wgrad``, with
cuDNN frontend's names and keywords.  The three share their parameters (padding, stride,
dilation, convolution_mode), checked once in ``_conv_params``."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ..enums import convolution_mode
from .args import _int_list, _type_name
from .base import GraphBase
from .nodes import _Op

if TYPE_CHECKING:
    from ..pygraph import DataTypeLike, Tensor


class ConvOps(GraphBase):
    """pygraph's convolution methods."""

    def conv_fprop(self, image: Tensor, weight: Tensor,
                   padding: Optional[Sequence[int]] = None,
                   stride: Optional[Sequence[int]] = None,
                   dilation: Optional[Sequence[int]] = None,
                   pre_padding: Optional[Sequence[int]] = None,
                   post_padding: Optional[Sequence[int]] = None,
                   convolution_mode: int = convolution_mode.CROSS_CORRELATION,
                   compute_data_type: Optional[DataTypeLike] = None,
                   name: Optional[str] = None) -> Tensor:
        """y = conv(image, weight), image [N, C, spatial...], weight [K, C/groups,
        spatial...]; padding/stride/dilation have one entry per spatial dim (defaults 0,
        1, 1).  pre_padding/post_padding instead of padding pad asymmetrically."""
        op = self._op("conv_fprop", "conv_fprop", name, compute_data_type)
        self._conv_params(op, padding, stride, dilation, pre_padding, post_padding,
                          convolution_mode)
        return self._finish(op, [("x", image), ("w", weight)], "y")

    def conv_dgrad(self, loss: Tensor, filter: Tensor,
                   padding: Optional[Sequence[int]] = None,
                   stride: Optional[Sequence[int]] = None,
                   dilation: Optional[Sequence[int]] = None,
                   pre_padding: Optional[Sequence[int]] = None,
                   post_padding: Optional[Sequence[int]] = None,
                   convolution_mode: int = convolution_mode.CROSS_CORRELATION,
                   compute_data_type: Optional[DataTypeLike] = None,
                   name: Optional[str] = None) -> Tensor:
        """dx, the gradient of conv_fprop(x, filter) = y with respect to x, from loss = dy
        [N, K, out...] and filter [K, C/groups, spatial...]; the parameters are the forward
        convolution's.  As in cuDNN frontend, give dx its dims (``dx.set_dim([N, C,
        spatial...])``): stride and groups leave them ambiguous."""
        op = self._op("conv_dgrad", "conv_dgrad", name, compute_data_type)
        self._conv_params(op, padding, stride, dilation, pre_padding, post_padding,
                          convolution_mode)
        return self._finish(op, [("dy", loss), ("w", filter)], "dx")

    def conv_wgrad(self, image: Tensor, loss: Tensor,
                   padding: Optional[Sequence[int]] = None,
                   stride: Optional[Sequence[int]] = None,
                   dilation: Optional[Sequence[int]] = None,
                   pre_padding: Optional[Sequence[int]] = None,
                   post_padding: Optional[Sequence[int]] = None,
                   convolution_mode: int = convolution_mode.CROSS_CORRELATION,
                   compute_data_type: Optional[DataTypeLike] = None,
                   name: Optional[str] = None) -> Tensor:
        """dw, the gradient of conv_fprop(image, w) = y with respect to w, from image
        [N, C, spatial...] and loss = dy [N, K, out...].  Give dw its dims
        (``dw.set_dim([K, C/groups, spatial...])``), as cuDNN frontend asks."""
        op = self._op("conv_wgrad", "conv_wgrad", name, compute_data_type)
        self._conv_params(op, padding, stride, dilation, pre_padding, post_padding,
                          convolution_mode)
        return self._finish(op, [("x", image), ("dy", loss)], "dw")

    def _conv_params(self, op: _Op, padding: Optional[Sequence[int]],
                     stride: Optional[Sequence[int]], dilation: Optional[Sequence[int]],
                     pre_padding: Optional[Sequence[int]],
                     post_padding: Optional[Sequence[int]], convolution_mode: int) -> None:
        """The parameters conv_fprop, conv_dgrad and conv_wgrad share, checked."""
        if padding is not None and (pre_padding is not None or post_padding is not None):
            raise ValueError(f"{op.label()}: give padding, or pre_padding and post_padding, "
                             "not both")
        pre = post = None
        if padding is not None:
            pre = post = _int_list(padding, f"{op.label()}: padding")
        if pre_padding is not None:
            pre = _int_list(pre_padding, f"{op.label()}: pre_padding")
        if post_padding is not None:
            post = _int_list(post_padding, f"{op.label()}: post_padding")
        spatial = {"padding": pre, "post_padding": post}
        if stride is not None:
            spatial["stride"] = _int_list(stride, f"{op.label()}: stride")
        if dilation is not None:
            spatial["dilation"] = _int_list(dilation, f"{op.label()}: dilation")
        lengths = {k: len(v) for k, v in spatial.items() if v is not None}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"{op.label()}: padding, stride and dilation need one entry per "
                             f"spatial dim; got lengths {lengths}")
        if isinstance(convolution_mode, bool) or \
                not isinstance(convolution_mode, (int, np.integer)):
            raise TypeError(f"{op.label()}: convolution_mode must be a "
                            f"hipdnn.convolution_mode, got {_type_name(convolution_mode)}")
        for pname, values in (("pre_padding", pre), ("post_padding", post),
                              ("stride", spatial.get("stride")),
                              ("dilation", spatial.get("dilation"))):
            if values is not None:
                self._param(op, pname, values)
        self._param(op, "conv_mode", int(convolution_mode))
