"""``hipdnn.pygraph``: cuDNN frontend's ``cudnn.pygraph`` over hipdnn's backend descriptors.

Tensors and operations are plain Python objects that hold attributes until
``build_operation_graph()`` lowers them to TENSOR / OPERATION_* / OPERATIONGRAPH
descriptors and finalizes the graph.  The backend validates it and infers every unset
dim, stride and data type, writing them back into the TENSOR descriptors; the tensor
getters then read those.  Heuristics, engine configs and execution plans follow the same
steps and names as cuDNN frontend.

This module holds the tensor type and the ``pygraph`` class, which makes tensors and
checks ops' inputs; its other methods come from one mixin per op family and per build
stage in hipdnn/_pygraph/ (see that package's docstring).
"""
from __future__ import annotations

import inspect
import numbers
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple, Union

import numpy as np
from numpy.typing import NDArray

from . import _C
from . import device as _device
from ._pygraph.autotune import Autotune, AutotuneResult
from ._pygraph.args import _bool_arg, _dtype_arg, _int_list, _name_arg, _type_name
from ._pygraph.base import (_BOOL, _CHAR, _DTYPE, _EDITING, _HEURISTICS, _INT64, _PLANS,
                            _UINT8, _VALIDATED)
from ._pygraph.build import BuildSteps
from ._pygraph.conv import ConvOps
from ._pygraph.frontend_options import check_options
from ._pygraph.matmul import MatmulOps
from ._pygraph.movement import MovementOps
from ._pygraph.nodes import _NAMES_INPUTS, _Op, _suffixes
from ._pygraph.norm import NormOps
from ._pygraph.plans import Plans
from ._pygraph.pointwise import PointwiseOps
from ._pygraph.reduction import ReductionOps
from ._pygraph.resample import ResampleOps
from ._pygraph.sdpa import SdpaOps
from ._pygraph.serialize import Serialization
from .arrays import data_type_of, empty_strided, from_bfloat16, numpy_dtype
from .enums import data_type
from .errors import HipdnnError

__all__ = ["pygraph", "Tensor", "knob", "KernelGroup", "AutotuneResult"]

# A data type argument: a hipdnn.data_type (or its int), a NumPy dtype or scalar type, a
# torch dtype, ml_dtypes.bfloat16 or the hipdnn.bfloat16 module (arrays.as_data_type).
# torch is never imported, so its dtype cannot be named here: the alias is Any.
DataTypeLike = Any
# An op operand: a tensor of this graph, or a Python float (a pass-by-value scalar).
Operand = Union["Tensor", float]
_DT = data_type  # for methods whose cuDNN-style keyword `data_type` hides the enum


# ---- tensors -----------------------------------------------------------------------


class Tensor:
    """A tensor of a ``pygraph``.  Setters return the tensor so that they chain;
    getters return the values inferred by the last build where there are some."""

    __slots__ = ("_graph", "_a", "_inferred", "_uid", "_uid_explicit", "_strides_given",
                 "_desc", "__weakref__")

    def __init__(self, graph: "pygraph", uid: int):
        self._graph = graph
        self._a: Dict[str, Any] = {}
        self._inferred: Dict[str, Any] = {}
        self._uid = uid
        self._uid_explicit = False
        # Strides the user gave (tensor(stride=), set_stride) rather than ones taken from
        # an array's layout by tensor_like: set_dim keeps the first, re-lays the second.
        self._strides_given = False
        self._desc: Optional[_C.Descriptor] = None  # a deserialized graph's TENSOR descriptor

    # -- setters --
    def _changing(self) -> None:
        self._graph._check_editable("change a tensor")
        self._graph._invalidate()

    def set_name(self, name: str) -> "Tensor":
        """The tensor's name, used in messages and listings."""
        if not isinstance(name, str):
            raise TypeError(f"set_name: expected a str, got {_type_name(name)}")
        self._changing()
        self._a["name"] = name or ""
        return self

    def set_uid(self, uid: int) -> "Tensor":
        """The unique id that variant packs and serialized graphs know the tensor by."""
        if isinstance(uid, (bool, float)) or not isinstance(uid, (int, np.integer)):
            raise TypeError(f"set_uid: expected an int, got {_type_name(uid)}")
        self._changing()
        self._uid = int(uid)
        self._uid_explicit = True
        return self

    def set_dim(self, dim: Sequence[int]) -> "Tensor":
        """New dims.  Strides the tensor took from an array (tensor_like) are laid out
        again for them in the same dimension order (a channels-last array stays channels
        last); strides given with set_stride or tensor(stride=) are kept."""
        dims = _int_list(dim, f"tensor '{self.get_name()}': set_dim")
        _check_dims(dims, self.get_name())
        self._changing()
        old = self._a.get("stride")
        if old is not None and (not self._strides_given or len(old) != len(dims)):
            if len(old) == len(dims):
                self._a["stride"] = _strides_in_order_of(old, dims)
            else:
                del self._a["stride"]  # packed row-major for the new rank
                self._strides_given = False
        self._a["dim"] = dims
        return self

    def set_stride(self, stride: Sequence[int]) -> "Tensor":
        """The strides, in elements (positive), one per dim."""
        strides = _int_list(stride, f"tensor '{self.get_name()}': set_stride")
        if any(s <= 0 for s in strides):
            raise ValueError(f"tensor '{self.get_name()}': strides must be positive, got "
                             f"{strides}")
        self._changing()
        self._a["stride"] = strides
        self._strides_given = True
        return self

    def set_data_type(self, data_type: Any = _DT.NOT_SET) -> "Tensor":
        """The element type: a hipdnn.data_type, or a NumPy or torch dtype.  NOT_SET (the
        default) leaves it to the graph (io_data_type, intermediate_data_type or
        inference)."""
        dt = _dtype_arg(data_type, f"tensor '{self.get_name()}': set_data_type",
                        allow_none=False)
        self._changing()
        if dt == _DT.NOT_SET:
            self._a.pop("data_type", None)
        else:
            self._a["data_type"] = dt
        return self

    def set_is_virtual(self, is_virtual: bool) -> "Tensor":
        """Virtual tensors live only inside the graph and get no array in the variant pack."""
        v = _bool_arg(is_virtual, "set_is_virtual")
        self._changing()
        self._a["is_virtual"] = v
        return self

    def set_output(self, is_output: bool) -> "Tensor":
        """Marks the tensor as a graph output (not virtual): it gets memory in the variant
        pack, and its data type defaults to the graph's io_data_type."""
        return self.set_is_virtual(not _bool_arg(is_output, "set_output"))

    def set_is_pass_by_value(self, value: bool) -> "Tensor":
        """Makes the tensor a scalar carried in the graph (give it a value with set_value)."""
        v = _bool_arg(value, "set_is_pass_by_value")
        self._changing()
        self._a["is_pass_by_value"] = v
        return self

    def set_value(self, value: float) -> "Tensor":
        """The scalar of a pass-by-value tensor (carried in the graph)."""
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"set_value: expected a float, got {_type_name(value)}")
        self._changing()
        self._a["value"] = float(value)
        return self

    def set_ragged_offset(self, offset: "Tensor") -> "Tensor":
        """cuDNN frontend's ragged (THD) layout, for sdpa / sdpa_backward's q, k, v, o, dO,
        dq, dk, dv and sdpa's page tables (packed tables), with a padding mask: `offset`
        (int32 / int64 [B + 1, 1, 1, 1], given in the variant pack) holds where each sample
        starts, in elements: element (b, h, s, d) is at offset[b] + h * stride[1] +
        s * stride[2] + d * stride[3].  Rows past a sample's sequence length are neither
        read nor written."""
        if not isinstance(offset, Tensor) or offset._graph is not self._graph:
            raise TypeError(f"set_ragged_offset: expected a tensor of this graph, got "
                            f"{_type_name(offset)}")
        if offset is self:
            raise ValueError(f"set_ragged_offset: {self._label()} cannot hold its own offsets")
        self._changing()
        self._a["ragged_offset"] = offset
        return self

    # -- getters --
    def get_ragged_offset(self) -> "Optional[Tensor]":
        """The tensor given to set_ragged_offset, or None."""
        return self._a.get("ragged_offset")

    def get_name(self) -> str:
        """The tensor's name ("" if none)."""
        return self._a.get("name", "")

    def get_uid(self) -> int:
        """The tensor's unique id."""
        return self._uid

    def get_dim(self) -> List[int]:
        """The dims: as inferred by the last build if there was one, else as set."""
        if "dim" in self._inferred:
            return list(self._inferred["dim"])
        return list(self._a.get("dim", []))

    def get_stride(self) -> List[int]:
        """The strides in elements: inferred, set, or packed row-major from the dims."""
        if "stride" in self._inferred:
            return list(self._inferred["stride"])
        if "stride" in self._a:
            return list(self._a["stride"])
        return _packed_strides(self._a["dim"]) if "dim" in self._a else []

    def get_data_type(self) -> data_type:
        """The element type: inferred, set, or the graph's default for this kind of tensor."""
        if "data_type" in self._inferred:
            return data_type(self._inferred["data_type"])
        return self._graph._default_dtype(self)

    def get_is_virtual(self) -> bool:
        """Whether the tensor lives only inside the graph (op results are, until set_output)."""
        return self._a.get("is_virtual", False)

    def get_is_output(self) -> bool:
        """Whether the tensor is a graph output (the opposite of get_is_virtual)."""
        return not self.get_is_virtual()

    def get_is_pass_by_value(self) -> bool:
        """Whether the tensor is a scalar carried in the graph."""
        return self._a.get("is_pass_by_value", False)

    def get_value(self) -> Optional[float]:
        """The scalar of a pass-by-value tensor (None if not given)."""
        return self._a.get("value")

    @property
    def graph(self) -> "pygraph":
        """The graph this tensor belongs to."""
        return self._graph

    def empty(self) -> NDArray[Any]:
        """A new uninitialised NumPy array with this tensor's dims, strides (in elements)
        and data type (``uint16`` bit patterns for BFLOAT16): what the variant pack takes
        for it.  Op results know their dims after the graph is built."""
        dims, strides, dt = self.get_dim(), self.get_stride(), self.get_data_type()
        if not dims:
            raise ValueError(f"{self._label()}: dims are not known yet; build the graph "
                             "first (or give dims)")
        if dt == _DT.NOT_SET:
            raise ValueError(f"{self._label()}: data type is not known yet; build the graph "
                             "first (or set one)")
        return empty_strided(dims, strides, numpy_dtype(dt))

    def _label(self) -> str:
        name = self.get_name()
        return f"tensor '{name}' (uid {self._uid})" if name else f"tensor with uid {self._uid}"

    def _short(self) -> str:
        dims = self.get_dim()
        dt = self.get_data_type()
        dts = _C.dtype_name(dt) if dt != data_type.NOT_SET else "?"
        name = self.get_name() or f"uid{self._uid}"
        if self.get_is_pass_by_value() and self.get_value() is not None:
            return f"{name}={self.get_value():g}:{dts}"
        return f"{name}:{dts}{_fmt_dims(dims)}"

    def __repr__(self) -> str:
        dt = self.get_data_type()
        parts = [f"Tensor('{self.get_name()}', uid={self._uid}",
                 f"{_C.dtype_name(dt) if dt != data_type.NOT_SET else 'data_type not set'}",
                 f"dim={_fmt_dims(self.get_dim())}", f"stride={_fmt_dims(self.get_stride())}"]
        if self.get_is_pass_by_value():
            parts.append(f"value={self.get_value()!r}")
        elif self.get_is_virtual():
            parts.append("virtual")
        return ", ".join(parts) + ")"



def _strides_in_order_of(ref: Sequence[int], dims: Sequence[int]) -> List[int]:
    """Packed strides for `dims` in the dimension order of `ref` (largest stride
    outermost; ties keep their order)."""
    order = sorted(range(len(dims)), key=lambda i: -ref[i])
    out, acc = [0] * len(dims), 1
    for i in reversed(order):
        out[i] = acc
        acc *= dims[i]
    return out


def _check_dims(dims: List[int], name: str) -> None:
    if not dims:
        raise ValueError(f"tensor '{name}': dims must not be empty")
    if len(dims) > _C.MAX_DIMS:
        raise ValueError(f"tensor '{name}': {len(dims)} dims; at most {_C.MAX_DIMS}")
    if any(d <= 0 for d in dims):
        raise ValueError(f"tensor '{name}': dims must be positive, got {dims}")


def _packed_strides(dims: Sequence[int]) -> List[int]:
    strides, acc = [0] * len(dims), 1
    for i in range(len(dims) - 1, -1, -1):
        strides[i] = acc
        acc *= dims[i]
    return strides


def _fmt_dims(dims: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]" if dims else "[?]"


class knob(NamedTuple):
    """An engine knob: its type and the values it takes (min_value to max_value, in steps
    of stride), as cuDNN frontend's ``cudnn.knob``; ``values``, when not empty, are the only
    ones it takes (hipdnn's addition)."""

    type: Any
    max_value: int
    min_value: int
    stride: int
    values: Tuple[int, ...] = ()


class KernelGroup(NamedTuple):
    """One kernel of a built plan (``pygraph.get_kernel_groups()``): ``kernel`` is the
    engine's name for it ("pointwise", "row-wise", "conv_fprop"), ``detail`` one line on
    what it does ("" when the engine says nothing more), ``nodes`` the names of the nodes
    it runs and ``node_indices`` their positions in the graph's node list (the order the
    ops were added, or the deserialized graph's order)."""

    kernel: str
    detail: str
    nodes: List[str]
    node_indices: List[int]


# ---- the graph ---------------------------------------------------------------------


class pygraph(ConvOps, MatmulOps, PointwiseOps, NormOps, ReductionOps, MovementOps,
              ResampleOps, SdpaOps, Autotune, Plans, Serialization, BuildSteps):
    """A graph of tensors and operations, named and driven as cuDNN frontend's
    ``cudnn.pygraph``::

        g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT)
        x = g.tensor(name="x", dim=[8, 3, 5, 5])
        ...
        g.build([hipdnn.heur_mode.A])
        g.execute({x: xa, ...}, workspace)
    """

    def __init__(self, io_data_type: Optional[DataTypeLike] = None,
                 intermediate_data_type: Optional[DataTypeLike] = None,
                 compute_data_type: Optional[DataTypeLike] = None,
                 name: Optional[str] = None, handle: Optional[_C.Handle] = None,
                 sm_count: Optional[int] = None, sm_version: Optional[int] = None,
                 kernel_cache: Any = None, device_property: Any = None,
                 is_dynamic_shape_enabled: bool = False,
                 is_override_shape_enabled: bool = False):
        """The graph's default data types, name and handle; the keywords after them are
        cuDNN frontend's, taken and kept without effect (_pygraph/frontend_options.py)."""
        def ctx(value: Any, what: str) -> data_type:
            dt = _dtype_arg(value, f"pygraph: {what}")
            return data_type.NOT_SET if dt is None else dt

        self.io_data_type = ctx(io_data_type, "io_data_type")
        self.intermediate_data_type = ctx(intermediate_data_type, "intermediate_data_type")
        self.compute_data_type = ctx(compute_data_type, "compute_data_type")
        self.name = _name_arg(name, "pygraph: name") or ""
        if handle is not None and not isinstance(handle, _C.Handle):
            raise TypeError(f"pygraph: handle must be a hipdnn.Handle, got {_type_name(handle)}")
        self._handle = handle
        self.frontend_options = check_options(sm_count, sm_version, kernel_cache,
                                              device_property, is_dynamic_shape_enabled,
                                              is_override_shape_enabled)
        self._tensors: List[Tensor] = []
        self._ops: List[_Op] = []
        self._next_uid = 1
        self._deserialized = False
        self._preferred: Optional[str] = None
        self._deselected: List[str] = []
        # select/deselect_*_notes: {"select_behavior": [notes], ...}
        self._filters: Dict[str, List[Any]] = {}
        self._max_workspace: Optional[int] = None
        self._from_device: Optional[str] = None
        self._staging_said: Set[str] = set()
        self._reset_build()

    @property
    def handle(self) -> _C.Handle:
        """The handle the graph builds and runs on (the default handle if none was given)."""
        return self._get_handle()

    def _new_tensor(self) -> Tensor:
        self._check_editable("add tensors")
        t = Tensor(self, self._new_uid())
        self._tensors.append(t)
        self._invalidate()
        return t

    def _tensor_from_descriptor(self, d: _C.Descriptor) -> Tensor:
        """The tensor a deserialized graph's TENSOR descriptor describes (serialize.py)."""
        t = Tensor(self, d.get(_C.ATTR_TENSOR_UNIQUE_ID, _INT64)[0])
        t._uid_explicit = True
        t._desc = d
        dims = d.get(_C.ATTR_TENSOR_DIMENSIONS, _INT64)
        strides = d.get(_C.ATTR_TENSOR_STRIDES, _INT64)
        dt = data_type(d.get(_C.ATTR_TENSOR_DATA_TYPE, _DTYPE)[0])
        t._a.update(name=d.get(_C.ATTR_TENSOR_NAME_EXT, _CHAR), dim=dims, stride=strides,
                    data_type=dt, is_virtual=d.get(_C.ATTR_TENSOR_IS_VIRTUAL, _BOOL)[0],
                    is_pass_by_value=d.get(_C.ATTR_TENSOR_IS_BY_VALUE, _BOOL)[0])
        raw = d.get(_C.ATTR_TENSOR_VALUE_EXT, _UINT8) if t._a["is_pass_by_value"] else b""
        if len(raw):  # no bytes: a runtime scalar, given at each execute
            if dt == data_type.BFLOAT16:
                t._a["value"] = float(from_bfloat16(np.frombuffer(raw, np.uint16))[0])
            else:
                t._a["value"] = float(np.frombuffer(raw, numpy_dtype(dt))[0])
        t._inferred = {"dim": dims, "stride": strides, "data_type": dt}
        return t

    # -- tensors --
    def tensor(self, name: Optional[str] = None, dim: Optional[Sequence[int]] = None,
               stride: Optional[Sequence[int]] = None,
               data_type: Any = None, is_virtual: bool = False,
               is_pass_by_value: bool = False, uid: Optional[int] = None,
               value: Optional[float] = None) -> Tensor:
        """A new tensor.  stride omitted -> packed row-major; data_type (a hipdnn.data_type
        or a NumPy / torch dtype) omitted -> the graph's io_data_type
        (intermediate_data_type when virtual).  A pass-by-value tensor is a scalar: give its
        ``value`` to carry it in the graph, or leave it out and pass the value in the
        variant pack at each execute (a float, or a 0-d / one-element array), as cuDNN
        frontend's CPU scalars.  cuDNN frontend's defaults (``name=""``, ``uid=-1``,
        ``data_type=NOT_SET``) mean not set."""
        name = _name_arg(name, "tensor: name") or None
        dims = None if dim is None else _int_list(dim, f"tensor '{name or ''}': dim")
        strides = None if stride is None else _int_list(stride, f"tensor '{name or ''}': stride")
        dt = _dtype_arg(data_type, f"tensor '{name or ''}': data_type")
        if dims is not None:
            _check_dims(dims, name or "")
        if strides is not None:
            if dims is not None and len(strides) != len(dims):
                raise ValueError(f"tensor '{name or ''}': {len(strides)} strides for "
                                 f"{len(dims)} dims")
            if any(s <= 0 for s in strides):
                raise ValueError(f"tensor '{name or ''}': strides must be positive, got {strides}")
        virtual = _bool_arg(is_virtual, "tensor: is_virtual")
        by_value = _bool_arg(is_pass_by_value, "tensor: is_pass_by_value")
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
            raise TypeError(f"tensor: value must be a float, got {_type_name(value)}")
        if uid is not None and (isinstance(uid, (bool, float))
                                or not isinstance(uid, (int, np.integer))):
            raise TypeError(f"tensor: uid must be an int, got {_type_name(uid)}")
        if uid is not None and int(uid) == -1:
            uid = None  # cuDNN frontend's "no uid"
        t = self._new_tensor()
        if name is not None:
            t._a["name"] = name
        if dims is not None:
            t._a["dim"] = dims
        if strides is not None:
            t._a["stride"] = strides
            t._strides_given = True
        if dt is not None:
            t._a["data_type"] = dt
        if virtual:
            t._a["is_virtual"] = True
        if by_value:
            t._a["is_pass_by_value"] = True
            if dims is None:
                t._a["dim"] = [1]
        if value is not None:
            t._a["value"] = float(value)
        if uid is not None:
            t._uid = int(uid)
            t._uid_explicit = True
        return t

    def tensor_like(self, input: Any, name: Optional[str] = None,
                    data_type: Any = None) -> Tensor:
        """A tensor with the dims, strides (in elements) and data type of a NumPy array
        (or anything NumPy can view without copying) or of another tensor.  A uint16
        array needs ``data_type=hipdnn.data_type.BFLOAT16`` (or a graph whose io_data_type
        is BFLOAT16).  A 0-d array or a NumPy scalar gives a pass-by-value scalar whose
        value comes with each execute (as cuDNN frontend does for a CPU tensor); so does
        a one-element host tensor of another library (a torch CPU tensor).  A
        tensor made from a device array (PyTorch, CuPy, DeviceArray) has the graph planned
        on device engines only, as cuDNN's are."""
        name = _name_arg(name, "tensor_like: name") or None
        hint = _dtype_arg(data_type, "tensor_like: data_type")
        if isinstance(input, Tensor):
            dims, strides = input.get_dim(), input.get_stride()
            dt = hint if hint is not None else input.get_data_type()
            if not dims:
                raise ValueError(f"tensor_like: {input._label()} has no dims yet (build the "
                                 "graph first, or give dims)")
            t = self.tensor(name=name, dim=dims, stride=strides, data_type=dt)
            t._strides_given = input._strides_given
            return t
        # A graph whose io_data_type is BFLOAT16 reads uint16 arrays as bfloat16 bits.
        bits_hint = hint if hint is not None else (
            _DT.BFLOAT16 if self.io_data_type == _DT.BFLOAT16 else None)
        if isinstance(input, np.generic) or (isinstance(input, np.ndarray) and input.ndim == 0):
            dt = data_type_of(np.asarray(input).dtype, bits_hint)
            return self.tensor(name=name, dim=[1], stride=[1],
                               data_type=hint if hint is not None else dt,
                               is_pass_by_value=True)
        if _device.is_host_tensor(input):
            scalar = self._host_scalar_like(input, name, hint, bits_hint)
            if scalar is not None:
                return scalar
        dims, strides, dt = _describe_array(input, bits_hint, name)
        if hint is not None:
            dt = hint  # an explicit data_type describes the tensor; the array only its shape
        t = self.tensor(name=name, dim=dims, stride=strides, data_type=dt)
        t._strides_given = False  # the array's layout: set_dim lays it out again
        if self._from_device is None and _device.is_device_array(input):
            self._from_device = t._label()
        return t

    def _host_scalar_like(self, input: Any, name: Optional[str], hint: Optional[_DT],
                          bits_hint: Optional[_DT]) -> Optional[Tensor]:
        """tensor_like of another library's one-element host tensor (a torch CPU tensor):
        a runtime scalar of its dims, as cuDNN frontend makes a CPU tensor pass-by-value
        (epsilon, momentum, scales next to device tensors); None for any other."""
        try:
            a = _device.host_view(input)
        except (TypeError, ValueError, BufferError, RuntimeError):
            return None  # a type NumPy lacks (bfloat16): described as an array
        if a.size != 1:
            return None
        dims = list(a.shape) or [1]
        return self.tensor(name=name, dim=dims, stride=[1] * len(dims),
                           data_type=hint if hint is not None else data_type_of(a.dtype, bits_hint),
                           is_pass_by_value=True)

    def tensors(self) -> List[Tensor]:
        """Every tensor of the graph, in creation order."""
        return list(self._tensors)

    def query_tensor_attributes_of_uid(self, uid: int) -> Tensor:
        """The tensor with this uid (as cuDNN frontend's, e.g. on a deserialized graph)."""
        if isinstance(uid, bool) or not isinstance(uid, (int, np.integer)):
            raise TypeError(f"query_tensor_attributes_of_uid: expected an int, got "
                            f"{_type_name(uid)}")
        t = self._tensor_by_uid(int(uid))
        if t is None:
            raise ValueError(f"graph '{self.name}' has no tensor with uid {int(uid)}")
        return t

    # -- an op's inputs --
    def _check_input(self, value: Any, op: _Op, port: str) -> None:
        if isinstance(value, Tensor):
            if value._graph is not self:
                raise ValueError(f"{op.label()}: input '{port}' ({value._label()}) belongs to "
                                 f"graph '{value._graph.name}', not to graph '{self.name}'")
            return
        if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
            return
        if value is None:
            raise TypeError(f"{op.label()}: input '{port}' is required")
        if isinstance(value, np.ndarray):
            raise TypeError(f"{op.label()}: input '{port}' is a NumPy array; describe it with "
                            "g.tensor_like(array) (or use hipdnn.Graph, which takes arrays)")
        raise TypeError(f"{op.label()}: input '{port}' must be a hipdnn tensor or a float, "
                        f"got {_type_name(value)}")

    def _input(self, value: Any, op: _Op, port: str, user: str) -> Tensor:
        """The tensor for an op input (table port `port`, shown as `user`): an unnamed
        tensor is named as cuDNN frontend names it; a Python number becomes a
        pass-by-value scalar."""
        self._check_input(value, op, user)
        suffix = _suffixes(op).get(port)
        if isinstance(value, Tensor):
            if suffix and not value.get_name() and op.info.name in _NAMES_INPUTS \
                    and not self._deserialized:
                value._a["name"] = f"{op.name}::{suffix}"
            return value
        compute = op.compute if op.compute is not None else self.compute_data_type
        dt = data_type.DOUBLE if compute == data_type.DOUBLE else data_type.FLOAT
        return self.tensor(name=f"{op.name}::{suffix or user}", dim=[1], stride=[1],
                           data_type=dt, is_pass_by_value=True, value=float(value))

    # -- display --
    def __repr__(self) -> str:
        def dt(v: int) -> str:
            return _C.dtype_name(v) if v != data_type.NOT_SET else "not set"

        state = {_EDITING: "not built", _VALIDATED: "validated",
                 _HEURISTICS: "engines ranked", _PLANS: "plans built"}[self._state]
        lines = [f"pygraph '{self.name}' (io {dt(self.io_data_type)}, intermediate "
                 f"{dt(self.intermediate_data_type)}, compute {dt(self.compute_data_type)}; "
                 f"{len(self._ops)} nodes, {state})"]
        for op in self._ops:
            ins = ", ".join(f"{p}={t._short()}" for p, _a, t in op.inputs)
            outs = ", ".join(f"{p}={t._short()}" for p, _a, t in op.outputs)
            lines.append(f"  {op.op} '{op.name}': {ins} -> {outs}")
        used = {id(t) for op in self._ops for _p, _a, t in op.inputs + op.outputs}
        unused = [t for t in self._tensors if id(t) not in used]
        if unused:
            lines.append("  unused tensors: " + ", ".join(t._short() for t in unused))
        if self._state >= _PLANS:
            lines.append("  plans: " + ", ".join(
                f"{p.engine} ({p.space.name.lower()}, workspace {p.workspace} B)"
                for p in self._plans if p is not None))
            try:
                groups = self.get_kernel_groups()
            except HipdnnError:
                groups = []  # the engine does not say; the plans line is all there is
            if groups:
                lines.append(f"  kernels of {self.get_engine_name()}: " + "; ".join(
                    f"{k + 1} {grp.kernel} [{', '.join(grp.nodes)}]"
                    for k, grp in enumerate(groups)))
        return "\n".join(lines)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython's text form: the listing of __repr__."""
        p.text("pygraph(...)" if cycle else repr(self))

    def to_dot(self) -> str:
        """The graph as Graphviz source: each node (op and mode, "pointwise ADD", and its
        name), each tensor (name, dims, data type; virtual tensors dashed, by-value scalars
        as ellipses, outputs with a heavy border), edges in dataflow order labelled with
        their ports and, once a plan is built, the engine and a cluster per kernel holding
        the nodes it fused (get_kernel_groups()).  Render it with graphviz ``dot -Tsvg``;
        Jupyter does so itself (_repr_svg_)."""
        from . import _draw
        return _draw.to_dot(self)

    def _repr_svg_(self) -> Optional[str]:
        """Jupyter's picture: to_dot() rendered by graphviz ``dot``; None where ``dot`` is
        missing, fails or takes over 10 s, so that the text form is shown instead."""
        from . import _draw
        return _draw.svg_or_none(self.to_dot())


def _adopt_methods(cls: type) -> None:
    """Names the methods `cls` takes from its parts as its own ("pygraph.conv_fprop"):
    Python shows a function's __qualname__ in its argument errors ("pygraph.conv_fprop()
    got an unexpected keyword argument 'paddin'"), in reprs and in help(), and users
    know one class, not its mixins."""
    for part in cls.__mro__[1:-1]:  # not cls itself, nor object
        for name, attr in vars(part).items():
            fn = attr.fget if isinstance(attr, property) else getattr(attr, "__func__", attr)
            if inspect.isfunction(fn):
                fn.__qualname__ = f"{cls.__qualname__}.{name}"
                fn.__module__ = cls.__module__


_adopt_methods(pygraph)


def _describe_array(array: Any, hint: Optional[data_type], name: Optional[str]
                    ) -> Tuple[List[int], List[int], data_type]:
    """dims, strides in elements and data type of a host array, or of device memory (a
    DeviceArray, a PyTorch / CuPy array: read through DLPack or __cuda_array_interface__,
    zero-copy)."""
    if _device.is_device_array(array):
        return _describe_device_array(array, hint, name)
    if _device.is_host_tensor(array):
        try:  # another library's host tensor, viewed through DLPack
            array = _device.host_view(array)
        except (TypeError, ValueError, BufferError, RuntimeError):
            pass  # a type NumPy lacks: the checks below say what it is
    if isinstance(array, (list, tuple)) or not hasattr(array, "__array_interface__") \
            and not hasattr(array, "__array__") and not _has_buffer(array):
        raise TypeError(f"tensor_like: expected a NumPy array or a hipdnn tensor, got "
                        f"{_type_name(array)}")
    a = np.asarray(array)
    label = f"tensor_like '{name}'" if name else "tensor_like"
    if a.ndim == 0:
        raise ValueError(f"{label}: a 0-d array has no dims; reshape it to [1]")
    if a.size == 0:
        raise ValueError(f"{label}: the array is empty (shape {list(a.shape)})")
    dt = data_type_of(a.dtype, hint)
    dims = [int(d) for d in a.shape]
    strides: List[int] = []
    for d, st in zip(a.shape, a.strides):
        if st > 0 and st % a.itemsize == 0:
            strides.append(st // a.itemsize)
        elif d == 1:
            strides.append(0)  # never addresses memory; chosen below
        else:
            raise ValueError(f"{label}: stride {st} bytes along a dim of size {d} cannot be a "
                             "tensor stride (must be a positive multiple of the item size); "
                             "use numpy.ascontiguousarray")
    # A size-1 dim with a meaningless stride goes outermost.
    outer = max([s * d for s, d in zip(strides, dims) if s] or [1])
    strides = [s if s else outer for s in strides]
    return dims, strides, dt


def _describe_device_array(array: Any, hint: Optional[data_type], name: Optional[str]
                           ) -> Tuple[List[int], List[int], data_type]:
    label = f"tensor_like '{name}'" if name else "tensor_like"
    code, shape, strides, _space, type_name, _address, _readonly = _C.describe_array(array)
    if code == -2 and hint is not None and data_type(hint) == data_type.BFLOAT16:
        dt = data_type.BFLOAT16  # uint16: bfloat16 bit patterns, when told so
    elif code < 0:
        raise TypeError(f"{label}: {type_name} has no hipdnn data type"
                        + (" (uint16 holds bfloat16 bits only with data_type=BFLOAT16)"
                           if code == -2 else ""))
    else:
        dt = data_type(code)
    if not shape:
        raise ValueError(f"{label}: a 0-d array has no dims; reshape it to [1]")
    if any(d == 0 for d in shape):
        raise ValueError(f"{label}: the array is empty (shape {list(shape)})")
    dims = [int(d) for d in shape]
    out: List[int] = []
    for d, st in zip(dims, strides):
        if st <= 0 and d > 1:
            raise ValueError(f"{label}: stride {st} elements along a dim of size {d} cannot be "
                             "a tensor stride (must be positive)")
        out.append(int(st) if st > 0 else 0)
    outer = max([s * d for s, d in zip(out, dims) if s] or [1])
    return dims, [s if s else outer for s in out], dt


def _has_buffer(obj: Any) -> bool:
    try:
        memoryview(obj)
        return True
    except TypeError:
        return False
