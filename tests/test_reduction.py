"""reduction on the reference engine against float64 NumPy: cuDNN's nine operators over any
set of axes (y's dims are 1 where reduced), any strides, fp32 / fp16 / bf16 / float64
storage; NaN and infinities as NumPy treats them; results independent of thread count."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import hipdnn
import references as ref
from conftest import STORAGES, assert_close
from tolerances import graph_tolerance, tolerance

dt = hipdnn.data_type
MODES = ref.REDUCTION_MODES


def fe_mode(mode):
    """hipdnn.reduction_mode member of a reference mode name ("norm2" -> NORM2)."""
    return getattr(hipdnn.reduction_mode, mode.upper())


def reduced_axes(x_shape, y_shape):
    return tuple(i for i, (a, b) in enumerate(zip(x_shape, y_shape)) if b == 1 and a != 1)


def values_for(nx, mode, shape, count):
    """Inputs that keep each mode meaningful: for the products of `count` factors,
    magnitudes so near 1 that the product neither overflows fp16 nor vanishes (log spread
    about 1 / sqrt(count)), a quarter of them zeros (of both signs) for mul_no_zeros;
    fresh random values otherwise."""
    if mode in ("mul", "mul_no_zeros"):
        spread = min(0.25, 1.0 / np.sqrt(count))
        v = np.exp(nx.rng.uniform(-spread, spread, tuple(shape)))
        v *= nx.rng.choice([-1.0, 1.0], tuple(shape))
        if mode == "mul_no_zeros":
            zeros = nx.rng.random(shape) < 0.25
            v = np.where(zeros, np.copysign(0.0, v), v)
        return v
    return nx.random(shape, 0.1, 1.0)


def run_reduction(nx, dtype, mode, x_shape, y_shape, x_layout="packed", y_layout="packed",
                  values=None):
    """Builds x -> reduction -> y, runs it and returns (y operand, float64 reference)."""
    if values is None:
        values = values_for(nx, mode, x_shape, int(np.prod(x_shape) // np.prod(y_shape)))
    x = nx.input(x_shape, dtype, x_layout, values=values)
    g = nx.graph(dtype)
    y = g.reduction(x.bind(g, "x"), fe_mode(mode), name="red")
    expected = ref.reduction(x.values, mode, reduced_axes(x_shape, y_shape))
    if y_layout == "inferred":  # y's dims are the user's to give; its strides inferred
        y.set_dim(list(y_shape))
    out = nx.output(y, y_shape, dtype, y_layout)
    nx.execute(g, [x, out])
    return out, expected


def check(nx, dtype, mode, x_shape, y_shape, **kw):
    out, expected = run_reduction(nx, dtype, mode, x_shape, y_shape, **kw)
    nx.assert_close(out, expected, tolerance("reduction", dtype))


# ---- every mode, every storage type -----------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_every_mode_over_the_last_axis(nx, dtype, mode):
    check(nx, dtype, mode, [7, 33], [7, 1])


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_over_the_first_axis_of_1031_rows(nx, dtype, mode):
    check(nx, dtype, mode, [1031, 5], [1, 5])


@pytest.mark.parametrize("mode", ["add", "min", "avg", "norm2", "mul_no_zeros"])
def test_float64_storage(nx, mode):
    check(nx, "fp64", mode, [9, 130], [9, 1])
    check(nx, "fp64", mode, [9, 130], [1, 130])


# ---- axis sets and sizes -----------------------------------------------------------------

AXIS_CASES = [
    ([7, 33], [7, 1]),                # last axis
    ([1031, 5], [1, 5]),              # first axis
    ([4, 33, 7], [4, 1, 7]),          # middle axis
    ([7, 33], [1, 1]),                # all
    ([3, 5, 7, 2], [1, 1, 1, 1]),     # all, rank 4
    ([7, 33], [7, 33]),               # none: y is x's shape
    ([3, 4, 5, 6], [1, 4, 1, 6]),     # two axes apart
    ([3, 4, 5, 6], [3, 1, 1, 6]),     # two adjacent axes
    ([1, 7, 1], [1, 1, 1]),           # size-1 dims around the reduced one
    ([1], [1]),                       # one value
    ([1033], [1]),                    # rank 1, 1000+
]


@pytest.mark.parametrize("x_shape,y_shape", AXIS_CASES, ids=lambda v: "x".join(map(str, v)))
@pytest.mark.parametrize("mode", ["add", "max", "avg", "norm2"])
def test_axis_sets_fp32(nx, mode, x_shape, y_shape):
    check(nx, "fp32", mode, x_shape, y_shape)


@pytest.mark.parametrize("x_shape,y_shape", AXIS_CASES, ids=lambda v: "x".join(map(str, v)))
def test_axis_sets_low_precision(nx, x_shape, y_shape):
    for dtype in ("fp16", "bf16"):
        check(nx, dtype, "add", x_shape, y_shape)
        check(nx, dtype, "amax", x_shape, y_shape)


# ---- layouts ----------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["strided", "transposed", "channels_last"])
@pytest.mark.parametrize("mode", ["add", "amax", "mul_no_zeros", "min"])
def test_non_contiguous_x_and_y(nx, dtype, layout, mode):
    # x [N, C, H, W] reduced over N and W; y strided as x is (channels_last: NHWC order)
    y_layout = "strided" if layout == "strided" else "packed"
    check(nx, dtype, mode, [3, 6, 5, 7], [1, 6, 5, 1], x_layout=layout, y_layout=y_layout)


def test_reduction_over_channels_of_nhwc(nx, dtype):
    check(nx, dtype, "avg", [2, 37, 4, 5], [2, 1, 4, 5], x_layout="channels_last")


def test_inferred_output_strides(nx):
    check(nx, "fp32", "add", [4, 33, 7], [4, 1, 7], y_layout="inferred")


# ---- sizes that split the work -------------------------------------------------------------

@pytest.mark.parametrize("x_shape,y_shape", [
    ([1 << 20], [1]),                 # one group: the reduced range cut in pieces
    ([256, 4099], [1, 4099]),         # columns: tiles along the kept innermost dim
    ([4099, 256], [4099, 1]),         # rows: a group per work item
    ([64, 3, 4096], [1, 3, 1]),       # per channel, as batchnorm's statistics
    ([64, 4096, 3], [1, 1, 3]),       # per channel, channels innermost
], ids=["all", "columns", "rows", "channels", "channels_last"])
@pytest.mark.parametrize("mode", ["add", "max", "norm1"])
def test_large_reductions(nx, mode, x_shape, y_shape):
    check(nx, "fp32", mode, x_shape, y_shape)


def test_fp32_sums_are_exact(nx):
    # float32 values in [0.1, 1) are multiples of 2^-27: float64 sums of a million of them
    # are exact, so y is the exact sum rounded once, whatever the order.
    out, expected = run_reduction(nx, "fp32", "add", [1 << 20], [1])
    assert out.decoded()[0] == np.float64(np.float32(expected[0]))


# ---- special values -----------------------------------------------------------------------

def with_specials(op, where, values):
    """Writes special values into an input operand (and its float64 values, and its
    untouched copy, which the harness checks after the run)."""
    for idx, v in zip(where, values):
        op.array[idx] = op.storage.encode(np.float64(v))
    op.values = op.storage.decode(op.array)
    op.before = op.base.copy()
    return op


def assert_same_specials(got, want, tol, name):
    """NaN exactly where the reference has NaN, the same infinities, the rest within tol."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(want)), f"{name}: NaN at {got} vs {want}"
    inf = np.isinf(want)
    assert np.array_equal(got[inf], want[inf]), f"{name}: infinities {got} vs {want}"
    finite = np.isfinite(want)
    assert_close(got[finite], want[finite], tol, name)


@pytest.mark.parametrize("mode", ["max", "min", "amax", "add", "norm1"])
def test_nan_and_infinities(nx, dtype, mode):
    # row 0 has a NaN, row 1 +inf, row 2 -inf, row 3 both infinities, row 4 nothing special
    x = nx.input([5, 9], dtype)
    with_specials(x, [(0, 3), (1, 2), (2, 5), (3, 0), (3, 8)],
                  [np.nan, np.inf, -np.inf, np.inf, -np.inf])
    g = nx.graph(dtype)
    y = g.reduction(x.bind(g, "x"), fe_mode(mode), name="red")
    out = nx.output(y, [5, 1], dtype)
    with np.errstate(invalid="ignore"):
        expected = ref.reduction(x.values, mode, (1,))
    nx.execute(g, [x, out])
    assert_same_specials(out.decoded(), expected, tolerance("reduction", dtype), mode)


def test_max_and_min_order_zeros_as_ieee_does(nx):
    # IEEE 754-2019 maximum / minimum, as the pointwise max / min: -0 < +0
    values = np.array([[-0.0, 0.0, -0.0], [-0.0, -0.0, -0.0], [0.0, -0.0, 0.0]])
    for mode, signs in (("max", [False, True, False]), ("min", [True, True, True])):
        out, _ = run_reduction(nx, "fp32", mode, [3, 3], [3, 1], values=values)
        got = out.decoded()[:, 0]
        assert np.all(got == 0) and list(np.signbit(got)) == signs, (mode, got)


def test_mul_no_zeros_of_only_zeros_is_one(nx, dtype):
    values = np.array([[0.0, -0.0, 0.0], [0.0, 2.0, -0.0]])
    out, expected = run_reduction(nx, dtype, "mul_no_zeros", [2, 3], [2, 1], values=values)
    assert list(out.decoded()[:, 0]) == [1.0, 2.0] == list(expected[:, 0])


# ---- in graphs ----------------------------------------------------------------------------

def test_softmax_from_reductions_and_pointwise(nx, dtype):
    # y = exp(x - max(x)) / sum(exp(x - max(x))) over the last axis: reductions feeding
    # pointwise nodes (a fused run sub -> exp whose result two nodes read) and back
    x = nx.input([6, 33], dtype, high=4.0)
    g = nx.graph(dtype)
    xt = x.bind(g, "x")
    m = g.reduction(xt, hipdnn.reduction_mode.MAX, name="max")
    m.set_dim([6, 1])
    e = g.exp(g.sub(xt, m, name="shift"), name="exp")
    s = g.reduction(e, hipdnn.reduction_mode.ADD, name="sum")
    s.set_dim([6, 1])
    y = g.div(e, s, name="norm")
    x64 = x.values
    ex = np.exp(x64 - x64.max(axis=1, keepdims=True))
    expected = ex / ex.sum(axis=1, keepdims=True)
    out = nx.output(y, [6, 33], dtype)
    nx.execute(g, [x, out])
    nx.assert_close(out, expected, graph_tolerance(["reduction", "pointwise"], dtype))


def test_graph_wrapper_takes_numpy_arrays(rng):
    x = rng.standard_normal((5, 33)).astype(np.float32)
    with hipdnn.Graph(preferred_engine="reference_cpu") as g:
        y = g.reduction(x, hipdnn.reduction_mode.AMAX)
        y.set_dim([5, 1])
    out = g(x)
    assert out.shape == (5, 1) and out.dtype == np.float32
    want = np.abs(x.astype(np.float64)).max(axis=1, keepdims=True)
    assert_close(out, want, tolerance("reduction", "fp32"))
    x2 = rng.standard_normal((5, 33)).astype(np.float32)
    assert_close(g(x2), np.abs(x2.astype(np.float64)).max(axis=1, keepdims=True),
                 tolerance("reduction", "fp32"))


def test_serialized_reduction_runs_after_deserialize(rng):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[6, 40])
    y = g.reduction(x, hipdnn.reduction_mode.NORM2, name="red")
    y.set_output(True).set_dim([6, 1]).set_name("y")
    g.build([hipdnn.heur_mode.A])
    xa = rng.uniform(-1, 1, (6, 40)).astype(np.float32)
    y1 = np.full((6, 1), np.nan, np.float32)
    g.execute({x: xa, y: y1}, np.empty(g.get_workspace_size(), np.uint8))
    g2 = hipdnn.pygraph()
    g2.deserialize(g.serialize())
    g2.set_preferred_engine("reference_cpu")
    g2.build([hipdnn.heur_mode.A])
    y2 = np.full((6, 1), np.nan, np.float32)
    g2.execute({x.get_uid(): xa, y.get_uid(): y2}, np.empty(g2.get_workspace_size(), np.uint8))
    assert np.array_equal(y1, y2)
    assert_close(y2, np.sqrt((xa.astype(np.float64) ** 2).sum(axis=1, keepdims=True)),
                 tolerance("reduction", "fp32"))


def test_declines_an_integer_input_naming_node_and_tensor():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    x = g.tensor(name="counts", dim=[4, 8], data_type=dt.INT32)
    y = g.reduction(x, hipdnn.reduction_mode.ADD, name="total")
    y.set_output(True).set_dim([4, 1]).set_data_type(dt.FLOAT)
    g.validate()
    g.create_execution_plans([hipdnn.heur_mode.A])
    with pytest.raises(hipdnn.GraphNotSupportedError,
                       match=r"reference_cpu: node 'total' \(reduction add\): x 'counts' "
                             r"\(uid \d+\): data type int32 not supported"):
        g.check_support()


# ---- threads ------------------------------------------------------------------------------

def run_with_threads(threads, code):
    env = dict(os.environ, HIPDNN_CPU_THREADS=str(threads), HIPDNN_LOG_LEVEL="off")
    env["PYTHONPATH"] = str(Path(hipdnn.__file__).resolve().parents[1]) + os.pathsep + \
        env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_results_do_not_depend_on_the_thread_count():
    # Large enough that each way (pieces, tiles, groups) runs on several threads; fp64
    # storage shows every bit of the float64 results.
    code = """
        import hashlib
        import numpy as np
        import hipdnn
        rng = np.random.default_rng(3)
        digest = hashlib.sha256()
        for xs, ys in (([1 << 21], [1]), ([512, 4099], [1, 4099]), ([4099, 512], [4099, 1]),
                       ([64, 3, 8192], [1, 3, 1])):
            g = hipdnn.pygraph(io_data_type=hipdnn.data_type.DOUBLE)
            x = g.tensor(name="x", dim=xs)
            y = g.reduction(x, hipdnn.reduction_mode.NORM2, name="r")
            y.set_output(True).set_dim(ys)
            g.set_preferred_engine("reference_cpu")
            g.build([hipdnn.heur_mode.A])
            xa = rng.standard_normal(xs)
            ya = np.empty(ys)
            g.execute({x: xa, y: ya}, np.empty(g.get_workspace_size(), np.uint8))
            digest.update(ya.tobytes())
        print(digest.hexdigest())
    """
    assert run_with_threads(1, code) == run_with_threads(3, code)
