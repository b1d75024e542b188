"""What hipdnn's cuDNN-frontend-style operators (``hipdnn.experimental.ops.sdpa``,
``hipdnn.ops.causal_conv1d``) share: a graph built once per problem, kept in the operator's
cache under a key of its operands (shape, strides, data type, device), and run on the
caller's arrays by uid.  Free of PyTorch: operands are anything ``pygraph.tensor_like`` and
``execute`` take.  Imports are absolute, as the operators' own (cuDNN frontend code may
load them through ``sys.modules['cudnn']``)."""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, Mapping, NamedTuple, Optional, Tuple

import numpy as np

from hipdnn import _C
from hipdnn.device import DeviceArray
from hipdnn.enums import data_type, heur_mode
from hipdnn.pygraph import Tensor, pygraph

Key = Tuple[Any, ...]
Workspace = Optional[Callable[[int], Any]]


class CachedGraph(NamedTuple):
    """A built graph and the workspace its plan needs, in bytes."""
    graph: pygraph
    workspace_size: int


def describe(array: Any) -> Tuple[Tuple[int, ...], Tuple[int, ...], str, str]:
    """(shape, strides in elements, data type, device) of a torch tensor, a DeviceArray or
    a NumPy array: what a cached graph was built for."""
    stride = getattr(array, "stride", None)
    if callable(stride):  # torch: stride() in elements
        return tuple(array.shape), tuple(stride()), str(array.dtype), str(array.device)
    if isinstance(array, DeviceArray):
        return (tuple(array.shape), tuple(array.element_strides),
                data_type(array.data_type).name, f"device {array.device}")
    a = np.asarray(array)
    return (a.shape, tuple(s // a.itemsize for s in a.strides), a.dtype.str, "host")


def operands_key(operands: Mapping[str, Any]) -> Key:
    """Every operand by name, described: which optional ones are present included."""
    return tuple((name, describe(a)) for name, a in operands.items())


def inputs(g: pygraph, operands: Mapping[str, Any], uids: Mapping[str, int],
           names: Iterable[str]) -> Dict[str, Tensor]:
    """Graph inputs made from the arrays of ``names`` that operands holds (tensor_like: a
    device array keeps the graph on device engines), under the uids execute uses."""
    return {name: g.tensor_like(operands[name], name=name).set_uid(uids[name])
            for name in names if name in operands}


def output(t: Tensor, name: str, uid: int, array: Any, dtype: data_type) -> None:
    """Makes ``t`` the output ``array`` receives: its dims, strides and data type."""
    shape, strides, _, _ = describe(array)
    t.set_name(name).set_uid(uid).set_output(True).set_data_type(dtype)
    t.set_dim(list(shape)).set_stride(list(strides))


def finish(g: pygraph) -> CachedGraph:
    """cuDNN frontend's build steps; GraphNotSupportedError lists each engine's reason."""
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([heur_mode.A, heur_mode.FALLBACK])
    g.check_support()
    g.build_plans()
    return CachedGraph(g, g.get_workspace_size())


def run(cache: Dict[Key, CachedGraph], key: Key, build: Callable[[], CachedGraph],
        handle: Optional[_C.Handle], operands: Mapping[str, Any], uids: Mapping[str, int],
        workspace: Workspace) -> bool:
    """Runs the cached graph for ``key`` (built first on a miss) on the operands; True on
    a cache hit.  ``workspace(size)`` gives the plan's workspace (None: hipdnn's own)."""
    entry = cache.get(key)
    hit = entry is not None
    if entry is None:
        entry = cache[key] = build()
    space = workspace(entry.workspace_size) if workspace and entry.workspace_size else None
    entry.graph.execute({uids[name]: a for name, a in operands.items()}, space, handle=handle)
    return hit
