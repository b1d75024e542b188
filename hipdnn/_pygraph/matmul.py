"""pygraph's matmul: cuDNN frontend's ``matmul(A, B, compute_data_type, name)``, a batched
matrix product whose batch dims broadcast."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from .base import GraphBase

if TYPE_CHECKING:
    from ..pygraph import DataTypeLike, Tensor


class MatmulOps(GraphBase):
    """pygraph's matmul method."""

    def matmul(self, A: Tensor, B: Tensor, compute_data_type: Optional[DataTypeLike] = None,
               name: Optional[str] = None) -> Tensor:
        """C = A @ B over the last two dims; batch dims broadcast."""
        op = self._op("matmul", "matmul", name, compute_data_type)
        return self._finish(op, [("a", A), ("b", B)], "c")
