"""Graphs of several ops (intermediates virtual, fp32) against chained float64 references.

A fused graph is held to the loosest tolerance among its ops
(docs/architecture.md, "Tolerances").
"""
import hipdnn
import numpy as np

import references as ref
from conftest import ENGINE, STORAGES, assert_close
from tolerances import graph_tolerance


def test_conv_bias_relu(nx, dtype):
    x = nx.input([2, 4, 7, 7], dtype)
    w = nx.input([6, 4, 3, 3], dtype)
    bias = nx.input([1, 6, 1, 1], dtype)
    g = nx.graph(dtype)
    conv = g.conv_fprop(image=x.bind(g, "x"), weight=w.bind(g, "w"), padding=[1, 1],
                        stride=[1, 1], dilation=[1, 1], name="conv")
    y = g.relu(input=g.add(a=conv, b=bias.bind(g, "bias"), name="bias"), name="relu")
    expected = ref.relu(ref.add(ref.conv_fprop(x.values, w.values, [1, 1], [1, 1], [1, 1],
                                               [1, 1]), bias.values))
    out = nx.output(y, expected.shape, dtype, "inferred")
    nx.execute(g, [x, w, bias, out])
    nx.assert_close(out, expected, graph_tolerance(["conv_fprop", "pointwise"], dtype))


def test_conv_bias_relu_nhwc_strided_grouped(nx, dtype):
    x = nx.input([2, 6, 8, 7], dtype, "channels_last")
    w = nx.input([6, 3, 3, 3], dtype, "channels_last")
    bias = nx.input([1, 6, 1, 1], dtype)
    g = nx.graph(dtype)
    conv = g.conv_fprop(image=x.bind(g, "x"), weight=w.bind(g, "w"), pre_padding=[1, 0],
                        post_padding=[0, 1], stride=[2, 1], dilation=[1, 1], name="conv")
    y = g.relu(input=g.add(a=conv, b=bias.bind(g, "bias")), negative_slope=0.125)
    expected = ref.relu(ref.add(ref.conv_fprop(x.values, w.values, [1, 0], [0, 1], [2, 1],
                                               [1, 1]), bias.values), lower_clip_slope=0.125)
    out = nx.output(y, expected.shape, dtype, "channels_last")
    nx.execute(g, [x, w, bias, out])
    nx.assert_close(out, expected, graph_tolerance(["conv_fprop", "pointwise"], dtype))


def test_matmul_bias_gelu(nx, dtype):
    a = nx.input([2, 4, 6], dtype)
    b = nx.input([2, 6, 5], dtype, "transposed")
    bias = nx.input([1, 1, 5], dtype)
    g = nx.graph(dtype)
    mm = g.matmul(A=a.bind(g, "A"), B=b.bind(g, "B"), name="fc")
    y = g.gelu(input=g.add(a=mm, b=bias.bind(g, "bias")))
    expected = ref.gelu(ref.add(ref.matmul(a.values, b.values), bias.values))
    out = nx.output(y, expected.shape, dtype)
    nx.execute(g, [a, b, bias, out])
    nx.assert_close(out, expected, graph_tolerance(["matmul", "pointwise"], dtype))


def test_conv_batchnorm_relu(nx, dtype):
    x = nx.input([2, 4, 6, 6], dtype)
    w = nx.input([5, 4, 3, 3], dtype)
    stat = [1, 5, 1, 1]
    mean = nx.input(stat, dtype)
    inv_var = nx.input(stat, dtype, low=0.25, high=1.0, signed=False)
    scale = nx.input(stat, dtype, low=0.5, high=1.5)
    shift = nx.input(stat, dtype)
    g = nx.graph(dtype)
    conv = g.conv_fprop(image=x.bind(g, "x"), weight=w.bind(g, "w"), padding=[1, 1],
                        stride=[1, 1], dilation=[1, 1])
    bn = g.batchnorm_inference(input=conv, mean=mean.bind(g, "mean"),
                               inv_variance=inv_var.bind(g, "inv_variance"),
                               scale=scale.bind(g, "scale"), bias=shift.bind(g, "bias"))
    y = g.relu(input=bn)
    conv_ref = ref.conv_fprop(x.values, w.values, [1, 1], [1, 1], [1, 1], [1, 1])
    expected = ref.relu(ref.batchnorm_inference(conv_ref, mean.values, inv_var.values,
                                                scale.values, shift.values))
    out = nx.output(y, expected.shape, dtype)
    nx.execute(g, [x, w, mean, inv_var, scale, shift, out])
    nx.assert_close(out, expected,
                    graph_tolerance(["conv_fprop", "batchnorm", "pointwise"], dtype))


def test_intermediate_marked_as_output_is_written_too(nx, dtype):
    x = nx.input([2, 3, 6, 5], dtype)
    w = nx.input([4, 3, 3, 3], dtype)
    g = nx.graph(dtype)
    conv = g.conv_fprop(image=x.bind(g, "x"), weight=w.bind(g, "w"), padding=[1, 1],
                        stride=[1, 1], dilation=[1, 1], name="conv")
    y = g.tanh(input=conv)
    conv_ref = ref.conv_fprop(x.values, w.values, [1, 1], [1, 1], [1, 1], [1, 1])
    conv_out = nx.output(conv, conv_ref.shape, dtype)
    out = nx.output(y, conv_ref.shape, dtype)
    nx.execute(g, [x, w, conv_out, out])
    nx.assert_close(conv_out, conv_ref, graph_tolerance(["conv_fprop"], dtype))
    nx.assert_close(out, ref.tanh(conv_ref), graph_tolerance(["conv_fprop", "pointwise"], dtype))


def test_diamond_reuses_one_intermediate_twice(nx, dtype):
    # y = sigmoid(a + b) * (a + b): the sum feeds two consumers.
    a = nx.input([2, 4, 5, 5], dtype)
    b = nx.input([1, 4, 1, 1], dtype)
    g = nx.graph(dtype)
    s = g.add(a=a.bind(g, "a"), b=b.bind(g, "b"))
    y = g.mul(a=g.sigmoid(input=s), b=s)
    ssum = ref.add(a.values, b.values)
    expected = ref.mul(ref.sigmoid(ssum), ssum)
    out = nx.output(y, expected.shape, dtype)
    nx.execute(g, [a, b, out])
    nx.assert_close(out, expected, graph_tolerance(["pointwise"], dtype))


# ---- the friendly layer (hipdnn.Graph) ------------------------------------------------------

def _friendly_graph(dtype):
    return hipdnn.Graph(io_data_type=STORAGES[dtype].data_type,
                        compute_data_type=hipdnn.data_type.FLOAT, preferred_engine=ENGINE)


def test_friendly_graph_conv_bias_relu_is_callable_on_new_inputs(nx, dtype):
    storage = STORAGES[dtype]
    x0, w0, b0 = (nx.input(s, dtype) for s in ([2, 4, 6, 6], [5, 4, 3, 3], [1, 5, 1, 1]))
    with _friendly_graph(dtype) as fg:
        y = fg.relu(fg.add(fg.conv_fprop(x0.array, w0.array, padding=[1, 1]), b0.array))
        fg.output(y)
    assert fg.engine_name == ENGINE
    tol = graph_tolerance(["conv_fprop", "pointwise"], dtype)
    for _ in range(2):  # the second call must not reuse the first call's results
        x, w, b = (nx.input(s, dtype) for s in ([2, 4, 6, 6], [5, 4, 3, 3], [1, 5, 1, 1]))
        got = fg(x.array, w.array, b.array)
        expected = ref.relu(ref.add(ref.conv_fprop(x.values, w.values, [1, 1], [1, 1],
                                                   [1, 1], [1, 1]), b.values))
        assert got.dtype == storage.np_dtype
        assert_close(storage.decode(got), expected, tol, "Graph output")
        for op in (x, w, b):
            assert np.array_equal(op.base.view(np.uint8), op.before.view(np.uint8))


def test_friendly_graph_matmul_gelu(nx, dtype):
    storage = STORAGES[dtype]
    a, b = nx.input([3, 4, 7], dtype), nx.input([3, 7, 5], dtype)
    with _friendly_graph(dtype) as fg:
        fg.gelu(fg.matmul(a.array, b.array))  # no output marked: the last op's result
    a, b = nx.input([3, 4, 7], dtype), nx.input([3, 7, 5], dtype)
    got = fg(a.array, b.array)
    assert_close(storage.decode(got), ref.gelu(ref.matmul(a.values, b.values)),
                 graph_tolerance(["matmul", "pointwise"], dtype), "Graph output")


def test_friendly_graph_two_outputs_in_marking_order(nx):
    x, s = nx.input([2, 3, 4, 4], "fp32"), nx.input([1, 3, 1, 1], "fp32")
    with _friendly_graph("fp32") as fg:
        scaled = fg.mul(x.array, s.array)
        fg.output(fg.tanh(scaled))
        fg.output(scaled)
    x, s = nx.input([2, 3, 4, 4], "fp32"), nx.input([1, 3, 1, 1], "fp32")
    got_tanh, got_scaled = fg(x.array, s.array)
    prod = ref.mul(x.values, s.values)
    assert_close(got_scaled, prod, graph_tolerance(["pointwise"], "fp32"), "scaled")
    assert_close(got_tanh, ref.tanh(prod), graph_tolerance(["pointwise"], "fp32"), "tanh")
