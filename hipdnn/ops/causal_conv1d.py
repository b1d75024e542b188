"""cuDNN frontend's ``cudnn.ops.causal_conv1d``: the depthwise causal convolution of
Mamba-style layers, y = act(bias + causal_conv(x, weight)), forward and backward.

In cuDNN it is a kernel of its own; in hipdnn it is a graph (``_causal_conv1d_graphs``):
the grouped 1D convolution with one group a channel, padded K - 1 before the sequence,
then the bias and SiLU in its epilogue; the backward recomputes the pre-activation and
runs SiLU's derivative, conv_dgrad, conv_wgrad and a sum over batch and sequence.  Graphs
are built once per problem and kept in ``_fprop_cache`` and ``_bprop_cache``.

torch tensors (CUDA, as cuDNN frontend takes) go through the PyTorch operators
``hipdnn::causal_conv1d_fwd`` / ``hipdnn::causal_conv1d_bwd`` (autograd, torch.compile's
fake kernels, the caller's stream); NumPy arrays (the reference engine) and
hipdnn.DeviceArrays (device engines) are run directly, returning the same kind, and
``causal_conv1d_backward`` gives their gradients (hipdnn's own: cuDNN frontend reaches
its backward only through autograd).  Importing this module needs no PyTorch.
"""
from __future__ import annotations

import importlib
import importlib.util
from typing import Any, Optional, Tuple

import numpy as np

from hipdnn import _C
from hipdnn.device import DeviceArray
from hipdnn.enums import data_type
# the one copy of the caches, re-exported under the names sdpa's use
from hipdnn.ops import _causal_conv1d_graphs as graphs
from hipdnn.ops._causal_conv1d_graphs import _bprop_cache as _bprop_cache
from hipdnn.ops._causal_conv1d_graphs import _fprop_cache as _fprop_cache

__all__ = ["causal_conv1d", "causal_conv1d_backward"]

ACTIVATIONS = ("identity", "silu")
_NUMPY_TYPES = {np.dtype(np.float32): "float32", np.dtype(np.float16): "float16"}
_DEVICE_TYPES = {data_type.FLOAT: "float32", data_type.HALF: "float16",
                 data_type.BFLOAT16: "bfloat16"}
_TORCH_TYPES = ("torch.float32", "torch.float16", "torch.bfloat16")


def _load_torch_ops() -> Any:
    """The module that registers the torch operators, or None without torch (imported by
    its absolute name: once however this package was loaded)."""
    if importlib.util.find_spec("torch") is None:
        return None
    return importlib.import_module("hipdnn.ops._causal_conv1d_torch")


_torch_ops = _load_torch_ops()


def _shape(t: Any, what: str) -> Tuple[int, ...]:
    shape = getattr(t, "shape", None)
    if shape is None:
        raise TypeError(f"causal_conv1d: {what} must be a tensor, got {type(t).__name__}")
    return tuple(int(d) for d in shape)


def _kind(a: Any) -> str:
    if type(a).__module__.split(".")[0] == "torch":
        return "torch"
    if isinstance(a, _C.DeviceArray):
        return "device"
    if isinstance(a, np.ndarray):
        return "numpy"
    raise TypeError(f"causal_conv1d: takes torch tensors, hipdnn.DeviceArrays or NumPy "
                    f"arrays, got {type(a).__name__}")


def _dtype_name(a: Any, kind: str) -> Tuple[str, Optional[str]]:
    """(a's data type as said in errors, its name among the supported ones or None)."""
    if kind == "torch":
        return str(a.dtype), (str(a.dtype)[6:] if str(a.dtype) in _TORCH_TYPES else None)
    if kind == "device":
        dt = data_type(a.data_type)
        return dt.name.lower(), _DEVICE_TYPES.get(dt)
    return str(a.dtype), _NUMPY_TYPES.get(a.dtype)


def _check(x: Any, weight: Any, bias: Any, dy: Any = None) -> str:
    """cuDNN frontend's checks and messages (ValueError; TypeError where the data types
    differ); the arrays' kind."""
    xs, ws, bs = _shape(x, "x"), _shape(weight, "weight"), _shape(bias, "bias")
    if len(xs) != 3 or len(ws) != 2 or len(bs) != 1:
        raise ValueError(f"Expected x(3D), weight(2D), bias(1D); got {list(xs)}, {list(ws)}, "
                         f"{list(bs)}")
    operands = [("x", x), ("weight", weight), ("bias", bias)] + \
        ([("dy", dy)] if dy is not None else [])
    kinds = {name: _kind(a) for name, a in operands}
    if len(set(kinds.values())) > 1:
        raise TypeError(f"causal_conv1d: x, weight, bias (and dy) must be of one kind; got "
                        f"{kinds}")
    kind = kinds["x"]
    if dy is not None and _shape(dy, "dy") != xs:
        raise ValueError(f"Shape mismatch: dy has shape {list(_shape(dy, 'dy'))} but x has "
                         f"shape {list(xs)} (expected dy.shape == x.shape)")
    _same_place(kind, operands)
    types = {name: _dtype_name(a, kind)[0] for name, a in operands}
    if dy is not None and types["dy"] != types["x"]:
        raise ValueError(f"Dtype mismatch: grad_out.dtype={types['dy']}, x.dtype={types['x']}")
    if not types["x"] == types["weight"] == types["bias"]:
        raise TypeError(f"Dtype mismatch: x.dtype={types['x']}, weight.dtype="
                        f"{types['weight']}, bias.dtype={types['bias']} (all must match)")
    if ws[0] != xs[1]:
        raise ValueError(f"Channel mismatch: x has dim={xs[1]} but weight has shape {list(ws)} "
                         f"(expected weight.shape[0]={xs[1]})")
    if bs[0] != xs[1]:
        raise ValueError(f"Bias mismatch: x has dim={xs[1]} but bias has shape {list(bs)} "
                         f"(expected bias.shape[0]={xs[1]})")
    if _dtype_name(x, kind)[1] is None:
        raise ValueError(f"Unsupported dtype {types['x']}. Supported: float32, float16, "
                         "bfloat16" + (" (bfloat16 as a DeviceArray or a torch tensor)."
                                       if kind == "numpy" else "."))
    return kind


def _same_place(kind: str, operands: Any) -> None:
    """torch tensors on one CUDA device (as cuDNN frontend asks); DeviceArrays on one."""
    if kind == "torch":
        devices = {name: str(a.device) for name, a in operands}
        if not all(a.is_cuda for _, a in operands):
            raise ValueError("All tensors must be on CUDA: " + ", ".join(
                f"{n}.device={d}" for n, d in devices.items()))
        if len(set(devices.values())) > 1:
            raise ValueError("All tensors must be on the same device: " + ", ".join(
                f"{n}.device={d}" for n, d in devices.items()))
    elif kind == "device" and len({a.device for _, a in operands}) > 1:
        raise ValueError("All tensors must be on the same device: " + ", ".join(
            f"{n}.device={a.device}" for n, a in operands))


def _activation(activation: Any) -> str:
    if activation not in ACTIVATIONS:
        raise ValueError(f"Unsupported activation '{activation}'. Supported: 'identity', "
                         "'silu'.")
    return str(activation)


def _empty(like: Any, shape: Tuple[int, ...], kind: str) -> Any:
    """A packed array of ``like``'s kind and data type."""
    if kind == "device":
        return DeviceArray.empty(shape, data_type(like.data_type))
    return np.empty(shape, like.dtype)


def _zero_bias(x: Any, weight: Any) -> Any:
    """cuDNN frontend's bias=None: zeros of x's kind and data type."""
    dim = _shape(weight, "weight")[0]
    kind = _kind(x)
    if kind == "torch":
        import torch
        return torch.zeros(dim, device=x.device, dtype=x.dtype)
    if kind == "device":
        zeros = DeviceArray.empty([dim], data_type(x.data_type))
        zeros.fill_bytes(0)
        return zeros
    return np.zeros(dim, x.dtype)


def _need_torch() -> Any:
    ops = _torch_ops
    if ops is None:  # a torch tensor without torch installed cannot happen; a stub can
        raise ModuleNotFoundError("causal_conv1d on torch tensors needs PyTorch", name="torch")
    return ops


def causal_conv1d(x: Any, weight: Any, bias: Optional[Any] = None,
                  activation: str = "identity") -> Any:
    """y[b, d, t] = act(bias[d] + sum_k weight[d, k] * x[b, d, t - K + 1 + k]) (x taken as
    0 before t = 0) for x [batch, dim, seq_len], weight [dim, K], bias [dim] (None:
    zeros) and activation "identity" (default) or "silu"; y [batch, dim, seq_len] in x's
    data type, fp32 inside.  Operands of one data type (float32, float16, bfloat16) and
    one kind: torch CUDA tensors (y differentiable in x, weight and bias: autograd and
    torch.compile, as cuDNN frontend's), hipdnn.DeviceArrays or NumPy arrays (float32,
    float16; the reference engine), y of the same kind.  Bad arguments raise cuDNN
    frontend's ValueError (TypeError for mixed data types); a problem no engine runs,
    GraphNotSupportedError with each engine's reason."""
    activation = _activation(activation)
    if bias is None:
        bias = _zero_bias(x, weight)
    kind = _check(x, weight, bias)
    if kind == "torch":
        return _need_torch().causal_conv1d(x, weight, bias, activation)
    y = _empty(x, _shape(x, "x"), kind)
    graphs.forward(None, {"x": x, "w": graphs.weight_view(weight),
                          "b": graphs.bias_view(bias), "y": y}, activation)
    return y


def causal_conv1d_backward(x: Any, weight: Any, bias: Optional[Any], dy: Any,
                           activation: str = "identity") -> Tuple[Any, Any, Any]:
    """(dx, dweight, dbias), the gradients of ``causal_conv1d(x, weight, bias,
    activation)`` given dy = dL/dy [batch, dim, seq_len]: dx [batch, dim, seq_len],
    dweight [dim, K] and dbias [dim], in x's data type (fp32 sums inside), of the
    operands' kind.  SiLU's derivative is taken at the recomputed pre-activation.  hipdnn's
    own name (cuDNN frontend reaches its backward only through autograd, which torch
    tensors here do too); the checks and errors are causal_conv1d's, and dy must match x
    in shape and data type (ValueError)."""
    activation = _activation(activation)
    if bias is None:
        bias = _zero_bias(x, weight)
    kind = _check(x, weight, bias, dy)
    if kind == "torch":
        dx, dw, db = _need_torch().causal_conv1d_backward(x, weight, bias, dy, activation)
        return dx, dw, db
    dx = _empty(x, _shape(x, "x"), kind)
    dw = _empty(x, _shape(weight, "weight"), kind)
    db = _empty(x, _shape(bias, "bias"), kind)
    graphs.backward(None, {"x": x, "w": graphs.weight_view(weight),
                           "b": graphs.bias_view(bias), "dy": dy, "dx": dx,
                           "dw": graphs.weight_view(dw), "db": graphs.bias_view(db)},
                    activation)
    return dx, dw, db
