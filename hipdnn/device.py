"""Device memory: ``hipdnn.DeviceArray`` and the GPU runtime the backend found.

``DeviceArray`` is allocated through the backend's device runtime (HIP on AMD GPUs, the
CUDA driver on NVIDIA GPUs), so it needs no GPU library on the Python side.  It exports
itself zero-copy through ``__dlpack__`` and ``__cuda_array_interface__`` (PyTorch's
``torch.from_dlpack``, ``cupy.asarray``), and hipdnn accepts any object with either
protocol as a variant-pack value, so PyTorch and CuPy tensors are used in place::

    x = hipdnn.DeviceArray.from_numpy(np.ones((4, 8), np.float32))
    y = hipdnn.DeviceArray.empty((4, 8), np.float32)
    g.execute({X: x, Y: y})
    print(y.numpy())
"""
from __future__ import annotations

from typing import Any, List, NamedTuple, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

from . import _C
from .arrays import _ML_BFLOAT16, data_type_of, numpy_dtype
from .enums import data_type, memory_space
from .enums import data_type as _DT

__all__ = ["DeviceArray", "DeviceRuntime", "device_runtime", "synchronize", "is_device_array"]

_DL_HOST_TYPES = (1, 3, 11)  # DLPack: CPU, CUDA pinned host, ROCm pinned host


class DeviceRuntime(NamedTuple):
    """The GPU runtime the backend uses: ``name`` is "hip", "cuda" or "none" (then
    ``reason`` lists every library tried and its answer)."""

    name: str
    device_count: int
    reason: str


def device_runtime() -> DeviceRuntime:
    """The GPU runtime the backend resolved (loading it on the first call)."""
    return DeviceRuntime(*_C.device_runtime())


def synchronize() -> None:
    """Waits for all work on the current device."""
    _C.device_synchronize()


def is_device_array(obj: Any) -> bool:
    """Whether ``obj`` is device memory hipdnn takes zero-copy: a DeviceArray, an object
    with ``__dlpack__`` whose device is not the host (a PyTorch CPU tensor is host
    memory), or one with ``__cuda_array_interface__``.  Looked up on the type, so that no
    property runs (PyTorch's __cuda_array_interface__ raises for bfloat16)."""
    if isinstance(obj, _C.DeviceArray):
        return True
    if isinstance(obj, np.ndarray):
        return False
    kind = type(obj)
    if hasattr(kind, "__dlpack__"):
        try:
            device_type = obj.__dlpack_device__()[0]
        except Exception:  # no __dlpack_device__: assume device memory
            return True
        return int(device_type) not in _DL_HOST_TYPES
    return hasattr(kind, "__cuda_array_interface__") or \
        "__cuda_array_interface__" in getattr(obj, "__dict__", {})


def is_host_tensor(obj: Any) -> bool:
    """Whether ``obj`` is another library's host tensor (not NumPy's): an object with
    ``__dlpack__`` whose device is the host, a PyTorch CPU tensor."""
    if isinstance(obj, (np.ndarray, np.generic, _C.DeviceArray)) or \
            not hasattr(type(obj), "__dlpack__"):
        return False
    try:
        return int(obj.__dlpack_device__()[0]) in _DL_HOST_TYPES
    except Exception:
        return False


def host_view(obj: Any) -> NDArray[Any]:
    """A NumPy view of host memory: an array, or a host tensor (is_host_tensor) through
    DLPack; a tensor that requires grad is viewed as its data, as the C side reads it."""
    if is_host_tensor(obj):
        if getattr(obj, "requires_grad", False) and hasattr(obj, "detach"):
            obj = obj.detach()
        return np.from_dlpack(obj)
    return np.asarray(obj)


def _data_type(dtype: Any) -> data_type:
    """A hipdnn data type from a hipdnn data_type, a NumPy dtype or "bfloat16"."""
    if isinstance(dtype, data_type):
        return dtype
    if isinstance(dtype, str) and dtype.lower() in ("bfloat16", "bf16"):
        return data_type.BFLOAT16
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        return data_type(int(dtype))
    return data_type_of(dtype)


class DeviceArray(_C.DeviceArray):
    """Device memory with a shape, strides and a hipdnn data type (see the module doc).

    ``DeviceArray(shape, data_type, strides=None)`` allocates (strides in elements, default
    packed); ``empty`` and ``from_numpy`` are the usual ways in, ``numpy()`` the way out.
    ``shape``, ``strides`` (bytes, as NumPy) and ``element_strides`` describe it;
    ``as_strided(shape, strides, offset)`` views part of it; ``fill_bytes(v)`` sets every
    byte.  bfloat16 arrays read back as uint16 bit patterns (``hipdnn.from_bfloat16``)."""

    @classmethod
    def empty(cls, shape: Sequence[int], dtype: Any = np.float32,
              strides: Optional[Sequence[int]] = None) -> "DeviceArray":
        """Uninitialized device memory: ``dtype`` is a NumPy dtype, a hipdnn data_type or
        "bfloat16"; ``strides`` in elements (default: packed row-major)."""
        shape = [int(d) for d in shape]
        return cls(shape, int(_data_type(dtype)),
                   None if strides is None else [int(s) for s in strides])

    @classmethod
    def from_numpy(cls, array: Any, data_type: Optional[Any] = None) -> "DeviceArray":
        """A packed device copy of a host array.  A uint16 array holds bfloat16 bits only
        when ``data_type=hipdnn.data_type.BFLOAT16`` says so (ml_dtypes' bfloat16 needs
        nothing)."""
        a = np.asarray(array)
        hint = None if data_type is None else _data_type(data_type)
        if _ML_BFLOAT16 is not None and a.dtype == _ML_BFLOAT16:
            a = a.view(np.uint16)
            hint = hint if hint is not None else _DT.BFLOAT16
        dt = data_type_of(a.dtype, hint)  # uint16 only as bfloat16 bits, when told so
        if hint is not None:
            if numpy_dtype(hint).itemsize != a.dtype.itemsize:
                raise TypeError(f"from_numpy: a {a.dtype} array cannot hold {hint.name} values")
            dt = hint
        a = np.ascontiguousarray(a)
        out = cls(list(a.shape), int(dt))
        out._copy_from_host(a.reshape(-1).view(np.uint8))
        return out

    @property
    def dtype(self) -> "np.dtype[Any]":
        """The NumPy dtype of ``numpy()`` (uint16 for bfloat16)."""
        return numpy_dtype(self.data_type)

    def numpy(self) -> NDArray[Any]:
        """A host copy with the same shape (packed), after waiting for the device."""
        dt = self.dtype
        span = self.nbytes_spanned // dt.itemsize
        host = np.empty(span, dt)
        self._copy_to_host(host)
        if list(self.element_strides) == _packed(self.shape):
            return host.reshape(self.shape)
        view = np.lib.stride_tricks.as_strided(host, shape=self.shape, strides=self.strides)
        return np.array(view)

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> NDArray[Any]:
        if copy is False:
            raise ValueError("a DeviceArray cannot be viewed as a NumPy array without a copy")
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    @property
    def is_managed(self) -> bool:
        """Whether the memory is managed (usable from host and device)."""
        return self.memory_space == memory_space.MANAGED


def _packed(shape: Sequence[int]) -> List[int]:
    out, acc = [0] * len(shape), 1
    for i in range(len(shape) - 1, -1, -1):
        out[i] = acc
        acc *= max(int(shape[i]), 1)
    return out
