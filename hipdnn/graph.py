"""``hipdnn.Graph``: the friendly layer (docs/architecture.md, "Python layers").

Ops take NumPy arrays directly; the graph builds when the ``with`` block exits, and is
then callable with new arrays for its inputs (in order of first use)::

    with hipdnn.Graph() as g:
        y = g.relu(g.add(g.conv_fprop(x, w, padding=[1, 1]), b))
    out = g(x2, w2, b2)          # a new array

Outputs and workspace are allocated for each call.  Arrays reach the engine through a
staging object chosen by the plan's memory space: host engines read NumPy memory in
place; device engines will get their copies through the same seam (see _staging_for).
"""
from __future__ import annotations

import numbers
from types import TracebackType
from typing import Any, Dict, List, Optional, Sequence, Tuple, Type, Union

import numpy as np
from numpy.typing import NDArray

from . import _C
from .arrays import numpy_dtype
from .enums import convolution_mode as _conv_mode
from .enums import data_type, heur_mode as _heur_mode, memory_space
from .errors import HipdnnError
from .pygraph import DataTypeLike, Tensor, pygraph

__all__ = ["Graph"]

ArrayOrTensor = Union[NDArray[Any], Tensor, float]
OptDataType = Optional[DataTypeLike]


class _HostStaging:
    """Host engines: arrays are used in place, outputs are plain NumPy arrays."""

    def stage_in(self, array: Any) -> Any:
        return array

    def alloc_out(self, dims: Sequence[int], strides: Sequence[int], dtype: "np.dtype[Any]") -> Any:
        dims, strides = list(dims), list(strides)
        if strides == _packed(dims):
            return np.empty(dims, dtype)
        extent = 1 + sum((d - 1) * s for d, s in zip(dims, strides))
        base = np.empty(extent, dtype)
        return np.lib.stride_tricks.as_strided(
            base, shape=dims, strides=[s * base.itemsize for s in strides], writeable=True)

    def fetch_out(self, out: Any) -> Any:
        return out

    def workspace(self, size: int) -> Any:
        return np.empty(size, np.uint8) if size else None


def _staging_for(space: memory_space, engine: str) -> _HostStaging:
    """Where arrays must live for an engine.  Device engines need device buffers and
    copies, which come with hipdnn.DeviceArray; until then they are refused here."""
    if space == memory_space.HOST:
        return _HostStaging()
    raise HipdnnError(f"hipdnn.Graph: engine '{engine}' runs on the device, and staging NumPy "
                      "arrays to the device is not available in this build; choose a host "
                      "engine (preferred_engine=...) or use hipdnn.pygraph with device arrays")


def _packed(dims: Sequence[int]) -> List[int]:
    out, acc = [0] * len(dims), 1
    for i in range(len(dims) - 1, -1, -1):
        out[i] = acc
        acc *= dims[i]
    return out


class Graph:
    """A graph built from NumPy arrays.  Inputs are recorded in order of first use; the
    graph builds on leaving the ``with`` block (or on ``build()``) and runs when called.

    ``io_data_type`` (None = from the arrays), ``compute_data_type``, ``heur_mode``,
    ``preferred_engine`` and ``name`` are passed to the underlying ``pygraph``."""

    def __init__(self, io_data_type: Optional[int] = None,
                 compute_data_type: Optional[int] = data_type.FLOAT,
                 heur_mode: int = _heur_mode.A, preferred_engine: Optional[str] = None,
                 name: Optional[str] = None, intermediate_data_type: Optional[int] = None,
                 handle: Optional[_C.Handle] = None):
        self._g = pygraph(io_data_type=io_data_type, intermediate_data_type=intermediate_data_type,
                          compute_data_type=compute_data_type, name=name, handle=handle)
        if isinstance(heur_mode, bool) or not isinstance(heur_mode, (int, np.integer)):
            raise TypeError(f"Graph: heur_mode must be a hipdnn.heur_mode, got "
                            f"{type(heur_mode).__name__}")
        self._heur_mode = _heur_mode(int(heur_mode))
        if preferred_engine is not None:
            self._g.set_preferred_engine(preferred_engine)
        self._inputs: List[Tensor] = []
        self._arrays: List[Any] = []  # the arrays given while building, by input
        self._by_id: Dict[int, Tensor] = {}
        self._outputs: List[Tensor] = []
        self._last: Optional[Tensor] = None
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

    def input(self, array: Any, data_type: Optional[int] = None,
              name: Optional[str] = None) -> Tensor:
        """Declares an input described by ``array`` (dims, strides, dtype); needed for
        bfloat16 bit patterns: ``g.input(bits, data_type=hipdnn.data_type.BFLOAT16)``."""
        self._check_open("add inputs")
        key = id(array)
        if key in self._by_id and data_type is None and name is None:
            return self._by_id[key]
        t = self._g.tensor_like(array, name=name or f"input{len(self._inputs)}",
                                data_type=data_type)
        self._inputs.append(t)
        self._arrays.append(array)
        self._by_id[key] = t
        return t

    def _arg(self, value: Any) -> Any:
        if isinstance(value, Tensor):
            return value
        if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
            return value
        if isinstance(value, np.ndarray) or hasattr(value, "__array_interface__"):
            return self.input(value)
        return value  # pygraph raises the TypeError, naming the op and port

    def _result(self, t: Tensor) -> Tensor:
        self._last = t
        return t

    def conv_fprop(self, image: ArrayOrTensor, weight: ArrayOrTensor,
                   padding: Optional[Sequence[int]] = None,
                   stride: Optional[Sequence[int]] = None,
                   dilation: Optional[Sequence[int]] = None,
                   pre_padding: Optional[Sequence[int]] = None,
                   post_padding: Optional[Sequence[int]] = None,
                   convolution_mode: int = _conv_mode.CROSS_CORRELATION,
                   compute_data_type: OptDataType = None, name: Optional[str] = None) -> Tensor:
        """Convolution forward (see pygraph.conv_fprop); arrays become inputs."""
        self._check_open("add operations")
        return self._result(self._g.conv_fprop(
            self._arg(image), self._arg(weight), padding=padding, stride=stride,
            dilation=dilation, pre_padding=pre_padding, post_padding=post_padding,
            convolution_mode=convolution_mode, compute_data_type=compute_data_type, name=name))

    def matmul(self, A: ArrayOrTensor, B: ArrayOrTensor, compute_data_type: OptDataType = None,
               name: Optional[str] = None) -> Tensor:
        """C = A @ B (see pygraph.matmul); arrays become inputs."""
        self._check_open("add operations")
        return self._result(self._g.matmul(self._arg(A), self._arg(B),
                                           compute_data_type=compute_data_type, name=name))

    def _binary(self, op: str, a: ArrayOrTensor, b: ArrayOrTensor,
                compute_data_type: OptDataType, name: Optional[str]) -> Tensor:
        self._check_open("add operations")
        return self._result(getattr(self._g, op)(self._arg(a), self._arg(b),
                                                 compute_data_type=compute_data_type, name=name))

    def add(self, a: ArrayOrTensor, b: ArrayOrTensor, compute_data_type: OptDataType = None,
               name: Optional[str] = None) -> Tensor:
        """a + b with NumPy broadcasting (see pygraph.add); arrays become inputs."""
        return self._binary("add", a, b, compute_data_type, name)

    def sub(self, a: ArrayOrTensor, b: ArrayOrTensor, compute_data_type: OptDataType = None,
               name: Optional[str] = None) -> Tensor:
        """a - b with NumPy broadcasting (see pygraph.sub); arrays become inputs."""
        return self._binary("sub", a, b, compute_data_type, name)

    def mul(self, a: ArrayOrTensor, b: ArrayOrTensor, compute_data_type: OptDataType = None,
               name: Optional[str] = None) -> Tensor:
        """a * b with NumPy broadcasting (see pygraph.mul); arrays become inputs."""
        return self._binary("mul", a, b, compute_data_type, name)

    def div(self, a: ArrayOrTensor, b: ArrayOrTensor, compute_data_type: OptDataType = None,
               name: Optional[str] = None) -> Tensor:
        """a / b with NumPy broadcasting (see pygraph.div); arrays become inputs."""
        return self._binary("div", a, b, compute_data_type, name)

    def max(self, a: ArrayOrTensor, b: ArrayOrTensor, compute_data_type: OptDataType = None,
               name: Optional[str] = None) -> Tensor:
        """Elementwise maximum with NumPy broadcasting (see pygraph.max); arrays become inputs."""
        return self._binary("max", a, b, compute_data_type, name)

    def min(self, a: ArrayOrTensor, b: ArrayOrTensor, compute_data_type: OptDataType = None,
               name: Optional[str] = None) -> Tensor:
        """Elementwise minimum with NumPy broadcasting (see pygraph.min); arrays become inputs."""
        return self._binary("min", a, b, compute_data_type, name)

    def relu(self, input: ArrayOrTensor, negative_slope: Optional[float] = None,
             lower_clip: Optional[float] = None, upper_clip: Optional[float] = None,
             compute_data_type: OptDataType = None, name: Optional[str] = None) -> Tensor:
        """Relu, leaky or clipped (see pygraph.relu); an array becomes an input."""
        self._check_open("add operations")
        return self._result(self._g.relu(self._arg(input), negative_slope=negative_slope,
                                         lower_clip=lower_clip, upper_clip=upper_clip,
                                         compute_data_type=compute_data_type, name=name))

    def _unary(self, op: str, input: ArrayOrTensor, compute_data_type: OptDataType,
               name: Optional[str]) -> Tensor:
        self._check_open("add operations")
        return self._result(getattr(self._g, op)(self._arg(input),
                                                 compute_data_type=compute_data_type, name=name))

    def sigmoid(self, input: ArrayOrTensor, compute_data_type: OptDataType = None,
                   name: Optional[str] = None) -> Tensor:
        """Sigmoid of the input (see pygraph.sigmoid); an array becomes an input."""
        return self._unary("sigmoid", input, compute_data_type, name)

    def tanh(self, input: ArrayOrTensor, compute_data_type: OptDataType = None,
                name: Optional[str] = None) -> Tensor:
        """tanh of the input (see pygraph.tanh); an array becomes an input."""
        return self._unary("tanh", input, compute_data_type, name)

    def gelu(self, input: ArrayOrTensor, compute_data_type: OptDataType = None,
                name: Optional[str] = None) -> Tensor:
        """gelu (the exact erf form) of the input (see pygraph.gelu); an array becomes an input."""
        return self._unary("gelu", input, compute_data_type, name)

    def identity(self, input: ArrayOrTensor, compute_data_type: OptDataType = None,
                    name: Optional[str] = None) -> Tensor:
        """A copy of the input (see pygraph.identity); an array becomes an input."""
        return self._unary("identity", input, compute_data_type, name)

    def batchnorm_inference(self, input: ArrayOrTensor, mean: ArrayOrTensor,
                            inv_variance: ArrayOrTensor, scale: ArrayOrTensor,
                            bias: ArrayOrTensor, compute_data_type: OptDataType = None,
                            name: Optional[str] = None) -> Tensor:
        """(x - mean) * inv_variance * scale + bias (see pygraph.batchnorm_inference);
        arrays become inputs."""
        self._check_open("add operations")
        return self._result(self._g.batchnorm_inference(
            self._arg(input), self._arg(mean), self._arg(inv_variance), self._arg(scale),
            self._arg(bias), compute_data_type=compute_data_type, name=name))

    def output(self, *tensors: Tensor, data_type: Optional[int] = None) -> None:
        """Marks results as outputs (returned by calls, in this order).  Without any, the
        last op's result is the output."""
        self._check_open("add outputs")
        for t in tensors:
            if not isinstance(t, Tensor) or t.graph is not self._g:
                raise TypeError("Graph.output: expected results of this graph's ops, got "
                                f"{type(t).__name__}")
            if any(t is o for o in self._outputs):
                continue
            self._outputs.append(t)
            if data_type is not None:
                t.set_data_type(data_type)

    def build(self) -> None:
        """Marks the outputs, builds the graph and picks the engine."""
        if self._built:
            return
        if self._last is None:
            raise ValueError(f"Graph '{self._g.name}' has no operations")
        if not self._outputs:
            self._outputs.append(self._last)
        for t in self._outputs:
            t.set_output(True)
        self._g.build([self._heur_mode])
        self._staging = _staging_for(self._g.get_memory_space(0), self._g.get_engine_name(0))
        self._built = True

    # -- running --
    def __call__(self, *arrays: Any,
                 workspace: Any = None) -> Union[NDArray[Any], Tuple[NDArray[Any], ...]]:
        """Runs the graph on new arrays for its inputs (in order of first use; none = the
        arrays given while building).  Returns the output array, or a tuple of them."""
        if not self._built:
            raise HipdnnError(f"Graph '{self._g.name}' is not built yet: leave the `with` "
                              "block or call build()")
        if not arrays:
            arrays = tuple(self._arrays)
        if len(arrays) != len(self._inputs):
            names = ", ".join(t.get_name() for t in self._inputs)
            raise TypeError(f"Graph '{self._g.name}' takes {len(self._inputs)} input array(s) "
                            f"({names}), got {len(arrays)}")
        st = self._staging
        pack: Dict[Any, Any] = {t: st.stage_in(a) for t, a in zip(self._inputs, arrays)}
        outs = []
        for t in self._outputs:
            out = st.alloc_out(t.get_dim(), t.get_stride(), numpy_dtype(t.get_data_type()))
            pack[t] = out
            outs.append(out)
        if workspace is None:
            workspace = st.workspace(self._g.get_workspace_size())
        self._g.execute(pack, workspace)
        results = tuple(st.fetch_out(o) for o in outs)
        return results[0] if len(results) == 1 else results

    # -- inspection --
    @property
    def engine_name(self) -> str:
        """The engine the graph runs on."""
        if not self._built:
            raise HipdnnError(f"Graph '{self._g.name}' is not built yet")
        return self._g.get_engine_name(0)

    @property
    def pygraph(self) -> pygraph:
        """The underlying cuDNN-style graph."""
        return self._g

    @property
    def inputs(self) -> List[Tensor]:
        """The input tensors, in order of first use (the order of call arguments)."""
        return list(self._inputs)

    @property
    def outputs(self) -> List[Tensor]:
        """The output tensors, in the order calls return them."""
        return list(self._outputs)

    def __repr__(self) -> str:
        head = f"hipdnn.Graph ({len(self._inputs)} inputs, {len(self._outputs)} outputs" + (
            f", engine {self.engine_name})" if self._built else ", not built)")
        return head + "\n" + repr(self._g)
