"""``hipdnn.pygraph``: cuDNN frontend's ``cudnn.pygraph`` over hipdnn's backend descriptors.

Tensors and operations are plain Python objects that hold attributes until
``build_operation_graph()`` lowers them to TENSOR / OPERATION_* / OPERATIONGRAPH
descriptors and finalizes the graph.  The backend validates it and infers every unset
dim, stride and data type, writing them back into the TENSOR descriptors; the tensor
getters then read those.  Heuristics, engine configs and execution plans follow the same
steps and names as cuDNN frontend.
"""
from __future__ import annotations

import hashlib
import numbers
import operator
from typing import (Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Set,
                    Tuple, Union)

import numpy as np
from numpy.typing import NDArray

from . import _C
from . import _ops
from . import _pointwise as _pointwise_ops
from . import _resample as _resample_ops
from . import _reshape as _reshape_ops
from . import device as _device
from .arrays import (as_buffer, as_data_type, data_type_of, empty_strided, from_bfloat16,
                     numpy_dtype, to_bfloat16)
from . import plan_bytes
from .enums import (behavior_note, build_plan_policy, convolution_mode, data_type,
                    diagonal_alignment as _diagonal_alignment, heur_mode,
                    norm_forward_phase, reduction_mode,
                    memory_space, numerical_note, pointwise_mode)
from .errors import GraphNotSupportedError, HipdnnError
from .runtime import default_handle, engine_id, engines

__all__ = ["pygraph", "Tensor", "knob", "KernelGroup"]

_INT64, _DOUBLE, _BOOL, _CHAR = _C.TYPE_INT64, _C.TYPE_DOUBLE, _C.TYPE_BOOLEAN, _C.TYPE_CHAR
_DTYPE, _DESC, _UINT8 = _C.TYPE_DATA_TYPE, _C.TYPE_BACKEND_DESCRIPTOR, _C.TYPE_UINT8_EXT

# A data type argument: a hipdnn.data_type (or its int), a NumPy dtype or scalar type, a
# torch dtype, ml_dtypes.bfloat16 or the hipdnn.bfloat16 module (arrays.as_data_type).
# torch is never imported, so its dtype cannot be named here: the alias is Any.
DataTypeLike = Any
# An op operand: a tensor of this graph, or a Python float (a pass-by-value scalar).
Operand = Union["Tensor", float]
_DT = data_type  # for methods whose cuDNN-style keyword `data_type` hides the enum


# ---- argument checking -------------------------------------------------------------


def _type_name(v: Any) -> str:
    return type(v).__name__


def _int_list(value: Any, what: str) -> List[int]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{what}: expected a list of ints, got {_type_name(value)}")
    out = []
    for v in value:
        if isinstance(v, (bool, float)):
            raise TypeError(f"{what}: expected a list of ints, got an item of type {_type_name(v)}")
        try:
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(f"{what}: expected a list of ints, got an item of type "
                            f"{_type_name(v)}") from None
    return out


def _dtype_arg(value: Any, what: str, allow_none: bool = True) -> Optional[data_type]:
    """A data type argument: the enum, its int, or a NumPy / torch dtype (as_data_type).
    NOT_SET, cuDNN frontend's default, means not set."""
    if value is None and not allow_none:
        raise TypeError(f"{what}: expected a hipdnn.data_type, got None")
    dt = as_data_type(value, what)
    if dt == data_type.NOT_SET and allow_none:
        return None
    return dt


def _name_arg(value: Any, what: str) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{what}: expected a str, got {_type_name(value)}")
    return value


def _bool_arg(value: Any, what: str) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and int(value) in (0, 1):
        return bool(value)
    raise TypeError(f"{what}: expected a bool, got {_type_name(value)}")


def _fe_enum(value: Any, enum_type: Any, op: str, what: str) -> int:
    """A cuDNN-frontend enum argument (its own numbering, NOT_SET = 0) checked and
    returned as an int."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}: {what} must be a hipdnn.{enum_type.__name__}, got "
                        f"{_type_name(value)}")
    try:
        member = enum_type(int(value))
    except ValueError:
        raise ValueError(f"{op}: {what} {int(value)} is not a hipdnn.{enum_type.__name__}") \
            from None
    if member == 0:
        raise ValueError(f"{op}: {what} is NOT_SET")
    return int(member)


def _packed_strides(dims: Sequence[int]) -> List[int]:
    strides, acc = [0] * len(dims), 1
    for i in range(len(dims) - 1, -1, -1):
        strides[i] = acc
        acc *= dims[i]
    return strides


def _fmt_dims(dims: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]" if dims else "[?]"


def _not_ready(msg: str) -> HipdnnError:
    e = HipdnnError(msg)
    e.status = _C.STATUS_NOT_INITIALIZED
    e.status_name = _C.status_name(_C.STATUS_NOT_INITIALIZED)
    return e


def _encode_scalar(value: float, dtype: data_type) -> bytes:
    if dtype == data_type.BFLOAT16:
        return to_bfloat16(np.array([value], np.float32)).tobytes()
    return np.array([value], dtype=numpy_dtype(dtype)).tobytes()


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

    # -- getters --
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


# ---- operations --------------------------------------------------------------------


class _Op:
    """An operation waiting to be lowered: its descriptor type, ports and parameters."""

    __slots__ = ("info", "op", "name", "inputs", "outputs", "params", "compute", "suffixes")

    def __init__(self, info: "_ops.OpInfo", op: str, name: str,
                 compute: Optional[data_type]):
        self.info = info
        self.op = op  # "conv_fprop", "add", ...
        self.name = name
        self.inputs: List[Tuple[str, int, Tensor]] = []  # (port, attribute, tensor)
        self.outputs: List[Tuple[str, int, Tensor]] = []
        self.params: List[Tuple[int, int, Any]] = []  # (attribute, type, values)
        self.compute = compute
        # The names cuDNN frontend gives unnamed tensors, by table port, where they
        # depend on more than the op (a pointwise mode's operands); else _CUDNN_SUFFIX.
        self.suffixes: Optional[Dict[str, str]] = None

    def label(self) -> str:
        return f"{self.op} '{self.name}'"


# Port names for users, by op: cuDNN frontend's keywords, mapped onto the table's ports.
_USER_PORTS = {
    "conv_fprop": {"x": "image", "w": "weight"},
    "conv_dgrad": {"dy": "loss", "w": "filter"},
    "conv_wgrad": {"x": "image", "dy": "loss"},
    "matmul": {"a": "A", "b": "B", "c": "C"},
    "pointwise": {"x": "a"},
    "batchnorm_inference": {"x": "input"},
    "reduction": {"x": "input"},
    "norm_forward": {"x": "input", "output_running_mean": "next_running_mean",
                     "output_running_var": "next_running_var",
                     "input_running_mean": "in_running_mean",
                     "input_running_var": "in_running_var", "exp_avg_factor": "momentum"},
    "norm_backward": {"x": "input", "dy": "grad"},
    "genstats": {"x": "input"},
    "resample_fwd": {"x": "input", "idx": "index"},
    "resample_bwd": {"dy": "grad", "x": "input", "y": "output", "idx": "index"},
    "reshape": {"x": "input"},
    "sdpa_backward": {"d_o": "dO", "dq": "dQ", "dk": "dK", "dv": "dV"},
}


# The names cuDNN frontend gives an op's tensors, "<node name>::<suffix>", by table port:
# always its output; inputs left unnamed only for pointwise ops and matmul (as it does).
_CUDNN_SUFFIX = {
    "conv_fprop": {"y": "Y"},
    "conv_dgrad": {"dx": "DX"},
    "conv_wgrad": {"dw": "DW"},
    "matmul": {"a": "A", "b": "B", "c": "C"},
    "pointwise": {"x": "IN_0", "b": "IN_1", "y": "OUT_0"},
    "batchnorm_inference": {"y": "Y"},
    "reduction": {"y": "Y"},
    "norm_forward": {"y": "Y", "mean": "MEAN", "inv_variance": "INV_VARIANCE",
                     "output_running_mean": "NEXT_RUNNING_MEAN",
                     "output_running_var": "NEXT_RUNNING_VAR"},
    "norm_backward": {"dx": "DX", "dscale": "DSCALE", "dbias": "DBIAS"},
    "genstats": {"sum": "SUM", "sq_sum": "SQ_SUM"},
    "resample_fwd": {"y": "Y", "idx": "Index"},
    "resample_bwd": {"dx": "DX"},
    "reshape": {"y": "Y"},
    "sdpa": {"o": "O", "stats": "Stats"},
    "sdpa_backward": {"dq": "dQ", "dk": "dK", "dv": "dV"},
}
_NAMES_INPUTS = ("matmul", "pointwise")


def _suffixes(op: _Op) -> Dict[str, str]:
    """The op's own suffixes (a pointwise mode's), else its op's."""
    if op.suffixes is not None:
        return op.suffixes
    return _CUDNN_SUFFIX.get(op.info.name, {})


def _user_port(info: "_ops.OpInfo", port: str, unary: bool = False) -> str:
    """The name users see for a table port (a unary pointwise op's x is "input")."""
    if unary and port == "x":
        return "input"
    return _USER_PORTS.get(info.name, {}).get(port, port)


# ---- engine configs and plans ----------------------------------------------------------


class _Config(NamedTuple):
    """An engine config: its ENGINECFG descriptor, engine and knob choices."""

    desc: _C.Descriptor
    engine: str
    knobs: Tuple[Tuple[int, int], ...]

    def tag(self) -> str:
        """The config's name: the engine's, then "_k<knob>=<value>" per knob."""
        return self.engine + "".join(f"_k{k}={v}" for k, v in self.knobs)


class _Plan(NamedTuple):
    """A built execution plan and its compiled variant pack ({uid: index in pack})."""

    desc: _C.Descriptor
    engine: str
    workspace: int
    space: memory_space
    pack: _C.VariantPack
    slots: Dict[int, int]


class knob(NamedTuple):
    """An engine knob: its type and the values it takes (min_value to max_value, in steps
    of stride), as cuDNN frontend's ``cudnn.knob``."""

    type: Any
    max_value: int
    min_value: int
    stride: int


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


def _notes(notes: Iterable[int], enum: Any, what: str) -> List[Any]:
    if isinstance(notes, (str, bytes)) or not hasattr(notes, "__iter__"):
        raise TypeError(f"{what}: expected a list of hipdnn.{enum.__name__} values, got "
                        f"{_type_name(notes)}")
    out = []
    for n in notes:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"{what}: expected hipdnn.{enum.__name__} values, got "
                            f"{_type_name(n)}")
        try:
            out.append(enum(int(n)))
        except ValueError:
            raise ValueError(f"{what}: {int(n)} is not a hipdnn.{enum.__name__}") from None
    return out


# ---- the graph ---------------------------------------------------------------------

_EDITING, _VALIDATED, _HEURISTICS, _PLANS = 0, 1, 2, 3


class pygraph:
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
                 name: Optional[str] = None, handle: Optional[_C.Handle] = None):
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
        self._tensors: List[Tensor] = []
        self._ops: List[_Op] = []
        self._next_uid = 1
        self._deserialized = False
        self._preferred: Optional[str] = None
        self._deselected: List[str] = []
        # select/deselect_*_notes: {"select_behavior": [notes], ...}
        self._filters: Dict[str, List[Any]] = {}
        self._max_workspace: Optional[int] = None
        self._reset_build()

    # -- state --
    def _reset_build(self) -> None:
        self._state = _EDITING
        self._opgraph: Optional[_C.Descriptor] = None
        self._tensor_descs: Dict[int, _C.Descriptor] = {}
        self._reset_plans()

    def _reset_plans(self) -> None:
        # Engine configs in order; plan i (None until built) belongs to config i, as in
        # cuDNN frontend, and plan indices count in this list.
        self._configs: List[_Config] = []
        self._plans: List[Optional[_Plan]] = []
        self._failures: Dict[int, str] = {}  # config index -> why its plan did not build
        self._support: List[Tuple[str, Optional[str]]] = []
        self._candidate = -1  # the plan execute() runs

    def _invalidate(self) -> None:
        if self._state != _EDITING:
            self._reset_build()
            for t in self._tensors:
                t._inferred = {}

    def _check_editable(self, what: str) -> None:
        if self._deserialized:
            raise ValueError(f"graph '{self.name}' was deserialized; cannot {what} "
                             "(build a new pygraph instead)")

    def _get_handle(self) -> _C.Handle:
        if self._handle is None:
            self._handle = default_handle()
        return self._handle

    @property
    def handle(self) -> _C.Handle:
        """The handle the graph builds and runs on (the default handle if none was given)."""
        return self._get_handle()

    def _default_dtype(self, t: Tensor) -> data_type:
        dt = t._a.get("data_type")
        if dt is not None:
            return data_type(dt)
        if t.get_is_pass_by_value():
            return data_type.FLOAT
        if t._a.get("boolean_result"):  # comparisons and logic (the backend's rule too)
            return data_type.BOOLEAN
        if t._a.get("input_data_type"):  # reshape: the backend gives it its input's type
            return data_type.NOT_SET
        return self.intermediate_data_type if t.get_is_virtual() else self.io_data_type

    def _new_uid(self) -> int:
        taken = {t._uid for t in self._tensors}
        while self._next_uid in taken:
            self._next_uid += 1
        uid = self._next_uid
        self._next_uid += 1
        return uid

    def _new_tensor(self) -> Tensor:
        self._check_editable("add tensors")
        t = Tensor(self, self._new_uid())
        self._tensors.append(t)
        self._invalidate()
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
        value comes with each execute (as cuDNN frontend does for a CPU tensor)."""
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
        dims, strides, dt = _describe_array(input, bits_hint, name)
        if hint is not None:
            dt = hint  # an explicit data_type describes the tensor; the array only its shape
        t = self.tensor(name=name, dim=dims, stride=strides, data_type=dt)
        t._strides_given = False  # the array's layout: set_dim lays it out again
        return t

    def tensors(self) -> List[Tensor]:
        """Every tensor of the graph, in creation order."""
        return list(self._tensors)

    # -- operations --
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

    def _op(self, table_op: str, op: str, name: Optional[str],
            compute_data_type: Optional[DataTypeLike]) -> _Op:
        """A new op of the op table's entry `table_op`, shown to users as `op` ("relu")."""
        self._check_editable("add operations")
        name = _name_arg(name, f"{op}: name")
        compute = _dtype_arg(compute_data_type, f"{op}: compute_data_type")
        if not name:
            name = str(len(self._ops))  # cuDNN frontend numbers unnamed nodes
        return _Op(_ops.OPS[table_op], op, name, compute)

    def _param(self, op: _Op, name: str, values: Any) -> None:
        p = op.info.param(name)
        op.params.append((p.attr, p.type, values))

    def _finish(self, op: _Op, inputs: Sequence[Tuple[str, Any]], out_port: str,
                users: Sequence[str] = ()) -> Tensor:
        """inputs: (table port, value); the output is the table's out_port.  Messages and
        listings use the users' names for ports (`users`, else _user_port)."""
        return self._finish_all(op, inputs, [out_port], users)[0]

    def _finish_all(self, op: _Op, inputs: Sequence[Tuple[str, Any]],
                    out_ports: Sequence[str], users: Sequence[str] = ()) -> List[Tensor]:
        """_finish for ops with several outputs: one new virtual tensor per out_port.  An
        input whose value is None is an optional port left unset."""
        unary = len(inputs) == 1 and op.info.name == "pointwise"
        named = [(port, users[i] if i < len(users) else _user_port(op.info, port, unary), value)
                 for i, (port, value) in enumerate(inputs)]
        # Check every input before creating anything, so a bad one leaves no trace.
        for port, user, value in named:
            if value is None and op.info.input(port).optional:
                continue
            self._check_input(value, op, user)
        for port, user, value in named:
            if value is None and op.info.input(port).optional:
                continue
            op.inputs.append((user, op.info.input(port).attr,
                              self._input(value, op, port, user)))
        outs = []
        for out_port in out_ports:
            out_user = _user_port(op.info, out_port)
            y = self._new_tensor()
            suffix = _suffixes(op).get(out_port, out_user.upper())
            y._a["name"] = f"{op.name}::{suffix}"
            y._a["is_virtual"] = True
            op.outputs.append((out_user, op.info.output(out_port).attr, y))
            outs.append(y)
        self._ops.append(op)
        self._invalidate()
        return outs

    def conv_fprop(self, image: Tensor, weight: Tensor,
                   padding: Optional[Sequence[int]] = None,
                   stride: Optional[Sequence[int]] = None,
                   dilation: Optional[Sequence[int]] = None,
                   pre_padding: Optional[Sequence[int]] = None,
                   post_padding: Optional[Sequence[int]] = None,
                   convolution_mode: int = convolution_mode.CROSS_CORRELATION,
                   compute_data_type: Optional[DataTypeLike] = None,
                   name: Optional[str] = None) -> Tensor:
        """y = conv(image, weight), image [N, C, spatial...], weight [K, C/groups,
        spatial...]; padding/stride/dilation have one entry per spatial dim (defaults 0,
        1, 1).  pre_padding/post_padding instead of padding pad asymmetrically."""
        op = self._op("conv_fprop", "conv_fprop", name, compute_data_type)
        self._conv_params(op, padding, stride, dilation, pre_padding, post_padding,
                          convolution_mode)
        return self._finish(op, [("x", image), ("w", weight)], "y")

    def conv_dgrad(self, loss: Tensor, filter: Tensor,
                   padding: Optional[Sequence[int]] = None,
                   stride: Optional[Sequence[int]] = None,
                   dilation: Optional[Sequence[int]] = None,
                   pre_padding: Optional[Sequence[int]] = None,
                   post_padding: Optional[Sequence[int]] = None,
                   convolution_mode: int = convolution_mode.CROSS_CORRELATION,
                   compute_data_type: Optional[DataTypeLike] = None,
                   name: Optional[str] = None) -> Tensor:
        """dx, the gradient of conv_fprop(x, filter) = y with respect to x, from loss = dy
        [N, K, out...] and filter [K, C/groups, spatial...]; the parameters are the forward
        convolution's.  As in cuDNN frontend, give dx its dims (``dx.set_dim([N, C,
        spatial...])``): stride and groups leave them ambiguous."""
        op = self._op("conv_dgrad", "conv_dgrad", name, compute_data_type)
        self._conv_params(op, padding, stride, dilation, pre_padding, post_padding,
                          convolution_mode)
        return self._finish(op, [("dy", loss), ("w", filter)], "dx")

    def conv_wgrad(self, image: Tensor, loss: Tensor,
                   padding: Optional[Sequence[int]] = None,
                   stride: Optional[Sequence[int]] = None,
                   dilation: Optional[Sequence[int]] = None,
                   pre_padding: Optional[Sequence[int]] = None,
                   post_padding: Optional[Sequence[int]] = None,
                   convolution_mode: int = convolution_mode.CROSS_CORRELATION,
                   compute_data_type: Optional[DataTypeLike] = None,
                   name: Optional[str] = None) -> Tensor:
        """dw, the gradient of conv_fprop(image, w) = y with respect to w, from image
        [N, C, spatial...] and loss = dy [N, K, out...].  Give dw its dims
        (``dw.set_dim([K, C/groups, spatial...])``), as cuDNN frontend asks."""
        op = self._op("conv_wgrad", "conv_wgrad", name, compute_data_type)
        self._conv_params(op, padding, stride, dilation, pre_padding, post_padding,
                          convolution_mode)
        return self._finish(op, [("x", image), ("dy", loss)], "dw")

    def _conv_params(self, op: _Op, padding: Optional[Sequence[int]],
                     stride: Optional[Sequence[int]], dilation: Optional[Sequence[int]],
                     pre_padding: Optional[Sequence[int]],
                     post_padding: Optional[Sequence[int]], convolution_mode: int) -> None:
        """The parameters conv_fprop, conv_dgrad and conv_wgrad share, checked."""
        if padding is not None and (pre_padding is not None or post_padding is not None):
            raise ValueError(f"{op.label()}: give padding, or pre_padding and post_padding, "
                             "not both")
        pre = post = None
        if padding is not None:
            pre = post = _int_list(padding, f"{op.label()}: padding")
        if pre_padding is not None:
            pre = _int_list(pre_padding, f"{op.label()}: pre_padding")
        if post_padding is not None:
            post = _int_list(post_padding, f"{op.label()}: post_padding")
        spatial = {"padding": pre, "post_padding": post}
        if stride is not None:
            spatial["stride"] = _int_list(stride, f"{op.label()}: stride")
        if dilation is not None:
            spatial["dilation"] = _int_list(dilation, f"{op.label()}: dilation")
        lengths = {k: len(v) for k, v in spatial.items() if v is not None}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"{op.label()}: padding, stride and dilation need one entry per "
                             f"spatial dim; got lengths {lengths}")
        if isinstance(convolution_mode, bool) or \
                not isinstance(convolution_mode, (int, np.integer)):
            raise TypeError(f"{op.label()}: convolution_mode must be a "
                            f"hipdnn.convolution_mode, got {_type_name(convolution_mode)}")
        for pname, values in (("pre_padding", pre), ("post_padding", post),
                              ("stride", spatial.get("stride")),
                              ("dilation", spatial.get("dilation"))):
            if values is not None:
                self._param(op, pname, values)
        self._param(op, "conv_mode", int(convolution_mode))

    def matmul(self, A: Tensor, B: Tensor, compute_data_type: Optional[DataTypeLike] = None,
               name: Optional[str] = None) -> Tensor:
        """C = A @ B over the last two dims; batch dims broadcast."""
        op = self._op("matmul", "matmul", name, compute_data_type)
        return self._finish(op, [("a", A), ("b", B)], "c")

    def _pointwise(self, opname: str, mode: str, operands: Sequence[Tuple[str, str, Any]],
                   compute_data_type: Optional[DataTypeLike], name: Optional[str],
                   params: Sequence[Tuple[str, Any]] = ()) -> Tensor:
        """One pointwise node of `mode` (an _ops.POINTWISE_MODES name), shown as `opname`:
        operands are (table port, the method's keyword, value) in the method's order,
        which names unnamed inputs IN_0, IN_1, ... as cuDNN frontend does; the result is
        y, or dx for the _backward modes (cuDNN's ports)."""
        op = self._op("pointwise", opname, name, compute_data_type)
        self._param(op, "mode", _ops.POINTWISE_MODES[mode])
        for pname, value in params:
            self._param(op, pname, value)
        out = "dx" if mode.endswith("_backward") else "y"
        op.suffixes = {port: f"IN_{i}" for i, (port, _u, _v) in enumerate(operands)}
        op.suffixes[out] = "OUT_0"
        y = self._finish(op, [(port, v) for port, _u, v in operands], out,
                         [user for _p, user, _v in operands])
        if mode.startswith(("cmp_", "logical_")):
            y._a["boolean_result"] = True
        return y

    # The pointwise op family (hipdnn/_pointwise.py), cuDNN frontend's names.
    add = _pointwise_ops.add
    sub = _pointwise_ops.sub
    mul = _pointwise_ops.mul
    div = _pointwise_ops.div
    add_square = _pointwise_ops.add_square
    bias = _pointwise_ops.bias
    scale = _pointwise_ops.scale
    max = _pointwise_ops.max
    min = _pointwise_ops.min
    mod = _pointwise_ops.mod
    pow = _pointwise_ops.pow
    sqrt = _pointwise_ops.sqrt
    rsqrt = _pointwise_ops.rsqrt
    reciprocal = _pointwise_ops.reciprocal
    abs = _pointwise_ops.abs
    neg = _pointwise_ops.neg
    ceil = _pointwise_ops.ceil
    floor = _pointwise_ops.floor
    exp = _pointwise_ops.exp
    log = _pointwise_ops.log
    sin = _pointwise_ops.sin
    cos = _pointwise_ops.cos
    tan = _pointwise_ops.tan
    erf = _pointwise_ops.erf
    identity = _pointwise_ops.identity
    sigmoid = _pointwise_ops.sigmoid
    tanh = _pointwise_ops.tanh
    gelu = _pointwise_ops.gelu
    gelu_approx_tanh = _pointwise_ops.gelu_approx_tanh
    relu = _pointwise_ops.relu
    leaky_relu = _pointwise_ops.leaky_relu
    elu = _pointwise_ops.elu
    softplus = _pointwise_ops.softplus
    swish = _pointwise_ops.swish
    relu_backward = _pointwise_ops.relu_backward
    leaky_relu_backward = _pointwise_ops.leaky_relu_backward
    tanh_backward = _pointwise_ops.tanh_backward
    sigmoid_backward = _pointwise_ops.sigmoid_backward
    elu_backward = _pointwise_ops.elu_backward
    gelu_backward = _pointwise_ops.gelu_backward
    gelu_approx_tanh_backward = _pointwise_ops.gelu_approx_tanh_backward
    softplus_backward = _pointwise_ops.softplus_backward
    swish_backward = _pointwise_ops.swish_backward
    cmp_eq = _pointwise_ops.cmp_eq
    cmp_neq = _pointwise_ops.cmp_neq
    cmp_gt = _pointwise_ops.cmp_gt
    cmp_ge = _pointwise_ops.cmp_ge
    cmp_lt = _pointwise_ops.cmp_lt
    cmp_le = _pointwise_ops.cmp_le
    logical_and = _pointwise_ops.logical_and
    logical_or = _pointwise_ops.logical_or
    logical_not = _pointwise_ops.logical_not
    binary_select = _pointwise_ops.binary_select
    gen_index = _pointwise_ops.gen_index

    def batchnorm_inference(self, input: Tensor, mean: Tensor, inv_variance: Tensor,
                            scale: Tensor, bias: Tensor,
                            compute_data_type: Optional[DataTypeLike] = None,
                            name: Optional[str] = None) -> Tensor:
        """y = (x - mean) * inv_variance * scale + bias; the per-channel tensors are
        shaped [1, C, 1, ...] (same rank as x)."""
        op = self._op("batchnorm_inference", "batchnorm_inference", name, compute_data_type)
        return self._finish(op, [("x", input), ("mean", mean), ("inv_variance", inv_variance),
                                 ("scale", scale), ("bias", bias)], "y")

    def reduction(self, input: Tensor, mode: int,
                  compute_data_type: Optional[DataTypeLike] = None,
                  name: Optional[str] = None) -> Tensor:
        """y = input reduced with `mode` (a hipdnn.reduction_mode) over every axis where
        y's dim is 1 and input's is not.  As in cuDNN frontend, give y its dims
        (``y.set_dim([...])``) before the graph is validated."""
        op = self._op("reduction", "reduction", name, compute_data_type)
        self._param(op, "mode", _fe_enum(mode, reduction_mode, op.label(), "mode") - 1)
        return self._finish(op, [("x", input)], "y", users=("input",))

    def slice(self, input: Tensor, slices: Sequence[Any],
              compute_data_type: Optional[DataTypeLike] = None,
              name: Optional[str] = None) -> Tensor:
        """input[slices]: one Python ``slice`` per dim of input (``slice(None)`` for a whole
        dim; non-negative start and stop, a positive step), as cuDNN frontend's slice."""
        op = self._op("slice", "slice", name, compute_data_type)
        dims = input.get_dim() if isinstance(input, Tensor) else None
        if not isinstance(slices, (list, tuple)) or \
                not all(isinstance(s, slice) for s in slices):
            raise TypeError(f"{op.label()}: slices must be a list of Python slice objects")
        if not dims:
            raise ValueError(f"{op.label()}: the input needs its dims set before slicing")
        if len(slices) != len(dims):
            raise ValueError(f"{op.label()}: {len(slices)} slices for an input of rank "
                             f"{len(dims)}")
        start, limit, step = [], [], []
        for i, (s, d) in enumerate(zip(slices, dims)):
            b, e, st = s.start, s.stop, s.step
            for what, v in (("start", b), ("stop", e), ("step", st)):
                if v is not None and (isinstance(v, bool) or
                                      not isinstance(v, (int, np.integer)) or v < 0):
                    raise ValueError(f"{op.label()}: dim {i}: {what} must be a non-negative "
                                     f"int, got {v!r}")
            start.append(0 if b is None else int(b))
            limit.append(d if e is None else min(int(e), d))
            step.append(1 if st is None else int(st))
        self._param(op, "start", start)
        self._param(op, "limit", limit)
        self._param(op, "step", step)
        return self._finish(op, [("x", input)], "y", users=("input",))

    def concatenate(self, inputs: Sequence[Tensor], axis: int,
                    in_place_index: Optional[int] = None,
                    compute_data_type: Optional[DataTypeLike] = None,
                    name: Optional[str] = None) -> Tensor:
        """The inputs (2 to 8, one data type) joined along axis; their other dims must
        match.  in_place_index is accepted for cuDNN frontend's signature and does not
        change the result."""
        op = self._op("concatenate", "concatenate", name, compute_data_type)
        if not isinstance(inputs, (list, tuple)) or not 2 <= len(inputs) <= 8:
            raise ValueError(f"{op.label()}: inputs must be a list of 2 to 8 tensors")
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or axis < 0:
            raise ValueError(f"{op.label()}: axis must be a non-negative int, got {axis!r}")
        self._param(op, "axis", int(axis))
        if in_place_index is not None:
            self._param(op, "in_place_index", int(in_place_index))
        return self._finish(op, [(f"x{i}", t) for i, t in enumerate(inputs)], "y",
                            users=[f"inputs[{i}]" for i in range(len(inputs))])

    def _norm(self, what: str, mode: int, phase: Any, inputs: Sequence[Tuple[str, Any]],
              outs: Sequence[str], compute_data_type: Optional[DataTypeLike],
              name: Optional[str], zero_centered_gamma: bool) -> List[Tensor]:
        op = self._op("norm_forward", what, name, compute_data_type)
        self._param(op, "mode", mode)
        if phase is not None:
            fe_phase = _fe_enum(phase, norm_forward_phase, op.label(), "norm_forward_phase")
            self._param(op, "phase", fe_phase - 1)
        else:
            self._param(op, "phase", _C.NORM_FWD_TRAINING)
        if _bool_arg(zero_centered_gamma, f"{op.label()}: zero_centered_gamma"):
            self._param(op, "zero_centered_gamma", True)
        return self._finish_all(op, inputs, outs)

    def _training(self, phase: Any, what: str) -> bool:
        return _fe_enum(phase, norm_forward_phase, what, "norm_forward_phase") == \
            norm_forward_phase.TRAINING

    def layernorm(self, norm_forward_phase: Any, input: Tensor, scale: Tensor, bias: Tensor,
                  epsilon: Operand, compute_data_type: Optional[DataTypeLike] = None,
                  name: Optional[str] = None,
                  zero_centered_gamma: bool = False) -> List[Optional[Tensor]]:
        """[y, mean, inv_variance]: y = (x - mean) * inv_variance * scale + bias, the
        statistics over the dims scale spans (scale [1, D...] on x [N, D...]); mean and
        inv_variance are None in the INFERENCE phase.  Like every result they take the
        intermediate data type while virtual and io_data_type once marked as outputs, so
        give them FLOAT (set_data_type) as cuDNN frontend's samples do.  epsilon is a
        tensor or a float; with zero_centered_gamma, y uses scale + 1."""
        training = self._training(norm_forward_phase, "layernorm")
        outs = self._norm("layernorm", _C.LAYER_NORM, norm_forward_phase,
                          [("x", input), ("scale", scale), ("bias", bias),
                           ("epsilon", epsilon)],
                          ["y", "mean", "inv_variance"] if training else ["y"],
                          compute_data_type, name, zero_centered_gamma)
        return [outs[0], outs[1], outs[2]] if training else [outs[0], None, None]

    def adalayernorm(self, norm_forward_phase: Any, input: Tensor, scale: Tensor,
                     bias: Tensor, epsilon: Operand,
                     compute_data_type: Optional[DataTypeLike] = None,
                     name: Optional[str] = None) -> List[Optional[Tensor]]:
        """layernorm whose scale and bias are per sample ([N, 1.., D] on x [N, S.., D])."""
        training = self._training(norm_forward_phase, "adalayernorm")
        outs = self._norm("adalayernorm", _C.ADA_LAYER_NORM, norm_forward_phase,
                          [("x", input), ("scale", scale), ("bias", bias),
                           ("epsilon", epsilon)],
                          ["y", "mean", "inv_variance"] if training else ["y"],
                          compute_data_type, name, False)
        return [outs[0], outs[1], outs[2]] if training else [outs[0], None, None]

    def rmsnorm(self, norm_forward_phase: Any, input: Tensor, scale: Tensor,
                bias: Optional[Tensor] = None, epsilon: Optional[Operand] = None,
                compute_data_type: Optional[DataTypeLike] = None,
                name: Optional[str] = None,
                zero_centered_gamma: bool = False) -> List[Optional[Tensor]]:
        """[y, inv_variance]: y = x * inv_variance * scale (+ bias), inv_variance =
        1 / sqrt(mean(x^2) + epsilon) over the dims scale spans; inv_variance is None in the
        INFERENCE phase."""
        training = self._training(norm_forward_phase, "rmsnorm")
        if epsilon is None:
            raise TypeError("rmsnorm: epsilon is required")
        outs = self._norm("rmsnorm", _C.RMS_NORM, norm_forward_phase,
                          [("x", input), ("scale", scale), ("bias", bias),
                           ("epsilon", epsilon)],
                          ["y", "inv_variance"] if training else ["y"],
                          compute_data_type, name, zero_centered_gamma)
        return [outs[0], outs[1]] if training else [outs[0], None]

    def instancenorm(self, norm_forward_phase: Any, input: Tensor, scale: Tensor,
                     bias: Tensor, epsilon: Operand,
                     compute_data_type: Optional[DataTypeLike] = None,
                     name: Optional[str] = None) -> List[Optional[Tensor]]:
        """[y, mean, inv_variance]: statistics per sample and channel over the spatial dims
        of x [N, C, spatial...]; scale and bias are [1, C, 1...]."""
        training = self._training(norm_forward_phase, "instancenorm")
        outs = self._norm("instancenorm", _C.INSTANCE_NORM, norm_forward_phase,
                          [("x", input), ("scale", scale), ("bias", bias),
                           ("epsilon", epsilon)],
                          ["y", "mean", "inv_variance"] if training else ["y"],
                          compute_data_type, name, False)
        return [outs[0], outs[1], outs[2]] if training else [outs[0], None, None]

    def batchnorm(self, input: Tensor, scale: Tensor, bias: Tensor,
                  in_running_mean: Optional[Tensor] = None,
                  in_running_var: Optional[Tensor] = None,
                  epsilon: Optional[Operand] = None, momentum: Optional[Operand] = None,
                  peer_stats: Sequence[Tensor] = (),
                  compute_data_type: Optional[DataTypeLike] = None,
                  name: Optional[str] = None) -> List[Optional[Tensor]]:
        """Training batchnorm: [y, mean, inv_variance, next_running_mean,
        next_running_var], statistics per channel over batch and spatial dims; the running
        statistics (given with momentum) are updated as
        next = (1 - momentum) * running + momentum * batch statistic (variance unbiased);
        without them the last two are None.  peer_stats (multi-GPU) are not supported."""
        if peer_stats:
            raise ValueError("batchnorm: peer_stats (statistics shared across GPUs) are not "
                             "supported")
        if epsilon is None:
            raise TypeError("batchnorm: epsilon is required")
        running = in_running_mean is not None or in_running_var is not None or \
            momentum is not None
        outs = self._norm("batchnorm", _C.BATCH_NORM, None,
                          [("x", input), ("scale", scale), ("bias", bias),
                           ("epsilon", epsilon), ("exp_avg_factor", momentum),
                           ("input_running_mean", in_running_mean),
                           ("input_running_var", in_running_var)],
                          ["y", "mean", "inv_variance"] +
                          (["output_running_mean", "output_running_var"] if running else []),
                          compute_data_type, name, False)
        return outs + [None, None] if not running else list(outs)

    def _norm_backward(self, what: str, mode: int, inputs: Sequence[Tuple[str, Any]],
                       outs: Sequence[str], compute_data_type: Optional[DataTypeLike],
                       name: Optional[str], zero_centered_gamma: bool) -> List[Tensor]:
        op = self._op("norm_backward", what, name, compute_data_type)
        self._param(op, "mode", mode)
        if _bool_arg(zero_centered_gamma, f"{op.label()}: zero_centered_gamma"):
            self._param(op, "zero_centered_gamma", True)
        if mode == _C.RMS_NORM:  # cuDNN frontend's names for rmsnorm's gradients
            op.suffixes = {"dx": "DX", "dscale": "Dscale", "dbias": "Dbias"}
        return self._finish_all(op, inputs, outs)

    def layernorm_backward(self, grad: Tensor, input: Tensor, scale: Tensor, mean: Tensor,
                           inv_variance: Tensor,
                           compute_data_type: Optional[DataTypeLike] = None,
                           name: Optional[str] = None,
                           zero_centered_gamma: bool = False) -> List[Tensor]:
        """[dx, dscale, dbias] of layernorm's y given its gradient `grad`, the forward's
        input and scale, and the mean and inv_variance its TRAINING phase saved.  dscale
        and dbias are summed over the dims scale broadcasts on; with zero_centered_gamma
        (scale stored minus one, as in the forward) dscale is with respect to the stored
        value."""
        return self._norm_backward(
            "layernorm_backward", _C.LAYER_NORM,
            [("x", input), ("dy", grad), ("scale", scale), ("mean", mean),
             ("inv_variance", inv_variance)], ["dx", "dscale", "dbias"],
            compute_data_type, name, zero_centered_gamma)

    def adalayernorm_backward(self, grad: Tensor, input: Tensor, scale: Tensor, mean: Tensor,
                              inv_variance: Tensor,
                              compute_data_type: Optional[DataTypeLike] = None,
                              name: Optional[str] = None) -> List[Tensor]:
        """[dx, dscale, dbias] of adalayernorm (per-sample scale and bias)."""
        return self._norm_backward(
            "adalayernorm_backward", _C.ADA_LAYER_NORM,
            [("x", input), ("dy", grad), ("scale", scale), ("mean", mean),
             ("inv_variance", inv_variance)], ["dx", "dscale", "dbias"],
            compute_data_type, name, False)

    def rmsnorm_backward(self, grad: Tensor, input: Tensor, scale: Tensor,
                         inv_variance: Tensor, has_dbias: bool,
                         compute_data_type: Optional[DataTypeLike] = None,
                         name: Optional[str] = None,
                         zero_centered_gamma: bool = False) -> List[Optional[Tensor]]:
        """[dx, dscale, dbias] of rmsnorm; dbias (for an rmsnorm with a bias) only with
        has_dbias, else None."""
        dbias = _bool_arg(has_dbias, "rmsnorm_backward: has_dbias")
        outs = self._norm_backward(
            "rmsnorm_backward", _C.RMS_NORM,
            [("x", input), ("dy", grad), ("scale", scale), ("inv_variance", inv_variance)],
            ["dx", "dscale", "dbias"] if dbias else ["dx", "dscale"],
            compute_data_type, name, zero_centered_gamma)
        return list(outs) if dbias else [outs[0], outs[1], None]

    def instancenorm_backward(self, grad: Tensor, input: Tensor, scale: Tensor,
                              mean: Optional[Tensor] = None,
                              inv_variance: Optional[Tensor] = None,
                              compute_data_type: Optional[DataTypeLike] = None,
                              name: Optional[str] = None) -> List[Tensor]:
        """[dx, dscale, dbias] of instancenorm.  mean and inv_variance (the forward's
        saved statistics, [N, C, 1...]) are needed here: hipdnn does not recompute them."""
        if mean is None or inv_variance is None:
            raise ValueError("instancenorm_backward: give mean and inv_variance (the "
                             "statistics instancenorm's TRAINING phase returns); hipdnn does "
                             "not recompute them")
        return self._norm_backward(
            "instancenorm_backward", _C.INSTANCE_NORM,
            [("x", input), ("dy", grad), ("scale", scale), ("mean", mean),
             ("inv_variance", inv_variance)], ["dx", "dscale", "dbias"],
            compute_data_type, name, False)

    def batchnorm_backward(self, grad: Tensor, input: Tensor, scale: Tensor, mean: Tensor,
                           inv_variance: Tensor, peer_stats: Sequence[Tensor] = (),
                           compute_data_type: Optional[DataTypeLike] = None,
                           name: Optional[str] = None) -> List[Tensor]:
        """[dx, dscale, dbias] of training batchnorm, from the mean and inv_variance it
        saved ([1, C, 1...]); dscale and dbias are per channel.  peer_stats (multi-GPU)
        are not supported."""
        if peer_stats:
            raise ValueError("batchnorm_backward: peer_stats (statistics shared across GPUs) "
                             "are not supported")
        return self._norm_backward(
            "batchnorm_backward", _C.BATCH_NORM,
            [("x", input), ("dy", grad), ("scale", scale), ("mean", mean),
             ("inv_variance", inv_variance)], ["dx", "dscale", "dbias"],
            compute_data_type, name, False)

    def genstats(self, input: Tensor, compute_data_type: Optional[DataTypeLike] = None,
                 name: Optional[str] = None) -> List[Tensor]:
        """[sum, sq_sum]: per channel (dim 1) sums of input and of its squares, shaped
        [1, C, 1...] (set FLOAT on them, as on any statistic); cuDNN fuses it after a
        convolution to feed a batchnorm."""
        op = self._op("genstats", "genstats", name, compute_data_type)
        return self._finish_all(op, [("x", input)], ["sum", "sq_sum"])

    # The resample (pooling) family (hipdnn/_resample.py) and reshape (hipdnn/_reshape.py).
    resample = _resample_ops.resample
    resample_backward = _resample_ops.resample_backward
    reshape = _reshape_ops.reshape

    def _sdpa_params(self, op: _Op, what: str, use_padding_mask: bool, use_causal_mask: bool,
                     use_causal_mask_bottom_right: bool, sliding_window_length: Optional[int],
                     diagonal_alignment: Any, diagonal_band_left_bound: Optional[int],
                     diagonal_band_right_bound: Optional[int],
                     unsupported: Sequence[Tuple[str, Any]]) -> None:
        """The mask parameters both attention ops take, as cuDNN frontend resolves them:
        the causal flags are a right bound of 0 at their alignment, a sliding window is a
        left bound."""
        for arg, value in unsupported:
            if value is not None and value is not False:
                raise ValueError(f"{what}: {arg} is not supported by hipdnn yet")
        causal = _bool_arg(use_causal_mask, f"{what}: use_causal_mask")
        causal_br = _bool_arg(use_causal_mask_bottom_right,
                              f"{what}: use_causal_mask_bottom_right")
        if causal and causal_br:
            raise ValueError(f"{what}: use_causal_mask and use_causal_mask_bottom_right cannot "
                             "both be true")
        if (causal or causal_br) and diagonal_band_right_bound is not None:
            raise ValueError(f"{what}: a causal mask and diagonal_band_right_bound cannot be "
                             "set at the same time")
        if sliding_window_length is not None and diagonal_band_left_bound is not None:
            raise ValueError(f"{what}: sliding_window_length and diagonal_band_left_bound "
                             "cannot be set at the same time")
        if isinstance(diagonal_alignment, bool) or \
                not isinstance(diagonal_alignment, (int, np.integer)) or \
                int(diagonal_alignment) not in (0, 1):
            raise ValueError(f"{what}: diagonal_alignment must be a hipdnn.diagonal_alignment, "
                             f"got {diagonal_alignment!r}")
        alignment = int(diagonal_alignment)
        right = diagonal_band_right_bound
        if causal or causal_br:
            right = 0
            alignment = int(_diagonal_alignment.BOTTOM_RIGHT if causal_br
                            else _diagonal_alignment.TOP_LEFT)
        left = sliding_window_length if sliding_window_length is not None \
            else diagonal_band_left_bound
        for arg, value, low in (("left bound (sliding_window_length)", left, 1),
                                ("diagonal_band_right_bound", right, 0)):
            if value is not None and (isinstance(value, bool) or
                                      not isinstance(value, (int, np.integer)) or value < low):
                raise ValueError(f"{what}: {arg} must be an int >= {low}, got {value!r}")
        self._param(op, "diagonal_alignment", alignment)
        if left is not None:
            self._param(op, "left_bound", int(left))
        if right is not None:
            self._param(op, "right_bound", int(right))
        if _bool_arg(use_padding_mask, f"{what}: use_padding_mask"):
            self._param(op, "use_padding_mask", True)

    def sdpa(self, q: Tensor, k: Tensor, v: Tensor, is_inference: Optional[bool] = None,
             attn_scale: Optional[Operand] = None, bias: Optional[Tensor] = None,
             block_mask: Any = None, use_alibi_mask: bool = False,
             use_padding_mask: bool = False, seq_len_q: Optional[Tensor] = None,
             seq_len_kv: Optional[Tensor] = None, use_causal_mask: bool = False,
             use_causal_mask_bottom_right: bool = False,
             sliding_window_length: Optional[int] = None,
             diagonal_alignment: Any = _diagonal_alignment.TOP_LEFT,
             diagonal_band_left_bound: Optional[int] = None,
             diagonal_band_right_bound: Optional[int] = None, dropout: Any = None,
             rng_dump: Any = None, paged_attention_k_table: Any = None,
             paged_attention_v_table: Any = None, paged_attention_max_seq_len_kv: Any = None,
             compute_data_type: Optional[DataTypeLike] = None, name: Optional[str] = None,
             score_mod: Any = None, generate_stats: Optional[bool] = None,
             implementation: Any = None, score_max: Any = None, score_sum_exp: Any = None,
             sink_token: Any = None, unfuse_fma: bool = False) -> List[Optional[Tensor]]:
        """[O, Stats]: scaled dot-product attention, O = softmax(q k^T * attn_scale + bias,
        masked) v per batch and query head, q [B, H_q, S_q, D], k [B, H_k, S_kv, D],
        v [B, H_v, S_kv, D_v] (BSHD and other layouts through strides; H_q a multiple of
        H_k and H_v: GQA, MQA).  Stats (generate_stats=True, or is_inference=False) is the
        log-sum-exp of each score row, [B, H_q, S_q, 1] float32, for sdpa_backward; else
        None.  Masks: causal (top-left or bottom-right), a sliding window or any band
        (diagonal_band_left_bound / right_bound at diagonal_alignment), padding through
        seq_len_q / seq_len_kv ([B, 1, 1, 1] int32), additive bias.  A row that attends
        to nothing gives 0 and Stats -inf.  Dropout, ALiBi, paged attention, block masks
        and score modifiers are not supported (ValueError)."""
        what = "sdpa"
        if (generate_stats is None) == (is_inference is None):
            raise ValueError("sdpa: exactly one of generate_stats and is_inference must be set "
                             "(prefer generate_stats)")
        stats = _bool_arg(generate_stats, "sdpa: generate_stats") if generate_stats is not None \
            else not _bool_arg(is_inference, "sdpa: is_inference")
        op = self._op("sdpa", what, name, compute_data_type)
        self._sdpa_params(op, what, use_padding_mask, use_causal_mask,
                          use_causal_mask_bottom_right, sliding_window_length,
                          diagonal_alignment, diagonal_band_left_bound,
                          diagonal_band_right_bound,
                          [("block_mask", block_mask), ("use_alibi_mask", use_alibi_mask),
                           ("dropout", dropout), ("rng_dump", rng_dump),
                           ("paged_attention_k_table", paged_attention_k_table),
                           ("paged_attention_v_table", paged_attention_v_table),
                           ("paged_attention_max_seq_len_kv", paged_attention_max_seq_len_kv),
                           ("score_mod", score_mod), ("score_max", score_max),
                           ("score_sum_exp", score_sum_exp), ("sink_token", sink_token)])
        outs = self._finish_all(op, [("q", q), ("k", k), ("v", v), ("attn_scale", attn_scale),
                                     ("bias", bias), ("seq_len_q", seq_len_q),
                                     ("seq_len_kv", seq_len_kv)],
                                ["o", "stats"] if stats else ["o"])
        if stats:
            outs[1].set_data_type(data_type.FLOAT)
            return [outs[0], outs[1]]
        return [outs[0], None]

    def sdpa_backward(self, q: Tensor, k: Tensor, v: Tensor, o: Tensor, dO: Tensor,
                      stats: Tensor, attn_scale: Optional[Operand] = None,
                      bias: Optional[Tensor] = None, dBias: Any = None,
                      use_alibi_mask: bool = False, use_padding_mask: bool = False,
                      seq_len_q: Optional[Tensor] = None, seq_len_kv: Optional[Tensor] = None,
                      max_total_seq_len_q: Any = None, max_total_seq_len_kv: Any = None,
                      use_causal_mask: bool = False, use_causal_mask_bottom_right: bool = False,
                      sliding_window_length: Optional[int] = None,
                      diagonal_alignment: Any = _diagonal_alignment.TOP_LEFT,
                      diagonal_band_left_bound: Optional[int] = None,
                      diagonal_band_right_bound: Optional[int] = None, dropout: Any = None,
                      rng_dump: Any = None, use_deterministic_algorithm: bool = False,
                      compute_data_type: Optional[DataTypeLike] = None,
                      name: Optional[str] = None, score_mod: Any = None,
                      score_mod_bprop: Any = None, sink_token: Any = None,
                      dSink_token: Any = None) -> List[Tensor]:
        """[dQ, dK, dV] of sdpa's O given its gradient dO, the forward's inputs, O and
        Stats, and the same attn_scale, bias and masks; dK and dV sum over the query
        heads that share a key / value head.  The reference engine's sums are in a fixed
        order, so use_deterministic_algorithm changes nothing."""
        what = "sdpa_backward"
        op = self._op("sdpa_backward", what, name, compute_data_type)
        self._sdpa_params(op, what, use_padding_mask, use_causal_mask,
                          use_causal_mask_bottom_right, sliding_window_length,
                          diagonal_alignment, diagonal_band_left_bound,
                          diagonal_band_right_bound,
                          [("dBias", dBias), ("use_alibi_mask", use_alibi_mask),
                           ("max_total_seq_len_q", max_total_seq_len_q),
                           ("max_total_seq_len_kv", max_total_seq_len_kv),
                           ("dropout", dropout), ("rng_dump", rng_dump),
                           ("score_mod", score_mod), ("score_mod_bprop", score_mod_bprop),
                           ("sink_token", sink_token), ("dSink_token", dSink_token)])
        _bool_arg(use_deterministic_algorithm, "sdpa_backward: use_deterministic_algorithm")
        return self._finish_all(op, [("q", q), ("k", k), ("v", v), ("o", o), ("d_o", dO),
                                     ("stats", stats), ("attn_scale", attn_scale),
                                     ("bias", bias), ("seq_len_q", seq_len_q),
                                     ("seq_len_kv", seq_len_kv)], ["dq", "dk", "dv"])

    # -- engine selection --
    def deselect_engines(self, engine_names: Iterable[str]) -> None:
        """Leaves out every engine whose name contains one of these strings (cuDNN
        frontend matches its engine tags the same way); a string that matches no loaded
        engine leaves nothing out."""
        if isinstance(engine_names, str):
            raise TypeError("deselect_engines: expected a list of engine names, got a str")
        names = list(engine_names)
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"deselect_engines: expected engine names (str), got "
                                f"{_type_name(n)}")
        self._deselected = names
        self._drop_configs()

    def set_preferred_engine(self, name: Optional[str]) -> None:
        """Ranks this engine first when it applies (hipdnn's addition)."""
        self._preferred = _name_arg(name, "set_preferred_engine")
        self._drop_configs()

    def _drop_configs(self) -> None:
        if self._state >= _HEURISTICS:
            self._reset_plans()
            self._state = _VALIDATED

    def select_behavior_notes(self, notes: Iterable[int]) -> None:
        """Keeps only engine configs that have every one of these behaviour notes."""
        self._filters["select_behavior"] = _notes(notes, behavior_note, "select_behavior_notes")

    def deselect_behavior_notes(self, notes: Iterable[int]) -> None:
        """Leaves out engine configs that have any of these behaviour notes."""
        self._filters["deselect_behavior"] = _notes(notes, behavior_note,
                                                    "deselect_behavior_notes")

    def select_numeric_notes(self, notes: Iterable[int]) -> None:
        """Keeps only engine configs that have every one of these numerical notes."""
        self._filters["select_numeric"] = _notes(notes, numerical_note, "select_numeric_notes")

    def deselect_numeric_notes(self, notes: Iterable[int]) -> None:
        """Leaves out engine configs that have any of these numerical notes."""
        self._filters["deselect_numeric"] = _notes(notes, numerical_note,
                                                   "deselect_numeric_notes")

    def deselect_workspace_greater_than(self, workspace: int) -> None:
        """Leaves out plans that need more than this many bytes of workspace."""
        if isinstance(workspace, bool) or not isinstance(workspace, (int, np.integer)):
            raise TypeError(f"deselect_workspace_greater_than: expected an int, got "
                            f"{_type_name(workspace)}")
        self._max_workspace = int(workspace)

    # -- build steps --
    def _assign_uids(self, used: List[Tensor]) -> None:
        explicit = {t._uid for t in used if t._uid_explicit}
        taken = set(explicit)
        for t in used:
            if t._uid_explicit:
                continue
            if t._uid in taken:
                t._uid = self._new_uid()
                while t._uid in taken:
                    t._uid = self._new_uid()
            taken.add(t._uid)

    def _used_tensors(self) -> List[Tensor]:
        seen: Dict[int, Tensor] = {}
        for op in self._ops:
            for _p, _a, t in op.inputs + op.outputs:
                seen.setdefault(id(t), t)
        return list(seen.values())

    def _lower_tensor(self, t: Tensor) -> _C.Descriptor:
        d = _C.Descriptor(_C.BACKEND_TENSOR_DESCRIPTOR)
        d.set(_C.ATTR_TENSOR_UNIQUE_ID, _INT64, t._uid)
        if t.get_name():
            d.set(_C.ATTR_TENSOR_NAME_EXT, _CHAR, t.get_name())
        dt = self._default_dtype(t)
        if dt != data_type.NOT_SET:
            d.set(_C.ATTR_TENSOR_DATA_TYPE, _DTYPE, int(dt))
        if "dim" in t._a:
            d.set(_C.ATTR_TENSOR_DIMENSIONS, _INT64, t._a["dim"])
        if "stride" in t._a:
            d.set(_C.ATTR_TENSOR_STRIDES, _INT64, t._a["stride"])
        d.set(_C.ATTR_TENSOR_IS_VIRTUAL, _BOOL, t.get_is_virtual())
        if t.get_is_pass_by_value():
            if dt == data_type.NOT_SET:
                dt = data_type.FLOAT
                d.set(_C.ATTR_TENSOR_DATA_TYPE, _DTYPE, int(dt))
            d.set(_C.ATTR_TENSOR_IS_BY_VALUE, _BOOL, True)
            value = t.get_value()
            if value is not None:  # else a runtime scalar, given at each execute
                d.set(_C.ATTR_TENSOR_VALUE_EXT, _UINT8, _encode_scalar(value, dt))
        d.finalize()
        return d

    def _lower_op(self, op: _Op, descs: Dict[int, _C.Descriptor]) -> _C.Descriptor:
        d = _C.Descriptor(op.info.descriptor_type)
        d.set(_C.ATTR_OPERATION_NAME_EXT, _CHAR, op.name)
        compute = op.compute if op.compute is not None else self.compute_data_type
        if compute != data_type.NOT_SET:
            d.set(_C.ATTR_OPERATION_COMPUTE_TYPE_EXT, _DTYPE, int(compute))
        for attr, typ, values in op.params:
            d.set(attr, typ, values)
        for _port, attr, t in op.inputs + op.outputs:
            d.set(attr, _DESC, descs[id(t)])
        d.finalize()
        return d

    def validate(self) -> None:
        """Lowers the graph to backend descriptors and finalizes it: the backend checks
        it (a DAG, unique uids, every input produced or supplied, per-op dtype and rank
        rules) and infers every unset dim, stride and data type.  Raises
        InvalidGraphError naming the node or tensor."""
        if self._state >= _VALIDATED:
            return
        if not self._ops:
            raise _C.InvalidGraphError(f"graph '{self.name}' has no operations")
        used = self._used_tensors()
        self._assign_uids(used)
        descs = {id(t): self._lower_tensor(t) for t in used}
        ops = [self._lower_op(op, descs) for op in self._ops]
        g = _C.Descriptor(_C.BACKEND_OPERATIONGRAPH_DESCRIPTOR)
        g.set(_C.ATTR_OPERATIONGRAPH_HANDLE, _C.TYPE_HANDLE, self._get_handle())
        g.set(_C.ATTR_OPERATIONGRAPH_OPS, _DESC, ops)
        if self.name:
            g.set(_C.ATTR_OPERATIONGRAPH_NAME_EXT, _CHAR, self.name)
        g.finalize()
        # What the backend inferred lives in the graph: read it from TENSORS_EXT.
        by_uid = {t._uid: t for t in used}
        for d in g.get(_C.ATTR_OPERATIONGRAPH_TENSORS_EXT, _DESC):
            t = by_uid[d.get(_C.ATTR_TENSOR_UNIQUE_ID, _INT64)[0]]
            t._inferred = {
                "dim": d.get(_C.ATTR_TENSOR_DIMENSIONS, _INT64),
                "stride": d.get(_C.ATTR_TENSOR_STRIDES, _INT64),
                "data_type": data_type(d.get(_C.ATTR_TENSOR_DATA_TYPE, _DTYPE)[0]),
            }
        self._opgraph = g
        self._tensor_descs = {t._uid: descs[id(t)] for t in used}
        self._state = _VALIDATED

    def build_operation_graph(self) -> None:
        """validate() plus nothing more: the finalized graph is what later steps use."""
        self.validate()

    @property
    def _graph(self) -> _C.Descriptor:
        """The finalized OPERATIONGRAPH (validate() made it)."""
        assert self._opgraph is not None, "validate() first"
        return self._opgraph

    def _need(self, state: int, step: str) -> None:
        if self._state >= state:
            return
        needs = {_VALIDATED: "build_operation_graph()", _HEURISTICS: "create_execution_plans()",
                 _PLANS: "build_plans()"}[state]
        raise _not_ready(f"graph '{self.name}': {step} needs {needs} first "
                         "(or call build([hipdnn.heur_mode.A]))")

    def _heuristics(self, mode: heur_mode, deselected: Sequence[int]
                    ) -> Tuple[List[Tuple[str, str]], List[_C.Descriptor]]:
        """One ENGINEHEUR query: [(engine, "applicable" or why not)] and the ranked
        configs."""
        h = _C.Descriptor(_C.BACKEND_ENGINEHEUR_DESCRIPTOR)
        backend_mode = heur_mode.A if mode == heur_mode.OPENSOURCE else mode
        h.set(_C.ATTR_ENGINEHEUR_MODE, _C.TYPE_HEUR_MODE, int(backend_mode))
        h.set(_C.ATTR_ENGINEHEUR_OPERATION_GRAPH, _DESC, self._opgraph)
        if self._preferred:
            h.set(_C.ATTR_ENGINEHEUR_PREFERRED_ENGINE_EXT, _CHAR, self._preferred)
        if deselected:
            h.set(_C.ATTR_ENGINEHEUR_DESELECTED_ENGINES_EXT, _INT64,
                  [i - (1 << 64) if i >= (1 << 63) else i for i in deselected])
        h.finalize()
        report = []
        for line in h.get(_C.ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT, _CHAR).splitlines():
            fields = line.split("\t", 2)
            if len(fields) == 3:
                report.append((fields[0], fields[2]))
        return report, list(h.get(_C.ATTR_ENGINEHEUR_RESULTS, _DESC))

    def _deselected_ids(self) -> List[int]:
        return [e.id for e in engines() if any(n in e.name for n in self._deselected)]

    def _note_support(self, report: Sequence[Tuple[str, str]]) -> None:
        known = dict(self._support)
        for ename, status in report:
            if ename not in known or status == "applicable":
                known[ename] = None if status == "applicable" else status
        self._support = list(known.items())

    def create_execution_plans(self, heur_modes: Union[Sequence[int], int] = (heur_mode.A,)
                               ) -> None:
        """Asks every engine whether it runs the graph and ranks the ones that do, for each
        heuristics mode; their engine configs are added, in mode order, to the graph's
        list (plan indices count in it)."""
        self._need(_VALIDATED, "create_execution_plans()")
        if isinstance(heur_modes, bool):
            raise TypeError("create_execution_plans: expected hipdnn.heur_mode values, got bool")
        if isinstance(heur_modes, (int, np.integer)):
            heur_modes = [heur_modes]
        modes = []
        for m in heur_modes:
            if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
                raise TypeError(f"create_execution_plans: expected hipdnn.heur_mode values, "
                                f"got {_type_name(m)}")
            try:
                modes.append(heur_mode(int(m)))
            except ValueError:
                raise ValueError(f"create_execution_plans: {int(m)} is not a hipdnn.heur_mode") \
                    from None
        if not modes:
            raise ValueError("create_execution_plans: give at least one hipdnn.heur_mode")
        if self._preferred:
            engine_id(self._preferred)  # a clear error for an unknown name
        deselected = self._deselected_ids()
        for mode in modes:
            report, results = self._heuristics(mode, deselected)
            self._note_support(report)
            for cfg in results:
                eng = cfg.get(_C.ATTR_ENGINECFG_ENGINE, _DESC)[0]
                self._add_config(_Config(cfg, eng.get(_C.ATTR_ENGINE_NAME_EXT, _CHAR), ()))
        self._state = max(self._state, _HEURISTICS)

    def _add_config(self, cfg: "_Config") -> int:
        for i, c in enumerate(self._configs):
            if c.engine == cfg.engine and c.knobs == cfg.knobs:
                return i
        self._configs.append(cfg)
        self._plans.append(None)
        return len(self._configs) - 1

    def get_engine_count(self) -> int:
        """How many engines are loaded: engine ids for create_execution_plan and
        get_knobs_for_engine run from 0 to this count (hipdnn.engines() order)."""
        self._need(_VALIDATED, "get_engine_count()")
        return int(self._graph.get(_C.ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, _INT64)[0])

    def _engine_index(self, engine: Any, what: str) -> int:
        if isinstance(engine, bool) or not isinstance(engine, (int, np.integer)):
            raise TypeError(f"{what}: engine must be an int, got {_type_name(engine)}")
        count = self.get_engine_count()
        if not 0 <= int(engine) < count:
            raise IndexError(f"{what}: engine {int(engine)} out of range; {count} engine(s) are "
                             "loaded")
        return int(engine)

    def get_knobs_for_engine(self, engine: int) -> List["knob"]:
        """The knobs of engine ``engine`` (an index below get_engine_count()).  hipdnn's
        backend does not pass engines' knobs on yet, and the reference engine has none, so
        this is an empty list."""
        self._need(_VALIDATED, "get_knobs_for_engine()")
        self._engine_index(engine, "get_knobs_for_engine")
        return []

    def create_execution_plan(self, engine: int, knobs: Optional[Mapping[Any, int]] = None
                              ) -> None:
        """Adds the engine config {engine ``engine``, knob values} to the graph's list,
        bypassing heuristics.  Knob keys are hipdnn.knob_type values (or engine knob ids);
        an engine that does not run the graph raises GraphNotSupportedError with its
        reason, a knob it does not have fails when the plan is built."""
        self._need(_VALIDATED, "create_execution_plan()")
        index = self._engine_index(engine, "create_execution_plan")
        if knobs is None:
            knobs = {}
        if not isinstance(knobs, Mapping):
            raise TypeError(f"create_execution_plan: knobs must be a dict {{knob_type: value}}, "
                            f"got {_type_name(knobs)}")
        choices = []
        for k, v in knobs.items():
            for x, what in ((k, "knob type"), (v, "knob value")):
                if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
                    raise TypeError(f"create_execution_plan: {what} must be an int, got "
                                    f"{_type_name(x)}")
            choices.append((int(k), int(v)))
        choices.sort()
        e = _C.Descriptor(_C.BACKEND_ENGINE_DESCRIPTOR)
        e.set(_C.ATTR_ENGINE_OPERATION_GRAPH, _DESC, self._opgraph)
        e.set(_C.ATTR_ENGINE_GLOBAL_INDEX, _INT64, index)
        e.finalize()
        ename = e.get(_C.ATTR_ENGINE_NAME_EXT, _CHAR)
        if not any(n == ename for n, _ in self._support):
            report, _ = self._heuristics(heur_mode.A, [])
            self._note_support(report)
        why = dict(self._support).get(ename)
        if why is not None:
            raise GraphNotSupportedError(self.name, {ename: why})
        self._add_config(self._make_config(e, tuple(choices)))
        self._state = max(self._state, _HEURISTICS)

    @staticmethod
    def _make_config(engine: _C.Descriptor, knobs: Tuple[Tuple[int, int], ...]) -> "_Config":
        """An ENGINECFG of a finalized ENGINE with these (knob id, value) choices."""
        descs = []
        for k, v in knobs:
            kc = _C.Descriptor(_C.BACKEND_KNOB_CHOICE_DESCRIPTOR)
            kc.set(_C.ATTR_KNOB_CHOICE_KNOB_TYPE, _INT64, k)
            kc.set(_C.ATTR_KNOB_CHOICE_KNOB_VALUE, _INT64, v)
            kc.finalize()
            descs.append(kc)
        cfg = _C.Descriptor(_C.BACKEND_ENGINECFG_DESCRIPTOR)
        cfg.set(_C.ATTR_ENGINECFG_ENGINE, _DESC, engine)
        if descs:
            cfg.set(_C.ATTR_ENGINECFG_KNOB_CHOICES, _DESC, descs)
        cfg.finalize()
        return _Config(cfg, engine.get(_C.ATTR_ENGINE_NAME_EXT, _CHAR), tuple(knobs))

    def support_report(self) -> List[Tuple[str, Optional[str]]]:
        """``[(engine_name, None or the reason it declined)]`` for every loaded engine, from
        the last create_execution_plans()."""
        self._need(_HEURISTICS, "support_report()")
        return list(self._support)

    def _barred(self, i: int) -> Optional[str]:
        """Why engine config i is left out by the user's choices, or None."""
        c = self._configs[i]
        if any(n in c.engine for n in self._deselected):
            return "deselected by the user"
        notes: Dict[str, Sequence[int]] = {"behavior": (), "numeric": ()}  # hipdnn engines': none
        for key, wanted in self._filters.items():
            kind = key.split("_")[1]
            if key.startswith("select") and any(n not in notes[kind] for n in wanted):
                return f"lacks a selected {kind} note ({', '.join(n.name for n in wanted)})"
            if key.startswith("deselect") and any(n in notes[kind] for n in wanted):
                return f"has a deselected {kind} note"
        return None

    def _declines(self) -> Dict[str, str]:
        reasons = {n: why for n, why in self._support if why is not None}
        for i, c in enumerate(self._configs):
            why = self._failures.get(i) or self._barred(i)
            if why is not None and self._plans[i] is None:
                reasons[c.tag()] = why
        return reasons

    def check_support(self) -> None:
        """Raises GraphNotSupportedError, listing every engine and why it declined, when
        no engine config can run the graph."""
        self._need(_HEURISTICS, "check_support()")
        if all(self._barred(i) is not None for i in range(len(self._configs))):
            raise GraphNotSupportedError(self.name, self._declines())

    def _build_one(self, i: int) -> Optional[str]:
        """Builds plan i unless built; the reason it cannot be, or None."""
        if self._plans[i] is not None:
            return None
        why = self._barred(i)
        if why is not None:
            return why
        c = self._configs[i]
        p = _C.Descriptor(_C.BACKEND_EXECUTION_PLAN_DESCRIPTOR)
        p.set(_C.ATTR_EXECUTION_PLAN_HANDLE, _C.TYPE_HANDLE, self._get_handle())
        p.set(_C.ATTR_EXECUTION_PLAN_ENGINE_CONFIG, _DESC, c.desc)
        try:
            p.finalize()
        except HipdnnError as e:
            self._failures[i] = f"plan build failed: {e}"
            return self._failures[i]
        # Compiled once from the plan itself: what execute() checks arrays against.
        pack = _C.VariantPack(p)
        if self._max_workspace is not None and pack.workspace_size > self._max_workspace:
            self._failures[i] = (f"needs {pack.workspace_size} B of workspace, more than the "
                                 f"{self._max_workspace} B allowed")
            return self._failures[i]
        self._plans[i] = _Plan(p, p.get(_C.ATTR_EXECUTION_PLAN_ENGINE_NAME_EXT, _CHAR),
                               pack.workspace_size, memory_space(pack.memory_space), pack,
                               {uid: k for k, uid in enumerate(pack.uids)})
        self._failures.pop(i, None)
        self._state = _PLANS
        return None

    def build_plan_at_index(self, index: int) -> None:
        """Builds the plan of engine config ``index``; execute() runs it from now on."""
        self._need(_HEURISTICS, "build_plan_at_index()")
        self._check_index(index, len(self._configs), "build_plan_at_index()")
        why = self._build_one(int(index))
        if why is not None:
            raise GraphNotSupportedError(self.name, {self._configs[int(index)].tag(): why})
        self._candidate = int(index)

    def build_plans(self, policy: int = build_plan_policy.HEURISTICS_CHOICE) -> None:
        """Builds execution plans from the engine configs in order: HEURISTICS_CHOICE
        stops at the first that builds, ALL builds every one.  execute() runs the first
        that built."""
        self._need(_HEURISTICS, "build_plans()")
        if isinstance(policy, bool) or not isinstance(policy, (int, np.integer)):
            raise TypeError(f"build_plans: expected a hipdnn.build_plan_policy, got "
                            f"{_type_name(policy)}")
        try:
            policy = build_plan_policy(int(policy))
        except ValueError:
            raise ValueError(f"build_plans: {int(policy)} is not a hipdnn.build_plan_policy") \
                from None
        if policy == build_plan_policy.HEURISTICS_CHOICE and self._candidate >= 0:
            return
        for i in range(len(self._configs)):
            if self._build_one(i) is None:
                if self._candidate < 0:
                    self._candidate = i
                if policy == build_plan_policy.HEURISTICS_CHOICE:
                    break
        if self._candidate < 0:
            raise GraphNotSupportedError(self.name, self._declines())

    def build(self, heur_modes: Union[Sequence[int], int] = (heur_mode.A,)) -> None:
        """validate, build_operation_graph, create_execution_plans, check_support and
        build_plans(HEURISTICS_CHOICE) in one call."""
        self.validate()
        self.build_operation_graph()
        self.create_execution_plans(heur_modes)
        self.check_support()
        self.build_plans(build_plan_policy.HEURISTICS_CHOICE)

    # -- plans --
    def get_execution_plan_count(self) -> int:
        """How many engine configs the graph holds (plan indices run below it); 0 before
        create_execution_plans()."""
        return len(self._configs) if self._state >= _HEURISTICS else 0

    @staticmethod
    def _check_index(index: Any, count: int, what: str) -> None:
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"{what}: index must be an int, got {_type_name(index)}")
        if not 0 <= index < count:
            raise IndexError(f"{what}: plan index {int(index)} out of range; the graph has "
                             f"{count} engine config(s)")

    def _plan(self, index: Optional[int], what: str) -> "_Plan":
        self._need(_PLANS, what)
        if index is None:
            index = self._candidate
        self._check_index(index, len(self._configs), what)
        plan = self._plans[int(index)]
        if plan is None:
            why = self._failures.get(int(index)) or self._barred(int(index))
            raise _not_ready(f"graph '{self.name}': {what}: plan {int(index)} "
                             f"({self._configs[int(index)].tag()}) is not built"
                             + (f": {why}" if why else "; call build_plan_at_index()"))
        return plan

    def get_workspace_size(self) -> int:
        """Bytes of workspace enough for every built plan."""
        self._need(_PLANS, "get_workspace_size()")
        return max(p.workspace for p in self._plans if p is not None)

    def get_workspace_size_plan_at_index(self, index: int) -> int:
        """Bytes of workspace plan ``index`` needs."""
        return self._plan(index, "get_workspace_size_plan_at_index()").workspace

    def get_engine_name(self, index: Optional[int] = None) -> str:
        """The engine of plan ``index`` (default: the one execute() runs), e.g.
        "reference_cpu"."""
        return self._plan(index, "get_engine_name()").engine

    def get_memory_space(self, index: Optional[int] = None) -> memory_space:
        """Where plan ``index`` (default: the one execute() runs) expects its arrays."""
        return self._plan(index, "get_memory_space()").space

    def get_plan_name_at_index(self, index: int) -> str:
        """The name of engine config ``index``: the engine's name, then "_k<knob>=<value>"
        for each knob it sets."""
        self._need(_HEURISTICS, "get_plan_name_at_index()")
        self._check_index(index, len(self._configs), "get_plan_name_at_index()")
        return self._configs[int(index)].tag()

    def get_kernel_groups(self, index: Optional[int] = None) -> List[KernelGroup]:
        """Which nodes plan ``index`` (default: the one execute() runs) runs in which
        kernel, in launch order: the engine's own account of what it fused.  Every node is
        in at least one group; one in several is run in passes (a long reduction).  Raises
        NotSupportedError when the engine does not describe its kernels (an optional part
        of the plugin ABI)."""
        plan = self._plan(index, "get_kernel_groups()")
        out = []
        for kernel, detail, nodes in _C.plan_kernels(plan.desc):
            out.append(KernelGroup(kernel, detail, [self._ops[i].name for i in nodes],
                                   list(nodes)))
        return out

    def get_behavior_notes_for_plan_at_index(self, index: int) -> List[behavior_note]:
        """The behaviour notes of engine config ``index``.  hipdnn engines report none of
        cuDNN's (the backend passes no notes on), so this is an empty list."""
        self._need(_HEURISTICS, "get_behavior_notes_for_plan_at_index()")
        self._check_index(index, len(self._configs), "get_behavior_notes_for_plan_at_index()")
        return []

    def get_behavior_notes(self) -> List[behavior_note]:
        """The behaviour notes of the plan execute() runs (see
        get_behavior_notes_for_plan_at_index)."""
        self._need(_PLANS, "get_behavior_notes()")
        return self.get_behavior_notes_for_plan_at_index(self._candidate)

    # -- execute --
    def _arrays_for(self, plan: "_Plan", variant_pack: Mapping[Any, Any]) -> List[Any]:
        """The user's {tensor or uid: array} as a list in the order of the plan's pack; the
        pack itself checks every array.  None keys and None values are skipped (cuDNN
        frontend's optional outputs); a runtime scalar takes a number or a one-element
        array."""
        if not isinstance(variant_pack, Mapping):
            raise TypeError("variant pack: expected a dict {tensor or uid: array}, got "
                            f"{_type_name(variant_pack)}")
        pack, slots = plan.pack, plan.slots
        arrays: List[Any] = [None] * len(slots)
        for key, arr in variant_pack.items():
            if key is None or arr is None:
                continue
            if isinstance(key, Tensor):
                if key._graph is not self:
                    raise ValueError(f"variant pack: {key._label()} belongs to graph "
                                     f"'{key._graph.name}', not to graph '{self.name}'")
                uid = key._uid
            elif isinstance(key, (int, np.integer)) and not isinstance(key, bool):
                uid = int(key)
            else:
                raise TypeError("variant pack: keys must be tensors or uids (int), got "
                                f"{_type_name(key)}")
            idx = slots.get(uid)
            if idx is None:
                t = self._tensor_by_uid(uid)
                if t is None:
                    raise ValueError(f"variant pack: uid {uid} is not a tensor of graph "
                                     f"'{self.name}'")
                kind = "pass-by-value (its value is in the graph)" if t.get_is_pass_by_value() \
                    else "virtual (it has no memory; mark it with set_output(True))"
                raise ValueError(f"variant pack: {t._label()} is {kind}")
            if arrays[idx] is not None:
                raise ValueError(f"variant pack: {self._pack_label(pack, idx)} is given twice")
            t = self._tensor_by_uid(uid)
            if t is not None and t.get_is_pass_by_value():
                arr = self._scalar_array(pack, idx, arr)
            arrays[idx] = as_buffer(arr)
        missing = [self._pack_label(pack, i) for i, a in enumerate(arrays) if a is None]
        if missing:
            raise ValueError("variant pack: no array for " + ", ".join(missing))
        return arrays

    @classmethod
    def _scalar_array(cls, pack: _C.VariantPack, idx: int, value: Any) -> Any:
        """A runtime scalar's value as the one-element array its tensor describes."""
        _uid, _name, dt, dims, _strides, _out = pack.tensors[idx]
        label = cls._pack_label(pack, idx)
        if isinstance(value, (bool, np.bool_)) and dt != data_type.BOOLEAN:
            raise TypeError(f"variant pack: {label} is a {_C.dtype_name(dt)} scalar, got a bool")
        if isinstance(value, numbers.Number) or isinstance(value, np.generic):
            a = np.asarray(value)
        elif isinstance(value, np.ndarray) or hasattr(value, "__array_interface__"):
            a = np.asarray(value)
            if a.size != 1:
                raise ValueError(f"variant pack: {label} is a scalar; got an array of shape "
                                 f"{list(a.shape)}")
        else:
            return value  # let the pack report what it is
        want = numpy_dtype(data_type(dt))
        if data_type(dt) == data_type.BFLOAT16:
            bits = a.view(np.uint16) if a.dtype == np.uint16 else to_bfloat16(a)
            return np.ascontiguousarray(bits).reshape(dims)
        return np.ascontiguousarray(a, dtype=want).reshape(dims)

    @staticmethod
    def _pack_label(pack: _C.VariantPack, idx: int) -> str:
        uid, name = pack.tensors[idx][:2]
        return f"tensor '{name}' (uid {uid})" if name else f"tensor with uid {uid}"

    def _tensor_by_uid(self, uid: int) -> Optional[Tensor]:
        for t in self._tensors:
            if t._uid == uid:
                return t
        return None

    def query_tensor_attributes_of_uid(self, uid: int) -> Tensor:
        """The tensor with this uid (as cuDNN frontend's, e.g. on a deserialized graph)."""
        if isinstance(uid, bool) or not isinstance(uid, (int, np.integer)):
            raise TypeError(f"query_tensor_attributes_of_uid: expected an int, got "
                            f"{_type_name(uid)}")
        t = self._tensor_by_uid(int(uid))
        if t is None:
            raise ValueError(f"graph '{self.name}' has no tensor with uid {int(uid)}")
        return t

    def execute_plan_at_index(self, variant_pack: Mapping[Any, Any], workspace: Any,
                              index: int, handle: Optional[_C.Handle] = None) -> None:
        """Runs plan ``index`` on the arrays of the variant pack ({tensor or uid: array}).
        Arrays are checked against the plan's graph (dtype, shape, strides in elements,
        writable outputs) and used in place.  workspace: at least
        get_workspace_size_plan_at_index(index) bytes; None lets a host plan allocate its
        own.  ``handle``: any handle of the plan's device (default: the graph's)."""
        plan = self._plan(index, "execute()")
        if handle is not None and not isinstance(handle, _C.Handle):
            raise TypeError(f"execute: handle must be a hipdnn.Handle, got {_type_name(handle)}")
        arrays = self._arrays_for(plan, variant_pack)
        plan.pack.execute(handle if handle is not None else self._get_handle(), arrays,
                          workspace)

    def execute(self, variant_pack: Mapping[Any, Any], workspace: Any = None,
                handle: Optional[_C.Handle] = None) -> None:
        """Runs the plan build_plans() chose; see execute_plan_at_index."""
        self._need(_PLANS, "execute()")
        self.execute_plan_at_index(variant_pack, workspace, self._candidate, handle)

    # -- serialization --
    def serialize(self) -> bytes:
        """The graph as bytes; deterministic.  Before a plan is built: the finalized
        graph's FlatBuffers bytes.  Once build_plans() has built one: those bytes with the
        engine config execute() runs (hipdnn/plan_bytes.py), so that deserialize() gives a
        graph that executes without another build, as cuDNN frontend's does."""
        if self._state >= _PLANS:
            c = self._configs[self._candidate]
            return plan_bytes.encode(engine_id(c.engine), c.knobs, _C.serialize(self._graph))
        self.validate()
        return _C.serialize(self._graph)

    def deserialize(self, handle: Any, data: Any = None) -> None:
        """``deserialize(data)`` or ``deserialize(handle, data)``: replaces this graph by
        one read from bytes made by serialize().  Corrupted or truncated input raises
        InvalidGraphError.  Graph bytes give a validated graph (call build(), then execute
        with uids or tensors()); plan bytes give one whose plan is built on ``handle`` (by
        default the graph's), ready to execute."""
        if data is None:
            handle, data = None, handle
        if handle is not None and not isinstance(handle, _C.Handle):
            raise TypeError(f"deserialize: handle must be a hipdnn.Handle, got "
                            f"{_type_name(handle)}")
        if isinstance(data, str) or not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"deserialize: expected bytes, got {_type_name(data)}")
        data = bytes(data)
        plan = None
        if plan_bytes.is_plan_bytes(data):
            try:
                plan = plan_bytes.decode(data)
            except ValueError as e:
                raise _C.InvalidGraphError(f"deserialize: {e}") from None
            data = plan.graph
        self._adopt_graph(data, handle, bind=True)
        if plan is not None:
            self._adopt_plan(plan)

    def _adopt_graph(self, data: bytes, handle: Optional[_C.Handle], bind: bool) -> None:
        """Becomes the graph of graph bytes; `bind`: on its handle, as deserialize() does
        (without, nothing loads an engine: for pictures of graphs of any machine)."""
        g = _C.deserialize(data)  # verified and validated by the backend
        if handle is not None:
            self._handle = handle
        if bind:
            # Engines check support on the graph's handle; a deserialized graph takes one once.
            g.set(_C.ATTR_OPERATIONGRAPH_HANDLE, _C.TYPE_HANDLE, self._get_handle())
        try:
            tensors, ops, outputs = self._read_deserialized(g, data)
        except (ValueError, KeyError) as e:
            raise _C.InvalidGraphError(f"deserialize: {e}") from None
        self._tensors, self._ops = tensors, ops
        self._reset_build()
        self.name = g.get(_C.ATTR_OPERATIONGRAPH_NAME_EXT, _CHAR)
        self._tensor_descs = {t._uid: t._desc for t in tensors if t._desc is not None}
        self._next_uid = max((t._uid for t in tensors), default=0) + 1
        self._opgraph = g
        self._state = _VALIDATED
        self._deserialized = True

    def _adopt_plan(self, plan: "plan_bytes.PlanBytes") -> None:
        """Builds the plan that plan bytes name, on this graph's handle."""
        e = _C.Descriptor(_C.BACKEND_ENGINE_DESCRIPTOR)
        e.set(_C.ATTR_ENGINE_OPERATION_GRAPH, _DESC, self._opgraph)
        signed = plan.engine_id - (1 << 64) if plan.engine_id >= (1 << 63) else plan.engine_id
        try:
            e.set(_C.ATTR_ENGINE_ID_EXT, _INT64, signed)
        except HipdnnError:
            known = ", ".join(f"{x.name} ({x.id})" for x in engines()) or "none"
            raise GraphNotSupportedError(
                self.name, {f"engine id {plan.engine_id}": "the serialized plan's engine is "
                            f"not loaded (loaded: {known})"}) from None
        e.finalize()
        self._add_config(self._make_config(e, plan.knobs))
        self._state = _HEURISTICS
        self.build_plan_at_index(0)

    def key(self) -> int:
        """A stable 64-bit hash of the graph's bytes (the same graph gives the same key
        in every process, with or without a plan built)."""
        self.validate()
        data = _C.serialize(self._graph)
        return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")

    def _read_deserialized(self, g: _C.Descriptor, data: bytes
                           ) -> Tuple[List[Tensor], List[_Op], Set[int]]:
        """Tensors and nodes (from the backend's descriptors) and output uids of a
        deserialized graph."""
        tensors: List[Tensor] = []
        by_uid: Dict[int, Tensor] = {}
        for d in g.get(_C.ATTR_OPERATIONGRAPH_TENSORS_EXT, _DESC):
            t = Tensor(self, d.get(_C.ATTR_TENSOR_UNIQUE_ID, _INT64)[0])
            t._uid_explicit = True
            t._desc = d
            dims = d.get(_C.ATTR_TENSOR_DIMENSIONS, _INT64)
            strides = d.get(_C.ATTR_TENSOR_STRIDES, _INT64)
            dt = data_type(d.get(_C.ATTR_TENSOR_DATA_TYPE, _DTYPE)[0])
            t._a.update(name=d.get(_C.ATTR_TENSOR_NAME_EXT, _CHAR), dim=dims, stride=strides,
                        data_type=dt, is_virtual=d.get(_C.ATTR_TENSOR_IS_VIRTUAL, _BOOL)[0],
                        is_pass_by_value=d.get(_C.ATTR_TENSOR_IS_BY_VALUE, _BOOL)[0])
            if t._a["is_pass_by_value"]:
                raw = d.get(_C.ATTR_TENSOR_VALUE_EXT, _UINT8)
                if dt == data_type.BFLOAT16:
                    t._a["value"] = float(from_bfloat16(np.frombuffer(raw, np.uint16))[0])
                else:
                    t._a["value"] = float(np.frombuffer(raw, numpy_dtype(dt))[0])
            t._inferred = {"dim": dims, "stride": strides, "data_type": dt}
            tensors.append(t)
            by_uid[t._uid] = t
        # The backend gives the nodes as operation descriptors (OPS), read through the op
        # table like any other.
        ops: List[_Op] = []
        for d in g.get(_C.ATTR_OPERATIONGRAPH_OPS, _DESC):
            info = _ops.BY_DESCRIPTOR_TYPE[d.type]
            opname = info.name
            users: Dict[str, str] = {}
            if info.name == "pointwise":
                mode = _ops.param_value(d, info.param("mode"))
                opname = _ops.POINTWISE_NAMES.get(mode, f"pointwise mode {mode}")
                users = _pointwise_ops.user_ports(mode)
            op = _Op(info, opname, d.get(_C.ATTR_OPERATION_NAME_EXT, _CHAR), None)
            for p in info.params:  # its modes, for listings and pictures
                if p.kind == _C.OP_ATTR_ENUM:
                    value = _ops.param_value(d, p)
                    if value is not None:
                        op.params.append((p.attr, p.type, value))
            for ports, dst in ((info.inputs, op.inputs), (info.outputs, op.outputs)):
                for port in ports:
                    td = d.get(port.attr, _DESC)
                    if td:
                        uid = td[0].get(_C.ATTR_TENSOR_UNIQUE_ID, _INT64)[0]
                        dst.append((users.get(port.name) or _user_port(info, port.name),
                                    port.attr, by_uid[uid]))
            ops.append(op)
        # The tensors the graph writes: their arrays must be writable.
        outputs = set(g.get(_C.ATTR_OPERATIONGRAPH_OUTPUT_UIDS_EXT, _INT64))
        return tensors, ops, outputs

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


def _describe_array(array: Any, hint: Optional[data_type], name: Optional[str]
                    ) -> Tuple[List[int], List[int], data_type]:
    """dims, strides in elements and data type of a host array, or of device memory (a
    DeviceArray, a PyTorch / CuPy array: read through DLPack or __cuda_array_interface__,
    zero-copy)."""
    if _device.is_device_array(array):
        return _describe_device_array(array, hint, name)
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
    code, shape, strides, _space, type_name = _C.describe_array(array)
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
