"""Checks run before anything else in ``import hipdnn``, so that the usual first-contact
failures (an unbuilt checkout, an interpreter without NumPy) say what to do instead of
surfacing as a circular-import or a bare ``No module named 'numpy'``."""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys

MIN_PYTHON = (3, 11)  # the extension uses the 3.11 limited API (docs/architecture.md)


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def _source_checkout() -> str | None:
    """The repository root when the package is imported from a checkout, else None."""
    root = os.path.dirname(_package_dir())
    markers = ("CMakeLists.txt", "Makefile", "setup.py")
    return root if all(os.path.isfile(os.path.join(root, m)) for m in markers) else None


def _how_to_build() -> str:
    root = _source_checkout()
    if root is not None:
        return f"run `make build` in {root}"
    return f"reinstall hipdnn (`pip install <hipdnn source>`); {_package_dir()} lacks it"


def check_environment(package: str) -> None:
    """Raise ImportError with a remedy if hipdnn cannot work in this interpreter.

    Order matters: the interpreter's version first, then the extension (a checkout must be
    built before anything else helps), then NumPy.
    """
    if sys.version_info < MIN_PYTHON:
        raise ImportError(
            f"hipdnn needs Python >= {MIN_PYTHON[0]}.{MIN_PYTHON[1]}; {sys.executable} is "
            f"{sys.version.split()[0]}: use /usr/bin/python3 (Debian's) or a venv made from it")

    if importlib.util.find_spec(f"{package}._C") is None:
        raise ImportError(f"hipdnn's C extension is not built: {_how_to_build()}")
    try:
        importlib.import_module(f"{package}._C")
    except ImportError as exc:
        # Typically lib/libhipdnn_backend.so missing beside _C (a partial copy or install).
        raise ImportError(
            f"hipdnn's C extension did not load ({exc}): {_how_to_build()}") from exc

    try:
        import numpy  # noqa: F401  (only to check that it imports)
    except ImportError as exc:
        raise ImportError(
            f"numpy not found for {sys.executable} ({exc}): use /usr/bin/python3 (Debian's) "
            "or a venv made from it with --system-site-packages") from exc
