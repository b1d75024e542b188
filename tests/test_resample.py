"""resample (max and average pooling) and resample_backward on the reference engine
against float64 NumPy references written with plain loops (tests/references.py), for
1D/2D/3D windows, asymmetric padding, strides below and above the window, ceil-mode output
sizes, NCHW/NHWC/strided layouts and fp32/fp16/bf16/fp64 storage.  The backward passes are
also checked against the forward alone, by the adjoint identity sum(dy * fwd(x)) =
sum(dx * x) (pooling is piecewise linear), so they cannot share a mistake with the
backward reference."""
import hipdnn
import numpy as np
import pytest

import references as ref
from conftest import assert_close
from tolerances import tolerance

RM = hipdnn.resample_mode
PM = hipdnn.padding_mode
dt = hipdnn.data_type
MODES = {"max": RM.MAXPOOL, "avg_include": RM.AVGPOOL_INCLUDE_PADDING,
         "avg_exclude": RM.AVGPOOL_EXCLUDE_PADDING}

CASES = {
    "2d": dict(x=[2, 3, 7, 6], window=[3, 2], stride=[2, 2], pre=[1, 0], post=[1, 1]),
    # window larger than stride: windows overlap, x positions get several gradients
    "2d_overlap": dict(x=[1, 4, 6, 7], window=[3, 3], stride=[1, 1], pre=[1, 1], post=[1, 1]),
    "2d_odd_asymmetric": dict(x=[2, 2, 9, 8], window=[3, 4], stride=[2, 3], pre=[2, 0],
                              post=[0, 3]),
    # stride above the window: some x positions belong to no window
    "2d_stride_over_window": dict(x=[1, 3, 10, 9], window=[2, 2], stride=[3, 4], pre=[0, 1],
                                  post=[0, 0]),
    # a window taller than it is wide, past the common 2 x 2 and 3 x 3
    "2d_large_window": dict(x=[1, 2, 11, 12], window=[5, 3], stride=[2, 2], pre=[2, 1],
                            post=[2, 1]),
    "1d": dict(x=[2, 3, 11], window=[4], stride=[3], pre=[1], post=[2]),
    "3d": dict(x=[1, 2, 5, 6, 4], window=[2, 3, 2], stride=[2, 1, 2], pre=[1, 1, 0],
               post=[0, 1, 1]),
}


def out_dims(case, ceil=False):
    x, w, s, pre, post = case["x"], case["window"], case["stride"], case["pre"], case["post"]
    return [ref.pool_output_size(x[2 + i], w[i], s[i], pre[i], post[i], ceil)
            for i in range(len(w))]


def kwargs(case, padding_mode=None):
    kw = dict(window=case["window"], stride=case["stride"], pre_padding=case["pre"],
              post_padding=case["post"])
    if padding_mode is not None:
        kw["padding_mode"] = padding_mode
    return kw


def run_forward(nx, dtype, mode, case, layout="packed", padding_mode=None, zero_pad=None,
                index_dtype=None, ceil=False, values=None):
    x = nx.input(case["x"], dtype, layout, values=values)
    g = nx.graph(dtype)
    y, index = g.resample(x.bind(g, "x"), MODES[mode], generate_index=index_dtype is not None,
                          name="pool", **kwargs(case, padding_mode))
    if zero_pad is None:
        zero_pad = padding_mode == PM.ZERO_PAD or (padding_mode is None and mode != "max")
    dims = out_dims(case, ceil)
    want_y, want_index = ref.resample_fwd(x.values, mode, case["window"], case["stride"],
                                          case["pre"], case["post"], zero_pad, dims)
    out = nx.output(y, want_y.shape, dtype, layout)
    operands = [x, out]
    if index_dtype is not None:
        operands.append(nx.output(index, want_y.shape, index_dtype, layout))
    else:
        assert index is None
    nx.execute(g, operands)
    return x, want_y, want_index, operands[1:]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("mode", sorted(MODES))
def test_forward_matches_the_float64_reference(nx, dtype, mode, case):
    _x, want, want_index, outs = run_forward(nx, dtype, mode, CASES[case],
                                             index_dtype="i8" if mode == "max" else None)
    nx.assert_close(outs[0], want, tolerance("resample", dtype))
    if mode == "max":  # the maximum is one of the inputs: exact, and its position too
        assert np.array_equal(outs[0].decoded(), want)
        assert np.array_equal(outs[1].array.astype(np.int64), want_index)


@pytest.mark.parametrize("layout", ["channels_last", "strided"])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_forward_reads_and_writes_any_layout(nx, mode, layout):
    case = CASES["2d_odd_asymmetric"]
    _x, want, _i, outs = run_forward(nx, "fp32", mode, case, layout)
    nx.assert_close(outs[0], want, tolerance("resample", "fp32"))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_forward_in_float64_storage(nx, mode):
    _x, want, _i, outs = run_forward(nx, "fp64", mode, CASES["3d"])
    nx.assert_close(outs[0], want, tolerance("resample", "fp64"))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_ceil_mode_output_size_when_given(nx, mode):
    # 9 + 0 + 1 - 3 = 7 does not divide by 2: the last window overhangs the padding
    case = dict(x=[1, 2, 9, 8], window=[3, 3], stride=[2, 2], pre=[0, 1], post=[1, 0])
    assert out_dims(case, True) != out_dims(case)
    _x, want, _i, outs = run_forward(nx, "fp32", mode, case, ceil=True)
    assert outs[0].tensor.get_dim()[2:] == out_dims(case, True)
    nx.assert_close(outs[0], want, tolerance("resample", "fp32"))


def test_maxpool_with_zero_padding_lets_the_padding_win(nx):
    case = CASES["2d_overlap"]
    # every x negative: each window touching the padding has maximum 0 there
    _x, want, want_index, outs = run_forward(nx, "fp32", "max", case, padding_mode=PM.ZERO_PAD,
                                             index_dtype="i32",
                                             values=-nx.random(case["x"], signed=False))
    assert (want == 0).any() and (want < 0).any()
    assert np.array_equal(outs[0].decoded(), want)
    assert np.array_equal(outs[1].array.astype(np.int64), want_index)


@pytest.mark.parametrize("index_dtype", ["i8", "i32", "i64"])
def test_index_is_the_first_maximum_in_row_major_window_order(nx, index_dtype):
    case = CASES["2d_overlap"]
    # few distinct values: most windows hold ties
    values = nx.rng.integers(-2, 3, size=case["x"]).astype(np.float64)
    _x, want, want_index, outs = run_forward(nx, "fp32", "max", case, index_dtype=index_dtype,
                                             values=values)
    assert np.array_equal(outs[0].decoded(), want)
    assert np.array_equal(outs[1].array.astype(np.int64), want_index)


def engine_run(g, arrays, outs):
    g.set_preferred_engine("reference_cpu")
    g.build([hipdnn.heur_mode.A])
    results = {t: np.full(t.get_dim(), fill, dtype) for t, dtype, fill in outs}
    g.execute({**arrays, **results}, np.empty(g.get_workspace_size(), np.uint8))
    return [results[t] for t, _d, _f in outs]


def test_nan_propagates_through_maxpool_and_its_first_position_is_the_index():
    x = np.arange(2 * 7 * 6, dtype=np.float32).reshape(1, 2, 7, 6) / 10
    x[0, 0, 2, 3] = np.nan
    x[0, 0, 3, 2] = np.nan
    x[0, 1, 0, 0] = np.inf
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    y, index = g.resample(g.tensor_like(x, name="x"), RM.MAXPOOL, window=[3, 3],
                          stride=[2, 2], pre_padding=[1, 1], post_padding=[1, 1],
                          generate_index=True)
    y.set_output(True)
    index.set_output(True).set_data_type(dt.INT32)
    got_y, got_index = engine_run(g, {g.tensors()[0]: x},
                                  [(y, np.float32, np.float32(7)), (index, np.int32, -1)])
    want_y, want_index = ref.resample_fwd(x, "max", [3, 3], [2, 2], [1, 1], [1, 1], False)
    assert np.isnan(got_y[0, 0, 1, 1]) and np.isnan(got_y[0, 0, 1, 2])
    assert got_y[0, 1, 0, 0] == np.inf
    np.testing.assert_array_equal(got_y, want_y)  # NaN where the reference has NaN
    np.testing.assert_array_equal(got_index, want_index)


def run_backward(nx, dtype, mode, case, source, layout="packed"):
    """dx from the engine, with the max pooling's routing read from the forward's index
    (source "index", computed by the reference) or recomputed from x ("x")."""
    x = nx.input(case["x"], dtype, layout)
    dims = out_dims(case)
    dy = nx.input(case["x"][:2] + dims, dtype, layout)
    _y, index = ref.resample_fwd(x.values, mode, case["window"], case["stride"], case["pre"],
                                 case["post"], zero_pad=False)
    g = nx.graph(dtype)
    extra, operands = {}, [dy]
    if source == "x" or mode != "max":
        extra["input"] = x.bind(g, "x")
        operands.append(x)
    if source == "index":
        idx = nx.input(dy.shape, "i32", layout, values=index)
        extra["index"] = idx.bind(g, "index")
        operands.append(idx)
    dx = g.resample_backward(dy.bind(g, "dy"), MODES[mode], name="pool_bwd", **kwargs(case),
                             **extra)
    want = ref.resample_bwd(dy.values, x.shape, mode, case["window"], case["stride"],
                            case["pre"], case["post"], index)
    out = nx.output(dx, want.shape, dtype, layout)
    nx.execute(g, operands + [out])
    return x, dy, want, out


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("mode,source", [("max", "index"), ("max", "x"),
                                         ("avg_include", None), ("avg_exclude", None)])
def test_backward_matches_the_float64_reference(nx, dtype, mode, source, case):
    _x, _dy, want, out = run_backward(nx, dtype, mode, CASES[case], source)
    nx.assert_close(out, want, tolerance("resample_backward", dtype))


@pytest.mark.parametrize("case", ["2d_overlap", "3d", "2d_stride_over_window"])
@pytest.mark.parametrize("mode,source", [("max", "x"), ("avg_include", None),
                                         ("avg_exclude", None)])
def test_backward_is_the_adjoint_of_the_forward(nx, mode, source, case):
    # sum(dy * fwd(x)) = sum(dx * x): the forward reference only
    x, dy, _want, out = run_backward(nx, "fp64", mode, CASES[case], source)
    c = CASES[case]
    y, _ = ref.resample_fwd(x.values, mode, c["window"], c["stride"], c["pre"], c["post"],
                            zero_pad=mode != "max")
    lhs, rhs = np.sum(dy.values * y), np.sum(out.decoded() * x.values)
    assert abs(lhs - rhs) <= 1e-12 * np.sum(np.abs(dy.values * y))


@pytest.mark.parametrize("layout", ["channels_last", "strided"])
@pytest.mark.parametrize("mode,source", [("max", "index"), ("avg_exclude", None)])
def test_backward_reads_and_writes_any_layout(nx, mode, source, layout):
    _x, _dy, want, out = run_backward(nx, "fp32", mode, CASES["2d"], source, layout)
    nx.assert_close(out, want, tolerance("resample_backward", "fp32"))


def test_backward_takes_dx_dims_without_x_for_averages(nx):
    case = CASES["2d_odd_asymmetric"]
    dy = nx.input(case["x"][:2] + out_dims(case), "fp32")
    g = nx.graph("fp32")
    dx = g.resample_backward(dy.bind(g, "dy"), RM.AVGPOOL_INCLUDE_PADDING, **kwargs(case))
    want = ref.resample_bwd(dy.values, tuple(case["x"]), "avg_include", case["window"],
                            case["stride"], case["pre"], case["post"])
    out = nx.output(dx, want.shape, "fp32")  # sets dx's dims
    nx.execute(g, [dy, out])
    nx.assert_close(out, want, tolerance("resample_backward", "fp32"))


def test_forward_index_feeds_the_backward_in_one_graph(nx):
    case = CASES["2d"]
    x = nx.input(case["x"], "fp32")
    dy = nx.input(case["x"][:2] + out_dims(case), "fp32")
    g = nx.graph("fp32")
    y, index = g.resample(x.bind(g, "x"), RM.MAXPOOL, generate_index=True, **kwargs(case))
    dx = g.resample_backward(dy.bind(g, "dy"), RM.MAXPOOL, index=index, **kwargs(case))
    want_y, want_index = ref.resample_fwd(x.values, "max", case["window"], case["stride"],
                                          case["pre"], case["post"], False)
    want = ref.resample_bwd(dy.values, x.shape, "max", case["window"], case["stride"],
                            case["pre"], case["post"], want_index)
    out_y = nx.output(y, want_y.shape, "fp32")
    out = nx.output(dx, want.shape, "fp32")
    nx.execute(g, [x, dy, out_y, out])
    nx.assert_close(out, want, tolerance("resample_backward", "fp32"))


def test_backward_drops_the_windows_whose_index_is_outside_them():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    dy = np.ones([1, 1, 2, 2], np.float32)
    idx = np.array([0, 1, 9, 3], np.int8).reshape(1, 1, 2, 2)  # a 3x3 window has 0..8
    dx = g.resample_backward(g.tensor_like(dy, name="dy"), RM.MAXPOOL, window=[3, 3],
                             stride=[2, 2], index=g.tensor_like(idx, name="idx"), name="mb")
    dx.set_output(True).set_dim([1, 1, 5, 5])
    # data, not the graph: the run completes (a warning is logged) and window (1, 0) routes
    # nothing; the others reach their positions, every element of dx written
    got, = engine_run(g, {g.tensors()[0]: dy, g.tensors()[1]: idx},
                      [(dx, np.float32, np.float32(np.nan))])
    want = np.zeros((1, 1, 5, 5), np.float32)
    want[0, 0, 0, 0] = 1  # window (0, 0) at rows 0..2, cols 0..2: position 0
    want[0, 0, 0, 3] = 1  # window (0, 1) at cols 2..4: position 1 -> (0, 3)
    want[0, 0, 3, 2] = 1  # window (1, 1) at rows 2..4, cols 2..4: position 3 -> (3, 2)
    np.testing.assert_array_equal(got, want)


def test_serialized_graph_runs_after_deserialize(rng):
    case = CASES["3d"]
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=case["x"])
    y, index = g.resample(x, RM.MAXPOOL, generate_index=True, name="mp", **kwargs(case))
    y.set_output(True).set_name("y")
    index.set_output(True).set_name("i").set_data_type(dt.INT64)
    a = rng.standard_normal(case["x"]).astype(np.float32)
    g2 = hipdnn.pygraph()
    g2.deserialize(g.serialize())
    assert g2.serialize() == g.serialize()
    got_y, got_i = engine_run(g2, {x.get_uid(): a}, [(g2._tensor_by_uid(y.get_uid()),
                                                       np.float32, np.nan),
                                                      (g2._tensor_by_uid(index.get_uid()),
                                                       np.int64, -1)])
    want_y, want_i = ref.resample_fwd(a, "max", case["window"], case["stride"], case["pre"],
                                      case["post"], False)
    np.testing.assert_array_equal(got_y, want_y)
    np.testing.assert_array_equal(got_i, want_i)
    assert "resample" in repr(g2)


def declined(g):
    g.set_preferred_engine("reference_cpu")
    g.validate()
    g.create_execution_plans([hipdnn.heur_mode.A])
    return dict(g.support_report())["reference_cpu"]


def pool_graph(mode, padding_mode=None, window=(2, 2), pre=(0, 0), index_dtype=None,
               x=(1, 2, 8, 8)):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    y, index = g.resample(g.tensor(name="x", dim=list(x)), mode, window=list(window),
                          stride=[1, 1], pre_padding=list(pre), padding_mode=padding_mode,
                          generate_index=index_dtype is not None, name="p")
    y.set_output(True)
    if index is not None:
        index.set_output(True).set_data_type(index_dtype)
    return g


@pytest.mark.parametrize("graph,reason", [
    (lambda: pool_graph(RM.NEAREST), r"resample mode NEAREST not supported"),
    (lambda: pool_graph(RM.BILINEAR), r"resample mode BILINEAR not supported"),
    (lambda: pool_graph(RM.MAXPOOL, PM.EDGE_VAL_PAD), r"padding mode EDGE_VAL_PAD"),
    (lambda: pool_graph(RM.AVGPOOL_INCLUDE_PADDING, PM.NEG_INF_PAD),
     r"padding mode NEG_INF_PAD does not go with AVGPOOL_INCLUDE_PADDING"),
    (lambda: pool_graph(RM.MAXPOOL, pre=(2, 0)), r"spatial dim 0: window 2, stride 1, "
                                                 r"padding 2/0.*padding < window"),
    (lambda: pool_graph(RM.MAXPOOL, window=(12, 12), index_dtype=dt.INT8, x=(1, 1, 12, 12)),
     r"the window has 144 positions; a int8 index holds 128 \(use INT32\)"),
    (lambda: pool_graph(RM.MAXPOOL, index_dtype=dt.FLOAT), r"the index must be INT8, INT32 "
                                                           r"or INT64"),
])
def test_reference_engine_declines_what_it_cannot_run_with_the_reason(graph, reason):
    why = declined(graph())
    assert why is not None and __import__("re").search(reason, why), why


def test_validation_names_the_node_for_a_wrong_pooled_size():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    y, _ = g.resample(g.tensor(name="x", dim=[1, 2, 8, 8]), RM.MAXPOOL, window=[2, 2],
                      stride=[2, 2], name="p")
    y.set_output(True).set_dim([1, 2, 5, 4])
    with pytest.raises(hipdnn.HipdnnError, match=r"resample_fwd 'p': y '.*' is \[1, 2, 5, 4\] "
                                                 r"but x \[1, 2, 8, 8\] pooled gives "
                                                 r"\[1, 2, 4, 4\]"):
        g.validate()


def test_maxpool_backward_needs_an_index_or_x():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    dx = g.resample_backward(g.tensor(name="dy", dim=[1, 2, 4, 4]), RM.MAXPOOL, window=[2, 2],
                             stride=[2, 2], name="b")
    dx.set_output(True).set_dim([1, 2, 8, 8])
    with pytest.raises(hipdnn.HipdnnError, match=r"MAXPOOL needs input 'idx'"):
        g.validate()


def test_python_arguments_are_checked_before_anything_is_added():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[1, 2, 8, 8])
    with pytest.raises(ValueError, match="one entry per spatial dim"):
        g.resample(x, RM.MAXPOOL, window=[2, 2], stride=[2])
    with pytest.raises(TypeError, match="resampling_mode must be a hipdnn.resample_mode"):
        g.resample(x, "max", window=[2, 2], stride=[2, 2])
    with pytest.raises(ValueError, match="resampling_mode is NOT_SET"):
        g.resample(x, RM.NOT_SET, window=[2, 2], stride=[2, 2])
    assert "0 nodes" in repr(g)


def test_only_maxpool_with_generate_index_gives_an_index():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[1, 2, 8, 8])
    assert g.resample(x, RM.AVGPOOL, window=[2, 2], stride=[2, 2], generate_index=True)[1] \
        is None
    assert g.resample(x, RM.MAXPOOL, window=[2, 2], stride=[2, 2])[1] is None
    y, index = g.resample(x, RM.MAXPOOL, window=[2, 2], stride=[2, 2], generate_index=True,
                          name="m")
    assert (y.get_name(), index.get_name()) == ("m::Y", "m::Index")


def test_graph_wrapper_pools_numpy_arrays(rng):
    x = rng.standard_normal([2, 3, 6, 6]).astype(np.float32)
    with hipdnn.Graph(io_data_type=dt.FLOAT) as graph:
        y, _ = graph.resample(x, RM.AVGPOOL_EXCLUDE_PADDING, window=[3, 3], stride=[2, 2],
                              pre_padding=[1, 1], post_padding=[1, 1])
        graph.output(y)
    got = graph(x)
    want, _ = ref.resample_fwd(x, "avg_exclude", [3, 3], [2, 2], [1, 1], [1, 1], True)
    assert_close(got, want, tolerance("resample", "fp32"))

