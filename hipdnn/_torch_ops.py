"""What the PyTorch operators of ``hipdnn.experimental.ops.sdpa`` and
``hipdnn.ops.causal_conv1d`` share: one hipdnn handle per torch device, set to the
caller's current stream at each call, and workspaces as torch tensors.  Imported only
where torch is installed."""
from __future__ import annotations

from typing import Any, Callable, Dict

import torch

import hipdnn

_handles: Dict[Any, Any] = {}


def handle(device: Any) -> Any:
    """One hipdnn handle per torch device, on the caller's current stream (so hipdnn's
    work is ordered with torch's)."""
    h = _handles.get(device)
    if h is None:
        h = _handles[device] = hipdnn.create_handle()
    h.set_stream(torch.cuda.current_stream(device).cuda_stream)
    return h


def workspace(device: Any) -> Callable[[int], Any]:
    """A plan's workspace of ``size`` bytes on ``device``, allocated by torch."""
    return lambda size: torch.empty(size, dtype=torch.uint8, device=device)
