"""``python -m hipdnn cache [info|clear]``: hipdnn's on-disk caches (docs/engine_selection.md).

plans:   the engine configs autotuning chose (the backend's plan cache,
         $HIPDNN_CACHE_DIR/plans), counted and cleared by the backend under its lock;
kernels: the hip engine's compiled kernels ($HIPDNN_KERNEL_CACHE_DIR, else
         $HIPDNN_CACHE_DIR/kernels), one ``*.kernel`` file each, and
         ``compiler.facts``: what the run-time compiler is, so that a process whose
         kernels all come from the cache need not load it (plugins/hip/rtc_facts.c).
Both live under $HIPDNN_CACHE_DIR (default $XDG_CACHE_HOME/hipdnn, else ~/.cache/hipdnn);
HIPDNN_CACHE=0 turns both off."""
from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional, Tuple

from . import _C


def kernel_dir() -> Tuple[Optional[Path], str]:
    """The hip engine's kernel cache folder as plugins/hip/kernel_cache.c finds it, or
    (None, why there is none)."""
    env = os.environ.get("HIPDNN_KERNEL_CACHE_DIR", "")
    if env == "off":
        return None, "HIPDNN_KERNEL_CACHE_DIR=off"
    if env:
        return Path(env), ""
    if os.environ.get("HIPDNN_CACHE") == "0":
        return None, "HIPDNN_CACHE=0"
    root = os.environ.get("HIPDNN_CACHE_DIR", "")
    if root:
        return Path(root) / "kernels", ""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg.startswith("/"):
        return Path(xdg) / "hipdnn" / "kernels", ""
    home = os.environ.get("HOME", "")
    if home.startswith("/"):
        return Path(home) / ".cache" / "hipdnn" / "kernels", ""
    return None, "neither HIPDNN_CACHE_DIR, XDG_CACHE_HOME nor HOME is set"


def _kernel_files(folder: Optional[Path]) -> List[Path]:
    if folder is None or not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.kernel") if p.is_file())


def info() -> List[str]:
    """One line per cache: its folder, entries and bytes, or why it is off."""
    where, entries, size = _C.plan_cache_info()
    lines = [f"plans:   {where}: {entries} entries, {size} bytes" if entries >= 0
             else f"plans:   off ({where})"]
    folder, why = kernel_dir()
    files = _kernel_files(folder)
    lines.append(f"kernels: {folder}: {len(files)} entries, "
                 f"{sum(p.stat().st_size for p in files)} bytes" if folder is not None
                 else f"kernels: off ({why})")
    return lines


def clear() -> List[str]:
    """Removes every entry of both caches; one line per cache saying how many."""
    where, entries, _size = _C.plan_cache_info()
    lines = [f"plans:   removed {_C.plan_cache_clear()} from {where}" if entries >= 0
             else f"plans:   off ({where})"]
    folder, why = kernel_dir()
    removed = 0
    for p in _kernel_files(folder):
        try:
            p.unlink()
            removed += 1
        except FileNotFoundError:  # another process removed it first
            pass
    if folder is not None:  # not an entry: the next compiler load writes it again
        (folder / "compiler.facts").unlink(missing_ok=True)
    lines.append(f"kernels: removed {removed} from {folder}" if folder is not None
                 else f"kernels: off ({why})")
    return lines
