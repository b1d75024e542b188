"""A host engine's plan run on device tensors, when the user asked for that engine.

A graph made from device tensors is planned on device engines only (build.py, ``_barred``);
``set_preferred_engine`` of a host engine (``reference_cpu``) chooses it all the same.  Its
plan then gets host copies of the device tensors of the variant pack: each is copied to a
host buffer of the bytes its elements span (after the device's pending work), viewed with
its own shape and strides, and the outputs are copied back after the run.  Slow, and said
so in hipdnn's log the first time a plan does it; never done unasked.
"""
from __future__ import annotations

from typing import Any, List, Optional, Set, Tuple

import numpy as np
from numpy.typing import NDArray

from .. import _C
from .. import device as _device
from ..arrays import numpy_dtype
from ..enums import log_level, memory_space


def _host_copy(value: Any) -> Optional[Tuple[NDArray[Any], NDArray[Any]]]:
    """A host buffer of the bytes ``value``'s elements span, and a view of it with
    ``value``'s shape and strides; None for anything but device memory of one of hipdnn's
    data types (managed memory the host reads as it is)."""
    dt, shape, strides, space, _name = _C.describe_array(value)
    if space != memory_space.DEVICE or dt == -1:
        return None
    dtype = np.dtype(np.uint16) if dt == -2 else numpy_dtype(dt)
    if min(strides, default=0) < 0 or min(shape, default=0) < 0:
        return None  # the pack says what is wrong with it (a negative dim: before its span)
    span = 0 if 0 in shape else 1 + sum((d - 1) * s for d, s in zip(shape, strides))
    host = np.empty(span, dtype)
    _C.copy_value(value, host, True)
    return host, np.lib.stride_tricks.as_strided(
        host, shape=tuple(shape), strides=tuple(s * dtype.itemsize for s in strides))


class HostStaging:
    """The variant pack's device tensors as host arrays, and the outputs to copy back."""

    def __init__(self, pack: _C.VariantPack, arrays: List[Any]) -> None:
        self.arrays = list(arrays)
        self._back: List[Tuple[Any, NDArray[Any]]] = []
        for i, value in enumerate(arrays):
            if not _device.is_device_array(value):
                continue
            copy = _host_copy(value)
            if copy is None:
                continue
            self.arrays[i] = copy[1]
            if pack.tensors[i][5]:  # an output
                self._back.append((value, copy[0]))

    def copy_back(self) -> None:
        """The outputs' host buffers to their device tensors."""
        for value, host in self._back:
            _C.copy_value(value, host, False)


def staged_for(plan_engine: str, space: memory_space, preferred: Optional[str], graph: str,
               pack: _C.VariantPack, arrays: List[Any], said: Set[str]) -> Optional[HostStaging]:
    """The staging of ``arrays`` for a host engine's plan the user preferred, or None when
    nothing needs it."""
    if space != memory_space.HOST or plan_engine != preferred:
        return None
    staging = HostStaging(pack, arrays)
    if all(a is b for a, b in zip(staging.arrays, arrays)):
        return None
    if plan_engine not in said:
        said.add(plan_engine)
        _C.log_message(int(log_level.WARN), f"graph '{graph}': {plan_engine} runs in host "
                       "memory and was preferred for device tensors: each execute copies "
                       "them to host memory and its outputs back (slow)")
    return staging
