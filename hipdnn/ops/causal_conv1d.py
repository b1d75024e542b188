"""cuDNN frontend's ``cudnn.ops.causal_conv1d`` (the depthwise causal convolution of
Mamba-style layers, a kernel of its own in cuDNN, not a graph), by name only: hipdnn has
no such kernel yet.  A call checks its arguments as cuDNN frontend does, then raises
FeatureNotSupportedError (a cudnnGraphNotSupportedError and a NotImplementedError)."""
from __future__ import annotations

from typing import Any

from hipdnn.errors import FeatureNotSupportedError

__all__ = ["causal_conv1d"]

ACTIVATIONS = ("identity", "silu")


def _shape(t: Any, what: str) -> tuple[int, ...]:
    shape = getattr(t, "shape", None)
    if shape is None:
        raise TypeError(f"causal_conv1d: {what} must be a tensor, got {type(t).__name__}")
    return tuple(int(d) for d in shape)


def causal_conv1d(x: Any, weight: Any, bias: Any, activation: str = "silu") -> Any:
    """y[b, d, t] = act(bias[d] + sum_k weight[d, k] * x[b, d, t - K + 1 + k]) for x of
    [batch, dim, seq_len], weight [dim, K], bias [dim] and activation "identity" or
    "silu" (cuDNN frontend's arguments, checked as there).  Not in hipdnn yet: raises
    FeatureNotSupportedError naming it."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"Unsupported activation '{activation}'. Supported: 'identity', "
                         "'silu'.")
    xs, ws, bs = _shape(x, "x"), _shape(weight, "weight"), _shape(bias, "bias")
    if len(xs) != 3 or len(ws) != 2 or len(bs) != 1:
        raise ValueError(f"Expected x(3D), weight(2D), bias(1D); got {list(xs)}, {list(ws)}, "
                         f"{list(bs)}")
    if ws[0] != xs[1] or bs[0] != xs[1]:
        raise ValueError(f"Channel mismatch: x has dim={xs[1]} but weight is {list(ws)} and "
                         f"bias {list(bs)}")
    raise FeatureNotSupportedError("causal_conv1d", {
        "causal_conv1d": f"cudnn.ops.causal_conv1d (x {list(xs)}, kernel size {ws[1]}, "
                         f"activation '{activation}') is not supported by hipdnn yet"})
