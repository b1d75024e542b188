"""pygraph's data movement: ``slice``, ``concatenate`` and ``reshape``, with cuDNN
frontend's names and keywords.  They copy or re-describe elements and compute nothing.

reshape's result dims (and, for a view of a non-row-major input, its strides) are the
user's to set, as in cuDNN frontend.  ``VIEW_ONLY`` (the default) re-describes the input's
memory, so a transpose is a view with permuted dims and strides; ``LOGICAL`` keeps the
row-major logical order of the elements, as NumPy's reshape, for any input layout.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from .. import _C
from ..enums import reshape_mode as _reshape_mode
from .args import _fe_enum
from .base import GraphBase

if TYPE_CHECKING:
    from ..pygraph import DataTypeLike, Tensor

_RESHAPE_MODES = {_reshape_mode.VIEW_ONLY: _C.RESHAPE_VIEW_ONLY,
                  _reshape_mode.LOGICAL: _C.RESHAPE_LOGICAL}


class MovementOps(GraphBase):
    """pygraph's data-movement methods."""

    def slice(self, input: Tensor, slices: Sequence[Any],
              compute_data_type: Optional[DataTypeLike] = None,
              name: Optional[str] = None) -> Tensor:
        """input[slices]: one Python ``slice`` per dim of input (``slice(None)`` for a whole
        dim; non-negative start and stop, a positive step), as cuDNN frontend's slice."""
        from ..pygraph import Tensor  # pygraph.py imports this module: import at call time

        op = self._op("slice", "slice", name, compute_data_type)
        dims = input.get_dim() if isinstance(input, Tensor) else None
        if not isinstance(slices, (list, tuple)) or \
                not all(isinstance(s, slice) for s in slices):
            raise TypeError(f"{op.label()}: slices must be a list of Python slice objects")
        if not dims:
            raise ValueError(f"{op.label()}: the input needs its dims set before slicing")
        if len(slices) != len(dims):
            raise ValueError(f"{op.label()}: {len(slices)} slices for an input of rank "
                             f"{len(dims)}")
        start, limit, step = [], [], []
        for i, (s, d) in enumerate(zip(slices, dims)):
            b, e, st = s.start, s.stop, s.step
            for what, v in (("start", b), ("stop", e), ("step", st)):
                if v is not None and (isinstance(v, bool) or
                                      not isinstance(v, (int, np.integer)) or v < 0):
                    raise ValueError(f"{op.label()}: dim {i}: {what} must be a non-negative "
                                     f"int, got {v!r}")
            start.append(0 if b is None else int(b))
            limit.append(d if e is None else min(int(e), d))
            step.append(1 if st is None else int(st))
        self._param(op, "start", start)
        self._param(op, "limit", limit)
        self._param(op, "step", step)
        return self._finish(op, [("x", input)], "y", users=("input",))

    def concatenate(self, inputs: Sequence[Tensor], axis: int,
                    in_place_index: Optional[int] = None,
                    compute_data_type: Optional[DataTypeLike] = None,
                    name: Optional[str] = None) -> Tensor:
        """The inputs (2 to 8, one data type) joined along axis; their other dims must
        match.  in_place_index is accepted for cuDNN frontend's signature and does not
        change the result."""
        op = self._op("concatenate", "concatenate", name, compute_data_type)
        if not isinstance(inputs, (list, tuple)) or not 2 <= len(inputs) <= 8:
            raise ValueError(f"{op.label()}: inputs must be a list of 2 to 8 tensors")
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or axis < 0:
            raise ValueError(f"{op.label()}: axis must be a non-negative int, got {axis!r}")
        self._param(op, "axis", int(axis))
        if in_place_index is not None:
            self._param(op, "in_place_index", int(in_place_index))
        return self._finish(op, [(f"x{i}", t) for i, t in enumerate(inputs)], "y",
                            users=[f"inputs[{i}]" for i in range(len(inputs))])

    def reshape(self, input: Tensor, name: Optional[str] = None,
                reshape_mode: Any = _reshape_mode.VIEW_ONLY) -> Tensor:
        """y, input with other dims (set them: ``y.set_dim([...])``, as many elements).
        VIEW_ONLY reads y's dims and strides as a view of input's memory (input and y each
        packed in some dim order); LOGICAL copies in row-major logical order, as NumPy's
        reshape."""
        op = self._op("reshape", "reshape", name, None)
        mode = _fe_enum(reshape_mode, _reshape_mode, op.label(), "reshape_mode")
        self._param(op, "mode", _RESHAPE_MODES[_reshape_mode(mode)])
        y = self._finish(op, [("x", input)], "y")
        y._a["input_data_type"] = True  # moved, not converted: x's type unless set
        return y
