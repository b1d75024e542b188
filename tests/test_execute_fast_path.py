"""pygraph.execute's fast path (hipdnn/_pygraph/plans.py, VariantPack.run_keyed in
csrc/python/execute.c): once a call has gone the checked way, a later call with the same
dict keys goes straight to the compiled pack.  It must run only what the checked way would
run, on the same checks: every mistake made after a fast run gets the error a first call
gets, word for word, and a change of plan is followed (a change of memory: in
tests/test_gpu_device.py).  (Its speed is measured in
benchmarks/host_overhead_bench.py, not here.)"""
import numpy as np
import pytest

import hipdnn

dt = hipdnn.data_type
SHAPE = (3, 5)


def relu_add_graph(name="fast", mode=hipdnn.heur_mode.FALLBACK):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name=name)
    a = g.tensor(name="a", dim=list(SHAPE))
    b = g.tensor(name="b", dim=list(SHAPE))
    y = g.relu(input=g.add(a=a, b=b, name="sum"), name="act")
    y.set_output(True).set_name("y")
    g.build([mode])  # FALLBACK: the reference engine, whatever else is loaded
    return g, a, b, y


def inputs(seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(SHAPE).astype(np.float32) for _ in range(2)]


def poisoned():
    y = np.empty(SHAPE, np.float32)
    y.view(np.uint32)[...] = 0x7FC00123
    return y


def run_checked(g, a, b, y, seed):
    xa, xb = inputs(seed)
    kept = (xa.copy(), xb.copy())
    ya = poisoned()
    g.execute({a: xa, b: xb, y: ya})
    np.testing.assert_array_equal(ya, np.maximum(xa + xb, 0))  # fp32 add then relu: exact
    np.testing.assert_array_equal(xa, kept[0])
    np.testing.assert_array_equal(xb, kept[1])


def test_repeated_calls_take_the_fast_path_and_stay_right():
    g, a, b, y = relu_add_graph()
    assert g._fast_run is None
    run_checked(g, a, b, y, 0)
    assert g._fast_run is not None and g._fast_run[2] == tuple(
        {t._uid: t for t in (a, b, y)}[u] for u in g._fast_run[1].uids)
    pack = g._fast_run[1]
    for seed in range(1, 4):  # new arrays each time, same keys
        run_checked(g, a, b, y, seed)
    assert g._fast_run[1] is pack


def test_run_keyed_declines_without_raising_what_it_does_not_take():
    g, a, b, y = relu_add_graph()
    run_checked(g, a, b, y, 0)
    _plan, pack, keys = g._fast_run
    h = g._handle
    xa, xb = inputs(1)
    good = {a: xa, b: xb, y: poisoned()}
    declined = [
        (h, {a: xa, b: xb}, keys, None),                         # a key missing
        (h, {a: xa, b: xb, y: poisoned(), 99: xa}, keys, None),  # one more key
        (h, {a: xa, b: xb, y: None}, keys, None),                # a None array
        (h, {a: xa, b: 12345, y: poisoned()}, keys, None),       # an address
        (h, {a: xa.astype(np.float16), b: xb, y: poisoned()}, keys, None),
        (h, {a: xa[:, :4], b: xb, y: poisoned()}, keys, None),
        (h, {a: xa, b: xb, y: np.broadcast_to(np.float32(0), SHAPE)}, keys, None),  # read-only
        (h, list(good.values()), keys, None),                    # not a dict
        (h, good, keys[:2], None),                               # other keys
        (h, good, keys, 4096),                                   # an address as workspace
        (None, good, keys, None),                                # no handle
        ("handle", good, keys, None),
    ]
    for args in declined:
        assert pack.run_keyed(*args) is False, args
    assert pack.run_keyed(h, good, keys, None) is True
    np.testing.assert_array_equal(good[y], np.maximum(xa + xb, 0))
    with pytest.raises(TypeError, match="takes 4 arguments"):
        pack.run_keyed(h, good, keys)


def _mistakes(a, b, y, other):
    xa, xb = inputs(7)
    ro = poisoned()
    ro.flags.writeable = False
    return {
        "dtype": {a: xa.astype(np.float16), b: xb, y: poisoned()},
        "shape": {a: xa[:, :4], b: xb, y: poisoned()},
        "strides": {a: np.asfortranarray(xa), b: xb, y: poisoned()},
        "read-only output": {a: xa, b: xb, y: ro},
        "missing": {a: xa, b: xb},
        "foreign key": {a: xa, b: xb, y: poisoned(), other: xa},
        "twice": {a: xa, b: xb, y: poisoned(), a._uid: xa},
        "not an array": {a: xa, b: "xb", y: poisoned()},
        "tiny": {a: np.ones((2, 2), np.float32), b: xb, y: poisoned()},
    }


def error_of(g, pack):
    try:
        g.execute(pack)
    except Exception as e:  # the error itself is compared
        return type(e), str(e)
    return None


def test_every_mistake_after_a_fast_run_gets_the_first_callserror_of():
    g1, a1, b1, y1 = relu_add_graph()
    g2, a2, b2, y2 = relu_add_graph()
    _o, o, _y = relu_add_graph("other")[:3]
    run_checked(g2, a2, b2, y2, 0)
    assert g2._fast_run is not None
    first, later = _mistakes(a1, b1, y1, o), _mistakes(a2, b2, y2, o)
    for what in first:
        want = error_of(g1, first[what])
        assert want is not None, what
        assert error_of(g2, later[what]) == want, what
        run_checked(g2, a2, b2, y2, 1)  # and the fast path still runs right after
    assert g2._fast_run is not None


def test_a_new_plan_drops_the_fast_path():
    g, a, b, y = relu_add_graph()
    run_checked(g, a, b, y, 0)
    g.deselect_engines([])  # drops the configs: the graph must be planned again
    assert g._fast_run is None
    with pytest.raises(hipdnn.HipdnnError):
        g.execute({a: inputs(0)[0], b: inputs(0)[1], y: poisoned()})
    g.build([hipdnn.heur_mode.FALLBACK])
    run_checked(g, a, b, y, 2)
    assert g._fast_run is not None
    old = g._fast_run[0]
    g._plans[g._candidate] = g._plans[g._candidate]._replace()  # another plan object
    run_checked(g, a, b, y, 3)
    assert g._fast_run[0] is not old

