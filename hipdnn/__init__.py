"""hipdnn: graph-based deep-learning primitives.

Two levels of Python API over the C backend (``hipdnn._C``):

* ``hipdnn.pygraph`` mirrors cuDNN frontend's ``cudnn.pygraph`` (same names, keywords
  and steps), so code ports by changing the import;
* ``hipdnn.Graph`` is the friendly layer: NumPy arrays in, NumPy arrays out.

See docs/python.md.
"""
import typing as _typing

from ._bootstrap import check_environment as _check_environment

_check_environment(__name__)  # an unbuilt checkout or a Python without NumPy says what to do

from . import _C  # noqa: E402
from . import bfloat16  # noqa: E402
from .arrays import from_bfloat16, to_bfloat16
from .device import DeviceArray, DeviceRuntime, device_runtime, synchronize
from .enums import (attention_implementation, behavior_note, build_plan_policy,
                    convolution_mode, data_type, diagonal_alignment, heur_mode, knob_type,
                    log_level, memory_space, norm_forward_phase, numerical_note,
                    plugin_loading_mode, pointwise_mode, reduction_mode)
from .enums import padding_mode, resample_mode, reshape_mode
from .errors import (FeatureNotSupportedError, GraphNotSupportedError, HipdnnError,
                     InvalidGraphError, NotSupportedError)
from .graph import Graph
from .pygraph import AutotuneResult, KernelGroup, Tensor, knob, pygraph
from .pygraph import Tensor as tensor
from .runtime import (EngineInfo, Handle, HeuristicPluginInfo, default_handle, engines,
                      heuristic_plugins, loaded_engine_plugin_paths, plugin_search_paths,
                      set_engine_plugin_paths, set_log_callback, set_log_level,
                      skipped_engine_plugins, version)
# cuDNN frontend's module-level names (after .graph: hipdnn.graph is its context manager)
from .compat import (DeviceProperties, KernelCache, backend_version, backend_version_string,
                     create_device_properties, create_handle, create_kernel_cache,
                     cudnnGraphNotSupportedError, destroy_handle, empty_like, get_stream, graph,
                     graph_cache, jit, set_stream)

__version__ = _C.__version__

# cuDNN frontend's kernel APIs for sm_100 GPUs (CuTe DSL kernels it loads lazily, raising
# ImportError without its optional dependencies): hipdnn has no such kernels, so asking for
# one raises that ImportError, which code written for cuDNN frontend already handles.
_CUDNN_KERNEL_APIS = frozenset({"NSA", "grouped_gemm", "discrete_grouped_gemm"})


def _cudnn_kernel_api(name: str) -> bool:
    return name in _CUDNN_KERNEL_APIS or "Sm100" in name or "_sm100" in name


if not _typing.TYPE_CHECKING:  # a module __getattr__ would make every name type-check
    def __getattr__(name: str) -> _typing.Any:
        if name == "ops":  # cuDNN frontend's cudnn.ops, loaded on first use as there
            import importlib
            return importlib.import_module(".ops", __name__)
        if _cudnn_kernel_api(name):
            raise ImportError(f"{name} is one of cuDNN frontend's CuTe DSL kernel APIs for "
                              "sm_100 GPUs; hipdnn has no such kernels (see "
                              "docs/porting_from_cudnn_frontend.md)", name=__name__)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "pygraph", "Tensor", "tensor", "knob", "KernelGroup", "AutotuneResult", "Graph", "Handle",
    "EngineInfo", "data_type", "heur_mode", "build_plan_policy", "convolution_mode",
    "pointwise_mode", "memory_space", "plugin_loading_mode", "log_level",
    "norm_forward_phase", "reduction_mode", "diagonal_alignment", "attention_implementation",
    "knob_type", "behavior_note", "numerical_note",
    "resample_mode", "padding_mode", "reshape_mode",
    "HipdnnError", "InvalidGraphError", "NotSupportedError", "GraphNotSupportedError",
    "FeatureNotSupportedError",
    "cudnnGraphNotSupportedError",
    "backend_version", "backend_version_string", "create_handle", "destroy_handle",
    "set_stream", "get_stream", "graph", "jit", "graph_cache", "empty_like",
    "create_kernel_cache", "create_device_properties", "KernelCache", "DeviceProperties",
    "bfloat16", "to_bfloat16", "from_bfloat16",
    "DeviceArray", "DeviceRuntime", "device_runtime", "synchronize",
    "default_handle", "engines", "set_engine_plugin_paths", "loaded_engine_plugin_paths",
    "skipped_engine_plugins", "heuristic_plugins", "HeuristicPluginInfo", "plugin_search_paths",
    "set_log_callback", "set_log_level",
    "version", "__version__",
]
