"""hipdnn-ep through ONNX Runtime's Python API, as docs/onnxruntime.md shows it:
register_execution_provider_library, the EP's devices, a session with CPU fallback off, the
result against ORT's own CPU EP and a float64 NumPy reference.

Needs the onnxruntime Python package (the GPU machine has it; Debian does not package it,
so CI drives the same EP through ORT's C API in tests/test_ort_ep.py) and a built
libhipdnn_ep.so.  Marked `gpu` so that tools/gpu_check.sh, the GPU machine's one command,
runs it; it needs no GPU itself (hipdnn-ep offers the CPU today)."""
import os

import numpy as np
import pytest

import hipdnn

pytestmark = pytest.mark.gpu

MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "conv_add_relu.onnx")
EP_LIB = os.path.join(os.path.dirname(os.path.abspath(hipdnn.__file__)), "lib", "libhipdnn_ep.so")


def reference(x):
    """The model's float64 result: its weights are those make_ort_models.py writes."""
    rng = np.random.default_rng(7)
    w = rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32).astype(np.float64)
    b = rng.uniform(-1, 1, (1, 4, 1, 1)).astype(np.float32).astype(np.float64)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((1, 4, 8, 8))
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + 8, j:j + 8], w[:, :, i, j])
    return np.maximum(y + b, 0)


def test_a_session_registered_from_python_runs_the_model_on_hipdnn():
    ort = pytest.importorskip("onnxruntime", reason="the onnxruntime Python package is not "
                              "installed (tests/test_ort_ep.py drives hipdnn-ep through the C API)")
    if not os.path.exists(EP_LIB):
        pytest.skip(f"{EP_LIB} is not built (ONNX Runtime's headers were not fetched)")
    if not hasattr(ort, "register_execution_provider_library"):
        pytest.skip(f"onnxruntime {ort.__version__} has no plugin EP API (1.23 or later has)")
    ort.register_execution_provider_library("hipdnn", EP_LIB)
    try:
        devices = [d for d in ort.get_ep_devices() if d.ep_name == "hipdnn"]
        assert devices, "hipdnn-ep offered no device"
        so = ort.SessionOptions()
        so.add_provider_for_devices(devices, {"log_level": "warn"})
        so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")  # all on hipdnn
        session = ort.InferenceSession(MODEL, sess_options=so)
        x = np.random.default_rng(3).uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)
        got = session.run(None, {"x": x})[0]
        cpu = ort.InferenceSession(MODEL, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        want = reference(x)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got, cpu, rtol=1e-5, atol=1e-5)
        del session
    finally:
        ort.unregister_execution_provider_library("hipdnn")
