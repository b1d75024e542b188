# %% [markdown]
# # 60 · ONNX models through hipdnn-ep, the ONNX Runtime execution provider
#
# `libhipdnn_ep.so` is a **plugin execution provider** for ONNX Runtime (ORT), built with
# hipdnn when ORT's headers were fetched (docs/onnxruntime.md). An application that uses
# ORT registers the library at run time; ORT then offers it the model's nodes and
# hipdnn-ep:
#
# 1. **claims** the nodes hipdnn can run (Conv, MatMul, Gemm, the elementwise ops, Softmax,
#    the norms, reductions, reshapes; float32), saying in the log why it leaves any other;
# 2. **fuses** each connected set of claimed nodes into one node, run as one hipdnn graph
#    (so Conv → Relu is one graph, its intermediate virtual);
# 3. leaves the rest to ORT's own CPU execution provider.
#
# This notebook makes a small model with `onnx` (Debian's python3-onnx), runs it through
# hipdnn-ep and through ORT's CPU EP alone, and compares both with a float64 NumPy
# reference. It drives ORT through the `onnxruntime` Python package where that is
# installed (1.23 or later), and otherwise through `ort_run`, the small C program over
# ORT's C API that the build makes for hipdnn's tests (`tests/ort/ort_run.c`; Debian has
# no onnxruntime package).

# %%
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

try:
    import hipdnn
except ImportError:  # a built checkout that is not installed: use the one we are in
    sys.path.insert(0, str(Path.cwd().parent))
    import hipdnn

print("hipdnn", hipdnn.__version__, "from", Path(hipdnn.__file__).parent)
rng = np.random.default_rng(60)


def rand(*shape, dtype=np.float32):
    """Uniform magnitudes in [0.1, 1) with random signs: never zero, never tiny."""
    values = rng.uniform(0.1, 1.0, shape) * rng.choice([-1.0, 1.0], shape)
    return values.astype(dtype)


def check(name, got, ref, tol):
    """Every element finite and within tol + tol * |ref| of the float64 reference."""
    got = np.asarray(got, np.float64)
    assert got.shape == ref.shape, f"{name}: shape {got.shape}, reference {ref.shape}"
    assert np.isfinite(got).all(), f"{name}: elements not finite"
    err = np.abs(got - ref)
    ratio = float((err / (tol + tol * np.abs(ref))).max())
    print(f"{name}: max |error| {err.max():.2e}, {ratio:.2g} of the allowed bound (tol {tol:g})")
    assert ratio <= 1.0, f"{name}: out of tolerance {tol}"

# %% [markdown]
# ## What is here to run it
#
# The EP library sits beside hipdnn's backend, in the package's `lib/`. The runner is the
# `onnxruntime` package if it can load plugin EPs, else `ort_run` from the build folder
# (`$HIPDNN_BUILD_DIR`, or `../build`). Only where neither exists, or the EP was not built,
# do the cells below skip, saying why.

# %%
EP_LIB = Path(hipdnn.__file__).parent / "lib" / "libhipdnn_ep.so"
build_dir = Path(os.environ.get("HIPDNN_BUILD_DIR") or Path.cwd().parent / "build")
ORT_RUN = build_dir / "tests" / "ort" / "ort_run"

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    onnx = None

try:
    import onnxruntime as ort
    if not hasattr(ort, "register_execution_provider_library"):
        print(f"onnxruntime {ort.__version__} has no plugin EP API (1.23 or later has)")
        ort = None
except ImportError:
    ort = None

RUNNER, SKIP = None, None
if onnx is None:
    SKIP = "the onnx package is not installed (apt-get install python3-onnx)"
elif not EP_LIB.exists():
    SKIP = f"{EP_LIB} is not built (ONNX Runtime's headers were not fetched at configure time)"
elif ort is not None:
    RUNNER = "onnxruntime (Python)"
elif ORT_RUN.exists():
    RUNNER = f"ort_run ({ORT_RUN})"
else:
    SKIP = (f"neither the onnxruntime Python package nor {ORT_RUN} is here "
            "(ort_run is built when ONNX Runtime was fetched at configure time)")
print("runner:", RUNNER or "none, skipping: " + SKIP)

# %% [markdown]
# ## Running a model both ways
#
# One function runs a model through ORT with hipdnn-ep registered (`ep="hipdnn"`) or with
# the CPU EP alone (`ep="cpu"`). With `no_fallback`, ORT is told that nothing may run on
# its CPU EP (`session.disable_cpu_ep_fallback`): session creation then fails unless
# hipdnn-ep claimed every node. `feeds` maps each input to a list of arrays, one per run
# of the same session. It returns the outputs of each run, which EP ran each node
# (`ort_run` reports it) and hipdnn-ep's own log lines.

# %%
def run_model(model, feeds, ep, no_fallback=False):
    work = Path(tempfile.mkdtemp(prefix="hipdnn-ort-"))
    try:
        path = work / "model.onnx"
        onnx.save(model, str(path))
        outputs = [o.name for o in model.graph.output]
        runs = max(len(v) for v in feeds.values())
        if ort is not None:
            return _run_python(path, feeds, ep, no_fallback, outputs, runs)
        cmd = [str(ORT_RUN), "--model", str(path), "--out-dir", str(work), "--ep", ep,
               "--ep-lib", str(EP_LIB), "--log-level", "1", "--opt-level", "disable"]
        if no_fallback:
            cmd.append("--no-fallback")
        for name, arrays in feeds.items():
            for i, a in enumerate(arrays):
                np.save(work / f"{name}_{i}.npy", a)
                cmd += ["--input", f"{name}={work / f'{name}_{i}.npy'}"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        log = re.findall(r"hipdnn-ep: .*", p.stderr)
        if p.returncode != 0:
            raise RuntimeError(f"ort_run ({ep}) failed: " + p.stderr.strip().splitlines()[-1])
        assigned = [line.split(" ", 4)[1:] for line in p.stdout.splitlines()
                    if line.startswith("assigned ")]
        results = [[np.load(work / f"{o}.{r}.npy") for o in outputs] for r in range(runs)]
        return results, assigned, log
    finally:
        shutil.rmtree(work)


def _run_python(path, feeds, ep, no_fallback, outputs, runs):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if ep == "cpu":
        session = ort.InferenceSession(str(path), sess_options=so,
                                       providers=["CPUExecutionProvider"])
    else:
        ort.register_execution_provider_library("hipdnn", str(EP_LIB))
        devices = [d for d in ort.get_ep_devices() if d.ep_name == "hipdnn"]
        assert devices, "hipdnn-ep offered no device"
        so.add_provider_for_devices(devices, {"log_level": "info"})
        if no_fallback:
            so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
        try:
            session = ort.InferenceSession(str(path), sess_options=so)
        except Exception as e:
            ort.unregister_execution_provider_library("hipdnn")
            raise RuntimeError(f"onnxruntime ({ep}) failed: {e}") from e
    try:
        results = [session.run(outputs, {k: v[min(r, len(v) - 1)] for k, v in feeds.items()})
                   for r in range(runs)]
    finally:
        del session
        if ep != "cpu":
            ort.unregister_execution_provider_library("hipdnn")
    return results, None, []  # the Python API does not report node assignments


def show(assigned, log):
    if assigned is None:
        print("(node assignments are reported by ort_run only)")
    else:
        for ep_name, subgraph, op, node in assigned:
            print(f"  {node:<10} {op:<18} -> {ep_name} (ORT subgraph {subgraph})")
    for line in log:
        print(" ", line)

# %% [markdown]
# ## A small CNN classifier
#
# Conv (3 → 8 channels, 3×3, padding 1, with bias) → Relu → GlobalAveragePool → Flatten →
# Gemm (8 → 10) → Softmax, with a symbolic batch size. hipdnn-ep takes every node (the
# pool as a reduction over the image), so the whole model is one fused node, one hipdnn
# graph.

# %%
if SKIP:
    print("skipped:", SKIP)
else:
    W, Bc = rand(8, 3, 3, 3), rand(8)
    G, Gb = rand(8, 10), rand(10)
    nodes = [helper.make_node("Conv", ["x", "W", "Bc"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool"),
             helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "G", "Gb"], ["logits"], name="fc"),
             helper.make_node("Softmax", ["logits"], ["y"], axis=-1, name="softmax")]
    graph = helper.make_graph(
        nodes, "small_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
        initializer=[numpy_helper.from_array(a, n)
                     for n, a in (("W", W), ("Bc", Bc), ("G", G), ("Gb", Gb))])
    cnn = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    cnn.ir_version = 8
    onnx.checker.check_model(cnn)
    print(helper.printable_graph(cnn.graph))

# %% [markdown]
# The float64 reference, from the same float32 weights:

# %%
def cnn_reference(x):
    x64 = x.astype(np.float64)
    xp = np.pad(x64, ((0, 0), (0, 0), (1, 1), (1, 1)))
    w64 = W.astype(np.float64)
    c = sum(np.einsum("nchw,kc->nkhw", xp[:, :, i:i + 16, j:j + 16], w64[:, :, i, j])
            for i in range(3) for j in range(3)) + Bc.astype(np.float64)[None, :, None, None]
    pooled = np.maximum(c, 0.0).mean(axis=(2, 3))
    logits = pooled @ G.astype(np.float64) + Gb.astype(np.float64)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)

# %% [markdown]
# ### Run it: hipdnn-ep, then ORT's CPU EP
#
# Two batches through one session: 2 images, then 5. hipdnn-ep builds a plan per fused
# node and input shape, the first time it meets them, and keeps it for the session, so
# the second batch size builds a second plan (the log says so).
#
# Tolerances: the hipdnn-ep result against ORT's CPU EP uses the bounds of hipdnn's own
# ORT tests (relative 2e-4, absolute 2e-5: ORT computes in float32); each against the
# float64 reference uses 1e-4, the loosest of the ops in the model.

# %%
if SKIP:
    print("skipped:", SKIP)
else:
    batches = [rand(2, 3, 16, 16), rand(5, 3, 16, 16)]
    got, assigned, log = run_model(cnn, {"x": batches}, ep="hipdnn")
    print(f"hipdnn-ep via {RUNNER}:")
    show(assigned, log)
    want, _, _ = run_model(cnn, {"x": batches}, ep="cpu")

    for b, x in enumerate(batches):
        (y_hipdnn,), (y_cpu,) = got[b], want[b]
        print(f"batch of {len(x)}:")
        np.testing.assert_allclose(y_hipdnn, y_cpu, rtol=2e-4, atol=2e-5)
        check("  hipdnn-ep vs float64", y_hipdnn, cnn_reference(x), 1e-4)
        check("  ORT CPU EP vs float64", y_cpu, cnn_reference(x), 1e-4)
        assert np.allclose(y_hipdnn.sum(axis=1), 1.0, atol=1e-5)   # a softmax per row

    if assigned is not None:
        mine = {node for ep_name, _, _, node in assigned if ep_name == "hipdnn"}
        assert mine == {"conv", "relu", "pool", "flatten", "fc", "softmax"}, assigned
        assert len({sub for ep_name, sub, _, _ in assigned if ep_name == "hipdnn"}) == 1
        assert any("plan 2 built" in line for line in log)   # the second batch size

# %% [markdown]
# ## A model hipdnn-ep runs whole
#
# Conv → Add (a residual input) → Relu: every node is claimed, all three become one fused
# node, one hipdnn graph. With the CPU fallback disabled, ORT would refuse the session if
# any node were left to it: the CNN above runs so too, and a model with a CumSum (no
# hipdnn op computes a running sum) shows the refusal.

# %%
if SKIP:
    print("skipped:", SKIP)
else:
    W2 = rand(4, 4, 3, 3)
    nodes = [helper.make_node("Conv", ["x", "W2"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Add", ["c", "skip"], ["s"], name="residual"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    graph = helper.make_graph(
        nodes, "conv_add_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 8, 8]),
         helper.make_tensor_value_info("skip", TensorProto.FLOAT, ["N", 4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, 8, 8])],
        initializer=[numpy_helper.from_array(W2, "W2")])
    block = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    block.ir_version = 8
    onnx.checker.check_model(block)

    x, skip = rand(3, 4, 8, 8), rand(3, 4, 8, 8)
    got, assigned, log = run_model(block, {"x": [x], "skip": [skip]}, ep="hipdnn",
                                   no_fallback=True)
    show(assigned, log)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    w64 = W2.astype(np.float64)
    conv = sum(np.einsum("nchw,kc->nkhw", xp[:, :, i:i + 8, j:j + 8], w64[:, :, i, j])
               for i in range(3) for j in range(3))
    check("conv + skip -> relu", got[0][0], np.maximum(conv + skip, 0.0), 1e-5)
    if assigned is not None:
        assert {ep_name for ep_name, _, _, _ in assigned} == {"hipdnn"}
        assert len({sub for _, sub, _, _ in assigned}) == 1          # one fused node

    (y_whole,), = run_model(cnn, {"x": [batches[0]]}, ep="hipdnn", no_fallback=True)[0]
    check("the CNN without the CPU fallback", y_whole, cnn_reference(batches[0]), 1e-4)

    axis = numpy_helper.from_array(np.array(1, np.int64), "axis")
    running = helper.make_model(
        helper.make_graph([helper.make_node("CumSum", ["x", "axis"], ["y"], name="cumsum")],
                          "running_sum",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])],
                          initializer=[axis]),
        opset_imports=[helper.make_opsetid("", 17)])
    running.ir_version = 8
    try:
        run_model(running, {"x": [rand(2, 5)]}, ep="hipdnn", no_fallback=True)
    except RuntimeError as e:
        print("a CumSum with the CPU fallback disabled:", e)
        assert "fallback" in str(e).lower()
    else:
        raise AssertionError("a model with a node hipdnn-ep does not claim ran without fallback")
