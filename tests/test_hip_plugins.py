"""The HIP engine's two builds on whatever machine the tests run on: each compiler present
built its plugin, each plugin exports only the plugin ABI, and a plugin whose GPU is absent
declines to load with its reason while the reference engine keeps working.  (Normal CI:
nvcc and hipcc, no GPU.)"""
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import hipdnn

ENGINES = Path(hipdnn.__file__).resolve().parent / "lib" / "hipdnn_plugins" / "engines"
CUDA_PLUGIN = ENGINES / "libhipdnn_hip_cuda.so"
ROCM_PLUGIN = ENGINES / "libhipdnn_hip_rocm.so"


def have_nvcc():
    return bool(shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc") or
                (os.environ.get("CUDA_HOME") and
                 os.path.exists(os.path.join(os.environ["CUDA_HOME"], "bin", "nvcc"))))


def have_hipcc():
    return bool(shutil.which("hipcc") or os.path.exists("/opt/rocm/bin/hipcc"))


def turned_off(which):
    """Whether the build under test was configured with HIPDNN_WITH_<which>=OFF (the
    sanitizer builds leave the ROCm plugin out: see the Makefile's SAN_CMAKE)."""
    cache = Path(os.environ.get("HIPDNN_BUILD_DIR", "build")) / "CMakeCache.txt"
    return cache.is_file() and f"HIPDNN_WITH_{which}:STRING=OFF" in cache.read_text()


def test_each_compiler_present_built_its_plugin():
    if have_nvcc() and not turned_off("CUDA"):
        assert CUDA_PLUGIN.is_file(), f"nvcc is here but {CUDA_PLUGIN} was not built"
    if have_hipcc() and not turned_off("ROCM"):
        assert ROCM_PLUGIN.is_file(), f"hipcc is here but {ROCM_PLUGIN} was not built"


@pytest.mark.parametrize("plugin", [CUDA_PLUGIN, ROCM_PLUGIN], ids=["cuda", "rocm"])
def test_plugins_export_only_the_plugin_abi(plugin):
    if not plugin.is_file():
        pytest.skip(f"{plugin.name} not built here")
    if not shutil.which("nm"):
        pytest.skip("no nm")
    out = subprocess.run(["nm", "-D", "--defined-only", str(plugin)], capture_output=True,
                         text=True, check=True).stdout
    names = [line.split()[-1] for line in out.splitlines() if line.strip()]
    assert names and all(n.startswith("hipdnn") for n in names), \
        [n for n in names if not n.startswith("hipdnn")][:10]


def test_hip_plugins_load_or_decline_with_their_reason():
    skipped = {Path(p).name: why for p, why in hipdnn.skipped_engine_plugins()}
    names = [e.name for e in hipdnn.engines()]
    rt = hipdnn.device_runtime()
    present = [p for p in (CUDA_PLUGIN, ROCM_PLUGIN) if p.is_file()]
    if not present:
        pytest.skip("no HIP engine plugin was built here")
    if rt.name == "none":
        assert "hip" not in names
        for p in present:
            why = skipped.get(p.name)
            assert why, f"{p.name} neither loaded nor skipped"
            vendor = "CUDA" if p == CUDA_PLUGIN else "ROCm"
            assert why.startswith(f"declined to load: hip ({vendor} build): no {vendor} device") \
                or why.startswith("could not open: "), why
    else:  # a GPU: one build registers "hip", the other (if built) declines or clashes
        assert names.count("hip") == 1, names


def test_the_reference_engine_keeps_working():
    x = np.linspace(-2, 2, 24, dtype=np.float32).reshape(4, 6)
    with hipdnn.Graph(preferred_engine="reference_cpu") as g:
        g.relu(x)
    assert g.engine_name == "reference_cpu"
    assert np.array_equal(g(x), np.maximum(x, 0))
