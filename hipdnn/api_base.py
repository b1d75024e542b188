"""cuDNN frontend's ``cudnn.api_base`` helpers that code outside its kernel wrappers uses:
the once-per-process warning that an API is experimental.

cuDNN frontend's module also holds the base classes of its CuTe DSL kernel wrappers
(tensor descriptors, compile and execute steps over CUTLASS); hipdnn has no such kernels,
so only the warning helpers are here.
"""
from __future__ import annotations

import logging
import threading
from typing import Set

__all__ = ["warn_experimental_api_once"]

_warned: Set[str] = set()
_warned_lock = threading.Lock()


def warn_experimental_api_once(logger: logging.Logger, api_name: str) -> None:
    """Logs "<api_name> is an experimental API" as a warning on ``logger`` the first time
    this process asks for ``api_name``; later calls for the same name log nothing.  Safe
    from several threads."""
    with _warned_lock:
        if api_name in _warned:
            return
        _warned.add(api_name)
    logger.warning("%s is an experimental API", api_name)


def _reset_experimental_api_warning_registry() -> None:
    """Forgets which APIs were warned about, so that the next call for each warns again
    (for tests)."""
    with _warned_lock:
        _warned.clear()
