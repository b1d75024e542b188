"""The blaslt engine (plugins/blaslt): a matmul and its cuBLASLt epilogues against float64
NumPy, what it declines and why, how it loads or declines to load, and its knobs.

The tests marked `gpu` run on the engine: on cuBLASLt with an NVIDIA GPU, and in CI over
the fake CUDA driver (build/tests/fake_cuda) and the fake cuBLASLt (build/tests/fake_cublaslt),
which test_the_gpu_tests_pass_over_the_fake_libraries runs this file on in a subprocess.  The
fakes compute in float64 with cuBLASLt's column-major semantics and refuse what the library
refuses (shapes, types, pointers that are not device memory or not aligned as the chosen
algorithm needs, too little workspace), so they check the plugin's mapping of the graph onto
the library, not the library's kernels.  Every run copies each operand's whole allocation,
NaN poison included, to the device and back (conftest.DeviceNumerics): outputs are checked
to be fully written and nothing else, inputs to be unchanged.

The loading tests run without a GPU: each starts a child over the fakes (or without the
library) and reads what `hipdnn.skipped_engine_plugins()` says.
"""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import hipdnn
import references as ref
from conftest import (STORAGES, DeviceNumerics, Operand, assert_close, engine_log,
                      skip_or_fail_without_gpu)
from tolerances import graph_tolerance, tolerance

REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
FAKE_DRIVER = BUILD_DIR / "tests" / "fake_cuda"
FAKE_LT = BUILD_DIR / "tests" / "fake_cublaslt"
ENGINES = Path(hipdnn.__file__).resolve().parent / "lib" / "hipdnn_plugins" / "engines"
PLUGIN = ENGINES / "libhipdnn_blaslt.so"
ENGINE = "blaslt"
KNOB_ALGORITHM = hipdnn.knob_type.KERNEL_CFG  # which of the heuristic's algorithms
KNOB_TF32 = 20000
FP32_UNIT = 2.0 ** -24

# In the child over the fakes: the reference engine and this one only (the hip engine's
# CUDA build has nothing to do with a fake driver).
FAKE = os.environ.get("HIPDNN_TEST_FAKE_BLASLT") == "1"
if FAKE:
    hipdnn.set_engine_plugin_paths([str(ENGINES / "libhipdnn_reference_cpu.so"), str(PLUGIN)],
                                   hipdnn.plugin_loading_mode.ABSOLUTE)


def fake_env(library=True, **extra):
    """The environment of a child over the fake driver (and the fake cuBLASLt)."""
    env = dict(os.environ)
    env.pop("HIPDNN_PLUGIN_DIR", None)
    folders = [str(FAKE_DRIVER)] + ([str(FAKE_LT)] if library else [])
    env.update({"LD_LIBRARY_PATH": os.pathsep.join(folders + [env.get("LD_LIBRARY_PATH", "")]),
                "HIPDNN_DEVICE_RUNTIME": "cuda", "HIPDNN_BUILD_DIR": str(BUILD_DIR)})
    if library:  # the fake, even where a real cuBLASLt is on the loader's path
        env["HIPDNN_BLASLT_LIBRARY"] = str(FAKE_LT / "libcublasLt.so.13")
    env.update(extra)
    return env


# ---- the engine under test ---------------------------------------------------------------

def unavailable():
    """None when the blaslt engine is loaded with a device, else why not."""
    if ENGINE in [e.name for e in hipdnn.engines()] and hipdnn.device_runtime().name != "none":
        return None
    why = [f"no '{ENGINE}' engine"]
    why += [reason for path, reason in hipdnn.skipped_engine_plugins() if path.endswith(PLUGIN.name)]
    return "; ".join(why)


@pytest.fixture
def bl(rng):
    """DeviceNumerics on the blaslt engine (conftest): skips without a GPU, fails in the
    run over the fakes, where the engine must load."""
    reason = unavailable()
    if reason:
        if FAKE:
            pytest.fail(f"over the fake libraries: {reason}")
        skip_or_fail_without_gpu(reason)
    d = DeviceNumerics(rng)
    d.engine = ENGINE
    return d


def blaslt_log(run):
    """The engine's log lines (info) while run() runs."""
    return engine_log(run, ENGINE)


def assert_product_close(out, want, tol, k, magnitude):
    """The DESIGN tolerance plus what fp32 accumulation of k terms may lose,
    k * u * (|a| @ |b|), doubled for an epilogue's slope (as tests/test_gpu_matmul.py)."""
    got = np.asarray(out.decoded(), np.float64)
    bound = tol + tol * np.abs(want) + 2.0 * k * FP32_UNIT * magnitude
    err = np.abs(got - want)
    if not (err <= bound).all():
        assert_close(got, want, tol, out.tensor.get_name())  # non-finite: reported there
        bad = np.unravel_index(int(np.argmax(err - bound)), err.shape)
        pytest.fail(f"{out.tensor.get_name()}: |diff| {err[bad]:.3g} > {bound[bad]:.3g} at {bad}")


# ---- epilogues: (graph, product, its reference) -> (output tensor, reference, inputs) -----

def with_bias(bl, dtype):
    def add(g, c, want):
        bias = bl.input([1, want.shape[-1]], dtype)
        return g.bias(c, bias.bind(g, "bias"), name="bias"), want + bias.values, [bias]
    return add


def then(first, activation):
    """first (or nothing), then the named activation."""
    def add(g, c, want):
        extra = []
        if first:
            c, want, extra = first(g, c, want)
        if activation == "relu":
            return g.relu(c, name="act"), ref.relu(want), extra
        return g.gelu_approx_tanh(c, name="act"), ref.gelu_approx_tanh(want), extra
    return add


def build_config(g, knobs):
    """g's plan on blaslt with these knob values (cuDNN frontend's create_execution_plan)."""
    g.validate()
    g.build_operation_graph()
    g.create_execution_plan([e.name for e in hipdnn.engines()].index(ENGINE), knobs)
    g.build_plans()
    assert g.get_engine_name() == ENGINE


def product(bl, dtype, a, b, epilogue=None, out_dtype=None, out_layout="packed", knobs=None):
    """c = a @ b (operands from bl.input), then the epilogue; checked against float64.
    knobs: an engine config of blaslt with these knob values instead of heuristics.  The
    engine's log lines."""
    g = bl.graph(dtype)
    c = g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm")
    want = np.matmul(a.values, b.values)
    magnitude = np.broadcast_to(np.abs(a.values) @ np.abs(b.values), want.shape)
    y, extra, ops = c, [], ["matmul"]
    if epilogue:
        y, want, extra = epilogue(g, c, want)
        ops.append("pointwise")
    out = bl.output(y, want.shape, out_dtype or dtype, out_layout)
    def run():
        if knobs is not None:
            build_config(g, knobs)
        bl.execute(g, [a, b] + extra + [out], build=knobs is None)
    log = blaslt_log(run)
    assert_product_close(out, want, graph_tolerance(ops, out_dtype or dtype), a.shape[-1],
                         magnitude)
    return log


def plain(bl, dtype, a_shape, b_shape, a_layout="packed", b_layout="packed", **kw):
    return product(bl, dtype, bl.input(a_shape, dtype, a_layout), bl.input(b_shape, dtype, b_layout),
                   **kw)


# ---- products ------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (7, 13, 5), (33, 8, 100), (64, 48, 40)])
def test_shapes(bl, dtype, m, n, k):
    plain(bl, dtype, [m, k], [k, n])


@pytest.mark.gpu
def test_a_plan_runs_on_a_handle_other_than_the_one_that_built_it(bl, dtype):
    """Built on the graph's handle, executed on a new one (as a caller running on its own
    stream does): that handle's cuBLASLt handle is made at execute, not assumed."""
    bl.handle = hipdnn.Handle()
    plain(bl, dtype, [12, 20], [20, 9])


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_half_inputs_give_an_fp32_output(bl, dtype):
    plain(bl, dtype, [24, 40], [40, 17], out_dtype="fp32")


@pytest.mark.gpu
@pytest.mark.parametrize("a_layout,b_layout", [("transposed", "packed"), ("packed", "transposed"),
                                               ("transposed", "transposed")])
def test_transposes_by_strides(bl, dtype, a_layout, b_layout):
    plain(bl, dtype, [19, 24], [24, 11], a_layout, b_layout)


@pytest.mark.gpu
def test_a_column_major_output(bl, dtype):
    # C's columns contiguous: cuBLASLt's D is C itself, not C^T
    log = plain(bl, dtype, [21, 16], [16, 9], out_layout="transposed")
    assert any("D = C," in m for m in log), log


@pytest.mark.gpu
def test_operands_with_a_leading_dimension(bl, dtype):
    # each a [rows, cols] window of a wider allocation: rows contiguous, ld = cols + 3
    def windowed(shape):
        storage = STORAGES[dtype]
        base = storage.full((shape[0], shape[1] + 3))
        view = base[:, :shape[1]]
        view[...] = storage.encode(bl.random(shape))
        mask = np.zeros(base.shape, bool)
        mask[:, :shape[1]] = True
        return Operand(view, base, mask, storage, storage.decode(view))
    product(bl, dtype, windowed([15, 20]), windowed([20, 12]))


@pytest.mark.gpu
@pytest.mark.parametrize("a_shape,b_shape", [([3, 17, 24], [3, 24, 9]),
                                             ([2, 3, 17, 24], [24, 9]),
                                             ([17, 24], [4, 24, 9]),
                                             ([2, 3, 17, 24], [1, 1, 24, 9])])
def test_batches_with_broadcast(bl, dtype, a_shape, b_shape):
    plain(bl, dtype, a_shape, b_shape)


@pytest.mark.gpu
def test_a_view_inside_its_allocation_takes_the_algorithm_for_unaligned_pointers(bl, dtype):
    # a starts one element into its allocation: not 16-byte aligned
    storage = STORAGES[dtype]
    m, k, n = 12, 16, 10
    base = storage.full((m * k + 1,))
    view = base[1:].reshape(m, k)
    view[...] = storage.encode(bl.random([m, k]))
    mask = np.zeros(base.shape, bool)
    mask[1:] = True
    a = Operand(view, base, mask, storage, storage.decode(view))
    log = product(bl, dtype, a, bl.input([k, n], dtype))
    assert any("first run of the algorithm for unaligned pointers" in m for m in log), log


# ---- epilogues -------------------------------------------------------------------------------

EPILOGUES = {
    "bias": lambda bl, dt: with_bias(bl, dt),
    "bias+relu": lambda bl, dt: then(with_bias(bl, dt), "relu"),
    "bias+gelu_tanh": lambda bl, dt: then(with_bias(bl, dt), "gelu"),
    "relu": lambda bl, dt: then(None, "relu"),
    "gelu_tanh": lambda bl, dt: then(None, "gelu"),
}


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(EPILOGUES))
def test_epilogues(bl, dtype, name):
    a, b = bl.input([2, 23, 40], dtype), bl.input([40, 31], dtype)
    log = product(bl, dtype, a, b, epilogue=EPILOGUES[name](bl, dtype))
    assert any(f"epilogue {name}," in m for m in log), log


# ---- the aux and gradient epilogues ------------------------------------------------------------
# cuBLASLt's GELU_AUX writes the GELU's input (after the bias) as a second matrix, DGELU
# multiplies the product by the tanh GELU's derivative at such a matrix, DGELU_BGRAD also
# sums the result over its rows, and BGRADA / BGRADB sum an operand over k: each checked
# against float64 with every output poisoned before the run and every input unchanged.

def run_logged(bl, g, operands):
    """bl.execute(g, operands) on blaslt; the engine's log lines.  On a GPU whose cuBLASLt
    has no algorithm for an epilogue the engine declines the graph saying so, which is
    reported as a skip there (over the fakes, which have one for every epilogue, it fails)."""
    try:
        return blaslt_log(lambda: bl.execute(g, operands))
    except (AssertionError, hipdnn.HipdnnError):
        why = dict(g.support_report()).get(ENGINE) or ""
        if not FAKE and "cuBLASLt's heuristic offers no algorithm" in why:
            pytest.skip(f"declined on this cuBLASLt: {why}")
        raise


def assert_epilogue(log, name):
    assert any(f"epilogue {name}," in m for m in log), log


@pytest.mark.gpu
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("a_shape,layouts", [([23, 37], ("packed", "packed")),
                                             ([23, 37], ("transposed", "transposed")),
                                             ([2, 23, 37], ("packed", "transposed"))])
def test_gelu_aux_writes_the_gelu_input_as_a_second_output(bl, dtype, bias, a_shape, layouts):
    """pre = a @ b (+ bias) and y = gelu_approx_tanh(pre) both graph outputs: GELU_AUX(_BIAS),
    pre (24 wide: an ld that is a multiple of 8) the aux matrix."""
    n = 24
    a, b = bl.input(a_shape, dtype, layouts[0]), bl.input([a_shape[-1], n], dtype, layouts[1])
    g = bl.graph(dtype)
    pre = g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm")
    want = np.matmul(a.values, b.values)
    magnitude = np.broadcast_to(np.abs(a.values) @ np.abs(b.values), want.shape)
    extra = []
    if bias:
        vec = bl.input([1, n], dtype)
        pre = g.bias(pre, vec.bind(g, "bias"), name="bias")
        want, extra = want + vec.values, [vec]
    y = g.gelu_approx_tanh(pre, name="act")
    out_pre = bl.output(pre.set_name("pre"), want.shape, dtype)
    out_y = bl.output(y, want.shape, dtype)
    log = run_logged(bl, g, [a, b] + extra + [out_pre, out_y])
    assert_epilogue(log, "bias+gelu_tanh_aux" if bias else "gelu_tanh_aux")
    tol = graph_tolerance(["matmul", "pointwise"], dtype)
    assert_product_close(out_pre, want, tol, a_shape[-1], magnitude)
    assert_product_close(out_y, ref.gelu_approx_tanh(want), tol, a_shape[-1], magnitude)


@pytest.mark.gpu
def test_gelu_aux_of_an_odd_width_runs_with_a_padded_leading_dimension(bl, dtype):
    # 31 columns: packed, the aux ld would be 31 (declined below); rows padded to 32 it runs
    m, k, n = 9, 20, 31
    a, b, vec = bl.input([m, k], dtype), bl.input([k, n], dtype), bl.input([1, n], dtype)
    g = bl.graph(dtype)
    pre = g.bias(g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm"), vec.bind(g, "bias"))
    y = g.gelu_approx_tanh(pre, name="act")
    want = a.values @ b.values + vec.values
    out_pre = bl.output(pre.set_name("pre"), [m, n], dtype, "padded")
    out_y = bl.output(y, [m, n], dtype)
    log = run_logged(bl, g, [a, b, vec, out_pre, out_y])
    assert_epilogue(log, "bias+gelu_tanh_aux")
    tol, mag = graph_tolerance(["matmul", "pointwise"], dtype), np.abs(a.values) @ np.abs(b.values)
    assert_product_close(out_pre, want, tol, k, mag)
    assert_product_close(out_y, ref.gelu_approx_tanh(want), tol, k, mag)


def dgelu_graph(bl, dtype, m, k, n, w_layout="transposed", bgrad=False, batch=()):
    """dx = gelu_approx_tanh_backward(dy @ w^T, x) (w^T a transposed view, as a linear
    layer's backward takes it), and db = dx's column sums: (graph, inputs, outputs,
    references, (k, magnitude))."""
    dy = bl.input(list(batch) + [m, k], dtype)
    w_t = bl.input([k, n], dtype, w_layout)
    x = bl.input(list(batch) + [m, n], dtype, high=3.0)
    g = bl.graph(dtype)
    prod = g.matmul(dy.bind(g, "dy"), w_t.bind(g, "w_t"), name="dx_mm")
    dx = g.gelu_approx_tanh_backward(prod, x.bind(g, "x"), name="dgelu")
    grad = np.matmul(dy.values, w_t.values)
    want = [ref.gelu_approx_tanh_backward(x.values, grad)]
    outs = [bl.output(dx, want[0].shape, dtype)]
    if bgrad:
        db = g.reduction(dx, hipdnn.reduction_mode.ADD, name="db")
        outs.append(bl.output(db, [1, n], dtype))
        want.append(want[0].sum(axis=0, keepdims=True))
    mag = np.abs(dy.values) @ np.abs(w_t.values)
    return g, [dy, w_t, x], outs, want, mag


def fp32_dgelu_declined(g, dtype):
    """An fp32 DGELU graph is declined (cuBLASLt's fp32 DGELU measured up to 2.3e-5 off on
    an H200, past fp32's tolerance): True after checking the reason; False for 16-bit."""
    if dtype != "fp32":
        return False
    why = reason(g)
    assert why and "fp32 gelu_approx_tanh_backward: cuBLASLt's DGELU epilogue measured" in why, why
    return True


@pytest.mark.gpu
@pytest.mark.parametrize("m,k,n,w_layout", [(23, 37, 24, "transposed"), (17, 16, 40, "packed"),
                                            (1, 9, 8, "transposed")])
def test_dgelu_is_the_tanh_gelus_gradient_of_the_product(bl, dtype, m, k, n, w_layout):
    g, inputs, outs, want, mag = dgelu_graph(bl, dtype, m, k, n, w_layout)
    if fp32_dgelu_declined(g, dtype):
        return
    log = run_logged(bl, g, inputs + outs)
    assert_epilogue(log, "dgelu")
    assert_product_close(outs[0], want[0], graph_tolerance(["matmul", "pointwise"], dtype), k, mag)


@pytest.mark.gpu
def test_dgelu_runs_batched_with_the_aux_batch_stride(bl, dtype):
    g, inputs, outs, want, mag = dgelu_graph(bl, dtype, 7, 12, 16, batch=(3,))
    if fp32_dgelu_declined(g, dtype):
        return
    assert_epilogue(run_logged(bl, g, inputs + outs), "dgelu")
    assert_product_close(outs[0], want[0], graph_tolerance(["matmul", "pointwise"], dtype), 12,
                         mag)


@pytest.mark.gpu
@pytest.mark.parametrize("m,k,n,w_layout", [(23, 37, 24, "transposed"), (40, 8, 16, "packed")])
def test_dgelu_bgrad_also_sums_the_gradient_into_the_bias_gradient(bl, dtype, m, k, n, w_layout):
    g, inputs, outs, want, mag = dgelu_graph(bl, dtype, m, k, n, w_layout, bgrad=True)
    if fp32_dgelu_declined(g, dtype):
        return
    log = run_logged(bl, g, inputs + outs)
    assert_epilogue(log, "dgelu+bgrad")
    assert_product_close(outs[0], want[0], graph_tolerance(["matmul", "pointwise"], dtype), k, mag)
    # db sums m rows of dx (|gelu'| < 1.2): each row's error, then fp32 summation
    db_mag = 1.2 * mag.sum(axis=0, keepdims=True) + np.abs(want[0]).sum(axis=0, keepdims=True)
    assert_product_close(outs[1], want[1], graph_tolerance(["matmul", "pointwise", "reduction"],
                                                           dtype), k + m, db_mag)


@pytest.mark.gpu
@pytest.mark.parametrize("summed,out_layout,name", [("b", "packed", "bgrada"),
                                                     ("a", "packed", "bgradb"),
                                                     ("b", "transposed", "bgradb"),
                                                     ("a", "transposed", "bgrada")])
def test_an_operands_sum_over_k_is_bgrada_or_bgradb(bl, dtype, summed, out_layout, name):
    """dw = x^T @ dout and db = dout's column sums, the weight gradient's graph (or x's row
    sums): cuBLASLt's A is the graph's b when the output is row-major (D = C^T), a when it
    is column-major, so which of BGRADA / BGRADB it is follows the layout."""
    rows, kin, kout = 29, 13, 24
    x_t = bl.input([kin, rows], dtype, "transposed")  # x^T: a view of x [rows, kin]
    dout = bl.input([rows, kout], dtype)
    g = bl.graph(dtype)
    dw = g.matmul(x_t.bind(g, "x_t"), dout.bind(g, "dout"), name="dw")
    operand = dout if summed == "b" else x_t
    axis = 0 if summed == "b" else 1
    db = g.reduction(operand.tensor, hipdnn.reduction_mode.ADD, name="db")
    want_db = operand.values.sum(axis=axis, keepdims=True)
    out_dw = bl.output(dw, [kin, kout], dtype, out_layout)
    out_db = bl.output(db, list(want_db.shape), dtype)
    log = run_logged(bl, g, [x_t, dout, out_dw, out_db])
    assert_epilogue(log, name)
    assert_product_close(out_dw, x_t.values @ dout.values, tolerance("matmul", dtype), rows,
                         np.abs(x_t.values) @ np.abs(dout.values))
    assert_product_close(out_db, want_db, tolerance("reduction", dtype), rows,
                         np.abs(operand.values).sum(axis=axis, keepdims=True))


# ---- knobs and workspace -----------------------------------------------------------------------

def matmul_graph(dtype="fp16", a_dims=(64, 64), b_dims=(64, 64)):
    g = hipdnn.pygraph(io_data_type=STORAGES[dtype].data_type,
                       compute_data_type=hipdnn.data_type.FLOAT)
    c = g.matmul(g.tensor(name="a", dim=list(a_dims)), g.tensor(name="b", dim=list(b_dims)))
    c.set_output(True)
    return g


@pytest.mark.gpu
def test_the_engine_lists_its_knobs(bl):
    g = matmul_graph()
    g.validate()
    g.build_operation_graph()
    knobs = g.get_knobs_for_engine([e.name for e in hipdnn.engines()].index(ENGINE))
    assert [(k.type, k.min_value, k.max_value) for k in knobs] == [
        (KNOB_ALGORITHM, 0, 7), (KNOB_TF32, 0, 1)]


@pytest.mark.gpu
def test_the_algorithm_knob_chooses_among_the_heuristics_algorithms(bl):
    log = plain(bl, "fp16", [48, 64], [64, 40], knobs={KNOB_ALGORITHM: 1})
    assert any("algorithm 1 of " in m for m in log), log


@pytest.mark.gpu
def test_an_algorithm_past_what_the_heuristic_offers_is_refused(bl):
    try:
        plain(bl, "fp16", [48, 64], [64, 40], knobs={KNOB_ALGORITHM: 7})
    except hipdnn.HipdnnError as e:
        assert "cuBLASLt's heuristic offers" in str(e), e
    else:
        assert not FAKE, "the fake offers 3 algorithms: index 7 must be refused"


@pytest.mark.gpu
def test_fp32_is_exact_fp32_unless_the_tf32_knob_says_so(bl):
    m, k, n = 32, 64, 24
    a, b = bl.input([m, k], "fp32"), bl.input([k, n], "fp32")
    log = product(bl, "fp32", a, b, knobs={})  # held to the fp32 tolerance
    assert any("compute 32F," in line for line in log), log
    # TF32: the inputs keep 10 bits of mantissa, so each product is within about 2^-10
    g = bl.graph("fp32")
    c = g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm")
    out = bl.output(c, [m, n], "fp32")
    log = blaslt_log(lambda: (build_config(g, {KNOB_TF32: 1}),
                              bl.execute(g, [a, b, out], build=False)))
    assert any("compute 32F_FAST_TF32," in line for line in log), log
    want = a.values @ b.values
    got = out.decoded()
    assert (np.abs(got - want) <= 2.0 ** -9 * (np.abs(a.values) @ np.abs(b.values))).all()
    if FAKE:  # the fake rounds the inputs as TF32 tensor cores do: the result moved
        assert not np.array_equal(got, want.astype(np.float32))


@pytest.mark.gpu
def test_the_plan_asks_for_its_algorithms_workspace(bl):
    g = matmul_graph()
    g.set_preferred_engine(ENGINE)
    g.build([hipdnn.heur_mode.A])
    assert g.get_engine_name() == ENGINE
    size = g.get_workspace_size()
    assert 0 <= size <= 32 << 20
    if FAKE:  # its best algorithm takes 1 MiB
        assert size == 1 << 20


# ---- ranking and choosing ----------------------------------------------------------------------

@pytest.mark.gpu
def test_the_engine_ranks_below_hip_and_is_chosen_by_name_or_left_out(bl):
    by_name = {e.name: e for e in hipdnn.engines()}
    assert by_name[ENGINE].priority < 100 and by_name[ENGINE].memory_space == hipdnn.memory_space.DEVICE
    if "hip" in by_name:
        assert by_name["hip"].priority > by_name[ENGINE].priority
    g = matmul_graph()
    g.set_preferred_engine(ENGINE)
    g.deselect_engines([ENGINE])
    g.build([hipdnn.heur_mode.A])
    assert g.get_engine_name() != ENGINE
    assert dict(g.support_report())[ENGINE] == "deselected by the user"


# ---- what it declines, and why ---------------------------------------------------------------

def reason(g):
    """blaslt's reason for declining g (None if it runs it)."""
    g.build([hipdnn.heur_mode.A])
    return dict(g.support_report())[ENGINE]


def linear(dtype="fp16", activation=None, bias_dims=(1, 40)):
    g = hipdnn.pygraph(io_data_type=STORAGES[dtype].data_type,
                       intermediate_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT)
    c = g.matmul(g.tensor(name="x", dim=[16, 32]), g.tensor(name="w", dim=[32, 40]), name="mm")
    y = g.bias(c, g.tensor(name="b", dim=list(bias_dims)), name="bias")
    if activation:
        y = activation(g, y)
    y.set_output(True)
    return g


@pytest.mark.gpu
@pytest.mark.parametrize("activation,said", [
    (lambda g, y: g.gelu(y, name="act"),
     "gelu 'act': this gelu is the erf form; cuBLASLt's GELU epilogue computes the tanh "
     "approximation (gelu_approx_tanh)"),
    (lambda g, y: g.swish(y, name="act"), "swish 'act': no cuBLASLt epilogue computes swish"),
    (lambda g, y: g.relu(y, upper_clip=6.0, name="act"), "relu 'act': cuBLASLt's RELU epilogue "
                                                          "is max(x, 0)"),
    (lambda g, y: g.bias(g.relu(y, name="act"), g.tensor(name="b2", dim=[1, 40]), name="b2"),
     "cuBLASLt adds one bias, before its activation"),
])
def test_epilogues_cublaslt_lacks_are_declined_naming_the_node(bl, activation, said):
    why = reason(linear(activation=activation))
    assert why and why.startswith(f"{ENGINE}: ") and said in why, why


@pytest.mark.gpu
def test_gelu_tanh_after_the_bias_is_claimed(bl):
    assert reason(linear(activation=lambda g, y: g.gelu_approx_tanh(y, name="act"))) is None


@pytest.mark.gpu
@pytest.mark.parametrize("make,said", [
    (lambda: matmul_graph("fp64"), "blaslt multiplies fp32, fp16 or bf16 matrices of one type"),
    (lambda: linear(bias_dims=(16, 40)), "bias 'b' is not one packed value per column"),
    (lambda: matmul_graph(a_dims=(2, 1, 16, 32), b_dims=(1, 3, 32, 8)),
     "do not collapse into one stride"),
])
def test_what_cublaslt_cannot_take_is_declined_with_the_reason(bl, make, said):
    why = reason(make())
    assert why and said in why, why


@pytest.mark.gpu
def test_an_output_type_cublaslt_lacks_is_declined(bl):
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.HALF, compute_data_type=hipdnn.data_type.FLOAT)
    c = g.matmul(g.tensor(name="a", dim=[8, 8]), g.tensor(name="b", dim=[8, 8]), name="mm")
    c.set_output(True).set_data_type(hipdnn.data_type.BFLOAT16)
    why = reason(g)
    assert why and "float16 inputs give float16 or float32 with cuBLASLt, not bfloat16" in why, why


def kept(activation, before_bias=False, width=40):
    """mm = x @ w, then a bias and the activation, with the activation's input (or, with
    before_bias, the product before the bias) a graph output 'pre' too."""
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.HALF,
                       intermediate_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT)
    c = g.matmul(g.tensor(name="x", dim=[16, 32]), g.tensor(name="w", dim=[32, width]), name="mm")
    if before_bias:
        c.set_output(True).set_name("pre")
    y = g.bias(c, g.tensor(name="b", dim=[1, width]), name="bias")
    if not before_bias:
        y.set_output(True).set_name("pre")
    activation(g, y).set_output(True)
    return g


def backward(grad, bgrad=None, x_dims=(16, 40)):
    """dx = grad(dy @ w, x) (+ db = bgrad(dx)): a gradient graph over the product."""
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.HALF,
                       intermediate_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT)
    prod = g.matmul(g.tensor(name="dy", dim=[16, 32]), g.tensor(name="w", dim=[32, 40]),
                    name="mm")
    dx = grad(g, prod, g.tensor(name="x", dim=list(x_dims)))
    dx.set_output(True)
    if bgrad:
        bgrad(g, dx).set_output(True)
    return g


def fc2_backward():
    """test_gpu_transformer_block's fc2_bwd: dx with gelu_backward, dw and db in one graph."""
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.HALF,
                       intermediate_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT)
    dy, a = g.tensor(name="dy", dim=[16, 40]), g.tensor(name="a", dim=[16, 32])
    dx = g.matmul(dy, g.tensor(name="w_t", dim=[40, 32], stride=[1, 40]), name="fc2_bwd_dx")
    g.gelu_approx_tanh_backward(dx, a, name="fc2_bwd_gelu").set_output(True)
    g.matmul(g.tensor(name="g_t", dim=[32, 16], stride=[1, 32]), dy,
             name="fc2_bwd_dw").set_output(True)
    g.reduction(dy, hipdnn.reduction_mode.ADD, name="fc2_bwd_db").set_output(True).set_dim([1, 40])
    return g


def summed(mode=None, dims=(1, 40)):
    return lambda g, t: g.reduction(t, mode or hipdnn.reduction_mode.ADD,
                                    name="db").set_dim(list(dims))


def operand_sum(dims, batch=(), activation=None):
    """dw = x @ dout (then the activation), with a reduction to dims beside it: of dout if
    dims end in its 40 columns, else of x."""
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.HALF,
                       intermediate_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT)
    x = g.tensor(name="x", dim=list(batch) + [16, 32])
    dout = g.tensor(name="dout", dim=[32, 40])
    y = g.matmul(x, dout, name="dw")
    (activation(g, y) if activation else y).set_output(True)
    summed(dims=dims)(g, dout if dims[-1] == 40 else x).set_output(True)
    return g


TANH_BWD = lambda g, y, x: g.gelu_approx_tanh_backward(y, x, name="dgelu")  # noqa: E731


@pytest.mark.gpu
@pytest.mark.parametrize("make,said", [
    (lambda: kept(lambda g, y: g.relu(y, name="act")),
     "relu 'act': its input 'pre' is a graph output; cuBLASLt's RELU_AUX epilogue keeps a bit "
     "mask of which values were positive, not the relu's input"),
    (lambda: kept(lambda g, y: g.gelu_approx_tanh(y, name="act"), before_bias=True),
     "'pre' is a graph output read by another node: cuBLASLt writes a second matrix only as "
     "its GELU_AUX epilogue (the input of a gelu_approx_tanh)"),
    (lambda: kept(lambda g, y: g.gelu_approx_tanh(y, name="act"), width=36),
     "aux 'pre' has a leading dimension of 36 elements; cuBLASLt's aux matrix needs a "
     "multiple of 8"),
    (lambda: backward(lambda g, y, x: g.gelu_backward(y, x, name="dgelu")),
     "gelu_backward 'dgelu': this is the erf gelu's derivative; cuBLASLt's DGELU epilogue "
     "computes the tanh approximation's (gelu_approx_tanh_backward)"),
    (lambda: backward(lambda g, y, x: g.relu_backward(y, x, name="drelu")),
     "relu_backward 'drelu': cuBLASLt's DRELU epilogue reads the bit mask its RELU_AUX "
     "epilogue wrote, not the relu's input"),
    (lambda: backward(lambda g, y, x: g.gelu_approx_tanh_backward(x, y, name="dgelu")),
     "cuBLASLt's DGELU epilogue takes the product as the gradient (dy)"),
    (lambda: backward(TANH_BWD, x_dims=(1, 40)),
     "its x must be a tensor in memory of the product's shape"),
    (lambda: backward(TANH_BWD, summed(dims=(16, 1))),
     "sums the output over its columns; cuBLASLt's DGELU_BGRAD sums it over its rows here"),
    (lambda: backward(TANH_BWD, summed(hipdnn.reduction_mode.MAX)),
     "cuBLASLt's bias-gradient epilogues sum; this reduction is max"),
    (fc2_backward, "matmul 'fc2_bwd_dw': one matmul a graph: cuBLASLt runs one product and "
                   "its epilogue (a backward step's dx, dw and db are a graph each)"),
    (lambda: operand_sum([1, 1]), "it does not sum over exactly one of the last two axes"),
    (lambda: operand_sum([1, 40], batch=(2,)),
     "'db::Y' is a bias gradient of a batched product, which blaslt does not ask of cuBLASLt"),
    (lambda: operand_sum([1, 40], activation=lambda g, y: g.relu(y, name="act")),
     "cuBLASLt's BGRADA / BGRADB epilogues sum an operand with no activation after the "
     "product"),
    (lambda: operand_sum([1, 32]),
     "it sums 'x' over its rows; cuBLASLt's BGRADA / BGRADB epilogues sum an operand over the "
     "product's k"),
])
def test_aux_and_gradient_graphs_cublaslt_cannot_run_are_declined(bl, make, said):
    why = reason(make())
    assert why and why.startswith(f"{ENGINE}: ") and said in why, why


@pytest.mark.gpu
def test_a_sum_of_the_plain_product_is_declined(bl):
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.HALF, compute_data_type=hipdnn.data_type.FLOAT)
    c = g.matmul(g.tensor(name="a", dim=[16, 32]), g.tensor(name="b", dim=[32, 40]), name="mm")
    c.set_output(True).set_name("c")
    g.reduction(c, hipdnn.reduction_mode.ADD, name="db").set_output(True).set_dim([1, 40])
    why = reason(g)
    assert why and "cuBLASLt sums an operand of the product (BGRADA / BGRADB) or its result "\
                   "after the DGELU epilogue (DGELU_BGRAD), not 'c'" in why, why


@pytest.mark.gpu
def test_the_graphs_a_training_step_splits_into_are_claimed(bl):
    # fc1 forward keeping its pre-activation, fc2's dx with the bias gradient of fc1, and
    # a weight gradient with its bias gradient
    assert reason(kept(lambda g, y: g.gelu_approx_tanh(y, name="act"))) is None
    assert reason(backward(TANH_BWD, summed())) is None
    assert reason(operand_sum([1, 40])) is None


@pytest.mark.gpu
def test_a_strided_matrix_is_declined(bl):
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT)
    a = g.tensor(name="a", dim=[8, 6], stride=[12, 2])  # every other element of each row
    c = g.matmul(a, g.tensor(name="b", dim=[6, 4]), name="mm")
    c.set_output(True)
    why = reason(g)
    assert why and "'a' ([.., 8, 6], strides [.., 12, 2]) is not a matrix cuBLASLt reads" in why, why


# ---- over the fakes, in CI ---------------------------------------------------------------------

def test_the_gpu_tests_pass_over_the_fake_libraries():
    for lib in (FAKE_DRIVER / "libcuda.so.1", FAKE_LT / "libcublasLt.so.13", PLUGIN):
        assert lib.is_file(), f"build the targets ({lib})"
    if FAKE:
        pytest.skip("already inside the run over the fakes")
    env = fake_env(HIPDNN_TEST_FAKE_BLASLT="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p",
                           "no:cacheprovider", __file__], cwd=str(REPO), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    out = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == 0, out[-6000:]
    summary = out.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary and "skipped" not in summary, summary


# ---- loading ---------------------------------------------------------------------------------

LOAD = """
import json, hipdnn, numpy as np
hipdnn.set_engine_plugin_paths([ENGINES + "/libhipdnn_reference_cpu.so", PLUGIN],
                               hipdnn.plugin_loading_mode.ABSOLUTE)
skipped = {p.rsplit("/", 1)[-1]: r for p, r in hipdnn.skipped_engine_plugins()}
x = np.array([[-1.0, 0.5, 2.0]], np.float32)
with hipdnn.Graph() as g:
    g.relu(x)
print(json.dumps({"skipped": skipped, "engines": [e.name for e in hipdnn.engines()],
                  "relu": g(x).tolist(), "ran_on": g.engine_name}))
"""


def load(env):
    """What a child with env loads: {"skipped": {file: reason}, "engines": [...], "relu":
    a relu run on what remains, "ran_on": its engine}; and its stderr."""
    code = f"ENGINES = {str(ENGINES)!r}\nPLUGIN = {str(PLUGIN)!r}\n" + textwrap.dedent(LOAD)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120, cwd=str(REPO))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def assert_declined(out, said):
    why = out["skipped"].get(PLUGIN.name)
    assert why and why.startswith(f"declined to load: {ENGINE}: ") and said in why, out
    assert out["engines"] == ["reference_cpu"] and out["relu"] == [[0.0, 0.5, 2.0]], out


def test_the_plugin_loads_over_the_fakes():
    out, _ = load(fake_env())
    assert out["engines"] == [ENGINE, "reference_cpu"] and PLUGIN.name not in out["skipped"], out
    assert out["ran_on"] == "reference_cpu"  # host arrays: the host engine


def test_a_missing_library_declines_loading_naming_it(tmp_path):
    missing = tmp_path / "libcublasLt.so.13"
    out, _ = load(fake_env(library=False, HIPDNN_BLASLT_LIBRARY=str(missing)))
    assert_declined(out, f"no cuBLASLt: $HIPDNN_BLASLT_LIBRARY: {missing}")


def test_without_any_cublaslt_the_reason_lists_where_it_looked():
    found = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    if "libcublasLt.so" in found or Path("/usr/local/cuda/lib64/libcublasLt.so").exists():
        pytest.skip("this machine has a cuBLASLt on the loader's path or in /usr/local/cuda")
    env = fake_env(library=False)
    env.pop("HIPDNN_BLASLT_LIBRARY", None)
    out, _ = load(env)
    assert_declined(out, "no cuBLASLt found (looked for libcublasLt.so.13/.12/.11 on the "
                         "loader path, in NVIDIA's wheels under ")


def test_a_library_too_old_declines_loading_naming_its_version():
    out, _ = load(fake_env(FAKE_CUBLASLT_OLD="1"))
    assert_declined(out, "libcublasLt.so.13 is cuBLASLt 10.2.1 (cublasLtGetVersion 10201); "
                         "blaslt needs 11.0 or newer")


def test_without_a_device_it_declines_loading():
    out, _ = load(fake_env(FAKE_CUDA_NO_DEVICE="1"))
    assert_declined(out, "no CUDA device: cuInit returned 100 (CUDA_ERROR_NO_DEVICE)")


def test_on_this_machine_it_loads_or_declines_quietly():
    # the default folder, as a user gets it: blaslt loads (an NVIDIA GPU with cuBLASLt) or
    # is skipped with its reason, logged as info, so nothing reaches stderr at warn
    env = {k: v for k, v in os.environ.items() if k not in ("HIPDNN_PLUGIN_DIR",
                                                           "HIPDNN_LOG_LEVEL")}
    code = ("import hipdnn, json\n"
            "print(json.dumps({'engines': [e.name for e in hipdnn.engines()], 'skipped': "
            "{p.rsplit('/', 1)[-1]: r for p, r in hipdnn.skipped_engine_plugins()}}))\n")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120, cwd=str(REPO))
    assert proc.returncode == 0 and ENGINE not in proc.stderr, proc.stderr
    out = json.loads(proc.stdout)
    assert "reference_cpu" in out["engines"]
    if ENGINE not in out["engines"]:
        assert out["skipped"][PLUGIN.name].startswith(f"declined to load: {ENGINE}: "), out


def test_the_plugin_links_neither_the_driver_nor_cublaslt():
    readelf = subprocess.run(["readelf", "-d", str(PLUGIN)], capture_output=True, text=True)
    if readelf.returncode != 0:
        pytest.skip("no readelf")
    needed = [line for line in readelf.stdout.splitlines() if "(NEEDED)" in line]
    assert needed and not any("cublas" in n or "libcuda" in n for n in needed), needed
    nm = subprocess.run(["nm", "-D", "--defined-only", str(PLUGIN)], capture_output=True,
                        text=True, check=True).stdout
    names = [line.split()[-1] for line in nm.splitlines() if line.strip()]
    assert names and all(n.startswith("hipdnn") for n in names), names
