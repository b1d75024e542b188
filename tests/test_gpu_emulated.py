"""The GPU tests (`-m gpu`) on a machine without a GPU: run in a subprocess over the fake
CUDA driver (build/tests/fake_cuda/libcuda.so.1) with the HIP engine's host emulation
(build/tests/emulated/libhip_emulated.so, engine "hip_emulated", on that "device" memory).

This runs everything a real GPU run does except the kernel launch and the real driver:
the program compiler, the kernels' indexing and numerics (pw_exec.h and rw_exec.h, compiled
for the host, the threads of a row-wise kernel run phase by phase), the plugin's enqueue path, the backend's device runtime and memory-space checks,
DeviceArray, DLPack / __cuda_array_interface__ in both directions, and Graph staging.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
FAKE_DRIVER = BUILD_DIR / "tests" / "fake_cuda"
EMULATED = BUILD_DIR / "tests" / "emulated" / "libhip_emulated.so"


# One subprocess a file, so that xdist's workers share them (whole, the run held one worker
# for a minute under ASan while the other had finished).
GPU_FILES = ["test_gpu_pointwise.py", "test_gpu_device.py", "test_gpu_reduction.py",
             "test_gpu_norm.py", "test_gpu_training.py", "test_gpu_matmul.py",
             "test_gpu_tf32.py", "test_gpu_conv.py", "test_gpu_sdpa.py",
             "test_gpu_sdpa_backward.py",
             "test_gpu_sdpa_decode.py", "test_gpu_sdpa_op.py",
             "test_gpu_graph_capture.py", "test_gpu_capture_elsewhere.py",
             "test_gpu_transformer_block.py",
             "test_gpu_graph_wrapper_torch.py", "test_gpu_causal_conv1d.py"]
# GPU files with nothing for the emulation to run, and why
REAL_GPU_ONLY = {"test_gpu_kernel_cache.py": "whether a process loads NVRTC: the emulation "
                                             "has no run-time compiler"}


def run_emulated(name, marks):
    """Runs the tests of tests/<name> that `marks` selects over the fake driver on the
    emulated engine; fails with the run's output unless they pass."""
    assert (FAKE_DRIVER / "libcuda.so.1").is_file(), f"build the test targets ({FAKE_DRIVER})"
    assert EMULATED.is_file(), f"build the test targets ({EMULATED})"
    if os.environ.get("HIPDNN_TEST_FAKE_GPU"):
        pytest.skip("already inside the emulated run")
    env = dict(os.environ)
    env.update({
        "LD_LIBRARY_PATH": str(FAKE_DRIVER) + os.pathsep + env.get("LD_LIBRARY_PATH", ""),
        "HIPDNN_DEVICE_RUNTIME": "cuda",
        "HIPDNN_EMULATED_MEMORY": "device",
        "HIPDNN_TEST_FAKE_GPU": "1",
        "HIPDNN_BUILD_DIR": str(BUILD_DIR),
    })
    env.pop("HIPDNN_PLUGIN_DIR", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-m", marks, "-p", "no:cacheprovider",
         str(REPO / "tests" / name)],
        cwd=str(REPO), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    out = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == 0, out[-6000:]
    summary = out.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary, summary
    # the emulated engine really ran them: next to nothing may be skipped (PyTorch / CuPy)
    assert "error" not in summary, summary


@pytest.mark.parametrize("name", GPU_FILES)
def test_gpu_tests_pass_on_the_emulated_engine_over_a_fake_driver(name):
    # the tests marked large (many tiles and waves: the same code paths as the small ones,
    # minutes on the emulation) run in make test-slow, below
    run_emulated(name, os.environ.get("HIPDNN_TEST_EMULATED_MARK", "gpu and not large"))


# the files with tests marked large, but those whose large tests need a real GPU
LARGE_REAL_GPU_ONLY = {"test_gpu_transformer_block.py": "its large block is a real GPU's "
                                                        "size, skipped on the emulation"}
LARGE_FILES = [n for n in GPU_FILES if "mark.large" in (REPO / "tests" / n).read_text()
               and n not in LARGE_REAL_GPU_ONLY]


@pytest.mark.slow
@pytest.mark.parametrize("name", LARGE_FILES)
def test_large_gpu_tests_pass_on_the_emulated_engine(name):
    run_emulated(name, "gpu and large")


def test_every_gpu_file_is_run_on_the_emulated_engine():
    here = sorted(p.name for p in (REPO / "tests").glob("test_gpu_*.py")
                  if p.name != Path(__file__).name)
    assert sorted(GPU_FILES + list(REAL_GPU_ONLY)) == here
