"""The graphs behind ``causal_conv1d``: a depthwise causal convolution is hipdnn's grouped
1D convolution with one group a channel (weight [dim, 1, K]), padded K - 1 before the
sequence and 0 after, then the bias (a channel each) and SiLU or nothing, fp32 inside.

forward: conv_fprop -> bias -> swish (SiLU) into y.  backward: the forward's
pre-activation z recomputed (conv_fprop -> bias), dz = swish_backward(dy, z) (dy itself
for identity), then dx = conv_dgrad(dz, weight), dweight = conv_wgrad(x, dz) and
dbias = dz summed over batch and sequence, each in x's data type.  Graphs are built once
per problem (every operand's shape, strides, data type and device, the activation) and
kept in ``_fprop_cache`` and ``_bprop_cache``, then run on the caller's arrays.

Free of PyTorch: the operands are anything ``pygraph.tensor_like`` and ``execute`` take
(torch tensors, DeviceArrays, NumPy arrays), already viewed with the graph's ranks
(x, y, dy, dx [batch, dim, seq_len]; weight, dweight [dim, 1, K]; bias, dbias
[1, dim, 1]); ``views`` makes those views without copying.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Tuple

import numpy as np

from hipdnn import _C
from hipdnn._op_graphs import (CachedGraph, Key, Workspace, describe, finish, inputs,
                               operands_key, output, run)
from hipdnn.enums import data_type, reduction_mode
from hipdnn.pygraph import Tensor, pygraph

# Operand names, in the order a variant pack lists them, and their uids in the graphs.
_UIDS = {name: uid for uid, name in enumerate(("x", "w", "b", "y", "dy", "dx", "dw", "db"), 1)}


_fprop_cache: Dict[Key, CachedGraph] = {}
_bprop_cache: Dict[Key, CachedGraph] = {}


def _view(a: Any, shape: Tuple[int, ...], strides: Tuple[int, ...]) -> Any:
    """``a`` seen with another shape and strides (in elements), no copy."""
    if callable(getattr(a, "stride", None)):  # torch
        return a.as_strided(shape, strides, a.storage_offset())
    if isinstance(a, _C.DeviceArray):
        return a.as_strided(list(shape), list(strides))
    return np.lib.stride_tricks.as_strided(a, shape=shape,
                                           strides=tuple(s * a.itemsize for s in strides),
                                           writeable=a.flags.writeable)


def weight_view(w: Any) -> Any:
    """weight (or dweight) [dim, K] as the grouped convolution's filter [dim, 1, K], its
    one channel strided as the taps (a packed weight is then packed KRC, channels last,
    which the hip engine's weight gradient writes)."""
    _, (s0, s1), _, _ = describe(w)
    return _view(w, (int(w.shape[0]), 1, int(w.shape[1])), (s0, s1, s1))


def bias_view(b: Any) -> Any:
    """bias (or dbias) [dim] as [1, dim, 1], a value a channel."""
    _, (s,), _, _ = describe(b)
    dim = int(b.shape[0])
    return _view(b, (1, dim, 1), (dim * s, s, s))


def cache_key(kind: str, operands: Mapping[str, Any], activation: str) -> Key:
    return (kind, operands_key(operands), activation)


def _graph(handle: Optional[_C.Handle], name: str) -> pygraph:
    return pygraph(intermediate_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT,
                   handle=handle, name=name)


def _inputs(g: pygraph, operands: Mapping[str, Any], *names: str) -> Dict[str, Tensor]:
    return inputs(g, operands, _UIDS, names)


def _output(t: Tensor, name: str, array: Any, dtype: data_type) -> None:
    output(t, name, _UIDS[name], array, dtype)


def _pre_activation(g: pygraph, t: Mapping[str, Tensor]) -> Tensor:
    """z = bias + the causal depthwise convolution of x (fp32, not stored)."""
    k = t["w"].get_dim()[2]
    conv = g.conv_fprop(t["x"], t["w"], pre_padding=[k - 1], post_padding=[0],
                        compute_data_type=data_type.FLOAT, name="causal_conv")
    return g.bias(conv, t["b"], compute_data_type=data_type.FLOAT, name="bias")


def build_forward(handle: Optional[_C.Handle], operands: Mapping[str, Any],
                  activation: str) -> CachedGraph:
    """y = act(conv(x, w) + b) from x, w, b into operands' y."""
    g = _graph(handle, "causal_conv1d_forward")
    t = _inputs(g, operands, "x", "w", "b")
    y = _pre_activation(g, t)
    if activation == "silu":
        y = g.swish(y, compute_data_type=data_type.FLOAT, name="silu")
    _output(y, "y", operands["y"], t["x"].get_data_type())
    return finish(g)


def build_backward(handle: Optional[_C.Handle], operands: Mapping[str, Any],
                   activation: str) -> CachedGraph:
    """dx, dw, db from x, w, b and dy (the pre-activation recomputed for SiLU's
    derivative) into operands' dx, dw and db."""
    g = _graph(handle, "causal_conv1d_backward")
    t = _inputs(g, operands, "x", "w", "b", "dy") if activation == "silu" \
        else _inputs(g, operands, "x", "w", "dy")
    dz = t["dy"]
    if activation == "silu":
        dz = g.swish_backward(dz, _pre_activation(g, t), compute_data_type=data_type.FLOAT,
                              name="silu_backward")
    pre, fp32 = [t["w"].get_dim()[2] - 1], data_type.FLOAT
    dx = g.conv_dgrad(dz, t["w"], pre_padding=pre, post_padding=[0], compute_data_type=fp32,
                      name="dgrad")
    dw = g.conv_wgrad(t["x"], dz, pre_padding=pre, post_padding=[0], compute_data_type=fp32,
                      name="wgrad")
    db = g.reduction(dz, reduction_mode.ADD, compute_data_type=data_type.FLOAT, name="dbias")
    io = t["x"].get_data_type()
    for tensor, name in ((dx, "dx"), (dw, "dw"), (db, "db")):
        _output(tensor, name, operands[name], io)
    return finish(g)


def forward(handle: Optional[_C.Handle], operands: Mapping[str, Any], activation: str,
            workspace: Workspace = None) -> bool:
    """Operands x, w, b, y (the graph's views); y is written.  True when the graph came
    from ``_fprop_cache``."""
    key = cache_key("fprop", operands, activation)
    return run(_fprop_cache, key, lambda: build_forward(handle, operands, activation),
               handle, operands, _UIDS, workspace)


def backward(handle: Optional[_C.Handle], operands: Mapping[str, Any], activation: str,
             workspace: Workspace = None) -> bool:
    """Operands x, w, b, dy, dx, dw, db (the graph's views); dx, dw and db are written.
    True when the graph came from ``_bprop_cache``."""
    if activation != "silu":  # identity's gradients do not read the bias
        operands = {n: a for n, a in operands.items() if n != "b"}
    key = cache_key("bprop", operands, activation)
    return run(_bprop_cache, key, lambda: build_backward(handle, operands, activation),
               handle, operands, _UIDS, workspace)
