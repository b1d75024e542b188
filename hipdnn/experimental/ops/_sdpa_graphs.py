"""The graphs behind ``scaled_dot_product_attention``: an sdpa graph (with Stats, for
training) and an sdpa_backward graph, built once per problem and kept in ``_fprop_cache``
and ``_bprop_cache``, then run on the caller's arrays.

Free of PyTorch: operands are anything ``pygraph.tensor_like`` and ``execute`` take (torch
tensors, DeviceArrays, NumPy arrays), so the same code runs under tests without torch.
Imports are absolute: cuDNN frontend code may load this package as ``cudnn.experimental``
(with ``sys.modules['cudnn']`` set to hipdnn), and the caches and hipdnn's classes must
still be one copy.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, NamedTuple, Optional

from hipdnn import _C
from hipdnn._op_graphs import (CachedGraph, Key, Workspace, finish, inputs, operands_key,
                               output, run)
from hipdnn.enums import data_type, diagonal_alignment
from hipdnn.pygraph import Tensor, pygraph

# Operand names, in the order a variant pack lists them, and their uids in the graphs.
_UIDS = {name: uid for uid, name in enumerate(
    ("q", "k", "v", "o", "stats", "dO", "dQ", "dK", "dV", "seq_len_q", "seq_len_kv"), 1)}


class Mask(NamedTuple):
    """The mask arguments of scaled_dot_product_attention, as given (-1: no bound)."""
    is_causal: bool
    diagonal_alignment: int
    left_bound: int
    right_bound: int

    def keywords(self) -> Dict[str, Any]:
        """pygraph.sdpa's keywords for this mask: a causal mask is a right bound of 0
        unless a right bound is given; alignment 0 is top-left, any other bottom-right."""
        left = self.left_bound if self.left_bound >= 0 else None
        right = self.right_bound if self.right_bound >= 0 else None
        if self.is_causal and right is None:
            right = 0
        align = diagonal_alignment.TOP_LEFT if self.diagonal_alignment == 0 \
            else diagonal_alignment.BOTTOM_RIGHT
        return {"diagonal_alignment": align, "diagonal_band_left_bound": left,
                "diagonal_band_right_bound": right}


_fprop_cache: Dict[Key, CachedGraph] = {}
_bprop_cache: Dict[Key, CachedGraph] = {}


def cache_key(kind: str, operands: Mapping[str, Any], attn_scale: float, mask: Mask,
              *extra: Any) -> Key:
    """The problem a graph solves: every operand's shape, strides, data type and device
    (which optional ones are present included), the scale, the mask and ``extra``."""
    return (kind, operands_key(operands), float(attn_scale), tuple(mask), *extra)


def _output(t: Tensor, name: str, array: Any, dtype: data_type) -> None:
    """Makes ``t`` the output ``array`` receives (the op_graphs rule, under _UIDS)."""
    output(t, name, _UIDS[name], array, dtype)


def _padding(t: Mapping[str, Tensor]) -> Dict[str, Any]:
    return {"use_padding_mask": "seq_len_q" in t or "seq_len_kv" in t,
            "seq_len_q": t.get("seq_len_q"), "seq_len_kv": t.get("seq_len_kv")}


def build_forward(handle: Optional[_C.Handle], operands: Mapping[str, Any],
                  attn_scale: float, mask: Mask) -> CachedGraph:
    """sdpa with Stats (generate_stats=True) from q, k, v (and seq_len_q / seq_len_kv)
    into operands' o and stats."""
    g = pygraph(intermediate_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT,
                handle=handle, name="sdpa_op_forward")
    t = inputs(g, operands, _UIDS, ("q", "k", "v", "seq_len_q", "seq_len_kv"))
    o, stats = g.sdpa(q=t["q"], k=t["k"], v=t["v"], generate_stats=True,
                      attn_scale=attn_scale, compute_data_type=data_type.FLOAT, name="sdpa",
                      **_padding(t), **mask.keywords())
    assert o is not None and stats is not None  # generate_stats=True gives both
    _output(o, "o", operands["o"], t["q"].get_data_type())
    _output(stats, "stats", operands["stats"], data_type.FLOAT)
    return finish(g)


def build_backward(handle: Optional[_C.Handle], operands: Mapping[str, Any],
                   attn_scale: float, mask: Mask, is_deterministic: bool) -> CachedGraph:
    """sdpa_backward from q, k, v, o, dO and stats (and the seq_lens) into operands'
    dQ, dK and dV."""
    g = pygraph(intermediate_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT,
                handle=handle, name="sdpa_op_backward")
    t = inputs(g, operands, _UIDS, ("q", "k", "v", "o", "dO", "stats", "seq_len_q", "seq_len_kv"))
    grads = g.sdpa_backward(q=t["q"], k=t["k"], v=t["v"], o=t["o"], dO=t["dO"],
                            stats=t["stats"], attn_scale=attn_scale,
                            use_deterministic_algorithm=is_deterministic,
                            compute_data_type=data_type.FLOAT, name="sdpa_backward",
                            **_padding(t), **mask.keywords())
    for grad, name, like in zip(grads, ("dQ", "dK", "dV"), ("q", "k", "v")):
        _output(grad, name, operands[name], t[like].get_data_type())
    return finish(g)


def forward(handle: Optional[_C.Handle], operands: Mapping[str, Any], attn_scale: float,
            mask: Mask, workspace: Workspace = None) -> bool:
    """Attention forward: operands q, k, v, o, stats (seq_len_q, seq_len_kv if given);
    o and stats are written.  True when the graph came from ``_fprop_cache``."""
    key = cache_key("fprop", operands, attn_scale, mask)
    return run(_fprop_cache, key, lambda: build_forward(handle, operands, attn_scale, mask),
               handle, operands, _UIDS, workspace)


def backward(handle: Optional[_C.Handle], operands: Mapping[str, Any], attn_scale: float,
             mask: Mask, is_deterministic: bool = False, workspace: Workspace = None) -> bool:
    """Attention backward: operands q, k, v, o, dO, stats, dQ, dK, dV (seq_lens if
    given); dQ, dK and dV are written.  True when the graph came from ``_bprop_cache``."""
    key = cache_key("bprop", operands, attn_scale, mask, bool(is_deterministic))
    return run(_bprop_cache, key,
               lambda: build_backward(handle, operands, attn_scale, mask, is_deterministic),
               handle, operands, _UIDS, workspace)
