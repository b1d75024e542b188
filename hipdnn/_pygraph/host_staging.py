"""A host engine's plan run on device tensors, when the user asked for that engine.

A graph made from device tensors is planned on device engines only (build.py, ``_barred``);
``set_preferred_engine`` of a host engine (``reference_cpu``) chooses it all the same.  Its
plan then gets host copies of the device tensors of the variant pack, and the outputs are
copied back after the run.  Slow, and said so in hipdnn's log the first time a plan does
it; never done unasked.

The copies keep what the backend checks of device memory (issue 26): before anything is
allocated or copied, a read-only output is refused, and so are an address the runtime says
is host memory (the copies would read and write it as device memory) and a value whose
elements reach past its device allocation (the backend's own check, ``_C.pointer_extent``,
and its message).  Values whose device bytes overlap share one host buffer, at the same
distances apart and at the same address modulo 256, so the backend sees the sharing it
would see on the device: an input under an output is copied first, and two outputs over the
same bytes are refused naming both (csrc/backend/aliasing.c).
"""
from __future__ import annotations

from typing import Any, List, NamedTuple, Optional, Set, Tuple

import numpy as np
from numpy.typing import NDArray

from .. import _C
from .. import device as _device
from ..arrays import numpy_dtype
from ..enums import log_level, memory_space

_ALIGN = 256  # a host copy keeps its device address modulo this (an allocation's alignment)


class _Staged(NamedTuple):
    """One device value of the pack: its place in the pack, the bytes its elements span
    from element 0, and how to view them."""

    at: int  # index in the pack
    value: Any
    address: int
    span: int
    dtype: "np.dtype[Any]"
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]  # bytes
    readonly: bool


def _label(entry: Tuple[Any, ...]) -> str:
    """As the pack names a tensor (csrc/python/execute.c)."""
    uid, name = entry[0], entry[1]
    return f"tensor '{name}' (uid {uid})" if name else f"tensor with uid {uid}"


def _refused(status: int, message: str) -> _C.HipdnnError:
    """The exception the backend raises for ``status``, with ``message``."""
    cls = _C.InvalidGraphError if status == _C.STATUS_BAD_PARAM else _C.HipdnnError
    e = cls(message)
    e.status, e.status_name = status, _C.status_name(status)
    return e


def _describe(index: int, value: Any) -> Optional[_Staged]:
    """``value`` as a staged device value; None for anything but device memory of one of
    hipdnn's data types (managed memory the host reads as it is), for what the pack says is
    wrong (a negative dim or stride, a NULL pointer) before any span is taken, and where
    there is no GPU runtime to copy with (the pack says the memory is not the engine's)."""
    dt, shape, strides, space, _name, address, readonly = _C.describe_array(value)
    if space != memory_space.DEVICE or dt == -1 or not address or \
            _C.device_runtime()[0] == "none":
        return None
    if min(strides, default=0) < 0 or min(shape, default=0) < 0:
        return None
    try:
        dtype = np.dtype(np.uint16) if dt == -2 else numpy_dtype(dt)
    except ValueError:
        return None
    span = 0 if 0 in shape else (1 + sum((d - 1) * s for d, s in zip(shape, strides))) \
        * dtype.itemsize
    return _Staged(index, value, int(address), span, dtype, tuple(shape),
                   tuple(s * dtype.itemsize for s in strides), bool(readonly))


def _check(pack: _C.VariantPack, v: _Staged) -> None:
    """What the pack and the backend (csrc/backend/execute.c) refuse of a device value,
    refused before any copy: a read-only output, an address the runtime says is host
    memory, and elements past the device allocation."""
    entry = pack.tensors[v.at]
    _uid, _name, _dt, _dims, _strides, is_output = entry
    if is_output and v.readonly:
        raise ValueError(f"variant pack: {_label(entry)} is an output but its array is "
                         "read-only")
    if _C.pointer_memory_space(v.address)[0] == memory_space.HOST:
        raise _refused(_C.STATUS_BAD_PARAM, f"variant pack: {_label(entry)} is declared device "
                       f"memory but the {_C.device_runtime()[0]} runtime reports host memory "
                       f"at {v.address:#x}")
    if v.address + v.span > 1 << 64:
        raise _refused(_C.STATUS_BAD_PARAM, f"variant pack: {_label(entry)} reaches past the "
                       "address space")
    inside = _C.pointer_extent(v.address, v.span) if v.span else 0
    if inside < v.span:
        raise _refused(_C.STATUS_BAD_PARAM, f"variant pack: {_label(entry)} spans {v.span} "
                       f"bytes from {v.address:#x} but its device allocation ends {inside} "
                       "bytes after it; its dims or strides overstate the memory")


def _groups(values: List[_Staged]) -> List[List[_Staged]]:
    """The values in runs whose device bytes overlap, each run in address order."""
    runs: List[List[_Staged]] = []
    end = 0
    for v in sorted(values, key=lambda v: v.address):
        if runs and v.address < end:
            runs[-1].append(v)
            end = max(end, v.address + v.span)
        else:
            runs.append([v])
            end = v.address + v.span
    return runs


class HostStaging:
    """The variant pack's device tensors as host arrays, and the outputs to copy back."""

    def __init__(self, pack: _C.VariantPack, arrays: List[Any]) -> None:
        self.arrays = list(arrays)
        self._back: List[Tuple[Any, NDArray[Any]]] = []
        staged = [v for v in (_describe(i, a) for i, a in enumerate(arrays)
                              if _device.is_device_array(a)) if v is not None]
        for v in staged:
            _check(pack, v)
        for run in _groups(staged):
            self._stage(pack, run)

    def _stage(self, pack: _C.VariantPack, run: List[_Staged]) -> None:
        """One host buffer for a run of overlapping values: each copied in, viewed, and
        each output's bytes kept for the copy back."""
        lo = run[0].address
        size = max(v.address + v.span for v in run) - lo
        try:
            buf = np.empty(size + _ALIGN, np.uint8)
        except MemoryError:
            raise _refused(_C.STATUS_ALLOC_FAILED, f"variant pack: no host memory for a "
                           f"copy of {_label(pack.tensors[run[0].at])} ({size} bytes)") \
                from None
        first = (lo - buf.ctypes.data) % _ALIGN
        host = buf[first:first + size]
        for v in run:
            part = host[v.address - lo:v.address - lo + v.span]
            _C.copy_value(v.value, part, True)
            self.arrays[v.at] = np.ndarray(v.shape, v.dtype, buffer=host,
                                           offset=v.address - lo, strides=v.strides)
            if pack.tensors[v.at][5]:  # an output
                self._back.append((v.value, part))

    def copy_back(self) -> None:
        """The outputs' host bytes to their device tensors."""
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
