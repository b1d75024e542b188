"""hipdnn: graph-based deep-learning primitives.

Two levels of Python API over the C backend (``hipdnn._C``):

* ``hipdnn.pygraph`` mirrors cuDNN frontend's ``cudnn.pygraph`` (same names, keywords
  and steps), so code ports by changing the import;
* ``hipdnn.Graph`` is the friendly layer: NumPy arrays in, NumPy arrays out.

See docs/python.md.
"""
from ._bootstrap import check_environment as _check_environment

_check_environment(__name__)  # an unbuilt checkout or a Python without NumPy says what to do

from . import _C  # noqa: E402
from .arrays import from_bfloat16, to_bfloat16
from .enums import (build_plan_policy, convolution_mode, data_type, heur_mode, log_level,
                    memory_space, plugin_loading_mode, pointwise_mode)
from .errors import GraphNotSupportedError, HipdnnError, InvalidGraphError, NotSupportedError
from .graph import Graph
from .pygraph import Tensor, pygraph
from .runtime import (EngineInfo, Handle, default_handle, engines, loaded_engine_plugin_paths,
                      plugin_search_paths, set_engine_plugin_paths, set_log_callback,
                      set_log_level, skipped_engine_plugins, version)

__version__ = _C.__version__

__all__ = [
    "pygraph", "Tensor", "Graph", "Handle", "EngineInfo",
    "data_type", "heur_mode", "build_plan_policy", "convolution_mode", "pointwise_mode",
    "memory_space", "plugin_loading_mode", "log_level",
    "HipdnnError", "InvalidGraphError", "NotSupportedError", "GraphNotSupportedError",
    "to_bfloat16", "from_bfloat16",
    "default_handle", "engines", "set_engine_plugin_paths", "loaded_engine_plugin_paths",
    "skipped_engine_plugins", "plugin_search_paths", "set_log_callback", "set_log_level",
    "version", "__version__",
]
