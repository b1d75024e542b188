"""cuDNN frontend's ``moe_grouped_matmul`` (the grouped matmul of mixture-of-experts
layers), by name only: hipdnn has no grouped-matmul engine yet, so a call raises
FeatureNotSupportedError (a cudnnGraphNotSupportedError and a NotImplementedError), as
code written for cuDNN expects of a graph it cannot run."""
from __future__ import annotations

from typing import Any, Optional

from hipdnn.errors import FeatureNotSupportedError

__all__ = ["moe_grouped_matmul"]


def moe_grouped_matmul(token: Any, weight: Any, first_token_offset: Any,
                       token_index: Optional[Any] = None, token_ks: Optional[Any] = None,
                       mode: str = "none", top_k: int = 1) -> Any:
    """Grouped matmul over experts (cuDNN frontend's arguments).  Not in hipdnn yet:
    always raises FeatureNotSupportedError naming it."""
    raise FeatureNotSupportedError("moe_grouped_matmul", {
        "moe_grouped_matmul": f"grouped (mixture-of-experts) matmul, mode '{mode}', is not "
                              "supported by hipdnn yet"})
