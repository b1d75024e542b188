"""Process-wide state: plugin search paths, loaded engines, the default handle, logging.

The plugin registry is global to the process and fixed by the first handle: call
``set_engine_plugin_paths`` before anything creates a handle.
"""
from __future__ import annotations

import os
import threading
from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple, Union

from . import _C
from .enums import log_level, memory_space, plugin_loading_mode

__all__ = [
    "Handle",
    "EngineInfo",
    "default_handle",
    "engines",
    "engine_id",
    "set_engine_plugin_paths",
    "loaded_engine_plugin_paths",
    "skipped_engine_plugins",
    "HeuristicPluginInfo",
    "heuristic_plugins",
    "plugin_search_paths",
    "set_log_callback",
    "set_log_level",
    "version",
]

Handle = _C.Handle
PathLike = Union[str, "os.PathLike[str]"]

_lock = threading.Lock()
_default: Optional[_C.Handle] = None


def _after_fork_in_child() -> None:
    # Another thread may have held _lock when the process forked (making the default
    # handle loads the plugins: a long hold); that thread does not exist in the child.
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
_user_paths: List[Tuple[List[str], int]] = []


class EngineInfo(NamedTuple):
    """One loaded engine."""

    id: int  # FNV-1a 64 of the name, unsigned
    name: str
    plugin_path: str
    memory_space: memory_space
    priority: int
    is_fallback: bool


def version() -> str:
    """The backend's version, e.g. ``"0.2.0"``."""
    return _C.version()


def default_handle() -> _C.Handle:
    """The process-wide handle used when a graph is given none (created on first use)."""
    global _default
    if _default is not None:
        return _default
    # Made outside the lock: the first handle loads the plugins, and the log messages that
    # brings reach a callback as the call returns; a callback that asks for the default
    # handle (on this thread or another) must not wait on a lock held around it.  Threads
    # racing here each make one; the first stored is kept.
    handle = _C.Handle()
    with _lock:
        if _default is None:
            _default = handle
        return _default


def engines() -> List[EngineInfo]:
    """Every engine of every loaded plugin, sorted by name (loads the plugins if needed)."""
    return [EngineInfo(eid, name, path, memory_space(space), prio, bool(fb))
            for eid, name, path, space, prio, fb in _C.engines()]


def engine_id(name: str) -> int:
    """The id of a loaded engine by name; ``ValueError`` listing the engines otherwise."""
    for e in engines():
        if e.name == name:
            return e.id
    known = ", ".join(e.name for e in engines()) or "none"
    raise ValueError(f"no loaded engine is named '{name}' (loaded: {known})")


def set_engine_plugin_paths(paths: Sequence[PathLike],
                            mode: int = plugin_loading_mode.ADDITIVE) -> None:
    """Where engine plugins are searched: plugin files or folders of them.  ADDITIVE
    searches them as well as the default folder, ABSOLUTE only them.  Relative paths
    resolve against the folder of libhipdnn_backend.so.  Only before the first handle of
    the process (else ``NotSupportedError``)."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        raise TypeError("set_engine_plugin_paths: expected a list of paths, got a single path "
                        "(wrap it in a list)")
    strs = [os.fspath(p) for p in paths]
    _C.set_engine_plugin_paths(strs, int(mode))
    _user_paths.append((strs, int(mode)))


def loaded_engine_plugin_paths() -> List[str]:
    """Paths of the plugins that loaded (loads them if needed)."""
    return _C.loaded_engine_plugin_paths()


def skipped_engine_plugins() -> List[Tuple[str, str]]:
    """``[(path, reason)]`` for each plugin the loader skipped."""
    out = []
    for entry in _C.skipped_engine_plugins():
        path, sep, reason = entry.partition(": ")
        out.append((path, reason) if sep else (entry, ""))
    return out


class HeuristicPluginInfo(NamedTuple):
    """One heuristic plugin the loader found (docs/engine_selection.md)."""

    path: str
    name: str  # "" when skipped
    state: str  # "active" (it ranks under heur modes A and B), "loaded" or "skipped"
    reason: str  # why it was skipped, else ""


def heuristic_plugins() -> List[HeuristicPluginInfo]:
    """The heuristic plugins found (hipdnn_plugins/heuristics, or
    $HIPDNN_HEURISTIC_PLUGIN_PATH): the active one, the others loaded, and those skipped
    with the reason (loads them if needed)."""
    out = []
    for entry in _C.heuristic_plugins():
        path, name, state = (entry.split("\t", 2) + ["", ""])[:3]
        state, _, reason = state.partition(": ")
        out.append(HeuristicPluginInfo(path, name, state, reason))
    return out


def _backend_lib_dir() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")


def plugin_search_paths() -> List[str]:
    """The folders and files searched for plugins, as the loader resolves them: the
    default folder (or $HIPDNN_PLUGIN_DIR) unless an ABSOLUTE call replaced it, then the
    paths given to ``set_engine_plugin_paths`` in this process."""
    lib = _backend_lib_dir()
    env = os.environ.get("HIPDNN_PLUGIN_DIR")
    default = env if env else os.path.join(lib, "hipdnn_plugins", "engines")
    out = [default]
    for paths, mode in _user_paths:
        resolved = [p if os.path.isabs(p) else os.path.join(lib, p) for p in paths]
        out = resolved if mode == plugin_loading_mode.ABSOLUTE else out + resolved
    return out


_LEVEL_NAMES = {log_level.ERROR: "error", log_level.WARN: "warn", log_level.INFO: "info"}


def set_log_callback(callback: Optional[Callable[[log_level, str], object]]) -> None:
    """``callback(level, message)`` receives the backend's log messages (delivered on the
    thread of the next hipdnn call); ``None`` sends them back to stderr or
    $HIPDNN_LOG_FILE."""
    if callback is None:
        _C.set_log_callback(None)
        return
    if not callable(callback):
        raise TypeError("set_log_callback: expected a callable or None, got "
                        f"{type(callback).__name__}")

    user = callback

    def deliver(level: int, message: str) -> None:
        try:
            lv: Union[log_level, int] = log_level(level)
        except ValueError:  # a level newer than this layer: passed on as the number
            lv = level
        user(lv, message)  # type: ignore[arg-type]

    _C.set_log_callback(deliver)


def set_log_level(level: Union[int, str]) -> None:
    """``"off"``, ``"error"``, ``"warn"``, ``"info"`` or a ``log_level``; overrides
    $HIPDNN_LOG_LEVEL."""
    if isinstance(level, str):
        try:
            level = log_level[level.upper().replace("WARNING", "WARN")]
        except KeyError:
            raise ValueError(f"set_log_level: '{level}' is not off, error, warn or info") from None
    _C.set_log_level(int(level))
