"""The GPU engine's reductions and softmax against float64 NumPy (DESIGN tolerances): all
nine modes, fp32 / fp16 / bf16 storage, rows of 1 to 4097 elements, any set of axes,
strided and transposed inputs and outputs, rows cut into parts (workspace), special
values; softmax recognised and run as one kernel, and graphs around reductions run as
stages.

Every run copies each operand's whole allocation to the device, NaN poison in its gaps
included, and back (conftest.DeviceNumerics), so outputs are checked to be fully written
and nothing else, and inputs unchanged.  Skipped with the reason without a GPU; CI runs
this file on the engine's host emulation (tests/test_gpu_emulated.py).
"""
import math

import numpy as np
import pytest

import hipdnn
import references as ref
from conftest import GPU_ENGINE, STORAGES, assert_close, engine_log
from test_numerics import assert_same_values, exact_input
from tolerances import DTYPES, graph_tolerance, tolerance

pytestmark = pytest.mark.gpu
dt = hipdnn.data_type
RM = hipdnn.reduction_mode


def _prod(v, axes):
    return np.prod(v, axis=axes, keepdims=True)


# mode -> float64 reference over `axes` (kept as size 1)
REFERENCE = {
    "add": lambda v, a: np.sum(v, axis=a, keepdims=True),
    "mul": _prod,
    "min": lambda v, a: np.min(v, axis=a, keepdims=True),
    "max": lambda v, a: np.max(v, axis=a, keepdims=True),
    "amax": lambda v, a: np.max(np.abs(v), axis=a, keepdims=True),
    "avg": lambda v, a: np.mean(v, axis=a, keepdims=True),
    "norm1": lambda v, a: np.sum(np.abs(v), axis=a, keepdims=True),
    "norm2": lambda v, a: np.sqrt(np.sum(v * v, axis=a, keepdims=True)),
    "mul_no_zeros": lambda v, a: _prod(np.where(v == 0, 1.0, v), a),
}
MODE = {"add": RM.ADD, "mul": RM.MUL, "min": RM.MIN, "max": RM.MAX, "amax": RM.AMAX,
        "avg": RM.AVG, "norm1": RM.NORM1, "norm2": RM.NORM2, "mul_no_zeros": RM.MUL_NO_ZEROS}


ran = engine_log  # the engine's lines while run() runs (conftest)


def reduce_input(gpu, shape, dtype, mode, layout="packed", values=None):
    """Inputs that keep every mode's result well conditioned: products near 1."""
    if values is not None:
        return gpu.input(shape, dtype, layout, values=values)
    if mode in ("mul", "mul_no_zeros"):
        return gpu.input(shape, dtype, layout, low=0.9, high=1.1)
    return gpu.input(shape, dtype, layout)


def check_reduction(gpu, dtype, shape, axes, mode, x_layout="packed", y_layout="packed",
                    y_dtype=None, x=None):
    """y = mode over `axes` of x [shape], against float64; returns the engine's log."""
    y_dtype = y_dtype or dtype
    x = x or reduce_input(gpu, shape, dtype, mode, x_layout)
    y_shape = [1 if i in axes else d for i, d in enumerate(shape)]
    g = gpu.graph(dtype)
    y = g.reduction(input=x.bind(g, "x"), mode=MODE[mode], name="r")
    out = gpu.output(y, y_shape, y_dtype, y_layout)
    log = ran(lambda: gpu.execute(g, [x, out]))
    want = REFERENCE[mode](x.values, tuple(axes))
    gpu.assert_close(out, want, graph_tolerance(["reduction"], y_dtype))
    return log


# ---- every mode --------------------------------------------------------------------------

@pytest.mark.parametrize("mode", list(MODE))
def test_every_mode_over_the_last_axis(gpu, dtype, mode):
    check_reduction(gpu, dtype, [5, 200], [1], mode)


@pytest.mark.parametrize("mode", list(MODE))
def test_every_mode_over_an_outer_axis(gpu, dtype, mode):
    # the innermost axis is kept: rows lie side by side, a thread walks the reduced axis
    log = check_reduction(gpu, dtype, [150, 24], [0], mode)
    assert any("rows side by side" in m for m in log), log


@pytest.mark.parametrize("mode", ["add", "max", "norm2"])
def test_every_axis_at_once(gpu, dtype, mode):
    check_reduction(gpu, dtype, [3, 4, 5, 7], [0, 1, 2, 3], mode)


# ---- sizes --------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 7, 33, 1000, 4097])
def test_row_lengths(gpu, dtype, n):
    check_reduction(gpu, dtype, [6, n], [1], "add")


@pytest.mark.parametrize("mode", ["add", "max", "norm2"])
def test_whole_aligned_rows_take_the_fast_way_and_others_the_general_one(gpu, dtype, mode):
    # rows of 64 elements are whole 16-byte vectors: the fast way (the storage type a
    # template argument); rows of 33 end in a partial vector: the general way
    log = check_reduction(gpu, dtype, [300, 64], [1], mode)
    assert any("(fast way)" in m for m in log), log
    log = check_reduction(gpu, dtype, [300, 33], [1], mode)
    assert any("(general way)" in m for m in log), log


@pytest.mark.parametrize("n", [1, 7, 33, 1000, 4097])
def test_row_lengths_max(gpu, n):
    check_reduction(gpu, "bf16", [3, n], [1], "max")


@pytest.mark.parametrize("rows", [1, 7, 33, 1000])
def test_outer_axis_lengths(gpu, dtype, rows):
    # kept widths of 8 (a vector of outputs a thread) and 5 (one output a thread)
    check_reduction(gpu, dtype, [rows, 16], [0], "add")
    check_reduction(gpu, dtype, [rows, 5], [0], "avg")


@pytest.mark.parametrize("axes", [[0], [1], [2], [0, 2], [1, 3], [0, 1, 3], [1, 2], []])
def test_any_set_of_axes(gpu, dtype, axes):
    check_reduction(gpu, dtype, [3, 4, 5, 6], axes, "add")


@pytest.mark.parametrize("axes", [[0, 2], [1, 3], [3]])
def test_any_set_of_axes_norm1(gpu, axes):
    check_reduction(gpu, "fp32", [4, 3, 6, 5], axes, "norm1")


# ---- strides ------------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["strided", "transposed", "channels_last"])
@pytest.mark.parametrize("axes", [[3], [1], [2, 3], [0, 1]])
def test_strided_inputs(gpu, dtype, layout, axes):
    check_reduction(gpu, dtype, [2, 5, 6, 9], axes, "add", x_layout=layout)


@pytest.mark.parametrize("axes", [[1], [0]])
def test_strided_outputs(gpu, dtype, axes):
    check_reduction(gpu, dtype, [9, 40], axes, "max", y_layout="strided")


def test_output_in_another_storage_type(gpu):
    check_reduction(gpu, "bf16", [7, 300], [1], "add", y_dtype="fp32")


def test_unaligned_rows_read_element_by_element(gpu, dtype):
    # rows of 33 start at every alignment; rows of 40 inside a view one element in
    check_reduction(gpu, dtype, [12, 33], [1], "add")
    x = gpu.input([4, 41], dtype)
    x.array = x.array[:, 1:]
    x.values = x.values[:, 1:]
    x.shape = x.array.shape
    check_reduction(gpu, dtype, [4, 40], [1], "norm2", x=x)


# ---- rows cut into parts (workspace) -------------------------------------------------------

@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_few_long_rows_are_cut_into_parts(gpu, dtype):
    log = check_reduction(gpu, dtype, [2, 300001], [1], "add")
    assert any("parts" in m for m in log), log
    check_reduction(gpu, dtype, [1, 200003], [1], "amax")


@pytest.mark.parametrize("mode", ["avg", "norm2", "mul_no_zeros", "min"])
def test_parts_combine_with_each_modes_last_step(gpu, mode):
    v = gpu.random([1, 70001], 0.999, 1.001, signed=False)
    v[0, ::7] = 0.0  # mul_no_zeros skips them; the others see zeros too
    x = gpu.input(v.shape, "fp32", values=v)
    log = check_reduction(gpu, "fp32", [1, 70001], [1], mode, x=x)
    assert any("parts" in m for m in log), log


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_long_outer_axis_is_cut_into_parts(gpu, dtype):
    log = check_reduction(gpu, dtype, [20000, 8], [0], "add")
    assert any("parts" in m and "side by side" in m for m in log), log
    check_reduction(gpu, dtype, [9000, 3], [0], "max")


# ---- special values ----------------------------------------------------------------------

SPECIAL_ROWS = [
    [1.0, math.nan, 2.0],
    [1.0, math.inf, -3.0],
    [-math.inf, -1.0, -2.0],
    [-0.0, -0.0, -0.0],
    [0.0, -0.0, 0.0],
    [0.0, 2.0, 0.0],
    [math.inf, -math.inf, 1.0],
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", list(MODE))
def test_special_values(gpu, dtype, mode):
    """NaN wins, infinities add and multiply as IEEE says, max / min order -0 below +0
    (IEEE 754-2019 maximum / minimum, as the pointwise max and min).  A sum of zeros is
    +0 or -0 by the order of the additions: its sign is not checked."""
    v = np.asarray(SPECIAL_ROWS, np.float64)
    x = exact_input(dtype, v)
    g = gpu.graph(dtype)
    y = g.reduction(input=x.bind(g, "x"), mode=MODE[mode])
    out = gpu.output(y, [len(v), 1], dtype)
    gpu.execute(g, [x, out])
    got = out.decoded()
    if mode in ("max", "amax", "min"):
        f = ref.ieee_minimum if mode == "min" else ref.ieee_maximum
        src = np.abs(v) if mode == "amax" else v
        want = src[:, :1]
        for k in range(1, v.shape[1]):
            want = f(want, src[:, k:k + 1])
    else:
        with np.errstate(all="ignore"):
            want = REFERENCE[mode](v, (1,))
        if mode in ("add", "avg"):
            got = np.where(got == 0, 0.0, got)
            want = np.where(want == 0, 0.0, want)
    assert_same_values(got, ref.round_to(want, dtype), mode)


# ---- softmax: one kernel -------------------------------------------------------------------

def softmax_graph(g, x, axes=(-1,), name="sm"):
    """cuDNN-FE users' softmax: max, sub, exp, sum, div (y's dims given to the reductions)."""
    dims = list(x.get_dim())
    red = [1 if (i in axes or i - len(dims) in axes) else d for i, d in enumerate(dims)]
    m = g.reduction(input=x, mode=RM.MAX, name=f"{name}_max")
    m.set_dim(red)
    e = g.exp(input=g.sub(a=x, b=m, name=f"{name}_sub"), name=f"{name}_exp")
    s = g.reduction(input=e, mode=RM.ADD, name=f"{name}_sum")
    s.set_dim(red)
    return g.div(a=e, b=s, name=name), (m, s)


def softmax_ref(v, axis=-1, inter=None):
    """float64 softmax; inter ("fp16" / "bf16") rounds every intermediate as the graph's
    virtual tensors of that type do."""
    r = (lambda a: ref.round_to(a, inter)) if inter else (lambda a: a)
    m = r(np.max(v, axis=axis, keepdims=True))
    e = r(np.exp(r(v - m)))
    return e / r(np.sum(e, axis=axis, keepdims=True))


def check_softmax(gpu, dtype, shape, axes=(-1,), x_layout="packed", y_layout="packed",
                  inter=None):
    x = gpu.input(shape, dtype, x_layout, low=0.1, high=4.0)
    g = hipdnn.pygraph(io_data_type=STORAGES[dtype].data_type,
                       intermediate_data_type=STORAGES[inter].data_type if inter else dt.FLOAT,
                       compute_data_type=dt.FLOAT)
    y, _ = softmax_graph(g, x.bind(g, "x"), axes)
    out = gpu.output(y, shape, dtype, y_layout)
    log = ran(lambda: gpu.execute(g, [x, out]))
    axis = tuple(a % len(shape) for a in axes)
    gpu.assert_close(out, softmax_ref(x.values, axis, inter),
                     graph_tolerance(["reduction", "pointwise"], inter or dtype))
    return log


def one_softmax_kernel(log):
    return any("runs in 1 stage" in m for m in log) and \
        any("stage 1 of 1 (softmax" in m and "first run" in m for m in log)


@pytest.mark.parametrize("n", [1, 7, 33, 1000, 4097])
def test_softmax_is_one_kernel(gpu, dtype, n):
    log = check_softmax(gpu, dtype, [5, n])
    assert one_softmax_kernel(log), log


def test_softmax_of_whole_aligned_rows_takes_the_fast_way(gpu, dtype):
    for n, way in ((512, "(fast way)"), (500, "(general way)")):
        log = check_softmax(gpu, dtype, [6, n])
        assert any(way in m for m in log), (n, log)


def test_softmax_bf16_input_fp32_reductions(gpu):
    # x in bf16, the max, the sum and every intermediate fp32: the common mixed graph
    log = check_softmax(gpu, "bf16", [16, 1024])
    assert one_softmax_kernel(log), log


@pytest.mark.parametrize("inter", ["bf16", "fp16"])
def test_softmax_rounds_16_bit_intermediates_like_the_graph(gpu, inter):
    log = check_softmax(gpu, "fp32", [6, 300], inter=inter)
    assert one_softmax_kernel(log), log


@pytest.mark.parametrize("x_layout,y_layout", [("strided", "packed"), ("transposed", "strided"),
                                               ("packed", "transposed")])
def test_softmax_strided(gpu, dtype, x_layout, y_layout):
    log = check_softmax(gpu, dtype, [3, 7, 40], x_layout=x_layout, y_layout=y_layout)
    assert one_softmax_kernel(log), log


def test_softmax_over_an_inner_axis_and_several_axes(gpu):
    assert one_softmax_kernel(check_softmax(gpu, "fp32", [4, 33, 5], axes=(1,)))
    assert one_softmax_kernel(check_softmax(gpu, "fp16", [3, 6, 5, 4], axes=(2, 3)))


def test_softmax_of_rows_too_long_for_registers(gpu):
    log = check_softmax(gpu, "fp32", [2, 40000])
    assert any("read three times" in m for m in log), log


def test_softmax_of_large_values_does_not_overflow(gpu):
    v = np.linspace(-80.0, 88.0, 2 * 257).reshape(2, 257)
    x = gpu.input(v.shape, "fp32", values=v)
    g = gpu.graph("fp32")
    y, _ = softmax_graph(g, x.bind(g, "x"))
    out = gpu.output(y, list(v.shape), "fp32")
    gpu.execute(g, [x, out])
    want = softmax_ref(x.values)
    got = out.decoded()
    assert np.all(np.isfinite(got))
    assert np.max(np.abs(got - want)) <= 1e-6, np.max(np.abs(got - want))


def test_softmax_with_its_max_as_an_output_runs_node_by_node(gpu):
    """Any other graph of these ops still runs, as stages whose values between them live
    in the workspace."""
    x = gpu.input([4, 50], "fp32")
    g = gpu.graph("fp32")
    y, (m, s) = softmax_graph(g, x.bind(g, "x"))
    out = gpu.output(y, [4, 50], "fp32")
    out_m = gpu.output(m, [4, 1], "fp32")
    log = ran(lambda: gpu.execute(g, [x, out, out_m]))
    assert not any("(softmax" in m for m in log), log
    assert any("runs in 4 stages" in m for m in log), log
    assert g.get_workspace_size() > 0
    gpu.assert_close(out, softmax_ref(x.values), graph_tolerance(["reduction", "pointwise"], "fp32"))
    gpu.assert_close(out_m, np.max(x.values, axis=1, keepdims=True), tolerance("reduction", "fp32"))


# ---- reductions in larger graphs -----------------------------------------------------------

def test_pointwise_before_and_after_a_reduction(gpu, dtype):
    # y = relu(sum(x * x) - 1): a pointwise stage, the reduction, a pointwise stage
    x = gpu.input([6, 70], dtype)
    g = gpu.graph(dtype)
    X = x.bind(g, "x")
    r = g.reduction(input=g.mul(a=X, b=X), mode=RM.ADD)
    r.set_dim([6, 1])
    y = g.relu(input=g.sub(a=r, b=1.0))
    out = gpu.output(y, [6, 1], dtype)
    log = ran(lambda: gpu.execute(g, [x, out]))
    assert any("runs in 3 stages" in m for m in log), log
    want = np.maximum(np.sum(x.values * x.values, axis=1, keepdims=True) - 1.0, 0.0)
    gpu.assert_close(out, want, graph_tolerance(["reduction", "pointwise"], dtype))


def test_gen_index_feeding_a_reduction(gpu, dtype):
    # y = sum over the row of x * (its column index), as stages: gen_index's input has no
    # memory, and its stage binds no pointer for it
    x = gpu.input([6, 70], dtype)
    g = gpu.graph(dtype)
    X = x.bind(g, "x")
    idx = g.gen_index(input=X, axis=1)
    r = g.reduction(input=g.mul(a=X, b=idx), mode=RM.ADD)
    r.set_dim([6, 1])
    out = gpu.output(r, [6, 1], dtype)
    log = ran(lambda: gpu.execute(g, [x, out]))
    assert any("stages" in m for m in log), log
    want = np.sum(x.values * np.arange(70, dtype=np.float64), axis=1, keepdims=True)
    gpu.assert_close(out, want, graph_tolerance(["reduction", "pointwise"], dtype))


def test_two_reductions_of_one_input(gpu):
    x = gpu.input([5, 64], "fp32")
    g = gpu.graph("fp32")
    X = x.bind(g, "x")
    a = g.reduction(input=X, mode=RM.MAX)
    a.set_dim([5, 1])
    b = g.reduction(input=X, mode=RM.MIN)
    b.set_dim([5, 1])
    out_a = gpu.output(a, [5, 1], "fp32")
    out_b = gpu.output(b, [5, 1], "fp32")
    gpu.execute(g, [x, out_a, out_b])
    gpu.assert_close(out_a, np.max(x.values, axis=1, keepdims=True), 1e-5)
    gpu.assert_close(out_b, np.min(x.values, axis=1, keepdims=True), 1e-5)


# ---- the GPU engine and the reference engine agree ---------------------------------------

def reference_engine_result(array, mode, y_shape, dtype):
    """The reference engine's result for the same graph, or skip naming why it declined."""
    g = hipdnn.pygraph(io_data_type=STORAGES[dtype].data_type,
                       intermediate_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    x = g.tensor_like(array, name="x", data_type=STORAGES[dtype].data_type)
    y = g.reduction(input=x, mode=MODE[mode])
    y.set_dim(y_shape).set_output(True)
    g.set_preferred_engine("reference_cpu")
    try:
        g.build([hipdnn.heur_mode.A])
    except hipdnn.HipdnnError as e:
        pytest.skip(f"the reference engine does not run this reduction (yet): {e}")
    if g.get_engine_name(0) != "reference_cpu":
        pytest.skip("the reference engine declined: "
                    f"{dict(g.support_report()).get('reference_cpu')}")
    want = np.empty(y_shape, STORAGES[dtype].np_dtype)
    g.execute({x: array, y: want})
    return STORAGES[dtype].decode(want)


@pytest.mark.parametrize("mode", ["add", "max", "avg", "norm2"])
def test_gpu_and_reference_engines_agree(gpu, dtype, mode):
    x = reduce_input(gpu, [7, 130], dtype, mode)
    check_reduction(gpu, dtype, [7, 130], [1], mode, x=x)  # against NumPy first
    g = gpu.graph(dtype)
    y = g.reduction(input=x.bind(g, "x"), mode=MODE[mode])
    out = gpu.output(y, [7, 1], dtype)
    gpu.execute(g, [x, out])
    want = reference_engine_result(x.array, mode, [7, 1], dtype)
    assert_close(out.decoded(), want, graph_tolerance(["reduction"], dtype), "y")


# ---- what the engine declines, with its reason -------------------------------------------

def test_declines_double_reductions_with_the_reason(gpu):
    g = hipdnn.pygraph(io_data_type=dt.DOUBLE, compute_data_type=dt.FLOAT)
    x = g.tensor(name="x64", dim=[4, 8])
    y = g.reduction(input=x, mode=RM.ADD)
    y.set_dim([4, 1]).set_output(True)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([hipdnn.heur_mode.A])
    why = dict(g.support_report())[GPU_ENGINE]
    assert why and "x64" in why and "float64" in why and "reduction" in why, why
