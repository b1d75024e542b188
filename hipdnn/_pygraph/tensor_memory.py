"""cuDNN's rule for variant-pack memory, where it is safe to follow.

cuDNN takes a bare pointer for each tensor of a variant pack and never looks at the array
around it, so cuDNN frontend code may hand a tensor memory of another shape: its own
weight-gradient test passes ``dw`` as ``torch.zeros_like(x)``.  hipdnn checks dtype, shape
and strides (execute.c).  An array whose shape differs from the tensor's only in dims of
1, with the same strides elsewhere, holds the same elements at the same places (cuDNN
frontend's conv-reduction test passes [n, h, w] for [n, 1, h, w]): it is taken as the
tensor, input or output.  When only the shape of an output is wrong, and the array is one
dense block of the tensor's element type holding more elements than the tensor's strides
reach, the block is used as the tensor's memory: a view with the plan's shape and strides
that starts at the block's first element, with a warning.  Anything else stays the pack's
error: an input of another shape would be read wrong, and an output of the same size but
another shape (a transposed one) is more likely a mistake than scratch memory.  What an
engine writes stays inside the array it was given.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import _C
from ..arrays import as_data_type, numpy_dtype
from ..enums import data_type


def _layout(arr: Any) -> Optional[Tuple[Tuple[int, ...], Tuple[int, ...], Any]]:
    """(shape, strides in elements, dtype) of a torch tensor, a CuPy array or a NumPy array;
    None for anything else."""
    try:
        if type(arr).__module__.split(".")[0] == "torch":
            return tuple(arr.shape), tuple(arr.stride()), arr.dtype
        if hasattr(arr, "strides") and hasattr(arr, "itemsize") and hasattr(arr, "shape"):
            size = int(arr.itemsize)
            if any(int(s) % size for s in arr.strides):
                return None
            return tuple(arr.shape), tuple(int(s) // size for s in arr.strides), arr.dtype
    except Exception:  # a property that raises: not an array this rule knows
        return None
    return None


def _dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether the elements fill one block with no gaps and no overlap (any dim order)."""
    step = 1
    for stride, dim in sorted((s, d) for s, d in zip(strides, shape) if d > 1):
        if stride != step:
            return False
        step *= dim
    return True


def _view(arr: Any, dims: Sequence[int], strides: Sequence[int]) -> Any:
    """A view of ``arr``'s first element with the given shape and strides (in elements);
    None for an array of a kind this cannot view."""
    if type(arr).__module__.split(".")[0] == "torch":
        return arr.as_strided(tuple(dims), tuple(strides), arr.storage_offset())
    if isinstance(arr, np.ndarray):
        return np.lib.stride_tricks.as_strided(
            arr, shape=tuple(dims), strides=tuple(s * arr.itemsize for s in strides),
            writeable=arr.flags.writeable)
    if isinstance(arr, _C.DeviceArray):  # fuzz_variant_pack: it went the CuPy way
        return arr.as_strided(list(dims), list(strides))
    if type(arr).__module__.split(".")[0] != "cupy":
        return None
    module = __import__("cupy")
    return module.lib.stride_tricks.as_strided(
        arr, shape=tuple(dims), strides=tuple(s * arr.itemsize for s in strides))


def _squeezed(shape: Sequence[int], strides: Sequence[int]) -> Tuple[Tuple[int, int], ...]:
    """(dim, stride) of the dims above 1: what addresses memory."""
    return tuple((int(d), int(s)) for d, s in zip(shape, strides) if d != 1)


def _same_type(dtype: Any, dt: int, label: str) -> bool:
    if isinstance(dtype, np.dtype) and dtype == np.uint16 and dt == data_type.BFLOAT16:
        return True  # bfloat16 bits
    try:
        return as_data_type(dtype, label) == dt
    except (TypeError, ValueError):
        return False


def _as_tensor_memory(arr: Any, entry: Tuple[Any, ...], label: str) -> Optional[Any]:
    """``arr`` viewed as pack tensor ``entry`` (uid, name, dtype, dims, strides, is_output)
    when the rules above allow it, else None."""
    _uid, _name, dt, dims, strides, is_output = entry
    layout = _layout(arr)
    if layout is None:
        return None
    shape, have_strides, dtype = layout
    if tuple(shape) == tuple(dims) or min(list(shape) + [1]) < 0 or \
            not _same_type(dtype, dt, label):
        return None
    if _squeezed(shape, have_strides) == _squeezed(dims, strides):
        return _view(arr, dims, strides)  # the same elements at the same places, ranks apart
    if not is_output:
        return None
    span = 1 + sum((d - 1) * s for d, s in zip(dims, strides))
    count = math.prod(shape)
    if min(have_strides + (0,)) < 0 or not _dense(shape, have_strides) or count <= span:
        return None
    view = _view(arr, dims, strides)
    if view is not None:
        warnings.warn(f"variant pack: {label} expects {_C.dtype_name(dt)} {list(dims)}, got an "
                      f"array shaped {list(shape)}: used as the tensor's memory from its first "
                      "element, as cuDNN does (it is one dense block of "
                      f"{count} elements, more than the {span} the tensor reaches)",
                      RuntimeWarning, stacklevel=4)
    return view


def reinterpreted(pack: _C.VariantPack, arrays: List[Any], label_of: Any) -> Optional[List[Any]]:
    """``arrays`` with each one that cuDNN's rule lets stand for its tensor viewed as that
    tensor; None when none changed (the pack's own error then stands)."""
    out, changed = list(arrays), False
    for i, arr in enumerate(arrays):
        view = _as_tensor_memory(arr, pack.tensors[i], label_of(pack, i))
        if view is not None:
            out[i], changed = view, True
    return out if changed else None


class RawPointer:
    """A device address given as an int, as cuDNN frontend code passes ``t.data_ptr()`` in
    a variant pack (and as the workspace): the tensor's own dims, strides and data type at
    that address, through ``__cuda_array_interface__``.  Nothing is taken on trust: the
    backend asks the device runtime whether the address is device memory and whether its
    allocation holds every element (execute.c), and refuses it naming the tensor if not."""

    __slots__ = ("shape", "strides", "typestr", "address")

    def __init__(self, address: int, dims: Sequence[int], strides: Sequence[int],
                 typestr: str, itemsize: int) -> None:
        self.address = address
        self.shape = tuple(int(d) for d in dims)
        self.strides = tuple(int(s) * itemsize for s in strides)
        self.typestr = typestr

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        return {"shape": self.shape, "strides": self.strides, "typestr": self.typestr,
                "data": (self.address, False), "version": 3}

    @staticmethod
    def is_address(value: Any) -> bool:
        """Whether a variant-pack value is an int standing for a device address."""
        return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))

    @classmethod
    def of(cls, address: Any, dt: int, dims: Sequence[int],
           strides: Sequence[int]) -> Optional["RawPointer"]:
        """The tensor (data type dt, dims, strides in elements) at ``address`` when it is an
        int and the type has a NumPy dtype (bfloat16: its uint16 bits); else None."""
        if not cls.is_address(address):
            return None
        try:
            np_type = numpy_dtype(dt)
        except ValueError:
            return None
        return cls(int(address), dims, strides, np_type.str, np_type.itemsize)
