"""cuDNN frontend's module-level names, mapped onto hipdnn's, so that code written for
``import cudnn`` runs with ``import hipdnn as cudnn``: version gates, handles and streams,
the ``graph`` / ``jit`` / ``graph_cache`` helpers, the exception and ``empty_like``.

hipdnn's own version stays ``hipdnn.__version__`` / ``hipdnn.version()``;
``backend_version()`` reports the cuDNN feature level hipdnn implements, so that a gate
like ``if cudnn.backend_version() >= 90500`` takes the branch hipdnn can run.
"""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Dict, Iterator, List, Optional, ParamSpec, Tuple, TypeVar, Union

import numpy as np
from numpy.typing import NDArray

from . import _C
from .enums import data_type, heur_mode
from ._pygraph.frontend_options import (DeviceProperties, KernelCache, create_device_properties,
                                        create_kernel_cache)
from .errors import GraphNotSupportedError
from .pygraph import Tensor, pygraph

__all__ = [
    "CUDNN_FEATURE_LEVEL",
    "backend_version",
    "backend_version_string",
    "create_handle",
    "destroy_handle",
    "set_stream",
    "get_stream",
    "cudnnGraphNotSupportedError",
    "empty_like",
    "graph",
    "jit",
    "graph_cache",
    "create_kernel_cache",
    "create_device_properties",
    "KernelCache",
    "DeviceProperties",
]

#: The cuDNN release whose graph API hipdnn's operations match (conv_fprop with pre/post
#: padding, matmul with broadcast batch dims and mixed input types, the pointwise modes
#: hipdnn has, batchnorm inference, CPU scalars): 9.5.0.  Features gated on later
#: releases (kernel caches, SDPA variants, block scaling) are not in hipdnn.
CUDNN_FEATURE_LEVEL = (9, 5, 0)

#: cuDNN frontend's name for "no engine can run this graph".
cudnnGraphNotSupportedError = GraphNotSupportedError

_P = ParamSpec("_P")
_R = TypeVar("_R")


def backend_version() -> int:
    """The cuDNN feature level hipdnn implements, as cuDNN numbers its versions
    (major * 10000 + minor * 100 + patch: 90500).  Not hipdnn's own version: that is
    ``hipdnn.__version__``."""
    major, minor, patch = CUDNN_FEATURE_LEVEL
    return major * 10000 + minor * 100 + patch


def backend_version_string() -> str:
    """backend_version() as "major.minor.patch" ("9.5.0")."""
    return ".".join(str(v) for v in CUDNN_FEATURE_LEVEL)


def create_handle() -> _C.Handle:
    """A new handle (cuDNN frontend's create_handle); pass it as ``handle=`` to pygraph
    and execute, and release it with destroy_handle()."""
    return _C.Handle()


def _handle(handle: Any, what: str) -> _C.Handle:
    if not isinstance(handle, _C.Handle):
        raise TypeError(f"{what}: expected a handle from hipdnn.create_handle(), got "
                        f"{type(handle).__name__}")
    return handle


def destroy_handle(handle: _C.Handle) -> None:
    """Releases a handle.  Plans built on it keep working through other handles of the
    same device; the handle itself cannot be used again."""
    _handle(handle, "destroy_handle").destroy()


def set_stream(handle: _C.Handle, stream: Optional[int]) -> None:
    """The stream (an int address; 0 or None: the default stream) the handle's work runs
    on.  Host engines run at once and need none."""
    if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int)):
        raise TypeError(f"set_stream: stream must be an int address or None, got "
                        f"{type(stream).__name__}")
    _handle(handle, "set_stream").set_stream(stream or None)


def get_stream(handle: _C.Handle) -> int:
    """The handle's stream as an int address (0: the default stream)."""
    return _handle(handle, "get_stream").get_stream()


def empty_like(tensor: Tensor) -> NDArray[Any]:
    """A new uninitialised NumPy array with the tensor's dims, strides and data type
    (``tensor.empty()``)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"empty_like: expected a hipdnn tensor, got {type(tensor).__name__}")
    return tensor.empty()


def graph_cache(key_fn: Callable[..., Any], maxsize: int = 256
                ) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Decorator: caches what the function returns under ``key_fn(*args, **kwargs)``;
    past ``maxsize`` entries the oldest goes first (as cuDNN frontend's)."""
    if not callable(key_fn):
        raise TypeError(f"graph_cache: key_fn must be callable, got {type(key_fn).__name__}")
    if isinstance(maxsize, bool) or not isinstance(maxsize, int) or maxsize < 1:
        raise ValueError(f"graph_cache: maxsize must be a positive int, got {maxsize!r}")

    def decorator(func: Callable[_P, _R]) -> Callable[_P, _R]:
        cache: Dict[Any, _R] = {}

        @functools.wraps(func)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            key = key_fn(*args, **kwargs)
            if key in cache:
                return cache[key]
            result = func(*args, **kwargs)
            if len(cache) >= maxsize:
                cache.pop(next(iter(cache)))
            cache[key] = result
            return result

        wrapper.cache = cache  # type: ignore[attr-defined]
        return wrapper

    return decorator


def jit(heur_modes: Union[List[int], int] = heur_mode.A, **kwargs: Any
        ) -> Callable[[Callable[_P, Any]], Callable[_P, Tuple[pygraph, List[int]]]]:
    """Decorator for a function returning ``(graph, [tensors])``: builds the graph with
    these heuristics modes unless it already has plans, and returns ``(graph, [uids])``
    (as cuDNN frontend's).  Other keywords are accepted and ignored, as there."""
    modes = list(heur_modes) if isinstance(heur_modes, (list, tuple)) else [heur_modes]

    def decorator(func: Callable[_P, Any]) -> Callable[_P, Tuple[pygraph, List[int]]]:
        @functools.wraps(func)
        def wrapper(*args: _P.args, **kw: _P.kwargs) -> Tuple[pygraph, List[int]]:
            result = func(*args, **kw)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise TypeError(f"jit: {func.__name__} must return (graph, [tensors]), got "
                                f"{type(result).__name__}")
            g, tensors = result
            if not isinstance(g, pygraph):
                raise TypeError(f"jit: {func.__name__} returned {type(g).__name__}, not a "
                                "hipdnn.pygraph")
            if g.get_execution_plan_count() <= 0:
                g.build(modes)
            return g, [t.get_uid() for t in tensors]

        return wrapper

    return decorator


@contextlib.contextmanager
def graph(handle: Optional[_C.Handle] = None, name: str = "cudnn_graph",
          io_data_type: Any = data_type.HALF,
          intermediate_data_type: Any = data_type.FLOAT,
          compute_data_type: Any = data_type.FLOAT) -> Iterator[Tuple[pygraph, List[Any]]]:
    """``with hipdnn.graph(handle) as (g, _):`` gives a new pygraph (cuDNN frontend's
    defaults: io HALF, intermediate and compute FLOAT) and an empty list; used with
    ``jit``, which builds the graph the function returns."""
    yield pygraph(handle=handle, name=name, io_data_type=io_data_type,
                  intermediate_data_type=intermediate_data_type,
                  compute_data_type=compute_data_type), []
