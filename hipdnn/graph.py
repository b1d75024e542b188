"""``hipdnn.Graph``: the friendly layer (docs/architecture.md, "Python layers"), which is
also cuDNN frontend's ``cudnn.Graph``.

Ops take NumPy arrays directly (or tensors, or Python floats); the graph builds when the
``with`` block exits and is then called with arrays::

    with hipdnn.Graph() as g:
        y = g.relu(g.add(g.conv_fprop(x, w, padding=[1, 1]), b))
    out = g(x2, w2, b2)          # a new array; inputs in order of first use

    with hipdnn.Graph(io_data_type=hipdnn.data_type.HALF,
                      inputs=["conv2d::image", "conv2d::weight"], outputs=["conv_out"]) as g:
        y = g.conv_fprop(image=x, weight=w, padding=[1, 1], name="conv2d")
        y.set_output(True).set_name("conv_out")
    out = g(x, w)                # cuDNN frontend's order: set by inputs= / set_io_tuples
    d = g({"conv2d::image": x, "conv2d::weight": w})   # outputs added to the dict

Every tensor an op takes is known by "<node>::<keyword>" (or "<node>::<position>"), every
one it gives by its name; a node without ``name=`` is "<op>.<count>" ("conv_fprop.0").
Outputs and workspace are allocated for each call.  Arrays reach the engine through a
staging object chosen by the plan's memory space: host engines read NumPy memory in
place; for a device engine NumPy inputs are copied to the device, outputs allocated there
and handed back as NumPy arrays.  Device arrays (hipdnn.DeviceArray, PyTorch, CuPy) given
to a device engine are used in place, and then its outputs stay on the device too: as
torch tensors (zero-copy, through DLPack) when torch is imported and the inputs are
PyTorch or CuPy arrays, as cuDNN frontend's wrapper returns; else as DeviceArrays.  Another
library's one-element host tensor (a torch CPU tensor, cuDNN frontend's epsilon) is a
scalar input, passed by value.
"""
from __future__ import annotations

import numbers
import sys
from types import TracebackType
from typing import (Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Type,
                    Union)

import numpy as np
from numpy.typing import NDArray

from . import _C
from .arrays import as_data_type, empty_strided, numpy_dtype
from .device import DeviceArray, is_device_array, is_host_tensor
from .enums import data_type, heur_mode as _heur_mode, memory_space
from .errors import HipdnnError
from .pygraph import DataTypeLike, KernelGroup, Tensor, pygraph

__all__ = ["Graph"]

ArrayOrTensor = Union[NDArray[Any], Tensor, float]
OptDataType = Optional[DataTypeLike]


class _HostStaging:
    """Host engines: arrays are used in place, outputs are plain NumPy arrays."""

    def stage_in(self, array: Any, t: Tensor) -> Any:
        if is_device_array(array):
            raise HipdnnError(f"hipdnn.Graph: the graph runs on a host engine but "
                              f"{t.get_name()!r} is device memory ({type(array).__name__})")
        return array

    def note_inputs(self, pairs: Sequence[Tuple[Tensor, Any]]) -> None:
        """Told the call's (tensor, array) inputs before outputs are allocated."""

    def alloc_out(self, dims: Sequence[int], strides: Sequence[int], dtype: data_type) -> Any:
        return empty_strided(dims, strides, numpy_dtype(dtype))

    def fetch_out(self, out: Any) -> Any:
        return out

    def workspace(self, size: int) -> Any:
        return np.empty(size, np.uint8) if size else None


class _DeviceStaging(_HostStaging):
    """Device engines: NumPy inputs are copied to the device (DeviceArray.from_numpy),
    outputs are allocated there and copied back, unless every input was device memory
    already: then outputs stay on the device (DeviceArray)."""

    def __init__(self) -> None:
        self.device_inputs = False
        self.torch: Any = None  # torch, when outputs go back as torch tensors

    def stage_in(self, array: Any, t: Tensor) -> Any:
        if is_device_array(array) or t.get_is_pass_by_value():
            return array  # a scalar (a torch CPU tensor, a float) goes by value
        return DeviceArray.from_numpy(np.asarray(array), data_type=t.get_data_type())

    def note_inputs(self, pairs: Sequence[Tuple[Tensor, Any]]) -> None:
        """Outputs stay on the device when every input array is device memory (scalars
        aside); they are torch tensors when torch is imported and an input is another
        library's device array (torch, CuPy), as cuDNN frontend's wrapper returns."""
        arrays = [a for t, a in pairs if not t.get_is_pass_by_value()]
        self.device_inputs = all(is_device_array(a) for a in arrays)
        foreign = any(is_device_array(a) and not isinstance(a, DeviceArray) for a in arrays)
        self.torch = sys.modules.get("torch") if self.device_inputs and foreign else None

    def alloc_out(self, dims: Sequence[int], strides: Sequence[int], dtype: data_type) -> Any:
        return DeviceArray.empty(list(dims), dtype, list(strides))

    def fetch_out(self, out: Any) -> Any:
        if self.torch is not None:
            return self.torch.from_dlpack(out)  # zero-copy; the tensor keeps `out` alive
        return out if self.device_inputs else out.numpy()

    def workspace(self, size: int) -> Any:
        return DeviceArray.empty([size], np.uint8) if size else None


def _staging_for(space: memory_space, engine: str) -> _HostStaging:
    """Where arrays must live for the plan's engine: in place for host engines, copied to
    and from the device for device engines."""
    if space == memory_space.HOST:
        return _HostStaging()
    return _DeviceStaging()


def _is_array(value: Any) -> bool:
    """What the wrapper turns into a graph input: NumPy arrays and array-likes that
    export memory (not lists, which are op parameters such as padding), device arrays and
    other libraries' host tensors (a torch CPU tensor: a one-element one is a scalar
    input, as cuDNN frontend's epsilon)."""
    if isinstance(value, (Tensor, str, bytes, list, tuple, numbers.Number)):
        return False
    return isinstance(value, np.ndarray) or hasattr(value, "__array_interface__") or \
        is_device_array(value) or is_host_tensor(value)


def _op_method(op: str) -> Callable[..., Tensor]:
    def method(self: "Graph", *args: Any, **kwargs: Any) -> Tensor:
        return self._node(op, args, kwargs)

    method.__name__ = op
    method.__doc__ = (f"``pygraph.{op}``, taking NumPy arrays as well as tensors: each "
                      "array becomes a graph input (the same array object is one input).")
    return method


class Graph:
    """A graph built from NumPy arrays, with cuDNN frontend's ``cudnn.Graph`` names.

    ``io_data_type`` (None: the input arrays' common type), ``intermediate_data_type``,
    ``compute_data_type`` (FLOAT), ``name`` and ``handle`` go to the underlying
    ``pygraph``.  ``inputs`` / ``outputs`` name the positional order of calls (as
    ``set_io_tuples``); without them inputs come in order of first use and outputs are
    the results marked with ``output()`` or ``set_output(True)`` (else the last op's
    results: all of them for an op with several, as layernorm's y, mean and inv_variance
    in the training phase).  ``heuristics`` (default [A, FALLBACK], as cuDNN frontend's)
    or ``heur_mode`` pick engines, ``preferred_engine`` ranks one first.  With
    ``workspace_alloc=False`` calls must pass ``workspace=``."""

    def __init__(self, io_data_type: Any = None, compute_data_type: Any = data_type.FLOAT,
                 heur_mode: Optional[int] = None, preferred_engine: Optional[str] = None,
                 name: Optional[str] = None, intermediate_data_type: Any = None,
                 handle: Optional[_C.Handle] = None, *,
                 inputs: Optional[Sequence[Any]] = None, outputs: Optional[Sequence[Any]] = None,
                 heuristics: Optional[Sequence[int]] = None, workspace_alloc: bool = True):
        self._g = pygraph(io_data_type=io_data_type, intermediate_data_type=intermediate_data_type,
                          compute_data_type=compute_data_type, name=name, handle=handle)
        self._io_given = as_data_type(io_data_type, "Graph: io_data_type") not in \
            (None, data_type.NOT_SET)
        for what, v in (("inputs", inputs), ("outputs", outputs), ("heuristics", heuristics)):
            if v is not None and not isinstance(v, (list, tuple)):
                raise ValueError(f"Graph: {what} must be a list or tuple, got {type(v).__name__}")
        if heuristics is not None and heur_mode is not None:
            raise ValueError("Graph: give heur_mode or heuristics, not both")
        modes = list(heuristics) if heuristics else \
            [heur_mode] if heur_mode is not None else [_heur_mode.A, _heur_mode.FALLBACK]
        for m in modes:
            if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
                raise TypeError(f"Graph: heuristics must be hipdnn.heur_mode values, got "
                                f"{type(m).__name__}")
        self._modes = [_heur_mode(int(m)) for m in modes]
        if preferred_engine is not None:
            self._g.set_preferred_engine(preferred_engine)
        self._workspace_alloc = bool(workspace_alloc)
        self._inputs: List[Tensor] = []   # made from arrays, in order of first use
        self._arrays: List[Any] = []      # the arrays given while building, by input
        self._by_id: Dict[int, Tensor] = {}
        self._keep: List[Any] = []        # keeps those arrays alive (ids stay unique)
        self._tensor_in: Dict[str, Tensor] = {}   # "node::keyword" -> tensor it took
        self._tensor_out: Dict[str, Tensor] = {}  # tensor name -> tensor a node gave
        self._made: List[Tensor] = []     # tensors made with tensor() / tensor_like()
        self._counts: Dict[str, int] = {}
        self._node_names: Set[str] = set()
        self._marked: List[Tensor] = []   # output(), in order
        self._outputs: List[Tensor] = []
        self._io: Optional[Tuple[List[Tensor], List[Tensor]]] = None
        self._pending_io = (list(inputs or []), list(outputs or [])) \
            if inputs or outputs else None
        self._last: List[Tensor] = []    # the last op's results
        self._built = False
        self._staging: Any = None

    # -- building --
    def __enter__(self) -> "Graph":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]],
                 exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        if exc_type is None:
            self.build()

    def _check_open(self, what: str) -> None:
        if self._built:
            raise ValueError(f"Graph '{self._g.name}' is built; cannot {what}")

    def input(self, array: Any, data_type: Any = None, name: Optional[str] = None) -> Tensor:
        """Declares an input described by ``array`` (dims, strides, dtype); needed for
        bfloat16 bit patterns: ``g.input(bits, data_type=hipdnn.data_type.BFLOAT16)``."""
        self._check_open("add inputs")
        key = id(array)
        if key in self._by_id and data_type is None and name is None:
            return self._by_id[key]
        t = self._g.tensor_like(array, name=name, data_type=data_type)
        self._inputs.append(t)
        self._arrays.append(array)
        self._keep.append(array)
        self._by_id[key] = t
        return t

    def tensor(self, *args: Any, **kwargs: Any) -> Tensor:
        """``pygraph.tensor``: a tensor described by hand."""
        self._check_open("add tensors")
        t = self._g.tensor(*args, **kwargs)
        self._made.append(t)
        return t

    def tensor_like(self, *args: Any, **kwargs: Any) -> Tensor:
        """``pygraph.tensor_like``: a tensor described by an array or another tensor."""
        self._check_open("add tensors")
        t = self._g.tensor_like(*args, **kwargs)
        self._made.append(t)
        return t

    def _operand(self, value: Any, key: str) -> Any:
        if isinstance(value, (list, tuple)) and any(_is_array(v) or isinstance(v, Tensor)
                                                    for v in value):
            return [self._operand(v, f"{key}[{i}]") for i, v in enumerate(value)]
        if _is_array(value):
            value = self.input(value)
        if isinstance(value, Tensor):
            self._tensor_in[key] = value
        return value

    def _node(self, op: str, args: Sequence[Any], kwargs: Dict[str, Any]) -> Tensor:
        """Runs pygraph op `op`, turning arrays into inputs and recording every tensor it
        takes ("<node>::<keyword or position>") and gives (by its name)."""
        self._check_open("add operations")
        count = self._counts.get(op, 0)
        self._counts[op] = count + 1
        name = kwargs.get("name")
        if not name:
            name = kwargs["name"] = f"{op}.{count}"
        if name in self._node_names:
            raise ValueError(f"Graph: node name '{name}' is used twice")
        self._node_names.add(name)
        keys = [f"{name}::{i}" for i in range(len(args))]
        args = [self._operand(v, key) for v, key in zip(args, keys)]
        for k in kwargs:
            if k != "name":
                keys.append(f"{name}::{k}")
                kwargs[k] = self._operand(kwargs[k], keys[-1])
        out: Tensor = getattr(self._g, op)(*args, **kwargs)
        # Tensors neither the user nor the op named are known by their key.
        for key in keys:
            taken = self._tensor_in.get(key)
            if taken is not None and not taken.get_name():
                taken.set_name(key)
        self._last = []
        for i, t in enumerate(out if isinstance(out, (list, tuple)) else [out]):
            if t is None:  # an output this phase does not give (cuDNN frontend's None)
                continue
            self._tensor_out[t.get_name() or f"{name}::{i}"] = t
            self._last.append(t)
        return out

    # Every op method of pygraph's op families, taking arrays as well as tensors.
    # BEGIN GENERATED: pygraph's op methods, by tools/gen_python_constants.py; do not edit
    conv_fprop = _op_method("conv_fprop")
    conv_dgrad = _op_method("conv_dgrad")
    conv_wgrad = _op_method("conv_wgrad")
    matmul = _op_method("matmul")
    add = _op_method("add")
    sub = _op_method("sub")
    mul = _op_method("mul")
    div = _op_method("div")
    add_square = _op_method("add_square")
    bias = _op_method("bias")
    scale = _op_method("scale")
    max = _op_method("max")
    min = _op_method("min")
    mod = _op_method("mod")
    pow = _op_method("pow")
    sqrt = _op_method("sqrt")
    rsqrt = _op_method("rsqrt")
    reciprocal = _op_method("reciprocal")
    abs = _op_method("abs")
    neg = _op_method("neg")
    ceil = _op_method("ceil")
    floor = _op_method("floor")
    exp = _op_method("exp")
    log = _op_method("log")
    sin = _op_method("sin")
    cos = _op_method("cos")
    tan = _op_method("tan")
    erf = _op_method("erf")
    identity = _op_method("identity")
    sigmoid = _op_method("sigmoid")
    tanh = _op_method("tanh")
    gelu = _op_method("gelu")
    gelu_approx_tanh = _op_method("gelu_approx_tanh")
    relu = _op_method("relu")
    leaky_relu = _op_method("leaky_relu")
    elu = _op_method("elu")
    softplus = _op_method("softplus")
    swish = _op_method("swish")
    relu_backward = _op_method("relu_backward")
    leaky_relu_backward = _op_method("leaky_relu_backward")
    tanh_backward = _op_method("tanh_backward")
    sigmoid_backward = _op_method("sigmoid_backward")
    elu_backward = _op_method("elu_backward")
    gelu_backward = _op_method("gelu_backward")
    gelu_approx_tanh_backward = _op_method("gelu_approx_tanh_backward")
    softplus_backward = _op_method("softplus_backward")
    swish_backward = _op_method("swish_backward")
    cmp_eq = _op_method("cmp_eq")
    cmp_neq = _op_method("cmp_neq")
    cmp_gt = _op_method("cmp_gt")
    cmp_ge = _op_method("cmp_ge")
    cmp_lt = _op_method("cmp_lt")
    cmp_le = _op_method("cmp_le")
    logical_and = _op_method("logical_and")
    logical_or = _op_method("logical_or")
    logical_not = _op_method("logical_not")
    binary_select = _op_method("binary_select")
    gen_index = _op_method("gen_index")
    batchnorm_inference = _op_method("batchnorm_inference")
    layernorm = _op_method("layernorm")
    adalayernorm = _op_method("adalayernorm")
    rmsnorm = _op_method("rmsnorm")
    instancenorm = _op_method("instancenorm")
    batchnorm = _op_method("batchnorm")
    layernorm_backward = _op_method("layernorm_backward")
    adalayernorm_backward = _op_method("adalayernorm_backward")
    rmsnorm_backward = _op_method("rmsnorm_backward")
    instancenorm_backward = _op_method("instancenorm_backward")
    batchnorm_backward = _op_method("batchnorm_backward")
    genstats = _op_method("genstats")
    reduction = _op_method("reduction")
    slice = _op_method("slice")
    concatenate = _op_method("concatenate")
    reshape = _op_method("reshape")
    resample = _op_method("resample")
    resample_backward = _op_method("resample_backward")
    sdpa = _op_method("sdpa")
    sdpa_backward = _op_method("sdpa_backward")
    # END GENERATED

    def output(self, *tensors: Tensor, data_type: Any = None) -> None:
        """Marks results as outputs (returned by calls, in this order).  Without any, the
        results marked with set_output(True) are, or else the last op's results."""
        self._check_open("add outputs")
        for t in tensors:
            if not isinstance(t, Tensor) or t.graph is not self._g:
                raise TypeError("Graph.output: expected results of this graph's ops, got "
                                f"{type(t).__name__}")
            if any(t is o for o in self._marked):
                continue
            self._marked.append(t)
            if data_type is not None:
                t.set_data_type(data_type)

    def _common_input_type(self) -> Optional[data_type]:
        types = {t.get_data_type() for t in self._inputs}
        return types.pop() if len(types) == 1 else None

    def build(self) -> None:
        """Marks the outputs, builds the graph and picks the engine."""
        if self._built:
            return
        if not self._last:
            raise ValueError(f"Graph '{self._g.name}' has no operations")
        if self._pending_io is not None:  # outputs named up front are outputs
            for i, item in enumerate(self._pending_io[1]):
                self._find(item, self._tensor_out, "output", i).set_output(True)
        produced = list(self._tensor_out.values())
        outs = list(self._marked) + [t for t in produced if t.get_is_output()
                                     and not any(t is m for m in self._marked)]
        if not outs:  # all of a multi-output op's (layernorm's y, mean, inv_variance)
            outs = list(self._last)
        for t in outs:
            t.set_output(True)
        self._outputs = outs
        # Outputs not given a type take the inputs' (an fp16 chain gives fp16), not the
        # float intermediates'.
        if not self._io_given and self._g.io_data_type == data_type.NOT_SET:
            common = self._common_input_type()
            if common is not None:
                self._g.io_data_type = common
        self._g.build(self._modes)
        self._staging = _staging_for(self._g.get_memory_space(), self._g.get_engine_name())
        self._built = True
        if self._pending_io is not None:
            ins, outs_io = self._pending_io
            self._pending_io = None
            self.set_io_tuples(ins, outs_io)

    # -- cuDNN frontend's naming of inputs and outputs --
    def _find(self, item: Any, table: Dict[str, Tensor], what: str, i: int) -> Tensor:
        if isinstance(item, Tensor):
            if any(item is t for t in table.values()) or any(item is t for t in self._made):
                return item
        elif isinstance(item, str):
            if item in table:
                return table[item]
            for t in table.values():
                if t.get_name() == item:
                    return t
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            for t in table.values():
                if t.get_uid() == int(item):
                    return t
        elif id(item) in self._by_id:
            t = self._by_id[id(item)]
            if any(t is x for x in table.values()):
                return t
        raise ValueError(f"Graph.set_io_tuples: {what} at index {i} ({item!r:.60}) is not a "
                         f"tensor the graph's nodes {'take' if what == 'input' else 'give'}")

    def set_io_tuples(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
        """The order of positional call arguments and returned outputs: each a
        "<node>::<keyword>" name, a tensor's name, a tensor, its uid or the array it was
        made from.  Every non-virtual tensor must be among them.  Before the graph is
        built this is remembered and applied when it is."""
        if not isinstance(inputs, (list, tuple)):
            raise ValueError("Graph.set_io_tuples: inputs must be a list or tuple")
        if not isinstance(outputs, (list, tuple)):
            raise ValueError("Graph.set_io_tuples: outputs must be a list or tuple")
        if not self._built:
            self._pending_io = (list(inputs), list(outputs))
            return
        found: List[Tensor] = []
        ins = []
        for i, item in enumerate(inputs):
            t = self._find(item, self._tensor_in, "input", i)
            if any(t is f for f in found):
                raise ValueError(f"Graph.set_io_tuples: input at index {i} ({item!r:.60}) "
                                 "is given twice")
            if t.get_is_virtual():
                raise ValueError(f"Graph.set_io_tuples: input at index {i} ({item!r:.60}) "
                                 "is virtual (an intermediate result)")
            found.append(t)
            ins.append(t)
        outs = []
        for i, item in enumerate(outputs):
            t = self._find(item, self._tensor_out, "output", i)
            if any(t is f for f in found):
                raise ValueError(f"Graph.set_io_tuples: output at index {i} ({item!r:.60}) "
                                 "is given twice")
            if t.get_is_virtual():
                raise ValueError(f"Graph.set_io_tuples: output at index {i} ({item!r:.60}) "
                                 "is virtual: mark it with set_output(True) while building")
            found.append(t)
            outs.append(t)
        for key, t in list(self._tensor_out.items()) + list(self._tensor_in.items()):
            if not t.get_is_virtual() and not any(t is f for f in found):
                raise ValueError(f"Graph.set_io_tuples: '{key}' is a non-virtual tensor but "
                                 "is neither an input nor an output")
        self._io = (ins, outs)

    # -- running --
    def __call__(self, *args: Any, handle: Optional[_C.Handle] = None, workspace: Any = None
                 ) -> Any:
        """Runs the graph.  ``g(x, w)``: arrays for the inputs in set_io_tuples order (or
        order of first use), returns the output array or a tuple of them; no arrays: the
        ones given while building.  ``g({name: array})``: arrays by "<node>::<keyword>",
        tensor name, tensor or uid; outputs not given are allocated and added to the
        dict, which is returned."""
        if not self._built:
            raise HipdnnError(f"Graph '{self._g.name}' is not built yet: leave the `with` "
                              "block or call build()")
        if workspace is None and not self._workspace_alloc:
            raise ValueError(f"Graph '{self._g.name}' was made with workspace_alloc=False: "
                             "pass workspace=")
        if len(args) == 1 and isinstance(args[0], Mapping):
            return self._call_dict(args[0], handle, workspace)
        ins, outs = self._io if self._io is not None else (self._inputs, self._outputs)
        if not args and self._io is None:
            args = tuple(self._arrays)
        if len(args) != len(ins):
            names = ", ".join(t.get_name() or f"uid {t.get_uid()}" for t in ins)
            raise TypeError(f"Graph '{self._g.name}' takes {len(ins)} input array(s) "
                            f"({names}), got {len(args)}")
        st = self._staging
        st.note_inputs(list(zip(ins, args)))
        pack: Dict[Any, Any] = {t: st.stage_in(a, t) for t, a in zip(ins, args)}
        results = []
        for t in outs:
            pack[t] = st.alloc_out(t.get_dim(), t.get_stride(), t.get_data_type())
            results.append(pack[t])
        self._run(pack, handle, workspace)
        got = tuple(st.fetch_out(o) for o in results)
        return got[0] if len(got) == 1 else got

    def _call_dict(self, arrays: Mapping[Any, Any], handle: Optional[_C.Handle],
                   workspace: Any) -> Mapping[Any, Any]:
        st = self._staging
        pack: Dict[Any, Any] = {}
        missing = []
        fetched = []  # (key, output): copied back after the run
        given: List[Tuple[Tensor, Any]] = []  # (tensor, the caller's array)
        tables = [(self._tensor_in, False), (self._tensor_out, True)]
        for table, is_out in tables:
            for key, t in table.items():
                if t.get_is_virtual() or t in pack:
                    continue
                for k in (key, t, t.get_name(), t.get_uid()):
                    if k in arrays and arrays[k] is not None:
                        pack[t] = st.stage_in(arrays[k], t)
                        given.append((t, arrays[k]))
                        break
                else:
                    if is_out:
                        out = st.alloc_out(t.get_dim(), t.get_stride(), t.get_data_type())
                        pack[t] = out
                        fetched.append((key, out))
                    else:
                        missing.append(key)
        if missing:
            raise ValueError(f"Graph '{self._g.name}': no array for input(s) "
                             + ", ".join(missing))
        st.note_inputs(given)
        self._run(pack, handle, workspace)
        for key, out in fetched:
            arrays[key] = st.fetch_out(out)  # type: ignore[index]
        return arrays

    def _run(self, pack: Dict[Any, Any], handle: Optional[_C.Handle], workspace: Any) -> None:
        if workspace is None:
            workspace = self._staging.workspace(self._g.get_workspace_size())
        self._g.execute(pack, workspace, handle=handle)

    # -- inspection --
    @property
    def engine_name(self) -> str:
        """The engine the graph runs on."""
        if not self._built:
            raise HipdnnError(f"Graph '{self._g.name}' is not built yet")
        return self._g.get_engine_name()

    @property
    def pygraph(self) -> pygraph:
        """The underlying cuDNN-style graph."""
        return self._g

    @property
    def inputs(self) -> List[Tensor]:
        """The inputs positional calls take, in order."""
        return list(self._io[0] if self._io is not None else self._inputs)

    @property
    def outputs(self) -> List[Tensor]:
        """The outputs positional calls return, in order."""
        return list(self._io[1] if self._io is not None else self._outputs)

    def get_workspace_size(self) -> int:
        """Bytes of workspace a call needs (pass it as ``workspace=``)."""
        return self._g.get_workspace_size()

    def get_workspace_size_plan_at_index(self, index: int) -> int:
        """``pygraph.get_workspace_size_plan_at_index``."""
        return self._g.get_workspace_size_plan_at_index(index)

    def serialize(self) -> bytes:
        """``pygraph.serialize``: the graph and, once built, its plan."""
        return self._g.serialize()

    def query_tensor_attributes_of_uid(self, uid: int) -> Tensor:
        """``pygraph.query_tensor_attributes_of_uid``."""
        return self._g.query_tensor_attributes_of_uid(uid)

    def get_kernel_groups(self) -> List[KernelGroup]:
        """``pygraph.get_kernel_groups``: which nodes the engine runs in which kernel."""
        if not self._built:
            raise HipdnnError(f"Graph '{self._g.name}' is not built yet")
        return self._g.get_kernel_groups()

    def to_dot(self) -> str:
        """``pygraph.to_dot``: the graph as Graphviz source, with the engine and its
        kernels once built."""
        return self._g.to_dot()

    def _repr_svg_(self) -> Optional[str]:
        """Jupyter's picture (``pygraph._repr_svg_``); None without graphviz ``dot``."""
        return self._g._repr_svg_()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython's text form: the listing of __repr__."""
        p.text("Graph(...)" if cycle else repr(self))

    def __repr__(self) -> str:
        head = f"hipdnn.Graph ({len(self.inputs)} inputs, {len(self.outputs)} outputs" + (
            f", engine {self.engine_name})" if self._built else ", not built)")
        return head + "\n" + repr(self._g)
