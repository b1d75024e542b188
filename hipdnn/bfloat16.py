"""bfloat16 on NumPy, which has no such type: arrays of ``uint16`` bit patterns.

``from_float`` rounds to bfloat16 (to nearest, ties to even), ``to_float`` widens back to
float32 exactly.  A BFLOAT16 tensor takes a ``uint16`` array of bit patterns (say so with
``data_type=hipdnn.data_type.BFLOAT16``), or an ``ml_dtypes.bfloat16`` array where that
package is installed.  The module itself also names the data type, as ``torch.bfloat16``
does: ``g.tensor_like(bits, data_type=hipdnn.bfloat16)``.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

__all__ = ["from_float", "to_float", "storage_dtype"]

try:  # optional: a real bfloat16 NumPy dtype
    import ml_dtypes as _ml_dtypes

    ML_BFLOAT16: Optional["np.dtype[Any]"] = np.dtype(_ml_dtypes.bfloat16)
except Exception:  # pragma: no cover - depends on the environment
    ML_BFLOAT16 = None

#: The NumPy dtype that holds bfloat16 bit patterns.
storage_dtype = np.dtype(np.uint16)


def from_float(values: Any) -> NDArray[np.uint16]:
    """Rounds values to bfloat16 (to nearest, ties to even) and returns the bit patterns
    as a ``uint16`` array of the same shape.  The values are first read as float32 (a
    float64 input is rounded to float32 on the way, as NumPy's cast does); NaN stays a
    quiet NaN with its sign, infinities stay infinite, values beyond the bfloat16 range
    round to infinity, and -0.0 stays -0.0."""
    floats = np.asarray(values, dtype=np.float32)
    # ascontiguousarray makes a 0-d array 1-d under NumPy 1 (not 2): keep the shape.
    bits = np.ascontiguousarray(floats).reshape(floats.shape).view(np.uint32)
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    # Adding 0x7FFF plus the lowest kept bit, then truncating, rounds ties to even.
    rounding = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    with np.errstate(over="ignore"):
        out = np.asarray((bits + rounding) >> np.uint32(16)).astype(np.uint16)
    if nan.any():
        out[nan] = ((bits[nan] >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16)
    return out


def to_float(bits: Any) -> NDArray[np.float32]:
    """bfloat16 bit patterns (a ``uint16`` array, or an ``ml_dtypes.bfloat16`` array) to a
    ``float32`` array of the same shape; exact."""
    a = np.asarray(bits)
    if ML_BFLOAT16 is not None and a.dtype == ML_BFLOAT16:
        a = a.view(np.uint16)
    if a.dtype != np.uint16:
        raise TypeError(f"bfloat16.to_float: expected a uint16 array of bit patterns, got "
                        f"{a.dtype}")
    wide = np.asarray(np.ascontiguousarray(a).reshape(a.shape).astype(np.uint32) << np.uint32(16))
    return wide.view(np.float32)
