"""The C test executables (tests/c/test_*.c), one pytest case each.

They are found in $HIPDNN_BUILD_DIR/tests/c (default: <repo>/build/tests/c).  `make test`
always builds them, so an empty or missing folder is a failure, not a skip.
"""
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build"))
C_TEST_DIR = BUILD_DIR / "tests" / "c"
TIMEOUT_S = 600


def _executables():
    if not C_TEST_DIR.is_dir():
        return []
    return sorted(
        p for p in C_TEST_DIR.iterdir()
        if p.name.startswith("test_") and p.is_file() and os.access(p, os.X_OK)
    )


def _sources():
    return sorted(p.stem for p in (REPO / "tests" / "c").glob("test_*.c"))


_FOUND = _executables()


def test_every_c_test_was_built():
    assert _FOUND, (
        f"no C test executables in {C_TEST_DIR}; build them first "
        f"(cmake --build {BUILD_DIR}) or point HIPDNN_BUILD_DIR at the build folder"
    )
    missing = sorted(set(_sources()) - {p.name for p in _FOUND})
    assert not missing, f"sources without an executable in {C_TEST_DIR}: {missing}"


@pytest.mark.parametrize("exe", _FOUND or [None], ids=lambda p: p.name if p else "none-built")
def test_c_executable(exe):
    assert exe is not None, f"no C test executables in {C_TEST_DIR}"
    env = dict(os.environ)
    env.pop("HIPDNN_PLUGIN_DIR", None)  # each test chooses its plugin folders itself
    env.pop("HIPDNN_LOG_FILE", None)
    try:
        proc = subprocess.run(
            [str(exe)], cwd=str(C_TEST_DIR), env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, timeout=TIMEOUT_S, check=False,
        )
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        pytest.fail(f"{exe.name} ran past {TIMEOUT_S} s\n{out}")
    out = proc.stdout.decode("utf-8", "replace")
    lines = [ln for ln in out.splitlines() if ln.strip()]
    summary = lines[-1] if lines else ""
    assert proc.returncode == 0, (
        f"{exe.name} exited with {proc.returncode}"
        f"{' (signal %d)' % -proc.returncode if proc.returncode < 0 else ''}\n{out}"
    )
    assert summary.endswith(" failed") and " passed, " in summary, (
        f"{exe.name} did not end with 'N passed, N failed'\n{out}"
    )
    passed, failed = (int(x.split()[0]) for x in summary.split(", "))
    assert failed == 0 and passed > 0, out
