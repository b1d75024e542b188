"""The GPU engine's training-side normalization and data movement against float64 NumPy
(DESIGN tolerances): norm_backward in every mode (layernorm, rmsnorm, instancenorm,
batchnorm and adaptive layernorm backward, dscale and dbias included), batchnorm in the
training phase with and without running statistics, genstats, max and average pooling
forward and backward (resample), slice, concatenate and reshape, for fp32/fp16/bf16, odd
sizes and NHWC / strided layouts.

The engine runs pooling with kernels of its own (rs_kernels.h) and the rest as pointwise and
reduction kernels over views (plugins/hip/lower.c); the checks are the reference engine's
own (tests/test_norm_backward.py, tests/test_norm_forward.py, tests/test_resample.py), run here through conftest.DeviceNumerics, which copies each
operand's whole allocation (NaN poison in its gaps) to the device and back, so outputs are
checked to be fully written and nothing else, and inputs unchanged.  Skipped with the reason
without a GPU; CI runs this file on the engine's host emulation (tests/test_gpu_emulated.py).
"""
import numpy as np
import pytest

import hipdnn
import references as ref
import test_norm_backward as nb
import test_gpu_norm as gn
import test_norm_forward as nf
import test_resample as rs
from conftest import GPU_ENGINE, STORAGES, assert_close
from tolerances import tolerance

pytestmark = pytest.mark.gpu
dt = hipdnn.data_type


# ---- norm_backward ---------------------------------------------------------------------------

@pytest.mark.parametrize("case", list(nb.CASES))
def test_norm_backward_every_mode(gpu, dtype, case):
    nb.check(gpu, dtype, case)


@pytest.mark.parametrize("layout", ["channels_last", "strided"])
@pytest.mark.parametrize("case", ["instance", "batch", "layer_nchw"])
def test_norm_backward_layouts(gpu, dtype, case, layout):
    nb.check(gpu, dtype, case, layout=layout)


@pytest.mark.parametrize("case", ["layer", "rms"])
def test_norm_backward_zero_centered_gamma(gpu, case):
    nb.check(gpu, "fp32", case, zero_centered=True)


def test_rmsnorm_backward_without_dbias(gpu, dtype):
    nb.check(gpu, dtype, "rms", has_dbias=False)


def test_norm_backward_fp16_activations_with_fp32_parameters(gpu):
    nb.check(gpu, "fp16", "layer", param_dtype="fp32")
    nb.check(gpu, "bf16", "batch", param_dtype="fp32")


@pytest.mark.parametrize("case,x_shape,scale_shape", [
    ("layer", [5, 1031], [1, 1031]),           # long odd rows
    ("layer", [1037, 7], [1, 7]),              # many short rows
    ("rms", [2, 3, 1000], [1, 1, 1000]),
    ("instance", [2, 5, 33, 33], [1, 5, 1, 1]),
    ("batch", [32, 3, 17, 17], [1, 3, 1, 1]),  # few channels, many values
    ("ada_layer", [3, 17, 1000], [3, 1, 1000]),
])
def test_norm_backward_sizes(gpu, case, x_shape, scale_shape):
    nb.check(gpu, "fp32", case, x_shape=x_shape, scale_shape=scale_shape)


# ---- batchnorm in the training phase ------------------------------------------------------------

def test_batchnorm_training(gpu, dtype):
    nf.check(gpu, dtype, "batch")


@pytest.mark.parametrize("layout", ["channels_last", "strided"])
def test_batchnorm_training_layouts(gpu, dtype, layout):
    nf.check(gpu, dtype, "batch", x_layout=layout, y_layout=layout)


def test_batchnorm_updates_running_statistics(gpu, dtype):
    nf.check(gpu, dtype, "batch", running=True, momentum=0.1)


def test_batchnorm_running_statistics_with_momentum_at_execute(gpu):
    nf.check(gpu, "fp32", "batch", running=True, momentum=0.3, runtime_momentum=True,
             runtime_epsilon=True)


def test_batchnorm_running_statistics_nhwc_large(gpu):
    nf.check(gpu, "fp32", "batch", running=True, x_shape=[16, 8, 33, 33],
             scale_shape=[1, 8, 1, 1], x_layout="channels_last", y_layout="channels_last")


# ---- genstats -----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,layout", [([2, 3, 5, 7], "packed"), ([4, 5, 9, 9], "channels_last"),
                                          ([3, 6, 4, 5], "strided"), ([16, 3, 33, 33], "packed")])
def test_genstats(gpu, dtype, shape, layout):
    nb.test_genstats(gpu, dtype, shape, layout)


# ---- pooling (resample) ---------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(rs.CASES))
@pytest.mark.parametrize("mode", sorted(rs.MODES))
def test_pooling_forward(gpu, dtype, mode, case):
    _x, want, want_index, outs = rs.run_forward(gpu, dtype, mode, rs.CASES[case],
                                                index_dtype="i8" if mode == "max" else None)
    gpu.assert_close(outs[0], want, tolerance("resample", dtype))
    if mode == "max":  # the maximum is one of the inputs: exact, and its position too
        assert np.array_equal(outs[0].decoded(), want)
        assert np.array_equal(outs[1].array.astype(np.int64), want_index)


@pytest.mark.parametrize("layout", ["channels_last", "strided"])
@pytest.mark.parametrize("mode", sorted(rs.MODES))
def test_pooling_forward_layouts(gpu, mode, layout):
    _x, want, _i, outs = rs.run_forward(gpu, "fp32", mode, rs.CASES["2d_odd_asymmetric"], layout)
    gpu.assert_close(outs[0], want, tolerance("resample", "fp32"))


@pytest.mark.parametrize("mode", sorted(rs.MODES))
def test_pooling_ceil_mode(gpu, mode):
    case = dict(x=[1, 2, 9, 8], window=[3, 3], stride=[2, 2], pre=[0, 1], post=[1, 0])
    _x, want, _i, outs = rs.run_forward(gpu, "fp32", mode, case, ceil=True)
    gpu.assert_close(outs[0], want, tolerance("resample", "fp32"))


@pytest.mark.parametrize("index_dtype", ["i8", "i32", "i64"])
def test_maxpool_index_is_the_first_maximum(gpu, index_dtype):
    case = rs.CASES["2d_overlap"]
    values = gpu.rng.integers(-2, 3, size=case["x"]).astype(np.float64)  # ties everywhere
    _x, want, want_index, outs = rs.run_forward(gpu, "fp32", "max", case,
                                                index_dtype=index_dtype, values=values)
    assert np.array_equal(outs[0].decoded(), want)
    assert np.array_equal(outs[1].array.astype(np.int64), want_index)


def test_maxpool_with_zero_padding_lets_the_padding_win(gpu):
    case = rs.CASES["2d_overlap"]
    _x, want, want_index, outs = rs.run_forward(gpu, "fp32", "max", case,
                                                padding_mode=rs.PM.ZERO_PAD, index_dtype="i32",
                                                values=-gpu.random(case["x"], signed=False))
    assert (want == 0).any() and (want < 0).any()
    assert np.array_equal(outs[0].decoded(), want)
    assert np.array_equal(outs[1].array.astype(np.int64), want_index)


@pytest.mark.parametrize("case", sorted(rs.CASES))
@pytest.mark.parametrize("mode,source", [("max", "index"), ("max", "x"),
                                         ("avg_include", None), ("avg_exclude", None)])
def test_pooling_backward(gpu, dtype, mode, source, case):
    _x, _dy, want, out = rs.run_backward(gpu, dtype, mode, rs.CASES[case], source)
    gpu.assert_close(out, want, tolerance("resample_backward", dtype))


@pytest.mark.parametrize("layout", ["channels_last", "strided"])
@pytest.mark.parametrize("mode,source", [("max", "index"), ("avg_exclude", None)])
def test_pooling_backward_layouts(gpu, mode, source, layout):
    _x, _dy, want, out = rs.run_backward(gpu, "fp32", mode, rs.CASES["2d"], source, layout)
    gpu.assert_close(out, want, tolerance("resample_backward", "fp32"))


def test_pooling_forward_index_feeds_the_backward_in_one_graph(gpu):
    rs.test_forward_index_feeds_the_backward_in_one_graph(gpu)


# ---- slice, concatenate, reshape ----------------------------------------------------------------

def exact(out, want):
    """A copy is exact: the decoded output equals the decoded input bit for bit."""
    got = out.decoded()
    assert got.shape == want.shape
    assert np.array_equal(got, want), f"{out.tensor.get_name()}: values differ from the input's"


@pytest.mark.parametrize("layout", ["packed", "channels_last", "strided"])
@pytest.mark.parametrize("slices", [
    (slice(1, 4), slice(None), slice(0, 7, 2), slice(None)),
    (slice(0, 1), slice(2, 3), slice(6, 7), slice(3, 5)),
    (slice(None, None, 3), slice(1, None, 2), slice(None), slice(0, 5, 4)),
])
def test_slice(gpu, dtype, slices, layout):
    x = gpu.input([5, 4, 7, 5], dtype, layout)
    g = gpu.graph(dtype)
    y = g.slice(x.bind(g, "x"), slices=list(slices), name="sl")
    want = x.values[slices]
    out = gpu.output(y, want.shape, dtype, layout)
    gpu.execute(g, [x, out])
    exact(out, want)


def test_slice_feeds_a_pointwise_node_and_a_reduction(gpu, dtype):
    # the slice reads a virtual tensor (kept in the workspace) and its result feeds others
    x = gpu.input([6, 9, 10], dtype)
    g = gpu.graph(dtype)
    h = g.relu(x.bind(g, "x"), name="relu")
    h.set_dim([6, 9, 10])
    s = g.slice(h, slices=[slice(1, 5), slice(0, 9, 2), slice(3, 10)], name="sl")
    y = g.mul(s, s, name="sq")
    r = g.reduction(y, mode=hipdnn.reduction_mode.ADD, name="sum")
    r.set_dim([4, 1, 1])
    want_y = np.maximum(x.values, 0)[1:5, 0:9:2, 3:10] ** 2
    out = gpu.output(y, want_y.shape, dtype)
    out_r = gpu.output(r, [4, 1, 1], "fp32")
    gpu.execute(g, [x, out, out_r])
    gpu.assert_close(out, want_y, tolerance("pointwise", dtype))
    gpu.assert_close(out_r, ref.round_to(want_y, dtype).sum(axis=(1, 2), keepdims=True),
                     tolerance("reduction", dtype))


@pytest.mark.parametrize("axis", [0, 1, 3])
@pytest.mark.parametrize("layout", ["packed", "channels_last"])
def test_concatenate(gpu, dtype, axis, layout):
    shapes = [[3, 4, 5, 6] for _ in range(3)]
    for k, extent in enumerate([1, 3, 2]):
        shapes[k][axis] = extent
    xs = [gpu.input(s, dtype, layout) for s in shapes]
    g = gpu.graph(dtype)
    y = g.concatenate([x.bind(g, f"x{k}") for k, x in enumerate(xs)], axis=axis, name="cat")
    want = np.concatenate([x.values for x in xs], axis=axis)
    out = gpu.output(y, want.shape, dtype, layout)
    gpu.execute(g, xs + [out])
    exact(out, want)


def test_concatenate_of_computed_tensors_into_a_strided_output(gpu, dtype):
    a = gpu.input([2, 3, 5], dtype)
    b = gpu.input([2, 4, 5], dtype, "strided")
    g = gpu.graph(dtype)
    ta, tb = a.bind(g, "a"), b.bind(g, "b")
    na = g.neg(ta, name="na").set_data_type(STORAGES[dtype].data_type)
    y = g.concatenate([na, tb, ta], axis=1, name="cat")
    want = np.concatenate([-a.values, b.values, a.values], axis=1)
    out = gpu.output(y, want.shape, dtype, "strided")
    gpu.execute(g, [a, b, out])
    exact(out, want)


def test_concatenate_feeds_a_norm(gpu):
    a = gpu.input([4, 3, 8], "fp32")
    b = gpu.input([4, 5, 8], "fp32")
    g = gpu.graph("fp32")
    cat = g.concatenate([a.bind(g, "a"), b.bind(g, "b")], axis=1, name="cat")
    y = g.reduction(cat, mode=hipdnn.reduction_mode.MAX, name="max")
    y.set_dim([4, 1, 8])
    out = gpu.output(y, [4, 1, 8], "fp32")
    gpu.execute(g, [a, b, out])
    want = np.concatenate([a.values, b.values], axis=1).max(axis=1, keepdims=True)
    gpu.assert_close(out, want, tolerance("reduction", "fp32"))


@pytest.mark.parametrize("mode", ["LOGICAL", "VIEW_ONLY"])
def test_reshape_of_a_packed_input(gpu, dtype, mode):
    x = gpu.input([4, 6, 5], dtype)
    g = gpu.graph(dtype)
    y = g.reshape(x.bind(g, "x"), reshape_mode=getattr(hipdnn.reshape_mode, mode), name="rs")
    y.set_dim([6, 2, 10]).set_stride([20, 10, 1])
    out = gpu.output(y, [6, 2, 10], dtype)
    gpu.execute(g, [x, out])
    exact(out, x.values.reshape(6, 2, 10))


@pytest.mark.parametrize("layout", ["channels_last", "strided", "transposed"])
def test_logical_reshape_reads_any_strides_in_row_major_order(gpu, dtype, layout):
    x = gpu.input([3, 4, 5, 2], dtype, layout)
    g = gpu.graph(dtype)
    y = g.reshape(x.bind(g, "x"), reshape_mode=hipdnn.reshape_mode.LOGICAL, name="rs")
    y.set_dim([12, 10])
    out = gpu.output(y, [12, 10], dtype, "strided")
    gpu.execute(g, [x, out])
    exact(out, x.values.reshape(12, 10))


def test_view_only_transpose(gpu, dtype):
    # y [W, H] with strides [1, W] is x [H, W]'s memory read transposed
    x = gpu.input([5, 7], dtype)
    g = gpu.graph(dtype)
    y = g.reshape(x.bind(g, "x"), name="t")
    y.set_dim([7, 5]).set_stride([1, 7])
    out = gpu.output(y, [7, 5], dtype, "transposed")
    gpu.execute(g, [x, out])
    exact(out, x.values.T)


def test_reshape_of_a_virtual_tensor_feeds_a_reduction(gpu):
    x = gpu.input([4, 6, 5], "fp32", "channels_last")
    g = gpu.graph("fp32")
    h = g.exp(x.bind(g, "x"), name="exp")
    r = g.reshape(h, reshape_mode=hipdnn.reshape_mode.LOGICAL, name="rs")
    r.set_dim([4, 30])
    y = g.reduction(r, mode=hipdnn.reduction_mode.ADD, name="sum")
    y.set_dim([4, 1])
    out = gpu.output(y, [4, 1], "fp32")
    gpu.execute(g, [x, out])
    gpu.assert_close(out, np.exp(x.values).reshape(4, 30).sum(axis=1, keepdims=True),
                     tolerance("reduction", "fp32"))


@pytest.mark.parametrize("dims,to", [([3, 1], [3]), ([1, 3], [3]), ([3, 1], [1, 3]),
                                     ([3, 2], [6])], ids=["drop_last", "drop_first", "swap",
                                                          "merge"])
def test_reshape_of_a_computed_value_then_pointwise(gpu, dtype, dims, to):
    """exp -> reshape -> relu: the reshape is a copy through a view of exp's output, which
    must not share a fused kernel with exp (it would read memory exp never stored)."""
    x = gpu.input(dims, dtype)
    g = gpu.graph(dtype)
    h = g.exp(x.bind(g, "x"), name="exp")
    r = g.reshape(h, reshape_mode=hipdnn.reshape_mode.LOGICAL, name="rs")
    r.set_dim(to)
    y = g.relu(r, name="relu").set_data_type(STORAGES[dtype].data_type)
    out = gpu.output(y, to, dtype)
    gpu.execute(g, [x, out])
    want = np.exp(x.values.astype(np.float64)).reshape(to)
    gpu.assert_close(out, want, tolerance("pointwise", dtype))


def test_concatenate_then_pointwise_on_the_whole(gpu):
    """Two copies write the halves of y through views; relu then reads y whole, so it may
    not run in their kernel."""
    a = gpu.input([2, 3], "fp32")
    b = gpu.input([2, 4], "fp32")
    g = gpu.graph("fp32")
    cat = g.concatenate([a.bind(g, "a"), b.bind(g, "b")], axis=1, name="cat")
    y = g.relu(cat, name="relu")
    out = gpu.output(y, [2, 7], "fp32")
    gpu.execute(g, [a, b, out])
    exact(out, np.maximum(np.concatenate([a.values, b.values], axis=1), 0))


# ---- where the engine runs what --------------------------------------------------------------

def test_the_engine_names_each_rewritten_stage_in_its_log(gpu):
    x = gpu.input([8, 3, 5, 5], "fp32")
    dy = gpu.input([8, 3, 5, 5], "fp32")
    scale = gpu.input([1, 3, 1, 1], "fp32", low=0.5, high=1.5)
    mean64, inv64 = nb.saved_stats("batch", x.values, scale.values)
    mean = gpu.input(list(mean64.shape), "fp32", values=mean64)
    inv = gpu.input(list(inv64.shape), "fp32", values=inv64)
    g = gpu.graph("fp32")
    dx, ds, db = g.batchnorm_backward(dy.bind(g, "dy"), x.bind(g, "x"), scale.bind(g, "scale"),
                                      mean.bind(g, "mean"), inv.bind(g, "inv"), name="bnb")
    outs = [gpu.output(dx, [8, 3, 5, 5], "fp32"), gpu.output(ds, [1, 3, 1, 1], "fp32"),
            gpu.output(db, [1, 3, 1, 1], "fp32")]
    log = ran_log(lambda: gpu.execute(g, [x, dy, scale, mean, inv] + outs))
    # three channels: split reductions over each channel and pointwise stages, not a
    # group of threads a channel
    assert "bnb/sum_dy_xhat" in log and "bnb/sum_dy'" in log, log
    assert "batchnorm_backward 'bnb'" not in log, log


@pytest.mark.parametrize("case,x_shape,scale_shape", [
    ("instance", [64, 24, 3, 5], [1, 24, 1, 1]),  # 1536 rows: the row kernel, its row sums
    ("batch", [4, 1100, 2, 3], [1, 1100, 1, 1]),  # 1100 channels: row sums are dscale, dbias
])
def test_norm_backward_with_many_rows_is_one_row_kernel(gpu, case, x_shape, scale_shape):
    nb.check(gpu, "fp32", case, x_shape=x_shape, scale_shape=scale_shape)
    log = ran_log(lambda: nb.check(gpu, "fp32", case, x_shape=x_shape, scale_shape=scale_shape))
    assert "with the rows' sums" in log, log


def test_batchnorm_training_with_many_channels_is_one_row_kernel(gpu):
    nf.check(gpu, "fp32", "batch", running=True, x_shape=[2, 1030, 3, 2],
             scale_shape=[1, 1030, 1, 1])
    log = ran_log(lambda: nf.check(gpu, "fp32", "batch", x_shape=[2, 1030, 3, 2],
                                   scale_shape=[1, 1030, 1, 1]))
    assert "batchnorm 'norm': 1030 rows" in log, log


# Few channels over packed planes of >= 256 values: each plane's statistics (forward) or
# sums (backward) in one pass of the row kernel, combined per channel (plugins/hip/lower.c,
# "a plane at a time").
PLANES = [5, 3, 17, 19]


@pytest.mark.parametrize("shape", [PLANES, [3, 2, 16, 32], [2, 4, 5, 7, 9]],
                         ids=["2d", "2d_whole_vectors", "3d"])
def test_batchnorm_training_a_plane_at_a_time(gpu, dtype, shape):
    sc = [1, shape[1]] + [1] * (len(shape) - 2)
    nf.check(gpu, dtype, "batch", running=True, x_shape=shape, scale_shape=sc)
    nf.check(gpu, dtype, "batch", bias=False, x_shape=shape, scale_shape=sc)
    log = ran_log(lambda: nf.check(gpu, dtype, "batch", x_shape=shape, scale_shape=sc))
    rows = shape[0] * shape[1]
    assert f"norm/plane_statistics': {rows} rows of {int(np.prod(shape[2:]))}" in log, log


def test_batchnorm_training_a_plane_at_a_time_with_constant_planes(gpu):
    # a constant plane has variance 0 (its inv_variance, with epsilon 0, is infinite): the
    # channel's variance still comes out right
    rng = np.random.default_rng(7)
    x = (2.0 + rng.standard_normal(PLANES)).astype(np.float32)
    x[1, 0] = 3.0
    x[:, 2] = 0.5  # a whole channel: variance 0, inv_variance 1 / sqrt(epsilon)
    xs = gpu.input(PLANES, "fp32", values=x)
    scale = gpu.input([1, 3, 1, 1], "fp32", low=0.5, high=1.5)
    bias = gpu.input([1, 3, 1, 1], "fp32")
    g = gpu.graph("fp32")
    y, mean, inv = g.batchnorm(xs.bind(g, "x"), scale.bind(g, "scale"), bias.bind(g, "bias"),
                               epsilon=1e-3, name="norm")[:3]
    outs = [gpu.output(y, PLANES, "fp32"), gpu.output(mean, [1, 3, 1, 1], "fp32"),
            gpu.output(inv, [1, 3, 1, 1], "fp32")]
    gpu.execute(g, [xs, scale, bias] + outs)
    want = ref.norm_forward("batch", xs.values, scale.values, bias.values, float(np.float32(1e-3)), False)
    for out, w in zip(outs, want):
        gpu.assert_close(out, w, tolerance("batchnorm", "fp32"))


def test_batchnorm_backward_a_plane_at_a_time(gpu, dtype):
    nb.check(gpu, dtype, "batch", x_shape=PLANES, scale_shape=[1, 3, 1, 1])
    nb.check(gpu, dtype, "batch", x_shape=[2, 4, 5, 7, 9], scale_shape=[1, 4, 1, 1, 1],
             param_dtype="fp32")
    nb.check(gpu, dtype, "batch", x_shape=[3, 2, 16, 32], scale_shape=[1, 2, 1, 1])
    log = ran_log(lambda: nb.check(gpu, dtype, "batch", x_shape=PLANES, scale_shape=[1, 3, 1, 1]))
    assert "15 rows of 323" in log and "no dx" in log, log


@pytest.mark.parametrize("case,x_shape,scale_shape", [
    ("layer", [37, 256], [1, 256]),     # one vector a thread
    ("layer", [9, 1024], [1, 1024]),    # two
    ("layer", [40, 4096], [1, 4096]),   # 16-bit: 256 threads, column parts in shared memory
    ("layer", [40, 8192], [1, 8192]),   # 16-bit: 512 threads, column parts in registers
    ("rms", [2, 5, 512], [1, 1, 512]),
    ("instance", [3, 4, 16, 32], [1, 4, 1, 1]),
])
def test_norm_backward_whole_aligned_rows(gpu, dtype, case, x_shape, scale_shape):
    # rows of whole 16-byte vectors: the kernel's fast way (storage type fixed at compile)
    nb.check(gpu, dtype, case, x_shape=x_shape, scale_shape=scale_shape)
    nb.check(gpu, dtype, case, x_shape=x_shape, scale_shape=scale_shape, param_dtype="fp32")


@pytest.mark.parametrize("x_shape,sets", [
    ([4, 64, 256], "4 sets of 64 rows"),    # 64 groups of rows a sample, one row each
    ([16, 5, 64], "16 sets of 5 rows"),     # fewer rows a sample than groups wanted
    ([3, 1000, 40], "3 sets of 1000 rows"),  # groups of 2 or 3 rows
])
def test_adalayernorm_backward_is_one_row_kernel_with_column_sums_per_sample(gpu, dtype, x_shape,
                                                                           sets):
    # scale [B, 1, D]: each group of rows lies in one sample, its column sums that sample's
    scale_shape = [x_shape[0], 1, x_shape[2]]
    log = ran_log(lambda: nb.check(gpu, dtype, "ada_layer", x_shape=x_shape, scale_shape=scale_shape))
    assert "with column sums per group in " + sets in log, log


def test_adalayernorm_backward_with_samples_inside_the_rows_order(gpu):
    # x [S, B, D] in memory (B strided inside S): a sample's rows are not consecutive, so no
    # group of rows lies in one sample; pointwise and reduction stages instead
    log = ran_log(lambda: nb.check(gpu, "fp32", "ada_layer", x_shape=[4, 64, 32],
                                   scale_shape=[4, 1, 32], layout="outer_swapped"))
    assert "column sums" not in log and "reduction" in log, log


@pytest.mark.parametrize("x_shape,params", [
    ([8, 128, 8, 8], None),       # rows over two dims (N, C): the general addressing
    ([1, 1024, 4, 16], "fp32"),   # one dim, fp32 scale: a lean variant
    ([1, 1024, 8, 8], None),      # one dim, scale of x's type
])
def test_instancenorm_backward_of_16_bit_rows_with_scale_one_value_a_row(gpu, x_shape, params):
    # over 1024 rows the row kernel runs it; its 16-bit kernel reads the row's one scale
    # value for each vector
    for dtype in ("bf16", "fp16"):
        log = ran_log(lambda: nb.check(gpu, dtype, "instance", x_shape=x_shape,
                                       scale_shape=[1, x_shape[1], 1, 1], param_dtype=params))
        assert "parameters one value a row" in log, log


@pytest.mark.parametrize("data,params,layout", [
    ("bf16", "fp16", "packed"),  # scale of another 16-bit type: read as the tensor says
    ("fp16", "fp16", "bshd"),    # rows over several dims: the general addressing
])
@pytest.mark.parametrize("case", ["layer", "rms"])
def test_norm_backward_16_bit_general_variant(gpu, case, data, params, layout):
    # the 16-bit kernel has lean variants (rows one dim, the scale's type known at compile
    # time), which the tests above take, and a general one, which these take
    nb.check(gpu, data, case, x_shape=[2, 3, 4, 256], scale_shape=[1, 1, 1, 256],
             layout=layout, param_dtype=params)


def test_layernorm_backward_is_one_row_kernel_and_two_column_sums(gpu):
    # dx in one pass over x and dy; dscale and dbias summed per group of rows in the same
    # kernel, then over the groups
    shape = [1500, 96]
    nb.check(gpu, "fp32", "layer", x_shape=shape, scale_shape=[1, 96])
    log = ran_log(lambda: nb.check(gpu, "fp32", "layer", x_shape=shape, scale_shape=[1, 96]))
    assert "stage 1 of" in log and "layernorm_backward 'bwd'" in log, log
    assert "with column sums per group" in log and "avg_dxhat" not in log, log
    assert "bwd/dscale" in log and "bwd/dbias" in log, log


@pytest.mark.parametrize("case,x_shape,scale_shape", [
    ("layer", [3, 9000], [1, 9000]),    # rows too long for column sums in registers
    ("rms", [2, 2, 8500], [1, 1, 8500]),
])
def test_norm_backward_of_very_long_rows(gpu, case, x_shape, scale_shape):
    nb.check(gpu, "fp32", case, x_shape=x_shape, scale_shape=scale_shape)
    log = ran_log(lambda: nb.check(gpu, "fp32", case, x_shape=x_shape, scale_shape=scale_shape))
    assert "bwd/avg_dxhat_xhat" in log, log  # pointwise and reduction stages instead


def residual_after_norm_backward(gpu, dtype, case, x_shape, scale_shape, keep_dx=False):
    """dx + residual after a norm backward (a pre-norm block's gradient sum), dx kept as an
    output too where keep_dx; each output against float64; the log."""
    mode = nb.CASES[case][2]
    x = gpu.input(x_shape, dtype, values=2.0 + 1.5 * gpu.random(x_shape))
    dy, res = gpu.input(x_shape, dtype), gpu.input(x_shape, dtype)
    scale = gpu.input(scale_shape, dtype, low=0.5, high=1.5)
    mean64, inv64 = nb.saved_stats(mode, x.values, scale.values)
    inv = gpu.input(list(inv64.shape), "fp32", values=inv64)
    mean = gpu.input(list(inv64.shape), "fp32", values=mean64) if mode != "rms" else None
    g = gpu.graph(dtype)
    dx, dscale, dbias = nb.add_node(g, mode, dy.bind(g, "dy"), x.bind(g, "x"),
                                    scale.bind(g, "scale"), mean.bind(g, "mean") if mean else None,
                                    inv.bind(g, "inv"))
    total = g.add(dx, res.bind(g, "residual"), name="res")
    want = ref.norm_backward(mode, x.values, dy.values, scale.values,
                             mean.values if mean else None, inv.values)
    outs = [(gpu.output(total, x_shape, dtype), want[0] + res.values, ["norm_backward", "pointwise"]),
            (gpu.output(dscale, scale_shape, dtype), want[1], ["norm_backward"]),
            (gpu.output(dbias, scale_shape, dtype), want[2], ["norm_backward"])]
    if keep_dx:
        outs.append((gpu.output(dx, x_shape, dtype), want[0], ["norm_backward"]))
    ins = [x, dy, res, scale, inv] + ([mean] if mean else [])
    log = gn.ran(lambda: gpu.execute(g, ins + [o for o, _w, _t in outs]))
    for out, w, ops in outs:
        gpu.assert_close(out, w, max(tolerance(op, dtype) for op in ops))
    return log


@pytest.mark.parametrize("case,x_shape,scale_shape", [
    ("layer", [48, 96], [1, 96]),               # column sums per group of rows
    ("layer", [6, 700], [1, 700]),              # 2 vectors a thread, a ragged last one
    ("rms", [3, 5, 64], [1, 1, 64]),
    ("instance", [4, 320, 5, 5], [1, 320, 1, 1]),  # over 1024 rows: the rows' sums
])
@pytest.mark.parametrize("keep_dx", [False, True])
def test_norm_backward_runs_the_residual_add_as_its_epilogue(gpu, dtype, case, x_shape,
                                                             scale_shape, keep_dx):
    # was a stage more: dx written, then "1 pointwise node fused" read it back for the add
    log = residual_after_norm_backward(gpu, dtype, case, x_shape, scale_shape, keep_dx)
    bwd = [m for m in log if "norm_backward 'bwd'" in m and "first run" not in m]
    assert len(bwd) == 1 and "with its pointwise epilogue" in bwd[0], log
    assert not any("pointwise node" in m for m in log), log  # no stage of its own


def ran_log(run):
    """The GPU engine's log lines while run() runs, as one string."""
    return "\n".join(gn.ran(run))


# ---- whole graphs through hipdnn.Graph on NumPy arrays, run by the GPU engine ------------------

def gpu_graph():
    return hipdnn.Graph(intermediate_data_type=dt.FLOAT, preferred_engine=GPU_ENGINE)


def test_rotary_embedding_graph_runs_on_the_gpu(gpu):
    # slices, pointwise ops and a concatenation: every node on the GPU engine
    B, S, H, D = 2, 9, 3, 16
    x = gpu.rng.standard_normal((B, S, H, D)).astype(np.float32)
    theta = np.arange(S)[:, None] * (10000.0 ** (-np.arange(D // 2) / (D // 2)))[None, :]
    cos = np.cos(theta).reshape(1, S, 1, D // 2).astype(np.float32)
    sin = np.sin(theta).reshape(1, S, 1, D // 2).astype(np.float32)
    with gpu_graph() as g:
        X = g.input(x)
        whole = slice(None)
        x1 = g.slice(X, [whole, whole, whole, slice(0, D // 2)])
        x2 = g.slice(X, [whole, whole, whole, slice(D // 2, D)])
        C, Sn = g.input(cos), g.input(sin)
        g.concatenate([g.sub(g.mul(x1, C), g.mul(x2, Sn)), g.add(g.mul(x2, C), g.mul(x1, Sn))],
                      axis=3)
    y = g(x, cos, sin)
    assert g.engine_name == GPU_ENGINE
    xv, c, s = x.astype(np.float64), cos.astype(np.float64), sin.astype(np.float64)
    x1v, x2v = xv[..., :D // 2], xv[..., D // 2:]
    want = np.concatenate([x1v * c - x2v * s, x2v * c + x1v * s], axis=-1)
    assert_close(y.astype(np.float64), want, tolerance("pointwise", "fp32"), "rotary")


def test_layernorm_training_step_runs_on_the_gpu(gpu):
    # forward (statistics saved), a loss gradient, backward: one graph, one engine
    x = (2 + gpu.rng.standard_normal((64, 96))).astype(np.float32)
    scale = (1 + 0.5 * gpu.rng.standard_normal((1, 96))).astype(np.float32)
    bias = gpu.rng.standard_normal((1, 96)).astype(np.float32)
    target = gpu.rng.standard_normal((64, 96)).astype(np.float32)
    eps = 1e-5
    with gpu_graph() as g:
        X, Sc, Bi, T = g.input(x), g.input(scale), g.input(bias), g.input(target)
        y, mean, inv = g.layernorm(hipdnn.norm_forward_phase.TRAINING, X, Sc, Bi, eps)
        dy = g.sub(y, T)  # d/dy of 0.5 * |y - target|^2
        dx, dscale, dbias = g.layernorm_backward(dy, X, Sc, mean, inv)
        g.output(dx)
        g.output(dscale)
        g.output(dbias)
    got_dx, got_ds, got_db = g(x, scale, bias, target)
    assert g.engine_name == GPU_ENGINE
    xv = x.astype(np.float64)
    mu = xv.mean(axis=1, keepdims=True)
    iv = 1 / np.sqrt(((xv - mu) ** 2).mean(axis=1, keepdims=True) + np.float32(eps))
    xhat = (xv - mu) * iv
    dyv = xhat * scale + bias - target
    gd = dyv * scale
    want_dx = iv * (gd - gd.mean(axis=1, keepdims=True) - xhat * (gd * xhat).mean(axis=1, keepdims=True))
    tol = tolerance("layernorm", "fp32") + tolerance("norm_backward", "fp32")
    assert_close(got_dx.astype(np.float64), want_dx, tol, "dx")
    assert_close(got_ds.astype(np.float64), (dyv * xhat).sum(axis=0, keepdims=True), tol, "dscale")
    assert_close(got_db.astype(np.float64), dyv.sum(axis=0, keepdims=True), tol, "dbias")
