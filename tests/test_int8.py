"""INT8 conv_fprop and matmul with INT32 compute on the reference engine, bit-equal to
int64 NumPy references: full-range int8 values, sums that reach within 2% of the INT32
limits (every operand -128 or 127), INT32 / float / saturated INT8
outputs, NHWC and transposed layouts; and the combinations the engine declines, each with
its reason (mixed int8 and float, a float compute type, reductions that could overflow
the INT32 accumulator)."""
import hipdnn
import numpy as np
import pytest

import references as ref

dt = hipdnn.data_type
INT32_MAX_TERMS = (2**31 - 1) // (128 * 128)  # products an INT32 accumulator always holds


def int8(rng, shape):
    return rng.integers(-128, 127, size=shape, dtype=np.int8, endpoint=True)


def poisoned(shape, npt):
    return np.full(shape, 0x5A if np.issubdtype(npt, np.integer) else np.nan, npt)


def run(g, inputs, outputs):
    g.set_preferred_engine("reference_cpu")
    g.build([hipdnn.heur_mode.A])
    g.execute({**inputs, **outputs}, np.full(g.get_workspace_size(), 0xA5, np.uint8))


def conv_graph(x, w, y_type, **kw):
    g = hipdnn.pygraph(io_data_type=dt.INT8, compute_data_type=dt.INT32)
    xt, wt = g.tensor_like(x, name="x"), g.tensor_like(w, name="w")
    y = g.conv_fprop(xt, wt, name="conv", **kw)
    y.set_output(True).set_data_type(y_type)
    spatial = x.ndim - 2
    dims = [x.shape[0], w.shape[0]] + [
        ref.conv_output_size(x.shape[2 + i], w.shape[2 + i],
                             kw.get("pre_padding", [0] * spatial)[i],
                             kw.get("post_padding", [0] * spatial)[i],
                             kw.get("stride", [1] * spatial)[i], 1) for i in range(spatial)]
    y.set_dim(dims).set_stride(list(np.zeros(dims).strides // np.int64(8)))  # packed
    return g, xt, wt, y


def conv_ref(x, w, pre, post, stride, dilation):
    return ref.conv_fprop(x, w, pre, post, stride, dilation, dtype=np.int64)


CONV_CASES = {
    "2d_padded": dict(x=[2, 5, 7, 6], w=[4, 5, 3, 3], pre=[1, 1], post=[1, 1], stride=[1, 1]),
    "2d_strided_groups": dict(x=[1, 6, 9, 8], w=[9, 2, 3, 2], pre=[1, 0], post=[0, 1],
                              stride=[2, 3]),
    "1d": dict(x=[3, 4, 13], w=[5, 4, 4], pre=[2], post=[1], stride=[2]),
    "3d": dict(x=[1, 3, 4, 5, 4], w=[2, 3, 2, 3, 2], pre=[1, 1, 0], post=[0, 1, 1],
               stride=[1, 2, 1]),
}


@pytest.mark.parametrize("layout", ["packed", "channels_last"])
@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_int8_conv_with_int32_output_is_exact(rng, case, layout):
    c = CONV_CASES[case]
    x, w = int8(rng, c["x"]), int8(rng, c["w"])
    if layout == "channels_last":
        order = [0] + list(range(2, x.ndim)) + [1]
        x = np.ascontiguousarray(x.transpose(order)).transpose(np.argsort(order))
    before = (x.copy(), w.copy())
    dilation = [1] * (x.ndim - 2)
    g, xt, wt, y = conv_graph(x, w, dt.INT32, pre_padding=c["pre"], post_padding=c["post"],
                              stride=c["stride"])
    want = conv_ref(x, w, c["pre"], c["post"], c["stride"], dilation)
    out = poisoned(want.shape, np.int32)
    run(g, {xt: x, wt: w}, {y: out})
    np.testing.assert_array_equal(out.astype(np.int64), want)
    assert np.array_equal(x, before[0]) and np.array_equal(w, before[1])


@pytest.mark.parametrize("xv,wv", [(-128, -128), (-128, 127), (127, 127)])
def test_int8_conv_sums_near_the_int32_limits(xv, wv):
    # 64 channels x 3 x 3 taps x 2^14: each interior output is +-9437184 - and the 1x1
    # conv below with C = 131071 reaches 2147467264, 16383 short of 2^31 - 1
    x = np.full([1, 64, 5, 5], xv, np.int8)
    w = np.full([2, 64, 3, 3], wv, np.int8)
    g, xt, wt, y = conv_graph(x, w, dt.INT32, pre_padding=[1, 1], post_padding=[1, 1])
    want = conv_ref(x, w, [1, 1], [1, 1], [1, 1], [1, 1])
    out = poisoned(want.shape, np.int32)
    run(g, {xt: x, wt: w}, {y: out})
    np.testing.assert_array_equal(out.astype(np.int64), want)
    x = np.full([1, INT32_MAX_TERMS, 1, 1], xv, np.int8)
    w = np.full([1, INT32_MAX_TERMS, 1, 1], wv, np.int8)
    g, xt, wt, y = conv_graph(x, w, dt.INT32)
    out = poisoned([1, 1, 1, 1], np.int32)
    run(g, {xt: x, wt: w}, {y: out})
    assert int(out[0, 0, 0, 0]) == xv * wv * INT32_MAX_TERMS
    assert abs(int(out[0, 0, 0, 0])) > 2**31 - 2**25


def test_int8_conv_to_float_rounds_once_and_to_int8_saturates(rng):
    c = CONV_CASES["2d_padded"]
    x, w = int8(rng, c["x"]), int8(rng, c["w"])
    want = conv_ref(x, w, c["pre"], c["post"], c["stride"], [1, 1])
    assert (np.abs(want) > 2**24).sum() == 0 and (np.abs(want) > 127).any()
    kw = dict(pre_padding=c["pre"], post_padding=c["post"])
    for y_type, npt, expect in ((dt.FLOAT, np.float32, want.astype(np.float32)),
                                (dt.INT8, np.int8, np.clip(want, -128, 127).astype(np.int8))):
        g, xt, wt, y = conv_graph(x, w, y_type, **kw)
        out = poisoned(want.shape, npt)
        run(g, {xt: x, wt: w}, {y: out})
        np.testing.assert_array_equal(out, expect)


@pytest.mark.parametrize("b_layout", ["packed", "transposed"])
def test_int8_batched_matmul_with_int32_output_is_exact(rng, b_layout):
    a = int8(rng, [3, 5, 37])
    b = int8(rng, [1, 37, 6])
    if b_layout == "transposed":
        b = np.ascontiguousarray(b.swapaxes(1, 2)).swapaxes(1, 2)
    g = hipdnn.pygraph(io_data_type=dt.INT8, compute_data_type=dt.INT32)
    at, bt = g.tensor_like(a, name="a"), g.tensor_like(b, name="b")
    c = g.matmul(at, bt, name="mm")
    c.set_output(True).set_data_type(dt.INT32)
    out = poisoned([3, 5, 6], np.int32)
    run(g, {at: a, bt: b}, {c: out})
    np.testing.assert_array_equal(out.astype(np.int64),
                                  np.matmul(a.astype(np.int64), b.astype(np.int64)))


@pytest.mark.parametrize("av,bv", [(-128, -128), (-128, 127)])
def test_int8_matmul_reaches_the_int32_limits_exactly(av, bv):
    k = INT32_MAX_TERMS
    a = np.full([2, k], av, np.int8)
    a[1, ::2] = 1  # a row of mixed values too
    b = np.full([k, 1], bv, np.int8)
    g = hipdnn.pygraph(io_data_type=dt.INT8, compute_data_type=dt.INT32)
    at, bt = g.tensor_like(a, name="a"), g.tensor_like(b, name="b")
    c = g.matmul(at, bt, name="mm")
    c.set_output(True).set_data_type(dt.INT32)
    out = poisoned([2, 1], np.int32)
    run(g, {at: a, bt: b}, {c: out})
    np.testing.assert_array_equal(out.astype(np.int64), a.astype(np.int64) @ b.astype(np.int64))


def declined(g):
    g.set_preferred_engine("reference_cpu")
    g.validate()
    g.create_execution_plans([hipdnn.heur_mode.A])
    return dict(g.support_report())["reference_cpu"]


def matmul_graph(a_type, b_type, compute, k=8, c_type=dt.INT32):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=compute)
    c = g.matmul(g.tensor(name="a", dim=[4, k], data_type=a_type),
                 g.tensor(name="b", dim=[k, 3], data_type=b_type), name="mm")
    c.set_output(True).set_data_type(c_type)
    return g


@pytest.mark.parametrize("graph,reason", [
    (lambda: matmul_graph(dt.INT8, dt.FLOAT, dt.INT32),
     r"node 'mm' \(matmul\): a 'a' is int8 and b 'b' is float32: integer compute needs both INT8 "
     r"\(mixed int8 and float inputs are not supported\)"),
    (lambda: matmul_graph(dt.INT8, dt.INT8, dt.FLOAT),
     r"INT8 inputs need compute type INT32, not float32"),
    (lambda: matmul_graph(dt.FLOAT, dt.FLOAT, dt.INT32, c_type=dt.FLOAT),
     r"a 'a' is float32 and b 'b' is float32: integer compute needs both INT8"),
    (lambda: matmul_graph(dt.INT8, dt.INT8, dt.INT32, c_type=dt.INT64),
     r"c 'mm::C' is int64; INT32 compute writes INT32, INT8 \(saturated\) or a float type"),
    (lambda: matmul_graph(dt.INT8, dt.INT8, dt.INT32, k=INT32_MAX_TERMS + 1),
     r"each output sums 131072 int8 products, which can overflow the INT32 accumulator "
     r"\(at most 131071\)"),
])
def test_reference_engine_declines_what_it_cannot_run_with_the_reason(graph, reason):
    why = declined(graph())
    assert why is not None
    assert __import__("re").search(reason, why), why


def test_int8_conv_declines_a_reduction_that_could_overflow():
    g = hipdnn.pygraph(io_data_type=dt.INT8, compute_data_type=dt.INT32)
    y = g.conv_fprop(g.tensor(name="x", dim=[1, 16384, 4, 4]),
                     g.tensor(name="w", dim=[1, 16384, 3, 3]), padding=[1, 1], name="c")
    y.set_output(True).set_data_type(dt.INT32)
    why = declined(g)
    assert "node 'c' (conv_fprop): each output sums 147456 int8 products" in why, why
