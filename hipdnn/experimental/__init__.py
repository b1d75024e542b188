"""cuDNN frontend's ``cudnn.experimental``: operators for PyTorch built on hipdnn graphs
(``ops.scaled_dot_product_attention``).  Importing it needs no PyTorch; calling the
operators does."""
from . import ops

__all__ = ["ops"]
