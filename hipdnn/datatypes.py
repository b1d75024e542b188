"""cuDNN frontend's ``cudnn.datatypes`` helpers that code written for it imports (its
kernel-API tests' utilities do, at module level): whether torch and CUTLASS are present, and
torch dtypes as ``hipdnn.data_type`` values.

cuDNN frontend converts torch dtypes to CUTLASS types for its CuTe DSL kernels; hipdnn has
no such kernels, so ``_convert_to_cutlass_data_type`` answers None, as cuDNN frontend's does
where CUTLASS is not installed.
"""
from __future__ import annotations

import importlib.util
from typing import Any, Optional

from .arrays import _is_torch_dtype, as_data_type
from .enums import data_type

__all__ = ["is_torch_available", "is_cutlass_available"]


def is_torch_available() -> bool:
    """Whether torch can be imported here (it is not imported by asking)."""
    return importlib.util.find_spec("torch") is not None


def is_cutlass_available() -> bool:
    """Whether NVIDIA's CUTLASS Python DSL can be imported here; hipdnn never uses it."""
    return importlib.util.find_spec("cutlass") is not None


def _torch_to_cudnn_data_type(dtype: Any) -> Optional[data_type]:
    """The ``hipdnn.data_type`` of a torch dtype; None for anything else or a torch dtype
    that has none (complex, unsigned 16-bit ...)."""
    if not _is_torch_dtype(dtype):
        return None
    try:
        return as_data_type(dtype, "_torch_to_cudnn_data_type")
    except (TypeError, ValueError):
        return None


def _convert_to_cutlass_data_type(dtype: Any, interpret_uint8_as_fp4x2: bool = False) -> None:
    """None: hipdnn has no CuTe DSL kernels to hand CUTLASS types to (cuDNN frontend
    answers None too where CUTLASS is not installed)."""
    del dtype, interpret_uint8_as_fp4x2
    return None
