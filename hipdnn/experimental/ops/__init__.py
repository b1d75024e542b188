"""cuDNN frontend's ``cudnn.experimental.ops``: PyTorch operators that run hipdnn graphs.
``scaled_dot_product_attention`` (forward and backward, graphs cached per problem);
``moe_grouped_matmul`` is named but not in hipdnn yet (it raises
FeatureNotSupportedError)."""
from .moe_grouped_matmul import moe_grouped_matmul
from .sdpa import scaled_dot_product_attention

__all__ = ["scaled_dot_product_attention", "moe_grouped_matmul"]
