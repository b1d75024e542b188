"""cuDNN frontend's ``cudnn.ops``: operators called on tensors directly, outside a graph.
``causal_conv1d`` (forward; autograd on torch tensors) and hipdnn's own
``causal_conv1d_backward`` run hipdnn graphs.  Loaded on first use of ``hipdnn.ops``, as
cuDNN frontend loads ``cudnn.ops``."""
from .causal_conv1d import causal_conv1d, causal_conv1d_backward

__all__ = ["causal_conv1d", "causal_conv1d_backward"]
