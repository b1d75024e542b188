"""Host arrays: the mapping between NumPy (and torch) types and hipdnn data types.

NumPy has no bfloat16: a BFLOAT16 tensor takes a ``uint16`` array holding the bit
patterns, or an ``ml_dtypes.bfloat16`` array where that package is installed (see
``hipdnn.bfloat16``).
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

from . import bfloat16 as _bf16
from .enums import data_type

__all__ = ["to_bfloat16", "from_bfloat16", "numpy_dtype", "data_type_of", "as_data_type",
           "empty_strided"]

_ML_BFLOAT16 = _bf16.ML_BFLOAT16

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
    patterns as a ``uint16`` array of the same shape (``hipdnn.bfloat16.from_float``)."""
    return _bf16.from_float(array)


def from_bfloat16(array: Any) -> NDArray[np.float32]:
    """bfloat16 bit patterns (``uint16``, or an ``ml_dtypes.bfloat16`` array) to a
    ``float32`` array of the same shape; exact (``hipdnn.bfloat16.to_float``)."""
    return _bf16.to_float(array)


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


def empty_strided(dims: Sequence[int], strides: Sequence[int], dtype: Any) -> NDArray[Any]:
    """An uninitialised writable array with these dims and strides (in elements): a view
    of one allocation just large enough for them."""
    dims, strides = [int(d) for d in dims], [int(s) for s in strides]
    packed, acc = [0] * len(dims), 1
    for i in range(len(dims) - 1, -1, -1):
        packed[i] = acc
        acc *= dims[i]
    if strides == packed:
        return np.empty(dims, dtype)
    extent = 1 + sum((d - 1) * s for d, s in zip(dims, strides))
    base = np.empty(extent, dtype)
    return np.lib.stride_tricks.as_strided(
        base, shape=dims, strides=[s * base.itemsize for s in strides], writeable=True)


def as_buffer(array: Any) -> Any:
    """What the extension reads: ml_dtypes bfloat16 arrays are viewed as their uint16
    bits (their own buffer export has no struct format for bfloat16)."""
    if _ML_BFLOAT16 is not None and getattr(array, "dtype", None) == _ML_BFLOAT16:
        return array.view(np.uint16)
    return array


# torch dtypes by name, so that torch is never imported here: a value is recognised as a
# torch dtype by its type, and only exists if the caller imported torch.
_TORCH = {
    "torch.float32": data_type.FLOAT, "torch.float": data_type.FLOAT,
    "torch.float64": data_type.DOUBLE, "torch.double": data_type.DOUBLE,
    "torch.float16": data_type.HALF, "torch.half": data_type.HALF,
    "torch.bfloat16": data_type.BFLOAT16,
    "torch.int8": data_type.INT8, "torch.int32": data_type.INT32,
    "torch.int64": data_type.INT64, "torch.uint8": data_type.UINT8,
    "torch.bool": data_type.BOOLEAN,
    # cuDNN's 8- and 4-bit float types: names only, no engine runs them yet
    "torch.float8_e4m3fn": data_type.FP8_E4M3, "torch.float8_e5m2": data_type.FP8_E5M2,
    "torch.float8_e8m0fnu": data_type.FP8_E8M0, "torch.float4_e2m1fn_x2": data_type.FP4_E2M1,
}


def _is_torch_dtype(value: Any) -> bool:
    t = type(value)
    return t.__name__ == "dtype" and t.__module__.split(".")[0] == "torch"


def as_data_type(value: Any, what: str) -> Optional[data_type]:
    """A ``hipdnn.data_type`` from what cuDNN frontend code passes as one: the enum (or
    its int value), a NumPy dtype or scalar type (``np.float16``), a torch dtype
    (``torch.bfloat16``), ``ml_dtypes.bfloat16`` or the ``hipdnn.bfloat16`` module.
    ``None`` stays ``None`` (not set).  Strings and Python types are refused: "float"
    means float64 to NumPy but FLOAT (32-bit) to cuDNN."""
    if value is None:
        return None
    if isinstance(value, bool) or isinstance(value, np.bool_):
        raise TypeError(f"{what}: expected a hipdnn.data_type, got bool")
    if isinstance(value, (int, np.integer)):
        try:
            return data_type(int(value))
        except ValueError:
            raise ValueError(f"{what}: {int(value)} is not a hipdnn.data_type") from None
    if value is _bf16:
        return data_type.BFLOAT16
    if _is_torch_dtype(value):
        dt = _TORCH.get(str(value))
        if dt is None:
            raise TypeError(f"{what}: {value} has no hipdnn data type; use one of "
                            + ", ".join(sorted(_TORCH)))
        return dt
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        dt_np = np.dtype(value)
        if _ML_BFLOAT16 is not None and dt_np == _ML_BFLOAT16:
            return data_type.BFLOAT16
        if dt_np == np.uint16:
            raise TypeError(f"{what}: uint16 is not a hipdnn data type; for bfloat16 bit "
                            "patterns say hipdnn.data_type.BFLOAT16")
        try:
            return _FROM_NUMPY[dt_np.newbyteorder("=")]
        except KeyError:
            raise TypeError(f"{what}: NumPy dtype {dt_np} has no hipdnn data type") from None
    raise TypeError(f"{what}: expected a hipdnn.data_type, got {type(value).__name__} "
                    "(NumPy and torch dtypes are taken too)")
