"""Attention dropout (sdpa / sdpa_backward with cuDNN frontend's
dropout=(probability, seed, offset) and rng_dump) on the reference engine against float64
NumPy: the mask is Philox4x32-10 of the seed and offset at each (b, h, i, j)
(plugins/hip/philox.h), checked element by element against an independent NumPy port
(itself checked against Random123's known answers); o against the float64 attention with
p * keep / (1 - probability), as cuDNN frontend's test_mhas computes its reference from
rng_dump; the stats not dropped; the backward drawing the forward's mask (test_mhas's
flow: the forward's rng_dump, then the backward given the same dropout, against the
float64 gradients with that mask); seed and offset by value or in memory, int32 or int64;
the refusals, naming what is wrong; serialized as format version 3."""
import numpy as np
import pytest

import hipdnn
import references as ref
import test_op_table
import test_sdpa
from conftest import STORAGES, Operand
from tolerances import tolerance

dt = hipdnn.data_type
ALIGN = hipdnn.diagonal_alignment
Case = test_sdpa.Case


def word_input(g, name, value, storage="i64", by_value=False):
    """Dropout's seed or offset: one int64 (or int32) value [1, 1, 1, 1], in memory or a
    by-value scalar given at execute time; checked unchanged like any input."""
    st = STORAGES[storage]
    arr = np.array([value], st.np_dtype).reshape(1, 1, 1, 1)
    op = Operand(arr, arr, np.ones(arr.shape, bool), st, arr.astype(np.float64))
    op.tensor = g.tensor(name=name, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1],
                         data_type=st.data_type, is_pass_by_value=by_value)
    return op


def dropout_inputs(g, prob, seed=123456, offset=789, storage="i64", by_value=False):
    """(operands, the dropout keyword's tuple) for seed and offset."""
    s = word_input(g, "seed", seed, storage, by_value)
    o = word_input(g, "offset", offset, storage, by_value)
    return [s, o], (prob, s.tensor, o.tensor)


def forward(env, dtype, c, prob=0.1, seed=123456, offset=789, dump=True, storage="i64",
            by_value=False, stats=True, lengths=test_sdpa.int_input):
    """sdpa with dropout: (graph, inputs, outputs [o, stats, rng_dump], the float64 o and
    stats with the mask NumPy draws, that mask); `lengths` makes the padding mask's."""
    q = env.input([c.b, c.hq, c.sq, c.d], dtype, c.layout)
    k = env.input([c.b, c.hk, c.skv, c.d], dtype, c.layout)
    v = env.input([c.b, c.hv, c.skv, c.dv], dtype, c.layout)
    g = env.graph(dtype)
    ins = [q, k, v]
    kw = c.kwargs()
    test_sdpa.padding_mask(g, c, ins, kw, lengths)
    words, kw["dropout"] = dropout_inputs(g, prob, seed, offset, storage, by_value)
    ins += words
    shape = (c.b, c.hq, c.sq, c.skv)
    rng_dump = g.tensor(name="rng_dump", dim=list(shape), data_type=dt.FLOAT) if dump else None
    o, st = g.sdpa(q.bind(g, "q"), k.bind(g, "k"), v.bind(g, "v"), generate_stats=stats,
                   attn_scale=c.scale, rng_dump=rng_dump, name="attn", **kw)
    keep = ref.dropout_keep(seed, offset, prob, shape).astype(np.float64)
    want = ref.sdpa(q.values, k.values, v.values, float(np.float32(c.scale)),
                    c.additive(None), c.allowed(), dropout=(prob, keep))
    outs = [env.output(o, want[0].shape, dtype, c.layout)]
    if stats:
        outs.append(env.output(st, want[1].shape, "fp32"))
    if dump:
        outs.append(env.output(rng_dump, shape, "fp32"))
    return g, ins, outs, want, keep


def check_forward(env, dtype, c, **kw):
    g, ins, outs, (want_o, want_stats), keep = forward(env, dtype, c, **kw)
    env.execute(g, ins + outs)
    env.assert_close(outs[0], want_o, tolerance("sdpa", dtype))
    if kw.get("stats", True):
        test_sdpa.check_stats(outs[1], want_stats)
    if kw.get("dump", True):
        got = outs[-1].decoded()
        assert set(np.unique(got)) <= {0.0, 1.0}, "rng_dump holds other values than 1 and 0"
        assert np.array_equal(got, keep), \
            f"rng_dump differs from philox.h's rule at {np.argwhere(got != keep)[:4]}"
    return outs


def backward(env, dtype, c, prob=0.1, seed=123456, offset=789, storage="i64", by_value=False,
             lengths=test_sdpa.int_input):
    """test_mhas's flow: the forward (o, stats, rng_dump) on the engine, then its backward
    given the same dropout, against float64 gradients with the forward's rng_dump."""
    g, ins, outs, _, keep = forward(env, dtype, c, prob, seed, offset, True, storage, by_value,
                                    lengths=lengths)
    env.execute(g, ins + outs)
    q, k, v = ins[:3]
    o_out, st_out, dump = outs
    mask = dump.decoded()
    assert np.array_equal(mask, keep)
    o = env.input(o_out.shape, dtype, c.layout, values=o_out.decoded()) \
        if np.all(o_out.decoded() != 0) else test_sdpa._exact_input(env, o_out.decoded(), dtype,
                                                                     c.layout)
    st = test_sdpa._exact_input(env, st_out.decoded(), "fp32", "packed")
    do = env.input(o.values.shape, dtype, c.layout)
    gb = env.graph(dtype)
    kw = c.kwargs()
    bins = [q, k, v, o, do, st]
    test_sdpa.padding_mask(gb, c, bins, kw, lengths)
    words, kw["dropout"] = dropout_inputs(gb, prob, seed, offset, storage, by_value)
    bins += words
    dq, dk, dv = gb.sdpa_backward(q.bind(gb, "q"), k.bind(gb, "k"), v.bind(gb, "v"),
                                  o.bind(gb, "o"), do.bind(gb, "dO"), st.bind(gb, "stats"),
                                  attn_scale=c.scale, name="attn_bwd", **kw)
    want = ref.sdpa_backward(q.values, k.values, v.values, o.values, do.values, st.values,
                             float(np.float32(c.scale)), c.additive(None), c.allowed(),
                             dropout=(prob, mask))
    bouts = [env.output(t, w.shape, dtype, c.layout) for t, w in zip((dq, dk, dv), want)]
    env.execute(gb, bins + bouts)
    for out, w in zip(bouts, want):
        env.assert_close(out, w, tolerance("sdpa", dtype))
    return bouts


# ---- the mask ------------------------------------------------------------------------------

def test_numpy_philox_gives_random123s_known_answers():
    for ctr, key, want in [
            ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
            ((0xffffffff,) * 4, (0xffffffff,) * 2, (0x408f276d, 0x41c83b0e, 0xa20bc7c6,
                                                    0x6d5451fd)),
            ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
             (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]:
        got = ref.philox4x32_10([[x] for x in ctr], [[x] for x in key])
        assert tuple(int(w[0]) for w in got) == want


def test_the_mask_keeps_about_one_minus_the_probability():
    for prob in (0.1, 0.5, 0.9):
        keep = ref.dropout_keep(7, 0, prob, (2, 4, 64, 64))
        n = keep.size
        assert abs(keep.mean() - (1 - prob)) < 6 * np.sqrt(prob * (1 - prob) / n)


# ---- forward -------------------------------------------------------------------------------

def test_forward(nx, dtype):
    check_forward(nx, dtype, Case())


@pytest.mark.parametrize("prob", [0.0, 0.5, 0.95])
def test_forward_probabilities(nx, prob):
    """0: nothing dropped (rng_dump all ones); 0.95: most of each row dropped."""
    outs = check_forward(nx, "fp32", Case(sq=6, skv=40), prob=prob)
    if prob == 0.0:
        assert (outs[-1].decoded() == 1.0).all()


def test_forward_with_masks_gqa_and_bshd(nx, dtype):
    """Padding (rows past L_q zeroed, their mask still dumped), a bottom-right causal mask,
    GQA heads and BSHD layout: each (b, h, i, j) draws its own number."""
    check_forward(nx, dtype, Case(hq=6, hk=2, sq=9, skv=13, causal_br=True, layout="bshd",
                                  lens=([9, 4], [13, 7])))


def test_forward_alibi_and_sliding_window(nx):
    check_forward(nx, "fp32", Case(hq=3, sq=12, skv=12, alibi=True, window=4, causal=True))


def test_forward_without_stats_or_rng_dump(nx):
    check_forward(nx, "fp32", Case(), stats=False)
    check_forward(nx, "fp32", Case(), dump=False)


@pytest.mark.parametrize("storage,by_value", [("i64", False), ("i32", False), ("i64", True),
                                              ("i32", True)])
def test_seed_and_offset_in_memory_or_by_value(nx, storage, by_value):
    check_forward(nx, "fp32", Case(), seed=987, offset=65, storage=storage, by_value=by_value)


def test_seed_and_offset_use_all_their_bits(nx):
    """64-bit seeds and offsets (past float64's 2^53, read whole), negative ones; changing
    either changes the mask."""
    c = Case(sq=8, skv=32)
    masks = []
    for seed, offset in [((1 << 62) + 3, 5), ((1 << 62) + 2, 5), ((1 << 62) + 3, (1 << 40) + 5),
                         (-17, -1)]:
        outs = check_forward(nx, "fp32", c, prob=0.5, seed=seed, offset=offset)
        masks.append(outs[-1].decoded())
    for a in range(len(masks)):
        for b in range(a):
            assert not np.array_equal(masks[a], masks[b])


# ---- backward ------------------------------------------------------------------------------

def test_backward(nx, dtype):
    backward(nx, dtype, Case())


def test_backward_gqa_padding_causal(nx, dtype):
    backward(nx, dtype, Case(hq=4, hk=2, hv=1, sq=9, skv=11, causal=True, lens=([9, 5], [11, 8])))


def test_backward_high_probability_seed_by_value(nx):
    backward(nx, "fp32", Case(sq=5, skv=21), prob=0.8, storage="i32", by_value=True)


def test_backward_matches_finite_differences_of_the_dropped_forward():
    """The float64 reference's dropout gradients are those of its forward at a fixed
    mask: a check of the formulas themselves (central differences of sum(o * do))."""
    rng = np.random.default_rng(5)
    b, h, sq, skv, d = 1, 2, 3, 5, 4
    q, k, v, do = (rng.standard_normal(s) for s in ((b, h, sq, d), (b, h, skv, d),
                                                      (b, h, skv, d), (b, h, sq, d)))
    keep = ref.dropout_keep(3, 4, 0.3, (b, h, sq, skv)).astype(np.float64)
    o, st = ref.sdpa(q, k, v, 0.7, dropout=(0.3, keep))
    grads = ref.sdpa_backward(q, k, v, o, do, st, 0.7, dropout=(0.3, keep))
    for which, g in enumerate(grads):
        args = [q, k, v]
        num = np.zeros_like(args[which])
        for idx in np.ndindex(num.shape):
            for sign in (1, -1):
                a = [x.copy() for x in args]
                a[which][idx] += sign * 1e-6
                num[idx] += sign * np.sum(ref.sdpa(*a, 0.7, dropout=(0.3, keep))[0] * do)
        np.testing.assert_allclose(g, num / 2e-6, rtol=1e-5, atol=1e-7)


# ---- refusals and serialization ------------------------------------------------------------

def _graph():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    q = g.tensor(name="q", dim=[1, 2, 4, 8])
    return g, q


@pytest.mark.parametrize("make,error,message", [
    (lambda g: (1.0, g.tensor(name="s", dim=[1, 1, 1, 1], data_type=dt.INT64),
                g.tensor(name="o", dim=[1, 1, 1, 1], data_type=dt.INT64)),
     ValueError, r"dropout probability must be a number in \[0, 1\)"),
    (lambda g: (0.1, None, None), ValueError, "needs a seed and an offset"),
    (lambda g: [0.1, 1, 2], ValueError, "must be a tuple"),
    (lambda g: (0.1, g.tensor(name="s", dim=[1, 1, 1, 1], data_type=dt.FLOAT),
                g.tensor(name="off", dim=[1, 1, 1, 1], data_type=dt.INT64)),
     hipdnn.HipdnnError, "dropout seed 's' is float32; it must be int32 or int64"),
    (lambda g: (0.1, g.tensor(name="s", dim=[1, 1, 1, 2], data_type=dt.INT64),
                g.tensor(name="off", dim=[1, 1, 1, 1], data_type=dt.INT64)),
     hipdnn.HipdnnError, "seed"),
    (lambda g: (g.tensor(name="mask", dim=[1, 2, 4, 4]), g.tensor(name="scale", dim=[1])),
     hipdnn.FeatureNotSupportedError, r"dropout \(mask, scale\) is not supported"),
])
def test_bad_dropout_is_refused(make, error, message):
    g, q = _graph()
    with pytest.raises(error, match=message):
        o, _ = g.sdpa(q, q, q, generate_stats=False, dropout=make(g))
        o.set_output(True)
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([hipdnn.heur_mode.A, hipdnn.heur_mode.FALLBACK])


def test_rng_dump_needs_dropout_and_the_scores_shape():
    g, q = _graph()
    with pytest.raises(ValueError, match="rng_dump is the dropout mask"):
        g.sdpa(q, q, q, generate_stats=False, rng_dump=g.tensor(name="r", dim=[1, 2, 4, 4]))
    g, q = _graph()
    words, drop = dropout_inputs(g, 0.2)
    o, _ = g.sdpa(q, q, q, generate_stats=False, dropout=drop,
                  rng_dump=g.tensor(name="r", dim=[1, 2, 4, 5], data_type=dt.FLOAT))
    o.set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match=r"rng_dump.*\[1, 2, 4, 5\] but the op gives "
                                                 r"\[1, 2, 4, 4\]"):
        g.validate()


def test_serialized_dropout_graph_is_version_3_and_runs_after_deserialize(rng):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    q = g.tensor(name="q", dim=[1, 2, 5, 8])
    words, drop = dropout_inputs(g, 0.25, seed=41, offset=3)
    dump = g.tensor(name="rng_dump", dim=[1, 2, 5, 5], data_type=dt.FLOAT)
    o, st = g.sdpa(q, q, q, attn_scale=0.3, dropout=drop, rng_dump=dump,
                   generate_stats=True, name="attn")
    o.set_output(True)
    st.set_output(True)
    data = g.serialize()
    # the Graph table's format_version field (graph.fbs): 3 where dropout is used
    assert test_op_table._format_version(data) == 3
    g2 = hipdnn.pygraph()
    g2.deserialize(data)
    g2.set_preferred_engine("reference_cpu")
    g2.build([hipdnn.heur_mode.A])
    x = rng.standard_normal([1, 2, 5, 8]).astype(np.float32)
    out = {t.get_uid(): np.full(t.get_dim(), np.nan, np.float32) for t in (o, st, dump)}
    pack = {q.get_uid(): x, words[0].tensor.get_uid(): words[0].array,
            words[1].tensor.get_uid(): words[1].array, **out}
    g2.execute(pack, np.empty(g2.get_workspace_size(), np.uint8))
    keep = ref.dropout_keep(41, 3, 0.25, (1, 2, 5, 5)).astype(np.float64)
    want_o, want_st = ref.sdpa(x, x, x, float(np.float32(0.3)), dropout=(0.25, keep))
    from conftest import assert_close
    assert np.array_equal(out[dump.get_uid()], keep)
    assert_close(out[o.get_uid()], want_o, tolerance("sdpa", "fp32"))
    assert_close(out[st.get_uid()], want_st, tolerance("sdpa", "fp32"))
