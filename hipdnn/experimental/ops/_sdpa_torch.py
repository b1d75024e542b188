"""PyTorch custom operators ``hipdnn::sdpa`` and ``hipdnn::sdpa_bwd`` (CUDA tensors), their
fake (meta) kernels for torch.compile, and the autograd formula joining them: the forward
saves q, k, v, O and Stats, the backward runs the sdpa_backward graph on them.

Imported only by ``hipdnn.experimental.ops.sdpa``, by its absolute name, where torch is
installed: the operators are registered once per process however the package was loaded.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import torch

from hipdnn import _torch_ops
from hipdnn.experimental.ops import _sdpa_graphs as graphs

_lib = torch.library.Library("hipdnn", "FRAGMENT")
_lib.define("sdpa(Tensor q, Tensor k, Tensor v, float attn_scale, bool is_causal=False, "
            "int diagonal_alignment=0, int left_bound=-1, int right_bound=-1, "
            "Tensor? seq_len_q=None, Tensor? seq_len_kv=None) -> (Tensor, Tensor)")
_lib.define("sdpa_bwd(Tensor dO, Tensor q, Tensor k, Tensor v, Tensor o, Tensor stats, "
            "float attn_scale, bool is_causal=False, int diagonal_alignment=0, "
            "int left_bound=-1, int right_bound=-1, Tensor? seq_len_q=None, "
            "Tensor? seq_len_kv=None, bool is_deterministic=False) -> (Tensor, Tensor, Tensor)")


def _operands(seq_len_q: Optional[Any], seq_len_kv: Optional[Any],
              **tensors: Any) -> Dict[str, Any]:
    """The variant pack's arrays by name: detached (DLPack refuses tensors that need
    grad), the seq_lens only where given."""
    ops = {name: t.detach() for name, t in tensors.items()}
    if seq_len_q is not None:
        ops["seq_len_q"] = seq_len_q.detach()
    if seq_len_kv is not None:
        ops["seq_len_kv"] = seq_len_kv.detach()
    return ops


def _forward_outputs(q: Any, v: Any) -> Tuple[Any, Any]:
    """O [B, H_q, S_q, D_v] in q's dtype and Stats [B, H_q, S_q, 1] float32, contiguous."""
    b, h, s_q = q.shape[0], q.shape[1], q.shape[2]
    o = torch.empty(b, h, s_q, v.shape[-1], dtype=q.dtype, device=q.device)
    stats = torch.empty(b, h, s_q, 1, dtype=torch.float32, device=q.device)
    return o, stats


def _sdpa_cuda(q: Any, k: Any, v: Any, attn_scale: float, is_causal: bool = False,
               diagonal_alignment: int = 0, left_bound: int = -1, right_bound: int = -1,
               seq_len_q: Optional[Any] = None, seq_len_kv: Optional[Any] = None) -> Any:
    o, stats = _forward_outputs(q, v)
    ops = _operands(seq_len_q, seq_len_kv, q=q, k=k, v=v, o=o, stats=stats)
    mask = graphs.Mask(bool(is_causal), int(diagonal_alignment), int(left_bound),
                       int(right_bound))
    with torch.cuda.device(q.device):
        graphs.forward(_torch_ops.handle(q.device), ops, attn_scale, mask,
                       _torch_ops.workspace(q.device))
    return o, stats


def _sdpa_fake(q: Any, k: Any, v: Any, attn_scale: float, is_causal: bool = False,
               diagonal_alignment: int = 0, left_bound: int = -1, right_bound: int = -1,
               seq_len_q: Optional[Any] = None, seq_len_kv: Optional[Any] = None) -> Any:
    return _forward_outputs(q, v)


def _sdpa_bwd_cuda(dO: Any, q: Any, k: Any, v: Any, o: Any, stats: Any, attn_scale: float,
                   is_causal: bool = False, diagonal_alignment: int = 0, left_bound: int = -1,
                   right_bound: int = -1, seq_len_q: Optional[Any] = None,
                   seq_len_kv: Optional[Any] = None, is_deterministic: bool = False) -> Any:
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    ops = _operands(seq_len_q, seq_len_kv, q=q, k=k, v=v, o=o, dO=dO, stats=stats,
                    dQ=dq, dK=dk, dV=dv)
    mask = graphs.Mask(bool(is_causal), int(diagonal_alignment), int(left_bound),
                       int(right_bound))
    with torch.cuda.device(q.device):
        graphs.backward(_torch_ops.handle(q.device), ops, attn_scale, mask,
                        bool(is_deterministic), _torch_ops.workspace(q.device))
    return dq, dk, dv


def _sdpa_bwd_fake(dO: Any, q: Any, k: Any, v: Any, o: Any, stats: Any, attn_scale: float,
                   is_causal: bool = False, diagonal_alignment: int = 0, left_bound: int = -1,
                   right_bound: int = -1, seq_len_q: Optional[Any] = None,
                   seq_len_kv: Optional[Any] = None, is_deterministic: bool = False) -> Any:
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _setup_context(ctx: Any, inputs: Tuple[Any, ...], output: Tuple[Any, Any]) -> None:
    q, k, v, attn_scale, is_causal, alignment, left, right, seq_len_q, seq_len_kv = inputs
    o, stats = output
    lens = [t for t in (seq_len_q, seq_len_kv) if t is not None]
    ctx.save_for_backward(q, k, v, o, stats, *lens)
    ctx.has_seq_len_q, ctx.has_seq_len_kv = seq_len_q is not None, seq_len_kv is not None
    ctx.attn_scale, ctx.is_causal = attn_scale, is_causal
    ctx.diagonal_alignment, ctx.left_bound, ctx.right_bound = alignment, left, right


def _backward(ctx: Any, d_o: Any, _d_stats: Any) -> Tuple[Any, ...]:
    q, k, v, o, stats, *lens = ctx.saved_tensors
    seq_len_q = lens.pop(0) if ctx.has_seq_len_q else None
    seq_len_kv = lens.pop(0) if ctx.has_seq_len_kv else None
    # o.sum().backward() hands an expanded dO (strides 0): the graph wants a real one
    dq, dk, dv = torch.ops.hipdnn.sdpa_bwd(
        d_o.contiguous(), q, k, v, o, stats, ctx.attn_scale, ctx.is_causal,
        ctx.diagonal_alignment, ctx.left_bound, ctx.right_bound, seq_len_q, seq_len_kv)
    return dq, dk, dv, None, None, None, None, None, None, None


_lib.impl("sdpa", _sdpa_cuda, "CUDA")
_lib.impl("sdpa_bwd", _sdpa_bwd_cuda, "CUDA")
torch.library.register_fake("hipdnn::sdpa", _sdpa_fake, lib=_lib)
torch.library.register_fake("hipdnn::sdpa_bwd", _sdpa_bwd_fake, lib=_lib)
torch.library.register_autograd("hipdnn::sdpa", _backward, setup_context=_setup_context,
                                lib=_lib)


def sdpa(query: Any, key: Any, value: Any, attn_scale: float, is_causal: bool,
         diagonal_alignment: int, left_bound: int, right_bound: int,
         seq_len_q: Optional[Any], seq_len_kv: Optional[Any]) -> Any:
    """O of the ``hipdnn::sdpa`` operator (autograd records it for the backward)."""
    o, _stats = torch.ops.hipdnn.sdpa(
        query, key, value, attn_scale, is_causal=is_causal,
        diagonal_alignment=diagonal_alignment, left_bound=left_bound,
        right_bound=right_bound, seq_len_q=seq_len_q, seq_len_kv=seq_len_kv)
    return o
