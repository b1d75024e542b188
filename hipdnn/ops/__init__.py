"""cuDNN frontend's ``cudnn.ops``: operators called on tensors directly, outside a graph.
``causal_conv1d`` is named but not in hipdnn yet (it raises FeatureNotSupportedError).
Loaded on first use of ``hipdnn.ops``, as cuDNN frontend loads ``cudnn.ops``."""
from .causal_conv1d import causal_conv1d

__all__ = ["causal_conv1d"]
