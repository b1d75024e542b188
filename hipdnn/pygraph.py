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
from typing import (Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple,
                    Union)

import numpy as np

from . import _C
from . import _ops
from .arrays import as_buffer, data_type_of, from_bfloat16, numpy_dtype, to_bfloat16
from .enums import (build_plan_policy, convolution_mode, data_type, heur_mode, memory_space,
                    pointwise_mode)
from .errors import GraphNotSupportedError, HipdnnError
from .runtime import default_handle, engine_id

__all__ = ["pygraph", "Tensor"]

_INT64, _DOUBLE, _BOOL, _CHAR = _C.TYPE_INT64, _C.TYPE_DOUBLE, _C.TYPE_BOOLEAN, _C.TYPE_CHAR
_DTYPE, _DESC, _UINT8 = _C.TYPE_DATA_TYPE, _C.TYPE_BACKEND_DESCRIPTOR, _C.TYPE_UINT8_EXT

DataTypeLike = Union[data_type, int]
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
    if value is None:
        if allow_none:
            return None
        raise TypeError(f"{what}: expected a hipdnn.data_type, got None")
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what}: expected a hipdnn.data_type, got {_type_name(value)}")
    try:
        return data_type(int(value))
    except ValueError:
        raise ValueError(f"{what}: {int(value)} is not a hipdnn.data_type") from None


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

    __slots__ = ("_graph", "_a", "_inferred", "_uid", "_uid_explicit", "_desc", "__weakref__")

    def __init__(self, graph: "pygraph", uid: int):
        self._graph = graph
        self._a: Dict[str, Any] = {}
        self._inferred: Dict[str, Any] = {}
        self._uid = uid
        self._uid_explicit = False
        self._desc: Optional[_C.Descriptor] = None  # the TENSOR descriptor of a deserialized graph

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
        """The dims (positive); strides not set are packed row-major."""
        dims = _int_list(dim, f"tensor '{self.get_name()}': set_dim")
        _check_dims(dims, self.get_name())
        self._changing()
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
        return self

    def set_data_type(self, dtype: DataTypeLike) -> "Tensor":
        """The element type (a ``hipdnn.data_type``)."""
        dt = _dtype_arg(dtype, f"tensor '{self.get_name()}': set_data_type", allow_none=False)
        self._changing()
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
        """The graph the tensor belongs to."""
        return self._graph

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

    __slots__ = ("info", "op", "name", "inputs", "outputs", "params", "compute")

    def __init__(self, info: "_ops.OpInfo", op: str, name: str,
                 compute: Optional[data_type]):
        self.info = info
        self.op = op  # "conv_fprop", "add", ...
        self.name = name
        self.inputs: List[Tuple[str, int, Tensor]] = []  # (port, attribute, tensor)
        self.outputs: List[Tuple[str, int, Tensor]] = []
        self.params: List[Tuple[int, int, Any]] = []  # (attribute, type, values)
        self.compute = compute

    def label(self) -> str:
        return f"{self.op} '{self.name}'"


# Port names for users, by op: cuDNN frontend's keywords, mapped onto the table's ports.
_USER_PORTS = {
    "conv_fprop": {"x": "image", "w": "weight"},
    "matmul": {"a": "A", "b": "B", "c": "C"},
    "pointwise": {"x": "a"},
    "batchnorm_inference": {"x": "input"},
}


def _user_port(info: "_ops.OpInfo", port: str, unary: bool = False) -> str:
    """The name users see for a table port (a unary pointwise op's x is "input")."""
    if unary and port == "x":
        return "input"
    return _USER_PORTS.get(info.name, {}).get(port, port)


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
        self._reset_build()

    # -- state --
    def _reset_build(self) -> None:
        self._state = _EDITING
        self._opgraph: Optional[_C.Descriptor] = None
        self._tensor_descs: Dict[int, _C.Descriptor] = {}
        self._configs: List[Tuple[_C.Descriptor, str]] = []
        self._support: List[Tuple[str, Optional[str]]] = []
        self._plans: List[Tuple[_C.Descriptor, str, int, memory_space]] = []
        # Per plan: its compiled variant pack and {uid: index in pack order}.
        self._packs: List[Tuple[_C.VariantPack, Dict[int, int]]] = []
        self._plan_failures: Dict[str, str] = {}

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
               data_type: Optional[DataTypeLike] = None, is_virtual: bool = False,
               is_pass_by_value: bool = False, uid: Optional[int] = None,
               value: Optional[float] = None) -> Tensor:
        """A new tensor.  stride omitted -> packed row-major; data_type omitted -> the
        graph's io_data_type (intermediate_data_type when virtual).  A pass-by-value
        tensor is a scalar carried in the graph: give its ``value``."""
        name = _name_arg(name, "tensor: name")
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
        t = self._new_tensor()
        if name is not None:
            t._a["name"] = name
        if dims is not None:
            t._a["dim"] = dims
        if strides is not None:
            t._a["stride"] = strides
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

    def tensor_like(self, like: Any, name: Optional[str] = None,
                    data_type: Optional[DataTypeLike] = None) -> Tensor:
        """A tensor with the dims, strides (in elements) and data type of a NumPy array
        (or anything NumPy can view without copying) or of another tensor.  A uint16
        array needs ``data_type=hipdnn.data_type.BFLOAT16``."""
        name = _name_arg(name, "tensor_like: name")
        hint = _dtype_arg(data_type, "tensor_like: data_type")
        if isinstance(like, Tensor):
            dims, strides = like.get_dim(), like.get_stride()
            dt = hint if hint is not None else like.get_data_type()
            if not dims:
                raise ValueError(f"tensor_like: {like._label()} has no dims yet (build the "
                                 "graph first, or give dims)")
            return self.tensor(name=name, dim=dims, stride=strides, data_type=dt)
        # A graph whose io_data_type is BFLOAT16 reads uint16 arrays as bfloat16 bits.
        bits_hint = hint if hint is not None else (
            _DT.BFLOAT16 if self.io_data_type == _DT.BFLOAT16 else None)
        dims, strides, dt = _describe_array(like, bits_hint, name)
        if hint is not None:
            dt = hint  # an explicit data_type describes the tensor; the array only its shape
        return self.tensor(name=name, dim=dims, stride=strides, data_type=dt)

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

    def _input(self, value: Any, op: _Op, port: str) -> Tensor:
        """The tensor for an op input; a Python number becomes a pass-by-value scalar."""
        self._check_input(value, op, port)
        if isinstance(value, Tensor):
            return value
        compute = op.compute if op.compute is not None else self.compute_data_type
        dt = data_type.DOUBLE if compute == data_type.DOUBLE else data_type.FLOAT
        return self.tensor(name=f"{op.name}::{port}", dim=[1], stride=[1], data_type=dt,
                           is_pass_by_value=True, value=float(value))

    def _op(self, table_op: str, op: str, name: Optional[str],
            compute_data_type: Optional[DataTypeLike]) -> _Op:
        """A new op of the op table's entry `table_op`, shown to users as `op` ("relu")."""
        self._check_editable("add operations")
        name = _name_arg(name, f"{op}: name")
        compute = _dtype_arg(compute_data_type, f"{op}: compute_data_type")
        if not name:
            name = f"{op}_{len(self._ops)}"
        return _Op(_ops.OPS[table_op], op, name, compute)

    def _param(self, op: _Op, name: str, values: Any) -> None:
        p = op.info.param(name)
        op.params.append((p.attr, p.type, values))

    def _finish(self, op: _Op, inputs: Sequence[Tuple[str, Any]], out_port: str) -> Tensor:
        """inputs: (table port, value); the output is the table's out_port.  Messages and
        listings use the users' names for ports (_user_port)."""
        unary = len(inputs) == 1 and op.info.name == "pointwise"
        named = [(port, _user_port(op.info, port, unary), value) for port, value in inputs]
        # Check every input before creating anything, so a bad one leaves no trace.
        for _port, user, value in named:
            self._check_input(value, op, user)
        for port, user, value in named:
            op.inputs.append((user, op.info.input(port).attr, self._input(value, op, user)))
        out_user = _user_port(op.info, out_port)
        y = self._new_tensor()
        y._a["name"] = f"{op.name}::{out_user.upper()}"
        y._a["is_virtual"] = True
        op.outputs.append((out_user, op.info.output(out_port).attr, y))
        self._ops.append(op)
        self._invalidate()
        return y

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
        return self._finish(op, [("x", image), ("w", weight)], "y")

    def matmul(self, A: Tensor, B: Tensor, compute_data_type: Optional[DataTypeLike] = None,
               name: Optional[str] = None) -> Tensor:
        """C = A @ B over the last two dims; batch dims broadcast."""
        op = self._op("matmul", "matmul", name, compute_data_type)
        return self._finish(op, [("a", A), ("b", B)], "c")

    def _pointwise(self, opname: str, mode: int, inputs: Sequence[Operand],
                   compute_data_type: Optional[DataTypeLike], name: Optional[str],
                   params: Sequence[Tuple[str, float]] = ()) -> Tensor:
        op = self._op("pointwise", opname, name, compute_data_type)
        self._param(op, "mode", int(mode))
        for pname, value in params:
            self._param(op, pname, value)
        return self._finish(op, list(zip(["x", "b"], inputs)), "y")

    def add(self, a: Operand, b: Operand, compute_data_type: Optional[DataTypeLike] = None,
               name: Optional[str] = None) -> Tensor:
        """a + b with NumPy broadcasting; b may be a Python float."""
        return self._pointwise("add", _ops.POINTWISE_MODES["add"], [a, b],
                               compute_data_type, name)

    def sub(self, a: Operand, b: Operand, compute_data_type: Optional[DataTypeLike] = None,
               name: Optional[str] = None) -> Tensor:
        """a - b with NumPy broadcasting."""
        return self._pointwise("sub", _ops.POINTWISE_MODES["sub"], [a, b],
                               compute_data_type, name)

    def mul(self, a: Operand, b: Operand, compute_data_type: Optional[DataTypeLike] = None,
               name: Optional[str] = None) -> Tensor:
        """a * b with NumPy broadcasting."""
        return self._pointwise("mul", _ops.POINTWISE_MODES["mul"], [a, b],
                               compute_data_type, name)

    def div(self, a: Operand, b: Operand, compute_data_type: Optional[DataTypeLike] = None,
               name: Optional[str] = None) -> Tensor:
        """a / b with NumPy broadcasting."""
        return self._pointwise("div", _ops.POINTWISE_MODES["div"], [a, b],
                               compute_data_type, name)

    def max(self, a: Operand, b: Operand, compute_data_type: Optional[DataTypeLike] = None,
               name: Optional[str] = None) -> Tensor:
        """Elementwise maximum with NumPy broadcasting."""
        return self._pointwise("max", _ops.POINTWISE_MODES["max"], [a, b],
                               compute_data_type, name)

    def min(self, a: Operand, b: Operand, compute_data_type: Optional[DataTypeLike] = None,
               name: Optional[str] = None) -> Tensor:
        """Elementwise minimum with NumPy broadcasting."""
        return self._pointwise("min", _ops.POINTWISE_MODES["min"], [a, b],
                               compute_data_type, name)

    def relu(self, input: Operand, negative_slope: Optional[float] = None,
             lower_clip: Optional[float] = None, upper_clip: Optional[float] = None,
             compute_data_type: Optional[DataTypeLike] = None,
             name: Optional[str] = None) -> Tensor:
        """max(x, lower_clip) (0 by default), capped at upper_clip; with negative_slope,
        values below lower_clip follow that slope (leaky relu)."""
        params: List[Tuple[str, float]] = []
        for pname, v, what in (("relu_lower_clip_slope", negative_slope, "negative_slope"),
                               ("relu_lower_clip", lower_clip, "lower_clip"),
                               ("relu_upper_clip", upper_clip, "upper_clip")):
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise TypeError(f"relu: {what} must be a float, got {_type_name(v)}")
            params.append((pname, float(v)))
        return self._pointwise("relu", _ops.POINTWISE_MODES["relu"], [input], compute_data_type,
                               name, params)

    def sigmoid(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
                   name: Optional[str] = None) -> Tensor:
        """1 / (1 + exp(-x))."""
        return self._pointwise("sigmoid", _ops.POINTWISE_MODES["sigmoid"], [input],
                               compute_data_type, name)

    def tanh(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
                name: Optional[str] = None) -> Tensor:
        """tanh(x)."""
        return self._pointwise("tanh", _ops.POINTWISE_MODES["tanh"], [input], compute_data_type,
                               name)

    def gelu(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
                name: Optional[str] = None) -> Tensor:
        """x * (1 + erf(x / sqrt(2))) / 2 (the exact form)."""
        return self._pointwise("gelu", _ops.POINTWISE_MODES["gelu"], [input], compute_data_type,
                               name)

    def identity(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
                    name: Optional[str] = None) -> Tensor:
        """A copy of x (converting its data type if the output's differs)."""
        return self._pointwise("identity", _ops.POINTWISE_MODES["identity"], [input],
                               compute_data_type, name)

    def batchnorm_inference(self, input: Tensor, mean: Tensor, inv_variance: Tensor,
                            scale: Tensor, bias: Tensor,
                            compute_data_type: Optional[DataTypeLike] = None,
                            name: Optional[str] = None) -> Tensor:
        """y = (x - mean) * inv_variance * scale + bias; the per-channel tensors are
        shaped [1, C, 1, ...] (same rank as x)."""
        op = self._op("batchnorm_inference", "batchnorm_inference", name, compute_data_type)
        return self._finish(op, [("x", input), ("mean", mean), ("inv_variance", inv_variance),
                                 ("scale", scale), ("bias", bias)], "y")

    # -- engine selection --
    def deselect_engines(self, names: Iterable[str]) -> None:
        """Leaves these engines out of create_execution_plans()."""
        if isinstance(names, str):
            raise TypeError("deselect_engines: expected a list of engine names, got a str")
        names = list(names)
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"deselect_engines: expected engine names (str), got "
                                f"{_type_name(n)}")
        self._deselected = names
        if self._state >= _HEURISTICS:
            self._state = _VALIDATED

    def set_preferred_engine(self, name: Optional[str]) -> None:
        """Ranks this engine first when it applies."""
        self._preferred = _name_arg(name, "set_preferred_engine")
        if self._state >= _HEURISTICS:
            self._state = _VALIDATED

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
            value = t.get_value()
            if value is None:
                raise ValueError(f"{t._label()} is pass-by-value but has no value "
                                 "(give value= or call set_value)")
            if dt == data_type.NOT_SET:
                dt = data_type.FLOAT
                d.set(_C.ATTR_TENSOR_DATA_TYPE, _DTYPE, int(dt))
            d.set(_C.ATTR_TENSOR_IS_BY_VALUE, _BOOL, True)
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

    def _need(self, state: int, step: str) -> None:
        if self._state >= state:
            return
        needs = {_VALIDATED: "build_operation_graph()", _HEURISTICS: "create_execution_plans()",
                 _PLANS: "build_plans()"}[state]
        raise _not_ready(f"graph '{self.name}': {step} needs {needs} first "
                         "(or call build([hipdnn.heur_mode.A]))")

    def create_execution_plans(self, heur_modes: Union[Sequence[int], int] = (heur_mode.A,)
                               ) -> None:
        """Asks every engine whether it runs the graph and ranks the ones that do, for each
        heuristics mode; the union, in mode order, becomes the list of engine configs."""
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
        deselected = [engine_id(n) for n in self._deselected]
        if self._preferred:
            engine_id(self._preferred)  # a clear error for an unknown name
        configs: List[Tuple[_C.Descriptor, str]] = []
        seen = set()
        support: Dict[str, Optional[str]] = {}
        order: List[str] = []
        for mode in modes:
            h = _C.Descriptor(_C.BACKEND_ENGINEHEUR_DESCRIPTOR)
            h.set(_C.ATTR_ENGINEHEUR_MODE, _C.TYPE_HEUR_MODE, int(mode))
            h.set(_C.ATTR_ENGINEHEUR_OPERATION_GRAPH, _DESC, self._opgraph)
            if self._preferred:
                h.set(_C.ATTR_ENGINEHEUR_PREFERRED_ENGINE_EXT, _CHAR, self._preferred)
            if deselected:
                h.set(_C.ATTR_ENGINEHEUR_DESELECTED_ENGINES_EXT, _INT64,
                      [i - (1 << 64) if i >= (1 << 63) else i for i in deselected])
            h.finalize()
            for line in h.get(_C.ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT, _CHAR).splitlines():
                fields = line.split("\t", 2)
                if len(fields) != 3:
                    continue
                ename, _eid, status = fields
                if ename not in support:
                    order.append(ename)
                    support[ename] = status
                if status == "applicable":
                    support[ename] = None
            for cfg in h.get(_C.ATTR_ENGINEHEUR_RESULTS, _DESC):
                eng = cfg.get(_C.ATTR_ENGINECFG_ENGINE, _DESC)[0]
                ename = eng.get(_C.ATTR_ENGINE_NAME_EXT, _CHAR)
                if ename in seen:
                    continue
                seen.add(ename)
                configs.append((cfg, ename))
        self._support = [(n, None if support[n] in (None, "applicable") else support[n])
                         for n in order]
        self._configs = configs
        self._plans = []
        self._plan_failures = {}
        self._state = _HEURISTICS

    def support_report(self) -> List[Tuple[str, Optional[str]]]:
        """``[(engine_name, None or the reason it declined)]`` for every loaded engine, from
        the last create_execution_plans()."""
        self._need(_HEURISTICS, "support_report()")
        return list(self._support)

    def _declines(self) -> Dict[str, str]:
        reasons = {n: why for n, why in self._support if why is not None}
        reasons.update(self._plan_failures)
        return reasons

    def check_support(self) -> None:
        """Raises GraphNotSupportedError, listing every engine and why it declined, when
        no engine can run the graph."""
        self._need(_HEURISTICS, "check_support()")
        if not self._configs:
            raise GraphNotSupportedError(self.name, self._declines())

    def build_plans(self, policy: int = build_plan_policy.HEURISTICS_CHOICE) -> None:
        """Builds execution plans from the ranked configs: HEURISTICS_CHOICE keeps the first
        that builds, ALL every one that does."""
        self._need(_HEURISTICS, "build_plans()")
        if isinstance(policy, bool) or not isinstance(policy, (int, np.integer)):
            raise TypeError(f"build_plans: expected a hipdnn.build_plan_policy, got "
                            f"{_type_name(policy)}")
        try:
            policy = build_plan_policy(int(policy))
        except ValueError:
            raise ValueError(f"build_plans: {int(policy)} is not a hipdnn.build_plan_policy") \
                from None
        plans = []
        packs = []
        failures: Dict[str, str] = {}
        for cfg, ename in self._configs:
            p = _C.Descriptor(_C.BACKEND_EXECUTION_PLAN_DESCRIPTOR)
            p.set(_C.ATTR_EXECUTION_PLAN_HANDLE, _C.TYPE_HANDLE, self._get_handle())
            p.set(_C.ATTR_EXECUTION_PLAN_ENGINE_CONFIG, _DESC, cfg)
            try:
                p.finalize()
            except HipdnnError as e:
                failures[ename] = f"plan build failed: {e}"
                continue
            # Compiled once from the plan itself: what execute() checks arrays against.
            pack = _C.VariantPack(p)
            plans.append((p, p.get(_C.ATTR_EXECUTION_PLAN_ENGINE_NAME_EXT, _CHAR),
                          pack.workspace_size, memory_space(pack.memory_space)))
            packs.append((pack, {uid: i for i, uid in enumerate(pack.uids)}))
            if policy == build_plan_policy.HEURISTICS_CHOICE:
                break
        self._plan_failures = failures
        if not plans:
            raise GraphNotSupportedError(self.name, self._declines())
        self._plans = plans
        self._packs = packs
        self._state = _PLANS

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
        """Plans built by build_plans (0 before)."""
        return len(self._plans) if self._state >= _PLANS else 0

    def _plan(self, index: int, what: str) -> Tuple[_C.Descriptor, str, int, memory_space]:
        self._need(_PLANS, what)
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"{what}: index must be an int, got {_type_name(index)}")
        if not 0 <= index < len(self._plans):
            raise IndexError(f"{what}: plan index {index} out of range; graph '{self.name}' has "
                             f"{len(self._plans)} plan(s)")
        return self._plans[index]

    def get_workspace_size(self) -> int:
        """Bytes of workspace enough for every built plan."""
        self._need(_PLANS, "get_workspace_size()")
        return max(p[2] for p in self._plans)

    def get_workspace_size_plan_at_index(self, index: int) -> int:
        """Bytes of workspace plan ``index`` needs."""
        return self._plan(index, "get_workspace_size_plan_at_index()")[2]

    def get_engine_name(self, index: int = 0) -> str:
        """The engine of plan ``index`` (e.g. "reference_cpu")."""
        return self._plan(index, "get_engine_name()")[1]

    def get_memory_space(self, index: int = 0) -> memory_space:
        """Where plan ``index`` expects its arrays: HOST or DEVICE."""
        return self._plan(index, "get_memory_space()")[3]

    # -- execute --
    def _arrays_for(self, index: int, variant_pack: Mapping[Any, Any]) -> List[Any]:
        """The user's {tensor or uid: array} as a list in the order of plan ``index``'s
        pack; the pack itself checks every array."""
        if not isinstance(variant_pack, Mapping):
            raise TypeError("variant pack: expected a dict {tensor or uid: array}, got "
                            f"{_type_name(variant_pack)}")
        pack, slots = self._packs[index]
        arrays: List[Any] = [None] * len(slots)
        for key, arr in variant_pack.items():
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
            if arr is None:
                raise TypeError(f"variant pack: {self._pack_label(pack, idx)} has no array (None)")
            arrays[idx] = as_buffer(arr)
        missing = [self._pack_label(pack, i) for i, a in enumerate(arrays) if a is None]
        if missing:
            raise ValueError("variant pack: no array for " + ", ".join(missing))
        return arrays

    @staticmethod
    def _pack_label(pack: _C.VariantPack, idx: int) -> str:
        uid, name = pack.tensors[idx][:2]
        return f"tensor '{name}' (uid {uid})" if name else f"tensor with uid {uid}"

    def _tensor_by_uid(self, uid: int) -> Optional[Tensor]:
        for t in self._tensors:
            if t._uid == uid:
                return t
        return None

    def execute_plan_at_index(self, variant_pack: Mapping[Any, Any], workspace: Any,
                              index: int, handle: Optional[_C.Handle] = None) -> None:
        """Runs plan ``index`` on the arrays of the variant pack ({tensor or uid: array}).
        Arrays are checked against the plan's graph (dtype, shape, strides in elements,
        writable outputs) and used in place.  workspace: at least
        get_workspace_size_plan_at_index(index) bytes; None lets a host plan allocate its
        own."""
        self._plan(index, "execute()")
        if handle is not None and not isinstance(handle, _C.Handle):
            raise TypeError(f"execute: handle must be a hipdnn.Handle, got {_type_name(handle)}")
        arrays = self._arrays_for(index, variant_pack)
        self._packs[index][0].execute(handle if handle is not None else self._get_handle(),
                                      arrays, workspace)

    def execute(self, variant_pack: Mapping[Any, Any], workspace: Any = None,
                handle: Optional[_C.Handle] = None) -> None:
        """Runs the first plan; see execute_plan_at_index."""
        self.execute_plan_at_index(variant_pack, workspace, 0, handle)

    # -- serialization --
    def serialize(self) -> bytes:
        """The finalized graph as FlatBuffers bytes; deterministic."""
        self.validate()
        assert self._opgraph is not None  # validate() made it
        return _C.serialize(self._opgraph)

    def deserialize(self, data: Union[bytes, bytearray, memoryview]) -> None:
        """Replaces this graph by one read from bytes made by serialize().  Corrupted or
        truncated input raises InvalidGraphError.  The graph is then validated: call
        build() (or create_execution_plans ...) and execute with uids or tensors()."""
        if isinstance(data, str) or not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"deserialize: expected bytes, got {_type_name(data)}")
        data = bytes(data)
        g = _C.deserialize(data)  # verified and validated by the backend
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
            unary = False
            if info.name == "pointwise":
                mode = _ops.param_value(d, info.param("mode"))
                opname = _ops.POINTWISE_NAMES.get(mode, f"pointwise mode {mode}")
                unary = not d.get(info.input("b").attr, _DESC)
            op = _Op(info, opname, d.get(_C.ATTR_OPERATION_NAME_EXT, _CHAR), None)
            for ports, dst in ((info.inputs, op.inputs), (info.outputs, op.outputs)):
                for port in ports:
                    td = d.get(port.attr, _DESC)
                    if td:
                        uid = td[0].get(_C.ATTR_TENSOR_UNIQUE_ID, _INT64)[0]
                        dst.append((_user_port(info, port.name, unary), port.attr,
                                    by_uid[uid]))
            ops.append(op)
        # The tensors the graph writes: their arrays must be writable.
        outputs = set(g.get(_C.ATTR_OPERATIONGRAPH_OUTPUT_UIDS_EXT, _INT64))
        return tensors, ops, outputs

    def key(self) -> int:
        """A stable 64-bit hash of the serialized graph (the same graph gives the same key
        in every process)."""
        return int.from_bytes(hashlib.blake2b(self.serialize(), digest_size=8).digest(), "little")

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
            lines.append("  plans: " + ", ".join(f"{n} ({space.name.lower()}, workspace {ws} B)"
                                                 for _p, n, ws, space in self._plans))
        return "\n".join(lines)


def _describe_array(array: Any, hint: Optional[data_type], name: Optional[str]
                    ) -> Tuple[List[int], List[int], data_type]:
    """dims, strides in elements and data type of a host array."""
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


def _has_buffer(obj: Any) -> bool:
    try:
        memoryview(obj)
        return True
    except TypeError:
        return False
