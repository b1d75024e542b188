"""hipdnn-ep through ONNX Runtime's Python API, as docs/onnxruntime.md shows it:
register_execution_provider_library, the EP's devices (get_ep_devices), a session made with
add_provider_for_devices, the result against ORT's own CPU EP and a float64 NumPy reference.

- On hipdnn-ep's CPU device, with CPU fallback off: the whole model runs on hipdnn's
  reference engine.  Needs no GPU.
- On its GPU device (offered when hipdnn's device runtime has a GPU), with fallback on:
  the nodes the GPU engine runs (Add, Relu, LayerNormalization, Softmax) are one fused node
  on the GPU, the ones it does not (MatMul, Conv) stay with ORT's CPU EP, and hipdnn-ep's
  log, read from the process's stderr, says so.  Where no GPU device is offered this skips,
  saying why (or fails, under tools/gpu_check.sh's HIPDNN_TEST_REQUIRE_GPU=1).

Needs the onnxruntime Python package (the GPU machine has it; Debian does not package it,
so CI drives the same EP through ORT's C API in tests/test_ort_ep.py, the GPU device over a
fake driver) and a built libhipdnn_ep.so.  Marked `gpu` so that tools/gpu_check.sh, the GPU
machine's one command, runs it.  The models are tests/data/*.onnx, written by
tests/data/make_ort_models.py, whose seeds the references here redraw."""
import os
import re

import numpy as np
import pytest

import hipdnn
from conftest import GPU_ENGINE, skip_or_fail_without_gpu

pytestmark = pytest.mark.gpu

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
EP_LIB = os.path.join(os.path.dirname(os.path.abspath(hipdnn.__file__)), "lib", "libhipdnn_ep.so")


def conv_add_relu_reference(x):
    """conv_add_relu.onnx in float64: its weights are those make_ort_models.py writes."""
    rng = np.random.default_rng(7)
    w = rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32).astype(np.float64)
    b = rng.uniform(-1, 1, (1, 4, 1, 1)).astype(np.float32).astype(np.float64)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((1, 4, 8, 8))
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + 8, j:j + 8], w[:, :, i, j])
    return np.maximum(y + b, 0)


def ln_softmax_block_reference(x):
    """ln_softmax_block.onnx in float64 (weights redrawn from seed 11, in the same order)."""
    rng = np.random.default_rng(11)
    w = rng.uniform(-1, 1, (16, 16)).astype(np.float32).astype(np.float64)
    b = rng.uniform(-1, 1, (16,)).astype(np.float32).astype(np.float64)
    gamma = rng.uniform(0.5, 1.5, (16,)).astype(np.float32).astype(np.float64)
    beta = rng.uniform(-1, 1, (16,)).astype(np.float32).astype(np.float64)
    r = np.maximum(x.astype(np.float64) @ w + b, 0)
    n = (r - r.mean(-1, keepdims=True)) / np.sqrt(r.var(-1, keepdims=True) + 1e-5) * gamma + beta
    e = np.exp(n - n.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


# model file, its input's shape, reference, nodes the GPU engine runs, nodes left to ORT
MODELS = {
    "ln_softmax_block": ("ln_softmax_block.onnx", (2, 5, 16), ln_softmax_block_reference,
                         ["MatMul 'proj'", "Add 'bias'", "Relu 'relu'",
                          "LayerNormalization 'ln'", "Softmax 'softmax'"], []),
    "conv_add_relu": ("conv_add_relu.onnx", (1, 3, 8, 8), conv_add_relu_reference,
                      ["Conv 'conv'", "Add 'add'", "Relu 'relu'"], []),
}


@pytest.fixture
def ort():
    """onnxruntime with hipdnn-ep registered as "hipdnn"; unregistered afterwards."""
    ort = pytest.importorskip("onnxruntime", reason="the onnxruntime Python package is not "
                              "installed (tests/test_ort_ep.py drives hipdnn-ep through the C API)")
    if not os.path.exists(EP_LIB):
        pytest.skip(f"{EP_LIB} is not built (ONNX Runtime's headers were not fetched)")
    if not hasattr(ort, "register_execution_provider_library"):
        pytest.skip(f"onnxruntime {ort.__version__} has no plugin EP API (1.23 or later has)")
    ort.register_execution_provider_library("hipdnn", EP_LIB)
    try:
        yield ort
    finally:
        ort.unregister_execution_provider_library("hipdnn")


def hipdnn_devices(ort, kind):
    """hipdnn-ep's OrtEpDevices of one kind ("cpu" or "gpu"), told by the metadata it sets."""
    return [d for d in ort.get_ep_devices()
            if d.ep_name == "hipdnn" and dict(d.ep_metadata).get("hipdnn.device") == kind]


def cpu_ep_result(ort, path, x):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(path, sess_options=so,
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def test_a_session_registered_from_python_runs_the_model_on_hipdnn(ort):
    """The CPU device, fallback off: every node is hipdnn's."""
    devices = hipdnn_devices(ort, "cpu")
    assert len(devices) == 1, "hipdnn-ep offered no CPU device, or several"
    path = os.path.join(DATA, "conv_add_relu.onnx")
    so = ort.SessionOptions()
    so.add_provider_for_devices(devices, {"log_level": "warning"})
    so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")  # all on hipdnn
    session = ort.InferenceSession(path, sess_options=so)
    x = np.random.default_rng(3).uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)
    x_before = x.copy()
    got = session.run(None, {"x": x})[0]
    want = conv_add_relu_reference(x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, cpu_ep_result(ort, path, x), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(x, x_before)
    del session


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_gpu_device_runs_what_the_gpu_engine_supports(ort, capfd, name):
    """The GPU device, fallback on: the GPU engine's nodes (all of these models', the MatMul
    and the Conv with their epilogues included) are one fused node on the GPU, anything
    else would stay with ORT's CPU EP; two runs, each equal to the CPU EP and float64."""
    devices = hipdnn_devices(ort, "gpu")
    if not devices:
        rt = hipdnn.device_runtime()
        skip_or_fail_without_gpu(f"hipdnn-ep offered no GPU device (device runtime "
                                 f"'{rt.name}': {rt.reason or 'no reason given'})")
    assert len(devices) == 1, f"hipdnn-ep offered {len(devices)} GPU devices"
    assert dict(devices[0].ep_metadata).get("hipdnn.runtime") in ("cuda", "hip")
    fname, shape, reference, on_gpu, on_cpu = MODELS[name]
    path = os.path.join(DATA, fname)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # as written
    so.log_severity_level = 1  # INFO: hipdnn-ep's claims and plans, through ORT's logger
    so.add_provider_for_devices(devices, {"log_level": "info"})
    capfd.readouterr()
    session = ort.InferenceSession(path, sess_options=so)
    assert session.get_providers()[0] == "hipdnn"
    rng = np.random.default_rng(5)
    for run in range(2):
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        x_before = x.copy()
        got = session.run(None, {"x": x})[0]
        want = reference(x)
        assert got.shape == want.shape, f"run {run}"
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=f"run {run}")
        np.testing.assert_allclose(got, cpu_ep_result(ort, path, x), rtol=1e-4, atol=1e-5,
                                   err_msg=f"run {run}")
        np.testing.assert_array_equal(x, x_before)
    del session
    log = capfd.readouterr().err
    assert re.search(r"hipdnn-ep: created on the GPU \d+ \((cuda|hip)\)", log), log[-4000:]
    for node in on_cpu:
        assert f"node {node} (domain '') stays with ORT: no engine for the GPU takes it" in log, \
            log[-4000:]
    assert (f"claimed {len(on_gpu)} of {len(on_gpu) + len(on_cpu)} nodes, in 1 fused node, "
            f"on the GPU") in log, log[-4000:]
    for node in on_gpu:
        assert f"node {node} (domain '') stays with ORT" not in log
    # one plan, built on the GPU engine, for the fused node's one input shape
    plans = re.findall(r"plan \d+ built on engine (\S+) \((\d+) ONNX nodes", log)
    assert plans == [(GPU_ENGINE, str(len(on_gpu)))], log[-4000:]
