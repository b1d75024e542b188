"""One libhipdnn_ep.so on every ONNX Runtime from 1.24 on (docs/onnxruntime.md, "ONNX
Runtime versions").  tools/fetch_ort.sh fetches the newest ORT (1.30) and the oldest
hipdnn-ep supports (1.24.1); tests/ort/ort_run and tests/ort/ep_version_check are linked
against the first, their twins in tests/ort/oldest/ against the second (an application
links one ORT release), and both load the same hipdnn-ep, built once against one header set.

On each runtime: the OrtApi version negotiation against posed releases (older than 1.24:
refused, naming both versions; newer than the headers: the headers' version, nothing newer
asked for); a model claimed whole, equal to that runtime's CPU EP and to a float64
reference, the log naming the runtime and the OrtApi version in use; a model with two
subgraphs (If), both fused on 1.30 and one on 1.24 (whose fused-node names would repeat),
the other left to ORT with the reason logged; the GPU device over the fake driver; the
plugin ABI (tests/ort/ep_abi_check) on the CPU and the fake GPU.
Marked slow: ONNX's node tests on the oldest runtime, on the CPU device, must claim and
pass as many tests as docs/onnxruntime.md's table says for 1.30.
Skipped, saying why, where the runners are not built or run through the Python API.
"""
import re
import subprocess

import numpy as np
import pytest

import test_ort_ep
from test_ort_ep import (BUILD_DIR, FLOAT, REPO, RUNNER, TensorProto, helper,  # noqa: F401
                         model, rand, rng, run, runner_available)  # rng, runner_available: fixtures

ORT_DIR = BUILD_DIR / "tests" / "ort"
RUNTIMES = {"newest": ORT_DIR, "oldest": ORT_DIR / "oldest"}
TOL = dict(rtol=1e-5, atol=1e-6)


def runtime(which, monkeypatch=None):
    """The ORT version that `which`'s programs are linked against, read from
    ep_version_check's first line; with monkeypatch, test_ort_ep.run() uses that ort_run."""
    if RUNNER != "c":
        pytest.skip("the runtimes are chosen by the C runners' links: HIPDNN_ORT_RUNNER=c")
    check = RUNTIMES[which] / "ep_version_check"
    if not check.is_file():
        pytest.skip(f"{check} is not built (tools/fetch_ort.sh fetches both runtimes)")
    p = subprocess.run([str(check)], capture_output=True, text=True, timeout=60)
    found = re.search(r"the ORT linked is (\S+)", p.stdout)
    assert found, p.stdout + p.stderr
    if monkeypatch:
        monkeypatch.setattr(test_ort_ep, "ORT_RUN", RUNTIMES[which] / "ort_run")
    return found.group(1)


@pytest.mark.parametrize("which", RUNTIMES)
def test_version_negotiation_against_posed_releases(which):
    version = runtime(which)
    assert version.startswith("1.24." if which == "oldest" else "1.30.")
    p = subprocess.run([str(RUNTIMES[which] / "ep_version_check")], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and "all ok" in p.stdout, p.stdout + p.stderr
    assert ("hipdnn-ep: ONNX Runtime 1.23.2 (OrtApi version 23) is too old: hipdnn-ep needs "
            "ONNX Runtime 1.24 or later (OrtApi version 24)") in p.stdout


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("which", RUNTIMES)
def test_a_model_is_claimed_whole_on_each_runtime(tmp_path, rng, monkeypatch, which):
    version = runtime(which, monkeypatch)
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
             helper.make_node("Add", ["h", "b"], ["a"], name="add"),
             helper.make_node("Relu", ["a"], ["r"], name="relu"),
             helper.make_node("Softmax", ["r"], ["y"], name="softmax", axis=-1)]
    w, b = rand(rng, 8, 5), rand(rng, 5)
    m = model(nodes, [("x", [3, 8])], [("y", None)], [("W", w), ("b", b)])
    x = rand(rng, 3, 8)
    got, assigned, log = run(tmp_path, m, {"x": x}, no_fallback=True, log_level=1, device="cpu")
    assert sorted(a[3] for a in assigned) == ["add", "mm", "relu", "softmax"]
    assert {a[0] for a in assigned} == {"hipdnn"}
    assert (f"hipdnn-ep: ONNX Runtime {version}: OrtApi version 24 in use (built with version "
            "24; ONNX Runtime 1.24 or later runs it)") in log
    want = softmax(np.maximum(x.astype(np.float64) @ w + b, 0))
    np.testing.assert_allclose(got["y"][0], want, **TOL)
    cpu, _, _ = run(tmp_path, m, {"x": x}, ep="cpu")
    np.testing.assert_allclose(got["y"][0], cpu["y"][0], **TOL)


def if_model():
    """y = If(c, then: relu(sigmoid(x)), else: relu(tanh(x))): two subgraphs, each fused."""
    def branch(name, op):
        nodes = [helper.make_node(op, ["x"], [f"t_{name}"], name=f"{name}_{op.lower()}"),
                 helper.make_node("Relu", [f"t_{name}"], [f"o_{name}"], name=f"{name}_relu")]
        return helper.make_graph(nodes, name, [], [
            helper.make_tensor_value_info(f"o_{name}", FLOAT, [2, 3])])
    node = helper.make_node("If", ["c"], ["y"], name="if", then_branch=branch("then", "Sigmoid"),
                            else_branch=branch("else", "Tanh"))
    graph = helper.make_graph([node], "if", [
        helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        helper.make_tensor_value_info("x", FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", FLOAT, [2, 3])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("which", RUNTIMES)
def test_subgraphs_fuse_on_each_runtime_as_far_as_its_names_allow(tmp_path, rng, monkeypatch,
                                                                  which):
    """ORT 1.24 numbers fused nodes from 0 in each GetCapability call, so the second
    branch's fused node would take the first's name and session creation would fail:
    there hipdnn-ep fuses in one call per session and says why it leaves the other."""
    version = runtime(which, monkeypatch)
    x = (rand(rng, 2, 3) - 0.6).astype(np.float32)
    feeds = {"c": [np.array(True), np.array(False)], "x": [x, x]}
    got, assigned, log = run(tmp_path, if_model(), feeds, log_level=1, device="cpu")
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(got["y"][0], np.maximum(1 / (1 + np.exp(-x64)), 0), **TOL)
    np.testing.assert_allclose(got["y"][1], np.maximum(np.tanh(x64), 0), **TOL)
    mine = {a[3] for a in assigned if a[0] == "hipdnn"}
    then, other = {"then_sigmoid", "then_relu"}, {"else_tanh", "else_relu"}
    left = (f"claimed 0 of 2 nodes: ONNX Runtime {version} would give fused nodes of this "
            "graph the names of earlier ones (1.25 and later do not), so it stays with ORT")
    if which == "newest":
        assert mine == then | other, assigned
        assert "would give fused nodes" not in log
    else:
        assert mine in (then, other), assigned
        assert left in log, log[-3000:]


@pytest.mark.parametrize("which", RUNTIMES)
def test_the_gpu_device_on_each_runtime(tmp_path, rng, monkeypatch, which):
    """Allocator, data transfer, sync streams and the fused node on the fake GPU."""
    runtime(which, monkeypatch)
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["n"], name="ln", axis=-1),
             helper.make_node("Softmax", ["n"], ["y"], name="softmax", axis=-1)]
    g, b = rand(rng, 16), rand(rng, 16)
    m = model(nodes, [("x", [4, 16])], [("y", None)], [("g", g), ("b", b)])
    x = rand(rng, 4, 16)
    got, assigned, _ = run(tmp_path, m, {"x": x}, no_fallback=True, device="gpu")
    assert {a[0] for a in assigned} == {"hipdnn"}, assigned
    x64 = x.astype(np.float64)
    mu, var = x64.mean(-1, keepdims=True), x64.var(-1, keepdims=True)
    want = softmax((x64 - mu) / np.sqrt(var + 1e-5) * g + b)
    np.testing.assert_allclose(got["y"][0], want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("which", RUNTIMES)
def test_plugin_abi_on_each_runtime(which, device):
    """tests/ort/ep_abi_check linked against each runtime; over the fake driver, the GPU
    device's allocator, data transfer, sync streams and Memcpy kernel registry."""
    runtime(which)
    env = test_ort_ep.fake_gpu_env(EP_ABI_EXPECT_GPU="1") if device == "gpu" else None
    p = subprocess.run([str(RUNTIMES[which] / "ep_abi_check")], capture_output=True, text=True,
                       timeout=60, env=env)
    assert p.returncode == 0 and "all ok" in p.stdout, p.stdout + p.stderr


@pytest.mark.slow  # a process per ONNX test: about a minute on two cores
def test_node_tests_on_the_oldest_runtime_pass_as_on_the_newest():
    """On the CPU device, every claimed test passes, and as many are claimed as
    docs/onnxruntime.md's table (ORT 1.30, kept current by test_ort_ep_node_tests.py) says:
    the same tests, where on 1.24 the loss functions' second inlined function stays with ORT
    (fewer op types claimed).  The fake GPU's run on 1.24.1 gives the same (402 of 402) but
    costs another minute; the GPU device's ORT side is checked above."""
    device = "cpu"
    import argparse

    from test_ort_ep_node_tests import DATA, need_suite  # puts tests/ort on sys.path

    import node_tests
    runtime("oldest")
    need_suite(device)
    args = argparse.Namespace(build=BUILD_DIR, data=DATA, filter="", jobs=2, device=device,
                              runner=RUNTIMES["oldest"] / "ort_run")
    results = node_tests.run_suite(args, device)
    bad = [f"{name} {status} [{' '.join(claimed)}]: {detail}"
           for name, status, detail, claimed, _ops in results
           if claimed and status in ("failed", "error")]
    assert not bad, f"{len(bad)} claimed tests fail on the oldest runtime:\n" + "\n".join(bad)
    doc = (REPO / "docs" / "onnxruntime.md").read_text(encoding="utf-8")
    label = "CPU device" if device == "cpu" else "fake GPU"
    want = re.search(rf"^- {label}: .*$", node_tests.doc_block(doc) or "", re.M)
    now = re.search(rf"^- {label}: .*$", node_tests.table({device: results}), re.M)
    assert want and now and now.group(0) == want.group(0), (now, want)
