"""pygraph's reduction: cuDNN frontend's ``reduction(input, mode, compute_data_type,
name)``, input reduced over every axis where the result's dim (set by the user) is 1."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ..enums import reduction_mode
from .args import _fe_enum
from .base import GraphBase

if TYPE_CHECKING:
    from ..pygraph import DataTypeLike, Tensor


class ReductionOps(GraphBase):
    """pygraph's reduction method."""

    def reduction(self, input: Tensor, mode: int,
                  compute_data_type: Optional[DataTypeLike] = None,
                  name: Optional[str] = None) -> Tensor:
        """y = input reduced with `mode` (a hipdnn.reduction_mode) over every axis where
        y's dim is 1 and input's is not.  As in cuDNN frontend, give y its dims
        (``y.set_dim([...])``) before the graph is validated."""
        op = self._op("reduction", "reduction", name, compute_data_type)
        self._param(op, "mode", _fe_enum(mode, reduction_mode, op.label(), "mode") - 1)
        return self._finish(op, [("x", input)], "y", users=("input",))
