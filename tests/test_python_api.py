"""The Python API surface: enums, tensors, inference through getters, build steps, plans,
engine selection, execute, the friendly Graph layer, bfloat16 conversion, the low-level
_C objects, logging and the process-global plugin registry (in subprocesses).

Per-op numerics live in test_conv_fprop.py and friends; the few runs here check what the
API delivers against float64 NumPy references with the tolerances of docs/architecture.md
("Tolerances").
"""
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import hipdnn
from hipdnn import _C

dt = hipdnn.data_type
REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
TEST_PLUGINS = BUILD_DIR / "tests" / "plugins"
POINTWISE_FP32 = 1e-5  # atol = rtol (docs/architecture.md, "Tolerances")
CONV_FP32 = 1e-5


# ---- helpers --------------------------------------------------------------------------

def rand(rng, shape, dtype=np.float32):
    """Random data away from zero (never zeros)."""
    v = rng.uniform(0.25, 1.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return v.astype(dtype)


def poisoned(shape, dtype=np.float32):
    return np.full(shape, np.nan, dtype)


def assert_close(got, ref, tol):
    got = np.asarray(got, np.float64)
    assert np.all(np.isfinite(got)), "output has NaN/inf: not every element was written"
    err = np.abs(got - ref)
    bound = tol + tol * np.abs(ref)
    assert np.all(err <= bound), f"max error {err.max():.3e} exceeds tolerance {tol}"


def conv_ref(x, w, pad):
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    kh, kw = w.shape[2:]
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    return np.einsum("nchwij,kcij->nkhw", win, w.astype(np.float64))


def plugin_file(name):
    path = TEST_PLUGINS / f"lib{name}.so"
    assert path.exists(), (f"test plugin {path} is missing; build the tests "
                           f"(cmake --build {BUILD_DIR}) or set HIPDNN_BUILD_DIR")
    return str(path)




def run_py(code, env=None):
    """Runs code in a fresh interpreter (the plugin registry is process-global)."""
    full_env = dict(os.environ)
    pkg_root = str(Path(hipdnn.__file__).resolve().parents[1])
    full_env["PYTHONPATH"] = pkg_root + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.setdefault("HIPDNN_LOG_LEVEL", "off")
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % (2 ** 32))


def relu_graph(io=dt.FLOAT, shape=(2, 3, 4, 5)):
    g = hipdnn.pygraph(io_data_type=io, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="relu_graph")
    x = g.tensor(name="x", dim=list(shape))
    y = g.relu(input=x, name="r")
    y.set_output(True)
    return g, x, y


# ---- enums ----------------------------------------------------------------------------

def test_data_type_values_follow_hipdnn_h():
    assert {m.name: int(m) for m in dt} == {
        "FLOAT": 0, "DOUBLE": 1, "HALF": 2, "INT8": 3, "INT32": 4, "UINT8": 6,
        "BFLOAT16": 9, "INT64": 10, "BOOLEAN": 11, "FP8_E4M3": 12, "FP8_E5M2": 13,
        "FP8_E8M0": 15, "FP4_E2M1": 16, "NOT_SET": 127}


def test_mode_enums_are_named_as_in_cudnn_frontend():
    assert [m.name for m in hipdnn.heur_mode] == ["A", "B", "FALLBACK", "OPENSOURCE"]
    assert [m.name for m in hipdnn.build_plan_policy] == ["HEURISTICS_CHOICE", "ALL"]
    assert [m.name for m in hipdnn.convolution_mode] == ["CROSS_CORRELATION", "CONVOLUTION"]
    assert int(hipdnn.heur_mode.FALLBACK) == _C.HEUR_MODE_FALLBACK


def test_version_is_the_backend_version():
    assert hipdnn.__version__ == hipdnn.version() == _C.version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", hipdnn.__version__)


# ---- tensors --------------------------------------------------------------------------

def test_tensor_defaults_to_packed_strides_and_io_data_type():
    g = hipdnn.pygraph(io_data_type=dt.HALF, intermediate_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[8, 3, 5, 5])
    assert x.get_dim() == [8, 3, 5, 5]
    assert x.get_stride() == [75, 25, 5, 1]
    assert x.get_data_type() == dt.HALF
    assert x.get_name() == "x"
    assert not x.get_is_virtual() and not x.get_is_pass_by_value()


def test_virtual_tensor_defaults_to_intermediate_data_type():
    g = hipdnn.pygraph(io_data_type=dt.HALF, intermediate_data_type=dt.FLOAT)
    v = g.tensor(name="v", dim=[2, 2], is_virtual=True)
    assert v.get_is_virtual() and v.get_data_type() == dt.FLOAT


def test_explicit_attributes_are_kept():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[8, 3, 5, 5], stride=[75, 1, 15, 3], data_type=dt.HALF, uid=42)
    assert x.get_stride() == [75, 1, 15, 3]
    assert x.get_data_type() == dt.HALF
    assert x.get_uid() == 42


def test_setters_chain_and_getters_read_them_back():
    g = hipdnn.pygraph()
    t = g.tensor(name="a", dim=[1])
    same = (t.set_name("b").set_dim([2, 3]).set_stride([1, 2]).set_data_type(dt.BFLOAT16)
            .set_uid(7).set_is_virtual(True))
    assert same is t
    assert (t.get_name(), t.get_dim(), t.get_stride(), t.get_data_type(), t.get_uid(),
            t.get_is_virtual()) == ("b", [2, 3], [1, 2], dt.BFLOAT16, 7, True)
    assert t.set_output(True) is t and not t.get_is_virtual()


def test_uids_are_assigned_automatically_and_unique():
    g = hipdnn.pygraph()
    ts = [g.tensor(dim=[1]) for _ in range(5)]
    uids = [t.get_uid() for t in ts]
    assert len(set(uids)) == 5 and all(isinstance(u, int) for u in uids)
    assert g.tensors() == ts


def test_auto_uid_clashing_with_an_explicit_uid_is_reassigned_at_build():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[2, 3])            # auto uid 1
    b = g.tensor(name="b", dim=[2, 3], uid=1)     # the user claims uid 1
    y = g.add(a=x, b=b)
    y.set_output(True)
    g.build()
    assert b.get_uid() == 1
    assert len({x.get_uid(), b.get_uid(), y.get_uid()}) == 3


def test_tensor_like_reads_dims_strides_in_elements_and_dtype():
    g = hipdnn.pygraph()
    a = np.zeros((2, 3, 4, 5), np.float16)
    t = g.tensor_like(a, name="a")
    assert (t.get_dim(), t.get_stride(), t.get_data_type()) == ([2, 3, 4, 5], [60, 20, 5, 1],
                                                                dt.HALF)
    nhwc = np.zeros((2, 4, 5, 3), np.float32).transpose(0, 3, 1, 2)
    t = g.tensor_like(nhwc)
    assert t.get_dim() == [2, 3, 4, 5] and t.get_stride() == [60, 1, 15, 3]
    assert t.get_data_type() == dt.FLOAT
    view = np.zeros((4, 10), np.float64)[:, ::2]
    t = g.tensor_like(view)
    assert (t.get_dim(), t.get_stride(), t.get_data_type()) == ([4, 5], [10, 2], dt.DOUBLE)


def test_tensor_like_needs_bfloat16_said_for_uint16_arrays():
    g = hipdnn.pygraph()
    bits = hipdnn.to_bfloat16(np.ones((2, 2), np.float32))
    with pytest.raises(TypeError, match="BFLOAT16"):
        g.tensor_like(bits)
    assert g.tensor_like(bits, data_type=dt.BFLOAT16).get_data_type() == dt.BFLOAT16
    g16 = hipdnn.pygraph(io_data_type=dt.BFLOAT16)  # the graph's io type says so
    assert g16.tensor_like(bits).get_data_type() == dt.BFLOAT16


def test_tensor_like_copies_another_tensor():
    g = hipdnn.pygraph()
    a = g.tensor(name="a", dim=[3, 4], stride=[1, 3], data_type=dt.HALF)
    b = g.tensor_like(a, name="b")
    assert (b.get_dim(), b.get_stride(), b.get_data_type(), b.get_name()) == (
        [3, 4], [1, 3], dt.HALF, "b")
    assert b.get_uid() != a.get_uid()


def test_op_results_are_virtual_until_marked_as_outputs():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    y = g.sigmoid(input=g.tensor(dim=[2]))
    assert y.get_is_virtual() and y.get_dim() == []
    assert y.get_name() == "0::OUT_0"  # cuDNN frontend's name: node index, OUT_0


def test_build_infers_dims_strides_and_dtypes_into_the_getters():
    g = hipdnn.pygraph(io_data_type=dt.HALF, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[8, 16, 32, 32])
    w = g.tensor(name="w", dim=[32, 16, 3, 3])
    conv = g.conv_fprop(image=x, weight=w, padding=[1, 1], name="conv")
    y = g.relu(input=conv, name="relu")
    y.set_output(True)
    g.build_operation_graph()
    assert conv.get_dim() == [8, 32, 32, 32]
    assert conv.get_stride() == [32768, 1024, 32, 1]
    assert conv.get_data_type() == dt.FLOAT   # virtual: intermediate_data_type
    assert y.get_dim() == [8, 32, 32, 32]
    assert y.get_data_type() == dt.HALF       # output: io_data_type


def test_matmul_broadcasts_batch_dims_in_inference():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    a = g.tensor(name="a", dim=[2, 1, 4, 5])
    b = g.tensor(name="b", dim=[3, 5, 6])
    c = g.matmul(A=a, B=b)
    c.set_output(True)
    g.validate()
    assert c.get_dim() == [2, 3, 4, 6]


def test_strided_conv_output_dims():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    y = g.conv_fprop(image=g.tensor(dim=[1, 2, 9, 8]), weight=g.tensor(dim=[4, 2, 3, 2]),
                     pre_padding=[1, 0], post_padding=[2, 0], stride=[2, 3], dilation=[1, 2])
    y.set_output(True)
    g.validate()
    # H: (9 + 1 + 2 - 3) // 2 + 1 = 5;  W: (8 - (2 - 1) * 2 - 1) // 3 + 1 = 2
    assert y.get_dim() == [1, 4, 5, 2]


def test_changing_a_tensor_after_build_needs_a_rebuild():
    g, x, y = relu_graph()
    g.build()
    y.set_data_type(dt.DOUBLE)
    assert y.get_data_type() == dt.DOUBLE
    with pytest.raises(hipdnn.HipdnnError, match="build"):
        g.execute({x: np.ones((2, 3, 4, 5), np.float32), y: np.empty((2, 3, 4, 5))})
    g.build()
    assert y.get_data_type() == dt.DOUBLE


def test_compute_data_type_defaults_to_the_graphs_and_can_be_set_per_op():
    g = hipdnn.pygraph(io_data_type=dt.HALF, compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[4])
    a = g.relu(input=x, name="default")
    b = g.relu(input=a, compute_data_type=dt.DOUBLE, name="double")
    b.set_output(True)
    # Read back from the bytes: the backend gives a deserialized graph's nodes as OPS.
    back = _C.deserialize(g.serialize())
    ops = back.get(_C.ATTR_OPERATIONGRAPH_OPS, _C.TYPE_BACKEND_DESCRIPTOR)
    compute = {o.get(_C.ATTR_OPERATION_NAME_EXT, _C.TYPE_CHAR):
               o.get(_C.ATTR_OPERATION_COMPUTE_TYPE_EXT, _C.TYPE_DATA_TYPE)[0] for o in ops}
    assert compute == {"default": dt.FLOAT, "double": dt.DOUBLE}


def test_python_float_operand_becomes_a_pass_by_value_scalar(rng):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[3, 4])
    y = g.add(a=x, b=0.5, name="shift")
    y.set_output(True)
    scalars = [t for t in g.tensors() if t.get_is_pass_by_value()]
    assert len(scalars) == 1 and scalars[0].get_value() == 0.5
    assert scalars[0].get_dim() == [1]
    g.build()
    xa, ya = rand(rng, (3, 4)), poisoned((3, 4))
    x_before = xa.copy()
    g.execute({x: xa, y: ya})
    assert_close(ya, xa.astype(np.float64) + 0.5, POINTWISE_FP32)
    assert np.array_equal(xa, x_before)


def test_relu_clip_and_slope_parameters(rng):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[64])
    y = g.relu(input=x, negative_slope=0.1, upper_clip=0.5)
    y.set_output(True)
    g.build()
    xa, ya = rand(rng, (64,)), poisoned((64,))
    g.execute({x: xa, y: ya})
    x64 = xa.astype(np.float64)
    ref = np.minimum(np.where(x64 > 0, x64, 0.1 * x64), 0.5)
    assert_close(ya, ref, POINTWISE_FP32)


def test_repr_lists_nodes_with_inputs_outputs_dims_and_dtypes():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, name="net")
    x = g.tensor(name="x", dim=[1, 2, 4, 4])
    w = g.tensor(name="w", dim=[3, 2, 3, 3])
    y = g.relu(input=g.conv_fprop(image=x, weight=w, padding=[1, 1], name="conv1"), name="act")
    y.set_output(True)
    before = repr(g)
    assert "conv_fprop 'conv1'" in before and "not built" in before
    g.build()
    text = repr(g)
    assert "pygraph 'net'" in text
    assert re.search(r"conv_fprop 'conv1': image=x:float32\[1, 2, 4, 4\], "
                     r"weight=w:float32\[3, 2, 3, 3\] -> y=\S+:float32\[1, 3, 4, 4\]", text)
    assert "relu 'act': input=conv1::Y:float32[1, 3, 4, 4] -> y=act::OUT_0:float32[1, 3, 4, 4]" in text
    assert "reference_cpu" in text
    assert "Tensor('x', uid=" in repr(x) and "float32" in repr(x)


# ---- build steps, plans, engines -----------------------------------------------------

def test_build_steps_one_by_one():
    g, x, y = relu_graph()
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([hipdnn.heur_mode.A, hipdnn.heur_mode.FALLBACK])
    g.check_support()
    g.build_plans(hipdnn.build_plan_policy.HEURISTICS_CHOICE)
    assert g.get_execution_plan_count() == 1
    assert g.get_engine_name(0) == "reference_cpu"
    assert g.get_memory_space(0) == hipdnn.memory_space.HOST
    assert g.get_workspace_size() >= 0


def test_build_plans_all_and_execute_plan_at_index(rng):
    g, x, y = relu_graph()
    g.validate()
    g.create_execution_plans([hipdnn.heur_mode.A])
    g.build_plans(hipdnn.build_plan_policy.ALL)
    n = g.get_execution_plan_count()
    assert n == len([e for e in hipdnn.engines() if e.name == "reference_cpu"]) >= 1
    xa, ya = rand(rng, (2, 3, 4, 5)), poisoned((2, 3, 4, 5))
    ws = np.empty(g.get_workspace_size_plan_at_index(n - 1), np.uint8)
    g.execute_plan_at_index({x: xa, y: ya}, ws, n - 1)
    assert_close(ya, np.maximum(xa.astype(np.float64), 0), POINTWISE_FP32)
    with pytest.raises(IndexError, match="out of range"):
        g.execute_plan_at_index({x: xa, y: ya}, ws, n)


def test_support_report_names_every_engine():
    g, _, _ = relu_graph()
    g.validate()
    g.create_execution_plans([hipdnn.heur_mode.A])
    report = g.support_report()
    assert [name for name, _ in report] == [e.name for e in hipdnn.engines()]
    assert dict(report)["reference_cpu"] is None


def test_deselecting_the_only_engine_makes_the_graph_unsupported():
    g, _, _ = relu_graph()
    g.deselect_engines(["reference_cpu"])
    with pytest.raises(hipdnn.GraphNotSupportedError) as info:
        g.build([hipdnn.heur_mode.A])
    assert info.value.reasons["reference_cpu"] == "deselected by the user"
    assert "reference_cpu: deselected by the user" in str(info.value)


def test_preferred_engine_is_used():
    g, _, _ = relu_graph()
    g.set_preferred_engine("reference_cpu")
    g.build()
    assert g.get_engine_name() == "reference_cpu"


def test_execute_keys_may_be_tensors_or_uids(rng):
    g, x, y = relu_graph()
    g.build()
    xa = rand(rng, (2, 3, 4, 5))
    y1, y2 = poisoned((2, 3, 4, 5)), poisoned((2, 3, 4, 5))
    g.execute({x: xa, y: y1}, np.empty(g.get_workspace_size(), np.uint8))
    g.execute({x.get_uid(): xa, y.get_uid(): y2})
    assert np.array_equal(y1, y2)
    assert_close(y1, np.maximum(xa.astype(np.float64), 0), POINTWISE_FP32)


def test_execute_runs_conv_bias_relu_in_place_on_numpy_arrays(rng):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT)
    xa, wa, ba = rand(rng, (2, 4, 6, 6)), rand(rng, (5, 4, 3, 3)), rand(rng, (1, 5, 1, 1))
    x, w, b = g.tensor_like(xa, name="x"), g.tensor_like(wa, name="w"), g.tensor_like(ba, name="b")
    y = g.relu(input=g.add(a=g.conv_fprop(image=x, weight=w, padding=[1, 1]), b=b))
    y.set_output(True)
    g.build([hipdnn.heur_mode.A])
    ya = poisoned((2, 5, 6, 6))
    before = [a.copy() for a in (xa, wa, ba)]
    g.execute({x: xa, w: wa, b: ba, y: ya}, np.full(g.get_workspace_size(), 0xA5, np.uint8))
    ref = np.maximum(conv_ref(xa, wa, 1) + ba.astype(np.float64), 0)
    assert_close(ya, ref, CONV_FP32)
    for a, a0 in zip((xa, wa, ba), before):
        assert np.array_equal(a, a0)


def test_execute_releases_arrays(rng):
    g, x, y = relu_graph()
    g.build()
    xa, ya = rand(rng, (2, 3, 4, 5)), poisoned((2, 3, 4, 5))
    refs = sys.getrefcount(xa), sys.getrefcount(ya)
    for _ in range(20):
        g.execute({x: xa, y: ya})
    with pytest.raises(ValueError):
        g.execute({x: xa, y: np.empty((1,), np.float32)})
    ya.resize((2 * 3 * 4 * 5,))  # fails if a buffer export were still held
    assert (sys.getrefcount(xa), sys.getrefcount(ya)) == refs


def test_graphs_with_their_own_handle():
    h = hipdnn.Handle()
    assert h.get_stream() == 0
    h.set_stream(None)
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, handle=h)
    assert g.handle is h
    x = g.tensor(dim=[3])
    y = g.identity(input=x)
    y.set_output(True)
    g.build()
    xa, ya = np.array([1.5, -2.0, 3.25], np.float32), poisoned((3,))
    g.execute({x: xa, y: ya}, None, handle=h)
    assert np.array_equal(ya, xa)
    # A plan runs through any handle of the device it was built for.
    other = hipdnn.Handle()
    yb = poisoned((3,))
    g.execute({x: xa, y: yb}, None, handle=other)
    assert np.array_equal(yb, xa)


def test_default_handle_is_shared():
    assert hipdnn.default_handle() is hipdnn.default_handle()
    g = hipdnn.pygraph()
    assert g.handle is hipdnn.default_handle()


# ---- friendly Graph layer -------------------------------------------------------------

def test_graph_builds_on_exit_and_is_callable_on_new_inputs(rng):
    x0, w0, b0 = rand(rng, (2, 3, 5, 5)), rand(rng, (4, 3, 3, 3)), rand(rng, (1, 4, 1, 1))
    with hipdnn.Graph(name="fg") as fg:
        y = fg.relu(fg.add(fg.conv_fprop(x0, w0, padding=[1, 1]), b0))
        fg.output(y)
    assert fg.engine_name == "reference_cpu"
    assert [t.get_dim() for t in fg.inputs] == [[2, 3, 5, 5], [4, 3, 3, 3], [1, 4, 1, 1]]
    x1, w1, b1 = rand(rng, (2, 3, 5, 5)), rand(rng, (4, 3, 3, 3)), rand(rng, (1, 4, 1, 1))
    out = fg(x1, w1, b1)
    assert isinstance(out, np.ndarray) and out.shape == (2, 4, 5, 5) and out.dtype == np.float32
    assert_close(out, np.maximum(conv_ref(x1, w1, 1) + b1.astype(np.float64), 0), CONV_FP32)
    again = fg(x1, w1, b1)
    assert again is not out and np.array_equal(again, out)
    first = fg()  # no arguments: the arrays given while building
    assert_close(first, np.maximum(conv_ref(x0, w0, 1) + b0.astype(np.float64), 0), CONV_FP32)


def test_graph_inputs_are_ordered_by_first_use_and_deduplicated(rng):
    a, b = rand(rng, (3, 4)), rand(rng, (3, 4))
    with hipdnn.Graph() as fg:
        fg.mul(fg.add(b, a), b)  # b first; b used twice is one input
    assert len(fg.inputs) == 2
    a1, b1 = rand(rng, (3, 4)), rand(rng, (3, 4))
    out = fg(b1, a1)
    b64, a64 = b1.astype(np.float64), a1.astype(np.float64)
    assert_close(out, (b64 + a64) * b64, POINTWISE_FP32)


def test_graph_returns_outputs_in_marking_order(rng):
    x = rand(rng, (4, 4))
    with hipdnn.Graph() as fg:
        s = fg.mul(x, 2.0)
        fg.output(fg.tanh(s), s)
    got_tanh, got_s = fg(x)
    assert_close(got_s, 2.0 * x.astype(np.float64), POINTWISE_FP32)
    assert_close(got_tanh, np.tanh(2.0 * x.astype(np.float64)), POINTWISE_FP32)


def test_graph_takes_bfloat16_bits_through_input(rng):
    x = rand(rng, (8,))
    bits = hipdnn.to_bfloat16(x)
    with hipdnn.Graph(io_data_type=dt.BFLOAT16) as fg:
        fg.relu(fg.input(bits, data_type=dt.BFLOAT16, name="x"))
    out = fg(bits)
    assert out.dtype == np.uint16
    ref = np.maximum(hipdnn.from_bfloat16(bits).astype(np.float64), 0)
    # pointwise bf16 tolerance (docs/architecture.md, "Tolerances")
    assert_close(hipdnn.from_bfloat16(out), ref, 1e-2)


def test_graph_errors_are_clear(rng):
    x = rand(rng, (2, 2))
    with hipdnn.Graph() as fg:
        fg.relu(x)
    with pytest.raises(TypeError, match="takes 1 input"):
        fg(x, x)
    with pytest.raises(ValueError, match="is built"):
        fg.relu(x)
    unbuilt = hipdnn.Graph()
    with pytest.raises(hipdnn.HipdnnError, match="not built"):
        unbuilt()
    with pytest.raises(ValueError, match="no operations"):
        with hipdnn.Graph():
            pass
    with pytest.raises(ValueError, match=r"variant pack: tensor 'relu\.0::IN_0'"):
        fg(np.ones((2, 3), np.float32))


def test_graph_exposes_its_pygraph():
    with hipdnn.Graph(name="inner") as fg:
        fg.sigmoid(np.ones((2,), np.float32))
    assert isinstance(fg.pygraph, hipdnn.pygraph) and fg.pygraph.name == "inner"
    assert "sigmoid" in repr(fg)


# ---- bfloat16 conversion --------------------------------------------------------------

def test_to_bfloat16_rounds_to_nearest_even():
    one = 1.0
    vals = np.array([one, one + 2 ** -8, one + 3 * 2 ** -8, one + 2 ** -8 + 2 ** -20,
                     -2.0, 0.0, -0.0, 3.4e38, -3.4e38, np.inf, -np.inf], np.float32)
    got = hipdnn.to_bfloat16(vals)
    assert got.dtype == np.uint16 and got.shape == vals.shape
    assert [hex(v) for v in got] == [hex(v) for v in [
        0x3F80, 0x3F80,  # halfway: ties to the even mantissa
        0x3F82,          # halfway, odd below: up
        0x3F81,          # just above halfway: up
        0xC000, 0x0000, 0x8000, 0x7F80, 0xFF80, 0x7F80, 0xFF80]]


def test_to_bfloat16_matches_a_float64_reference_on_random_values(rng):
    x = (rng.standard_normal(10000) * 10.0 ** rng.integers(-30, 30, 10000)).astype(np.float32)
    got = hipdnn.from_bfloat16(hipdnn.to_bfloat16(x)).astype(np.float64)
    # Reference: the two bf16 neighbours of x, picked by exact distance, ties to even.
    bits = x.view(np.uint32).astype(np.uint64)
    lo_bits = (bits >> 16) << 16
    lo = lo_bits.astype(np.uint32).view(np.float32).astype(np.float64)
    hi = (lo_bits + (1 << 16)).astype(np.uint32).view(np.float32).astype(np.float64)
    x64 = x.astype(np.float64)
    dlo, dhi = np.abs(x64 - lo), np.abs(hi - x64)
    even_lo = ((lo_bits >> 16) & 1) == 0
    ref = np.where(dlo < dhi, lo, np.where(dhi < dlo, hi, np.where(even_lo, lo, hi)))
    assert np.array_equal(got, ref)


def test_nan_stays_nan_in_both_directions():
    nans = np.array([np.nan, -np.nan], np.float32)
    nan_bits = np.array([0x7FC0, 0x7F81, 0xFFC1], np.uint16)
    assert np.all(np.isnan(hipdnn.from_bfloat16(hipdnn.to_bfloat16(nans))))
    # a NaN whose payload sits only in the low bits must not round to infinity
    low_payload = np.array([0x7F800001], np.uint32).view(np.float32)
    assert np.isnan(hipdnn.from_bfloat16(hipdnn.to_bfloat16(low_payload)))[0]
    assert np.all(np.isnan(hipdnn.from_bfloat16(nan_bits)))


def test_from_bfloat16_is_exact():
    bits = np.array([[0x3F80, 0xC000], [0x7F80, 0x0001]], np.uint16)
    got = hipdnn.from_bfloat16(bits)
    assert got.dtype == np.float32 and got.shape == (2, 2)
    assert got[0, 0] == 1.0 and got[0, 1] == -2.0 and got[1, 0] == np.inf
    assert got[1, 1] == np.float32(2.0 ** -133)
    with pytest.raises(TypeError, match="uint16"):
        hipdnn.from_bfloat16(np.ones(2, np.float32))


# ---- the low-level extension ------------------------------------------------------------

def test_descriptor_set_get_finalize():
    d = _C.Descriptor(_C.BACKEND_TENSOR_DESCRIPTOR)
    d.set(_C.ATTR_TENSOR_UNIQUE_ID, _C.TYPE_INT64, 5)
    d.set(_C.ATTR_TENSOR_DIMENSIONS, _C.TYPE_INT64, [2, 3])
    d.set(_C.ATTR_TENSOR_DATA_TYPE, _C.TYPE_DATA_TYPE, dt.HALF)
    d.set(_C.ATTR_TENSOR_NAME_EXT, _C.TYPE_CHAR, "tensor-ä")
    d.set(_C.ATTR_TENSOR_IS_VIRTUAL, _C.TYPE_BOOLEAN, False)
    assert not d.finalized
    d.finalize()
    assert d.finalized and d.type == _C.BACKEND_TENSOR_DESCRIPTOR and d.type_name == "TENSOR"
    assert d.get(_C.ATTR_TENSOR_DIMENSIONS, _C.TYPE_INT64) == [2, 3]
    assert d.get(_C.ATTR_TENSOR_DIMENSIONS, _C.TYPE_INT64, 1) == [2]
    assert d.get(_C.ATTR_TENSOR_DATA_TYPE, _C.TYPE_DATA_TYPE) == [dt.HALF]
    assert d.get(_C.ATTR_TENSOR_NAME_EXT, _C.TYPE_CHAR) == "tensor-ä"
    assert d.get(_C.ATTR_TENSOR_IS_VIRTUAL, _C.TYPE_BOOLEAN) == [False]
    assert "TENSOR finalized" in repr(d)


def test_descriptor_errors_are_exceptions():
    d = _C.Descriptor(_C.BACKEND_TENSOR_DESCRIPTOR)
    with pytest.raises(hipdnn.InvalidGraphError) as info:
        d.set(_C.ATTR_TENSOR_DIMENSIONS, _C.TYPE_DOUBLE, [2.0])
    assert info.value.status == _C.STATUS_BAD_PARAM
    assert info.value.status_name == "HIPDNN_STATUS_BAD_PARAM"
    with pytest.raises(TypeError):
        d.set(_C.ATTR_TENSOR_DIMENSIONS, _C.TYPE_INT64, [2.5])
    with pytest.raises(TypeError, match="Descriptor"):
        d.set(_C.ATTR_OPERATION_POINTWISE_XDESC, _C.TYPE_BACKEND_DESCRIPTOR, [1])
    with pytest.raises(ValueError, match="unknown attribute type"):
        d.set(_C.ATTR_TENSOR_DIMENSIONS, 99, [2])
    with pytest.raises(hipdnn.InvalidGraphError, match="UNIQUE_ID"):
        d.finalize()
    with pytest.raises(hipdnn.HipdnnError):
        _C.Descriptor(999)


def test_status_and_dtype_names():
    assert _C.status_name(_C.STATUS_NOT_SUPPORTED) == "HIPDNN_STATUS_NOT_SUPPORTED"
    assert [_C.dtype_name(t) for t in (dt.FLOAT, dt.HALF, dt.BFLOAT16, dt.DOUBLE)] == [
        "float32", "float16", "bfloat16", "float64"]


def test_engines_describe_the_reference_engine():
    (ref,) = [e for e in hipdnn.engines() if e.name == "reference_cpu"]
    assert ref.memory_space == hipdnn.memory_space.HOST and ref.is_fallback
    assert ref.plugin_path in hipdnn.loaded_engine_plugin_paths()
    assert 0 <= ref.id < 2 ** 64
    # ids are the 64-bit FNV-1a hash of the name (docs/architecture.md, "Loading plugins")
    h = 0xCBF29CE484222325
    for byte in b"reference_cpu":
        h = ((h ^ byte) * 0x100000001B3) % 2 ** 64
    assert ref.id == h


def test_log_callback_receives_backend_messages_and_can_be_removed():
    r = run_py(f"""
        import hipdnn
        got = []
        hipdnn.set_log_level("warn")
        hipdnn.set_log_callback(lambda level, msg: got.append((level, msg)))
        hipdnn.set_engine_plugin_paths([{plugin_file('bad_abi_version')!r}])
        hipdnn.engines()
        hipdnn._C.flush_log()
        assert any(lv == hipdnn.log_level.WARN and "bad_abi_version" in m for lv, m in got), got
        hipdnn.set_log_callback(None)
        print("ok")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
    assert "bad_abi_version" not in r.stderr  # went to the callback, not to stderr


def test_log_callback_exceptions_do_not_propagate():
    r = run_py("""
        import hipdnn
        def boom(level, msg):
            raise RuntimeError("callback failed")
        hipdnn.set_log_level("info")
        hipdnn.set_log_callback(boom)
        hipdnn.engines()
        hipdnn._C.flush_log()
        print("survived")
    """)
    assert r.returncode == 0, r.stderr
    assert "survived" in r.stdout


# ---- the plugin registry (process-global: subprocesses) --------------------------------

def test_additive_plugin_path_adds_engines():
    r = run_py(f"""
        import hipdnn
        hipdnn.set_engine_plugin_paths([{plugin_file('declines_all')!r}])
        print(sorted(e.name for e in hipdnn.engines()))
        print(len(hipdnn.loaded_engine_plugin_paths()))
    """)
    assert r.returncode == 0, r.stderr
    names, count = r.stdout.splitlines()
    assert names == "['declines_all', 'reference_cpu']" and count == "2"


def test_absolute_plugin_path_replaces_the_default_folder():
    r = run_py(f"""
        import hipdnn
        hipdnn.set_engine_plugin_paths([{plugin_file('declines_all')!r}],
                                       hipdnn.plugin_loading_mode.ABSOLUTE)
        print([e.name for e in hipdnn.engines()])
        print(hipdnn.plugin_search_paths())
    """)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "['declines_all']"
    assert lines[1] == repr([plugin_file("declines_all")])


def test_plugin_dir_environment_and_skipped_plugins_with_reasons():
    r = run_py("""
        import hipdnn
        print(hipdnn.plugin_search_paths())
        for path, reason in hipdnn.skipped_engine_plugins():
            print(path.rsplit("/", 1)[-1], "|", reason)
    """, env={"HIPDNN_PLUGIN_DIR": str(TEST_PLUGINS)})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == repr([str(TEST_PLUGINS)])
    skipped = dict(line.split(" | ", 1) for line in lines[1:])
    assert "API 2.0" in skipped["libbad_abi_version.so"]
    assert "missing symbol" in skipped["libmissing_symbol.so"]
    assert "init failed" in skipped["libinit_fails.so"]


def test_plugin_paths_are_fixed_once_a_handle_exists():
    r = run_py(f"""
        import hipdnn
        hipdnn.Handle()
        try:
            hipdnn.set_engine_plugin_paths([{plugin_file('declines_all')!r}])
        except hipdnn.NotSupportedError as e:
            print("refused", e.status_name)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "refused HIPDNN_STATUS_NOT_SUPPORTED"


def test_check_support_lists_each_engine_and_its_reason():
    r = run_py(f"""
        import hipdnn
        hipdnn.set_engine_plugin_paths([{plugin_file('declines_all')!r},
                                        {plugin_file('no_reason')!r}],
                                       hipdnn.plugin_loading_mode.ABSOLUTE)
        g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT, name="unloved")
        g.relu(input=g.tensor(dim=[4])).set_output(True)
        g.validate()
        g.create_execution_plans([hipdnn.heur_mode.A])
        print(g.support_report())
        try:
            g.check_support()
        except hipdnn.GraphNotSupportedError as e:
            print(sorted(e.reasons.items()))
            print(str(e))
    """)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == ("[('declines_all', 'declines_all: this test engine declines every "
                        "graph'), ('no_reason', 'declined, no reason given')]")
    assert lines[1] == ("[('declines_all', 'declines_all: this test engine declines every "
                        "graph'), ('no_reason', 'declined, no reason given')]")
    assert lines[2] == "no engine supports graph 'unloved':"
    assert "  declines_all: declines_all: this test engine declines every graph" in lines
    assert "  no_reason: declined, no reason given" in lines
