"""PyTorch custom operators ``hipdnn::causal_conv1d_fwd`` and ``hipdnn::causal_conv1d_bwd``
(CUDA tensors), their fake (meta) kernels for torch.compile, and the autograd formula
joining them: the forward saves x, weight and bias, the backward runs the backward graph
on them (the pre-activation recomputed, as cuDNN frontend's kernel does).

Imported only by ``hipdnn.ops.causal_conv1d``, by its absolute name, where torch is
installed: the operators are registered once per process however the package was loaded.
"""
from __future__ import annotations

from typing import Any, Tuple

import torch

from hipdnn import _torch_ops
from hipdnn.ops import _causal_conv1d_graphs as graphs

_lib = torch.library.Library("hipdnn", "FRAGMENT")
_lib.define("causal_conv1d_fwd(Tensor x, Tensor weight, Tensor bias, str activation) -> Tensor")
_lib.define("causal_conv1d_bwd(Tensor dy, Tensor x, Tensor weight, Tensor bias, "
            "str activation) -> (Tensor, Tensor, Tensor)")


def _fwd_cuda(x: Any, weight: Any, bias: Any, activation: str) -> Any:
    # contiguous, as cuDNN frontend's kernel takes them (a no-op when they are);
    # detached: DLPack refuses tensors that need grad
    x, weight, bias = (t.detach().contiguous() for t in (x, weight, bias))
    y = torch.empty_like(x)
    ops = {"x": x, "w": graphs.weight_view(weight), "b": graphs.bias_view(bias), "y": y}
    with torch.cuda.device(x.device):
        graphs.forward(_torch_ops.handle(x.device), ops, activation, _torch_ops.workspace(x.device))
    return y


def _fwd_fake(x: Any, weight: Any, bias: Any, activation: str) -> Any:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _bwd_cuda(dy: Any, x: Any, weight: Any, bias: Any, activation: str) -> Any:
    dy, x, weight, bias = (t.detach().contiguous() for t in (dy, x, weight, bias))
    dx, dw, db = torch.empty_like(x), torch.empty_like(weight), torch.empty_like(bias)
    ops = {"x": x, "w": graphs.weight_view(weight), "b": graphs.bias_view(bias), "dy": dy,
           "dx": dx, "dw": graphs.weight_view(dw), "db": graphs.bias_view(db)}
    with torch.cuda.device(x.device):
        graphs.backward(_torch_ops.handle(x.device), ops, activation,
                        _torch_ops.workspace(x.device))
    return dx, dw, db


def _bwd_fake(dy: Any, x: Any, weight: Any, bias: Any, activation: str) -> Any:
    return (torch.empty_like(x, memory_format=torch.contiguous_format),
            torch.empty_like(weight, memory_format=torch.contiguous_format),
            torch.empty_like(bias, memory_format=torch.contiguous_format))


def _setup_context(ctx: Any, inputs: Tuple[Any, ...], output: Any) -> None:
    x, weight, bias, activation = inputs
    ctx.save_for_backward(x, weight, bias)
    ctx.activation = activation


def _backward(ctx: Any, dy: Any) -> Tuple[Any, ...]:
    x, weight, bias = ctx.saved_tensors
    # y.sum().backward() hands an expanded dy (strides 0): _bwd_cuda makes it contiguous
    dx, dw, db = torch.ops.hipdnn.causal_conv1d_bwd(dy, x, weight, bias, ctx.activation)
    return dx, dw, db, None


_lib.impl("causal_conv1d_fwd", _fwd_cuda, "CUDA")
_lib.impl("causal_conv1d_bwd", _bwd_cuda, "CUDA")
torch.library.register_fake("hipdnn::causal_conv1d_fwd", _fwd_fake, lib=_lib)
torch.library.register_fake("hipdnn::causal_conv1d_bwd", _bwd_fake, lib=_lib)
torch.library.register_autograd("hipdnn::causal_conv1d_fwd", _backward,
                                setup_context=_setup_context, lib=_lib)


def causal_conv1d(x: Any, weight: Any, bias: Any, activation: str) -> Any:
    """y of the ``hipdnn::causal_conv1d_fwd`` operator (autograd records it)."""
    return torch.ops.hipdnn.causal_conv1d_fwd(x, weight, bias, activation)


def causal_conv1d_backward(x: Any, weight: Any, bias: Any, dy: Any,
                           activation: str) -> Tuple[Any, Any, Any]:
    """(dx, dweight, dbias) of the ``hipdnn::causal_conv1d_bwd`` operator."""
    dx, dw, db = torch.ops.hipdnn.causal_conv1d_bwd(dy, x, weight, bias, activation)
    return dx, dw, db
