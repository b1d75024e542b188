"""cuDNN frontend's ``cudnn.experimental.ops.sdpa``: ``scaled_dot_product_attention``, a
PyTorch operator shaped like ``torch.nn.functional.scaled_dot_product_attention`` whose
forward and backward run hipdnn's sdpa and sdpa_backward graphs on CUDA tensors (BHSD
layout, any strides), with autograd and torch.compile support.

Graphs are built once per problem (shapes, strides, dtypes, device, scale, mask) and kept
in ``_fprop_cache`` and ``_bprop_cache`` (dicts: ``len()`` counts graphs, ``clear()``
drops them).  Importing this module needs no PyTorch (it is imported where installed);
calling the operator does.
"""
from __future__ import annotations

import importlib
import importlib.util
import math
from typing import Any, Optional

# cuDNN frontend's cache names, re-exported (the one copy _sdpa_graphs fills)
from hipdnn.experimental.ops._sdpa_graphs import _bprop_cache as _bprop_cache
from hipdnn.experimental.ops._sdpa_graphs import _fprop_cache as _fprop_cache

__all__ = ["scaled_dot_product_attention"]


def _load_torch_ops() -> Any:
    """The module that registers the torch operators, or None without torch.  Imported
    by its absolute name, so that it runs once however this package was loaded."""
    if importlib.util.find_spec("torch") is None:
        return None
    return importlib.import_module("hipdnn.experimental.ops._sdpa_torch")


_torch_ops = _load_torch_ops()


def _refuse_unsupported(attn_mask: Any, dropout_p: float, cumulative_seq_len_q: Any,
                        cumulative_seq_len_kv: Any) -> None:
    what = "scaled_dot_product_attention"
    if attn_mask is not None:
        raise NotImplementedError(f"{what}: attn_mask (an arbitrary mask or bias tensor) "
                                  "is not supported by hipdnn; use is_causal, "
                                  "left_bound / right_bound or seq_len_q / seq_len_kv")
    if dropout_p != 0.0:
        raise NotImplementedError(f"{what}: dropout (dropout_p={dropout_p}) is not "
                                  "supported by hipdnn")
    if cumulative_seq_len_q is not None or cumulative_seq_len_kv is not None:
        raise NotImplementedError(f"{what}: cumulative_seq_len_q / cumulative_seq_len_kv "
                                  "(ragged, token-packed sequences) are not supported by "
                                  "hipdnn; pad the batch and give seq_len_q / seq_len_kv")


def scaled_dot_product_attention(
        query: Any, key: Any, value: Any, attn_mask: Optional[Any] = None,
        dropout_p: float = 0.0, is_causal: bool = False, scale: Optional[float] = None,
        enable_gqa: bool = False, *, diagonal_alignment: int = 0, left_bound: int = -1,
        right_bound: int = -1, seq_len_q: Optional[Any] = None,
        seq_len_kv: Optional[Any] = None, cumulative_seq_len_q: Optional[Any] = None,
        cumulative_seq_len_kv: Optional[Any] = None) -> Any:
    """softmax(query key^T * scale, masked) value for torch CUDA tensors query
    [B, H_q, S_q, D], key [B, H_k, S_kv, D], value [B, H_v, S_kv, D_v] (float16,
    bfloat16 or float32); returns O [B, H_q, S_q, D_v] in query's dtype, differentiable
    in query, key and value.

    scale defaults to 1 / sqrt(D).  is_causal masks keys after each query (a right bound
    of 0 unless right_bound is given); diagonal_alignment 0 aligns the mask's diagonal
    top-left, 1 bottom-right; left_bound / right_bound (-1: none) give a sliding window
    or band; seq_len_q / seq_len_kv ([B, 1, 1, 1] int32 CUDA tensors) the real lengths
    of a padded batch.  H_q other than H_k or H_v (grouped-query attention) needs
    enable_gqa=True, else ValueError.  attn_mask, dropout_p other than 0 and the ragged
    cumulative_seq_len_q / cumulative_seq_len_kv raise NotImplementedError naming them.
    Without PyTorch, raises ModuleNotFoundError."""
    if _torch_ops is None:
        raise ModuleNotFoundError("scaled_dot_product_attention needs PyTorch, and torch is "
                                  "not installed", name="torch")
    _refuse_unsupported(attn_mask, dropout_p, cumulative_seq_len_q, cumulative_seq_len_kv)
    for name, t in (("key", key), ("value", value)):
        if not enable_gqa and t.shape[1] != query.shape[1]:
            raise ValueError(f"scaled_dot_product_attention: query has {query.shape[1]} heads "
                             f"but {name} has {t.shape[1]}; pass enable_gqa=True for "
                             "grouped-query attention")
    attn_scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    return _torch_ops.sdpa(query, key, value, attn_scale, bool(is_causal),
                           int(diagonal_alignment), int(left_bound), int(right_bound),
                           seq_len_q, seq_len_kv)
