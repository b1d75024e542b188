"""pygraph's reshape: cuDNN frontend's ``reshape(input, name, reshape_mode)``.

The result's dims (and, for a view of a non-row-major input, its strides) are the
user's to set, as in cuDNN frontend.  ``VIEW_ONLY`` (the default) re-describes the input's
memory, so a transpose is a view with permuted dims and strides; ``LOGICAL`` keeps the
row-major logical order of the elements, as NumPy's reshape, for any input layout.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from . import _C
from .enums import reshape_mode as _reshape_mode

if TYPE_CHECKING:
    from .pygraph import Tensor, pygraph

_MODES = {_reshape_mode.VIEW_ONLY: _C.RESHAPE_VIEW_ONLY,
          _reshape_mode.LOGICAL: _C.RESHAPE_LOGICAL}


def reshape(self: "pygraph", input: "Tensor", name: Optional[str] = None,
            reshape_mode: Any = _reshape_mode.VIEW_ONLY) -> "Tensor":
    """y, input with other dims (set them: ``y.set_dim([...])``, as many elements).
    VIEW_ONLY reads y's dims and strides as a view of input's memory (input and y each
    packed in some dim order); LOGICAL copies in row-major logical order, as NumPy's
    reshape."""
    from .pygraph import _fe_enum

    op = self._op("reshape", "reshape", name, None)
    mode = _fe_enum(reshape_mode, _reshape_mode, op.label(), "reshape_mode")
    self._param(op, "mode", _MODES[_reshape_mode(mode)])
    y = self._finish(op, [("x", input)], "y")
    y._a["input_data_type"] = True  # moved, not converted: x's type unless set
    return y
