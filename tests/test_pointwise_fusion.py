"""reference_cpu evaluates a run of pointwise nodes in one pass over rows, without writing
the virtual tensors between them.  Each intermediate is still rounded to its own data type,
so the fused result must equal, bit for bit, the same graph with every intermediate made a
real (non-virtual) output, which the engine evaluates node by node."""
import numpy as np
import pytest

import hipdnn

dt = hipdnn.data_type


def _chain(virtual, inter_dtype, rng, shape=(3, 5, 7, 9)):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=list(shape), data_type=dt.FLOAT)
    s = g.tensor(name="s", dim=[1, shape[1], 1, 1], data_type=dt.FLOAT)
    b = g.tensor(name="b", dim=[1, 1, 1, shape[3]], data_type=dt.FLOAT)
    t1 = g.mul(a=x, b=s, name="scale")
    t2 = g.add(a=t1, b=b, name="shift")
    t3 = g.relu(input=t2, negative_slope=0.0625, name="leaky")
    t4 = g.max(a=t3, b=0.25, name="floor")   # a by-value scalar operand
    y = g.tanh(input=t4, name="squash")
    inter = [t1, t2, t3, t4]
    for t in inter:
        t.set_data_type(inter_dtype)
        if not virtual:
            t.set_output(True)
    y.set_output(True)
    g.build([hipdnn.heur_mode.A])
    arrays = {x: rng.standard_normal(shape).astype(np.float32) * 3,
              s: rng.standard_normal((1, shape[1], 1, 1)).astype(np.float32),
              b: rng.standard_normal((1, 1, 1, shape[3])).astype(np.float32)}
    before = {k: v.copy() for k, v in arrays.items()}
    out = np.full(shape, np.nan, np.float32)
    arrays[y] = out
    if not virtual:
        np_dtype = {dt.FLOAT: np.float32, dt.HALF: np.float16, dt.BFLOAT16: np.uint16}[inter_dtype]
        for t in inter:
            arrays[t] = np.zeros(shape, np_dtype)
    ws = np.empty(g.get_workspace_size(), np.uint8)
    g.execute(arrays, ws)
    for k, v in before.items():
        assert np.array_equal(arrays[k], v), "an input changed"
    return out


def test_the_chain_is_one_fused_run_and_outputs_break_it():
    messages = []
    hipdnn.set_log_level(hipdnn.log_level.INFO)
    hipdnn.set_log_callback(lambda level, msg: messages.append(msg))
    try:
        _chain(True, dt.FLOAT, np.random.default_rng(1))
        _chain(False, dt.FLOAT, np.random.default_rng(1))
        hipdnn._C.flush_log()
    finally:
        hipdnn.set_log_callback(None)
        hipdnn.set_log_level(hipdnn.log_level.WARN)
    contexts = [m for m in messages if "execution context" in m]
    assert "5 node(s), 1 fused pointwise run(s)" in contexts[0]
    assert "5 node(s), 0 fused pointwise run(s)" in contexts[1]


@pytest.mark.parametrize("inter_dtype", [dt.FLOAT, dt.HALF, dt.BFLOAT16])
def test_fused_chain_equals_node_by_node_bit_for_bit(inter_dtype):
    fused = _chain(True, inter_dtype, np.random.default_rng(7))
    unfused = _chain(False, inter_dtype, np.random.default_rng(7))
    assert not np.isnan(fused).any(), "every element written"
    assert np.array_equal(fused.view(np.uint32), unfused.view(np.uint32))


def test_fused_chain_matches_float64_reference():
    rng = np.random.default_rng(11)
    out = _chain(True, dt.FLOAT, np.random.default_rng(11))
    shape = (3, 5, 7, 9)
    x = rng.standard_normal(shape).astype(np.float32) * 3
    s = rng.standard_normal((1, shape[1], 1, 1)).astype(np.float32)
    b = rng.standard_normal((1, 1, 1, shape[3])).astype(np.float32)
    r = lambda v: v.astype(np.float32).astype(np.float64)  # intermediates are fp32
    t2 = r(r(x.astype(np.float64) * s) + b)
    t3 = r(np.where(t2 > 0, t2, 0.0625 * t2))
    t4 = r(np.maximum(t3, 0.25))
    expected = np.tanh(t4)
    assert np.allclose(out, expected, rtol=1e-6, atol=1e-6)


def _masked_graph(virtual, rng, shape=(2, 3, 4, 33)):
    """m = cmp_gt(x, 0) (BOOLEAN), s = binary_select(x, dy, m), d = gelu_backward(s, x),
    i = gen_index(x, axis 3), y = d + i * 2^-10: three-operand and BOOLEAN members and
    coordinates in one run when the intermediates are virtual."""
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=list(shape), data_type=dt.FLOAT)
    dy = g.tensor(name="dy", dim=[1, shape[1], 1, 1], data_type=dt.FLOAT)
    m = g.cmp_gt(input=x, comparison=0.0, name="m")
    s = g.binary_select(input0=x, input1=dy, mask=m, name="s")
    d = g.gelu_backward(loss=s, input=x, name="d")
    i = g.gen_index(input=x, axis=3, name="i")
    y = g.add(a=d, b=g.mul(a=i, b=2.0 ** -10, name="i2"), name="y")
    inter = [m, s, d, i]
    if not virtual:
        for t in inter:
            t.set_output(True)
    y.set_output(True)
    g.build([hipdnn.heur_mode.A])
    arrays = {x: rng.standard_normal(shape).astype(np.float32),
              dy: rng.standard_normal((1, shape[1], 1, 1)).astype(np.float32)}
    out = np.full(shape, np.nan, np.float32)
    arrays[y] = out
    if not virtual:
        arrays.update({m: np.zeros(shape, np.bool_), s: np.zeros(shape, np.float32),
                       d: np.zeros(shape, np.float32), i: np.zeros(shape, np.float32)})
    g.execute(arrays, np.empty(g.get_workspace_size(), np.uint8))
    return out, arrays[x], arrays[dy]


def test_masked_graph_is_one_run_and_equals_node_by_node_and_the_reference():
    messages = []
    hipdnn.set_log_level(hipdnn.log_level.INFO)
    hipdnn.set_log_callback(lambda level, msg: messages.append(msg))
    try:
        fused, x, dy = _masked_graph(True, np.random.default_rng(5))
        unfused, _, _ = _masked_graph(False, np.random.default_rng(5))
        hipdnn._C.flush_log()
    finally:
        hipdnn.set_log_callback(None)
        hipdnn.set_log_level(hipdnn.log_level.WARN)
    contexts = [m for m in messages if "execution context" in m]
    assert "6 node(s), 1 fused pointwise run(s)" in contexts[0], contexts
    assert "6 node(s), 0 fused pointwise run(s)" in contexts[1], contexts
    assert not np.isnan(fused).any(), "every element written"
    assert np.array_equal(fused.view(np.uint32), unfused.view(np.uint32))
    import references as ref
    x64 = x.astype(np.float64)
    s = np.where(x64 > 0, x64, dy.astype(np.float64))
    d = ref.round_to(ref.gelu_backward(x64, s), "fp32")  # an fp32 intermediate
    want = d + ref.gen_index(x.shape, 3) * 2.0 ** -10
    np.testing.assert_allclose(fused, want, rtol=1e-6, atol=1e-7)
