"""Host arrays: bfloat16 conversion and the mapping between NumPy and hipdnn types.

NumPy has no bfloat16: a BFLOAT16 tensor takes a ``uint16`` array holding the bit
patterns, or an ``ml_dtypes.bfloat16`` array where that package is installed.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np
from numpy.typing import NDArray

from .enums import data_type

__all__ = ["to_bfloat16", "from_bfloat16", "numpy_dtype", "data_type_of"]

try:  # optional: a real bfloat16 NumPy dtype
    import ml_dtypes as _ml_dtypes

    _ML_BFLOAT16: Optional["np.dtype[Any]"] = np.dtype(_ml_dtypes.bfloat16)
except Exception:  # pragma: no cover - depends on the environment
    _ML_BFLOAT16 = None

_FROM_NUMPY: Dict["np.dtype[Any]", data_type] = {
    np.dtype(np.float32): data_type.FLOAT,
    np.dtype(np.float64): data_type.DOUBLE,
    np.dtype(np.float16): data_type.HALF,
    np.dtype(np.int8): data_type.INT8,
    np.dtype(np.int32): data_type.INT32,
    np.dtype(np.int64): data_type.INT64,
    np.dtype(np.uint8): data_type.UINT8,
    np.dtype(np.bool_): data_type.BOOLEAN,
}

_TO_NUMPY: Dict[data_type, "np.dtype[Any]"] = {v: k for k, v in _FROM_NUMPY.items()}
_TO_NUMPY[data_type.BFLOAT16] = np.dtype(np.uint16)


def to_bfloat16(array: Any) -> NDArray[np.uint16]:
    """Rounds float values to bfloat16 (to nearest, ties to even) and returns the bit
    patterns as a ``uint16`` array of the same shape.  NaN stays NaN (quiet); infinities
    stay infinite; values beyond the bfloat16 range round to infinity."""
    bits = np.ascontiguousarray(np.asarray(array, dtype=np.float32)).view(np.uint32)
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    rounding = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    with np.errstate(over="ignore"):
        out = ((bits + rounding) >> np.uint32(16)).astype(np.uint16)
    if nan.any():
        out[nan] = ((bits[nan] >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16)
    return out


def from_bfloat16(array: Any) -> NDArray[np.float32]:
    """bfloat16 bit patterns (``uint16``, or an ``ml_dtypes.bfloat16`` array) to a
    ``float32`` array of the same shape; exact."""
    a = np.asarray(array)
    if _ML_BFLOAT16 is not None and a.dtype == _ML_BFLOAT16:
        a = a.view(np.uint16)
    if a.dtype != np.uint16:
        raise TypeError(f"from_bfloat16: expected a uint16 array of bit patterns, got {a.dtype}")
    return (np.ascontiguousarray(a).astype(np.uint32) << np.uint32(16)).view(np.float32)


def numpy_dtype(dtype: int) -> "np.dtype[Any]":
    """The NumPy dtype that holds a hipdnn data type (uint16 for BFLOAT16)."""
    try:
        return _TO_NUMPY[data_type(dtype)]
    except (KeyError, ValueError):
        raise ValueError(f"no NumPy dtype for hipdnn data type {dtype!r}") from None


def data_type_of(dtype: Any, hint: Optional[int] = None) -> data_type:
    """The hipdnn data type of a NumPy dtype.  ``uint16`` is only accepted as BFLOAT16
    bit patterns when ``hint`` says so; ml_dtypes' bfloat16 maps to BFLOAT16."""
    dt = np.dtype(dtype)
    if _ML_BFLOAT16 is not None and dt == _ML_BFLOAT16:
        return data_type.BFLOAT16
    if dt == np.uint16:
        if hint is not None and data_type(hint) == data_type.BFLOAT16:
            return data_type.BFLOAT16
        raise TypeError("a uint16 array holds bfloat16 bit patterns only when you say so: "
                        "pass data_type=hipdnn.data_type.BFLOAT16 (see hipdnn.to_bfloat16)")
    if dt.byteorder not in "=|":
        raise TypeError(f"NumPy dtype {dt} is not in the machine's byte order; "
                        "convert it with array.astype(array.dtype.newbyteorder('='))")
    try:
        return _FROM_NUMPY[dt]
    except KeyError:
        raise TypeError(f"NumPy dtype {dt} has no hipdnn data type; use one of "
                        + ", ".join(str(k) for k in _FROM_NUMPY) + " or bfloat16") from None


def as_buffer(array: Any) -> Any:
    """What the extension reads: ml_dtypes bfloat16 arrays are viewed as their uint16
    bits (their own buffer export has no struct format for bfloat16)."""
    if _ML_BFLOAT16 is not None and getattr(array, "dtype", None) == _ML_BFLOAT16:
        return array.view(np.uint16)
    return array
