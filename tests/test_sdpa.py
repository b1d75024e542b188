"""Scaled dot-product attention (sdpa) and its backward pass on the reference engine
against float64 NumPy: attn_scale as a float or a tensor given at execute time, additive
bias (broadcast), causal masks aligned top-left and bottom-right, sliding windows and
diagonal bands, padding masks through seq_len tensors, GQA and MQA head ratios, BSHD
layouts, odd sizes, stats; gradients against the float64 reference, which is itself
checked against finite differences of the forward."""
import numpy as np
import pytest

import hipdnn
import references as ref
from conftest import STORAGES, Operand
from tolerances import tolerance

dt = hipdnn.data_type
ALIGN = hipdnn.diagonal_alignment


class Case:
    """One attention problem: shapes, scale, masks."""

    def __init__(self, b=2, hq=4, hk=None, hv=None, sq=7, skv=9, d=8, dv=None, scale=0.35,
                 bias=None, causal=False, causal_br=False, window=None, left=None, right=None,
                 align=ALIGN.TOP_LEFT, lens=None, layout="packed", alibi=False):
        self.b, self.hq, self.sq, self.skv, self.d = b, hq, sq, skv, d
        self.hk, self.hv, self.dv = hk or hq, hv or hk or hq, dv or d
        self.scale, self.bias, self.layout = scale, bias, layout
        self.causal, self.causal_br, self.window = causal, causal_br, window
        self.left, self.right, self.align, self.lens = left, right, align, lens
        self.alibi = alibi

    def kwargs(self):
        kw = dict(use_causal_mask=self.causal, use_causal_mask_bottom_right=self.causal_br,
                  diagonal_alignment=self.align)
        if self.alibi:
            kw["use_alibi_mask"] = True
        if self.window is not None:
            kw["sliding_window_length"] = self.window
        if self.left is not None:
            kw["diagonal_band_left_bound"] = self.left
        if self.right is not None:
            kw["diagonal_band_right_bound"] = self.right
        return kw

    def additive(self, bias):
        """What the reference adds to the scores: the bias's values (or None) plus ALiBi's."""
        if not self.alibi:
            return bias
        a = ref.alibi_bias(self.hq, self.sq, self.skv)
        return a if bias is None else a + np.asarray(bias, np.float64)

    def allowed(self):
        right = 0 if (self.causal or self.causal_br) else self.right
        left = self.window if self.window is not None else self.left
        bottom = self.causal_br or (self.align == ALIGN.BOTTOM_RIGHT and not self.causal)
        lq, lk = self.lens if self.lens else (None, None)
        return ref.sdpa_mask(self.b, self.sq, self.skv, lq, lk, left, right, bottom)


def int_input(g, name, values):
    """A seq_len input: int32 [B, 1, 1, 1], checked unchanged like any input."""
    arr = np.asarray(values, np.int32).reshape(-1, 1, 1, 1)
    op = Operand(arr, arr, np.ones(arr.shape, bool), None, arr.astype(np.float64))
    op.tensor = g.tensor(name=name, dim=list(arr.shape), stride=[1, 1, 1, 1],
                         data_type=dt.INT32)
    return op


def padding_mask(g, c, ins, kw, lengths=int_input):
    """c's padding mask, where it has lengths: seq_len_q / seq_len_kv made by `lengths`,
    appended to the inputs `ins` and set in sdpa's keywords `kw`."""
    if not c.lens:
        return
    for name, vals in zip(("seq_len_q", "seq_len_kv"), c.lens):
        op = lengths(g, name, vals)
        ins.append(op)
        kw[name] = op.tensor
    kw["use_padding_mask"] = True


def forward(nx, dtype, case, runtime_scale=False, stats=True):
    """Builds and runs sdpa; returns (operands, o, stats operands, inputs' values)."""
    c = case
    q = nx.input([c.b, c.hq, c.sq, c.d], dtype, c.layout)
    k = nx.input([c.b, c.hk, c.skv, c.d], dtype, c.layout)
    v = nx.input([c.b, c.hv, c.skv, c.dv], dtype, c.layout)
    g = nx.graph(dtype)
    ins = [q, k, v]
    kw = c.kwargs()
    bias = None
    if c.bias is not None:
        bias = nx.input(c.bias, dtype)
        ins.append(bias)
        kw["bias"] = bias.bind(g, "bias")
    scale = c.scale
    if runtime_scale:
        t = g.tensor(name="scale", dim=[1, 1, 1, 1], is_pass_by_value=True, data_type=dt.FLOAT)
        scale = float(np.float32(c.scale))
        arr = np.array([scale], np.float32)
        op = Operand(arr, arr, np.ones(1, bool), STORAGES["fp32"], arr.astype(np.float64))
        op.tensor = t
        ins.append(op)
        kw["attn_scale"] = t
    else:
        kw["attn_scale"] = c.scale
        scale = float(np.float32(c.scale))  # a float becomes a float32 scalar
    padding_mask(g, c, ins, kw)
    o, st = g.sdpa(q.bind(g, "q"), k.bind(g, "k"), v.bind(g, "v"), generate_stats=stats,
                   name="attn", **kw)
    want_o, want_stats = ref.sdpa(q.values, k.values, v.values, scale,
                                  c.additive(bias.values if bias else None), c.allowed())
    outs = [nx.output(o, want_o.shape, dtype, c.layout)]
    if stats:
        outs.append(nx.output(st, want_stats.shape, "fp32"))
    else:
        assert st is None
    return g, ins, outs, (want_o, want_stats)


def check_stats(out, want):
    got = out.decoded()
    assert np.array_equal(np.isneginf(got), np.isneginf(want)), "stats: -inf rows differ"
    fin = np.isfinite(want)
    assert np.isfinite(got[fin]).all()
    err = np.abs(got[fin] - want[fin])
    tol = tolerance("sdpa", "fp32")
    assert (err <= tol + tol * np.abs(want[fin])).all(), f"stats off by up to {err.max():.3g}"


def check(nx, dtype, case, **kw):
    g, ins, outs, (want_o, want_stats) = forward(nx, dtype, case, **kw)
    nx.execute(g, ins + outs)
    nx.assert_close(outs[0], want_o, tolerance("sdpa", dtype))
    if len(outs) > 1:
        check_stats(outs[1], want_stats)


# ---- forward -------------------------------------------------------------------------------

def test_plain(nx, dtype):
    check(nx, dtype, Case())


def test_without_stats(nx, dtype):
    check(nx, dtype, Case(), stats=False)


@pytest.mark.parametrize("heads", [(4, 2, 2), (4, 1, 1), (6, 3, 2)], ids=["gqa", "mqa", "mixed"])
def test_grouped_heads(nx, dtype, heads):
    hq, hk, hv = heads
    check(nx, dtype, Case(hq=hq, hk=hk, hv=hv))


@pytest.mark.parametrize("causal", ["top_left", "bottom_right"])
@pytest.mark.parametrize("sizes", [(7, 9), (9, 7), (8, 8)], ids=["sq<skv", "sq>skv", "square"])
def test_causal(nx, dtype, causal, sizes):
    sq, skv = sizes
    # Bottom-right with s_q > s_kv needs a padding mask (as in cuDNN frontend, below): the
    # full lengths given as one keeps its first s_q - s_kv rows without keys
    lens = ([sq, sq], [skv, skv]) if causal == "bottom_right" and sq > skv else None
    check(nx, dtype, Case(sq=sq, skv=skv, causal=causal == "top_left",
                          causal_br=causal == "bottom_right", lens=lens))


@pytest.mark.parametrize("kw", [dict(use_causal_mask_bottom_right=True),
                                dict(sliding_window_length=2),
                                dict(diagonal_band_left_bound=3, diagonal_band_right_bound=0)],
                         ids=["bottom_right", "window", "band"])
def test_rows_without_keys_need_a_padding_mask(kw):
    """cuDNN frontend's validate() refuses a bottom-right mask or a left bound with
    s_q > s_kv unless a padding mask is given; pygraph names the node and the way out."""
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    q = g.tensor(name="q", dim=[1, 2, 9, 8], stride=[144, 72, 8, 1])
    k = g.tensor(name="k", dim=[1, 2, 7, 8], stride=[112, 56, 8, 1])
    v = g.tensor(name="v", dim=[1, 2, 7, 8], stride=[112, 56, 8, 1])
    o, _ = g.sdpa(q, k, v, generate_stats=False, name="attn", **kw)
    o.set_output(True)
    with pytest.raises(hipdnn.FeatureNotSupportedError,
                       match=r"sdpa 'attn'.*s_q 9 > s_kv 7 and no padding mask.*slice q"):
        g.validate()


@pytest.mark.parametrize("align", [ALIGN.TOP_LEFT, ALIGN.BOTTOM_RIGHT], ids=["tl", "br"])
def test_sliding_window_with_causal_mask(nx, align):
    check(nx, "fp32", Case(sq=12, skv=15, causal=align == ALIGN.TOP_LEFT,
                           causal_br=align == ALIGN.BOTTOM_RIGHT, window=4))


@pytest.mark.parametrize("left,right", [(3, 2), (None, 1), (5, None)])
def test_diagonal_band(nx, left, right):
    check(nx, "fp32", Case(sq=10, skv=13, left=left, right=right, align=ALIGN.BOTTOM_RIGHT))


@pytest.mark.parametrize("bias", [[2, 4, 7, 9], [1, 4, 7, 9], [2, 1, 1, 9], [1, 1, 7, 9]],
                         ids=["full", "per_head", "per_key", "shared"])
def test_additive_bias(nx, dtype, bias):
    check(nx, dtype, Case(bias=bias))


def test_padding_masks(nx, dtype):
    # sample 0 shorter on both sides, sample 1 whole; rows past seq_len_q give 0, -inf
    check(nx, dtype, Case(sq=7, skv=9, lens=([4, 7], [6, 9])))


def test_padding_with_bottom_right_causal(nx):
    check(nx, "fp32", Case(sq=8, skv=10, lens=([5, 8], [9, 10]), causal_br=True))


def test_rows_that_see_no_key(nx):
    # causal top-left with the keys cut to 2 by padding: rows see keys 0..min(i, 1); a
    # sample with no keys at all gives 0 and -inf everywhere
    check(nx, "fp32", Case(sq=5, skv=6, lens=([5, 3], [2, 0]), causal=True))


def test_attn_scale_given_at_execute(nx):
    check(nx, "fp32", Case(scale=0.125), runtime_scale=True)


def test_bshd_layout(nx, dtype):
    check(nx, dtype, Case(layout="bshd", hq=4, hk=2))


@pytest.mark.parametrize("sizes", [(1, 1, 8), (33, 130, 64), (7, 33, 72)],
                         ids=["one", "long_keys", "d72"])
def test_sizes(nx, sizes):
    sq, skv, d = sizes
    check(nx, "fp32", Case(b=1, hq=2, sq=sq, skv=skv, d=d, scale=d ** -0.5))


def test_value_head_dim_differs(nx):
    check(nx, "fp32", Case(d=16, dv=8))


@pytest.mark.parametrize("hq", [4, 6], ids=["heads_power_of_two", "heads_6"])
def test_alibi(nx, dtype, hq):
    """ALiBi's slope_h (j - i) added to the scores (6 heads: the slopes past 4 take the odd
    steps), with a causal mask as cuDNN requires, and with bias and padding too."""
    check(nx, dtype, Case(hq=hq, hk=2, causal=True, alibi=True))
    check(nx, dtype, Case(hq=hq, sq=9, skv=7, alibi=True, bias=[1, hq, 9, 7],
                          lens=([9, 4], [7, 5])))


def test_alibi_slopes_match_test_mhas_rule():
    """references.alibi_slopes is test_mhas's rule: 8 heads 2^-1 .. 2^-8; 12 heads add
    2^-0.5, 2^-1.5, ... for the 4 past 8."""
    np.testing.assert_allclose(ref.alibi_slopes(8), 2.0 ** -np.arange(1, 9))
    np.testing.assert_allclose(ref.alibi_slopes(12)[8:], 2.0 ** -(np.arange(1, 8, 2) / 2))


# ---- paged K / V caches -------------------------------------------------------------------

def page(rng, values, block, lens=None):
    """values [B, H, S, D] as a paged cache: (container [N, H, block, D] with the blocks
    shuffled and a spare one, table [B, 1, blocks, 1]); entries of blocks wholly past a
    sample's length are out of range (never read: those keys are masked)."""
    b, h, s, d = values.shape
    nb = -(-s // block)
    n = b * nb + 1
    order = rng.permutation(n)[:b * nb].reshape(b, nb)
    container = rng.standard_normal((n, h, block, d))
    padded = np.zeros((b, h, nb * block, d))
    padded[:, :, :s] = values
    for i in range(b):
        for t in range(nb):
            container[order[i, t]] = padded[i, :, t * block:(t + 1) * block]
    table = order.astype(np.int32)
    if lens is not None:
        for i, lk in enumerate(lens):
            table[i, -(-lk // block):] = n + 7
    return container, table.reshape(b, 1, nb, 1)


def unpage(container, table, s):
    """The [B, H, S, D] keys a paged cache holds (0 where the table points nowhere)."""
    b, nb = table.shape[0], table.shape[2]
    n, h, block, d = container.shape
    out = np.zeros((b, h, nb * block, d))
    for i in range(b):
        for t in range(nb):
            if 0 <= table[i, 0, t, 0] < n:
                out[i, :, t * block:(t + 1) * block] = container[table[i, 0, t, 0]]
    return out[:, :, :s]


def table_input(g, name, table):
    """A page table: int32 [B, 1, blocks, 1], checked unchanged like any input."""
    arr = np.ascontiguousarray(table, np.int32)
    op = Operand(arr, arr, np.ones(arr.shape, bool), STORAGES["i32"], arr.astype(np.float64))
    op.tensor = g.tensor(name=name, dim=list(arr.shape),
                         stride=[int(x) // 4 for x in arr.strides], data_type=dt.INT32)
    return op


def paged_forward(env, dtype, c, block, lengths=int_input):
    """sdpa with k and v as paged caches (test_mhas's paged_attention): inputs, outputs and
    the float64 reference of the keys the tables map."""
    g = env.graph(dtype)
    q = env.input([c.b, c.hq, c.sq, c.d], dtype)
    rng = env.rng
    caches, tables, ins, kw = [], [], [q], c.kwargs()
    lk = c.lens[1] if c.lens else None
    for name, h, d in (("k", c.hk, c.d), ("v", c.hv, c.dv)):
        container, table = page(rng, env.random([c.b, h, c.skv, d]), block, lk)
        op = env.input(container.shape, dtype, values=container)
        t = table_input(g, f"page_table_{name}", table)
        caches.append(op)
        tables.append(t)
        ins += [op, t]
    kw.update(paged_attention_k_table=tables[0].tensor, paged_attention_v_table=tables[1].tensor,
              paged_attention_max_seq_len_kv=c.skv, attn_scale=c.scale)
    padding_mask(g, c, ins, kw, lengths)
    o, st = g.sdpa(q.bind(g, "q"), caches[0].bind(g, "k_cache"), caches[1].bind(g, "v_cache"),
                   generate_stats=True, name="attn", **kw)
    k64 = unpage(caches[0].values, tables[0].values.astype(np.int64), c.skv)
    v64 = unpage(caches[1].values, tables[1].values.astype(np.int64), c.skv)
    want = ref.sdpa(q.values, k64, v64, float(np.float32(c.scale)), c.additive(None),
                    c.allowed())
    outs = [env.output(o, want[0].shape, dtype), env.output(st, want[1].shape, "fp32")]
    return g, ins, outs, want


@pytest.mark.parametrize("block", [1, 4, 16])
def test_paged_kv_caches(nx, dtype, block):
    """k and v read through page tables (blocks shuffled, entries past the lengths out of
    range and never read), with the padding mask test_mhas takes paged caches with, GQA."""
    c = Case(hq=4, hk=2, sq=5, skv=13, lens=([5, 3], [13, 6]), causal_br=True)
    g, ins, outs, (want_o, want_stats) = paged_forward(nx, dtype, c, block)
    nx.execute(g, ins + outs)
    nx.assert_close(outs[0], want_o, tolerance("sdpa", dtype))
    check_stats(outs[1], want_stats)


def test_paged_kv_caches_without_padding(nx):
    g, ins, outs, (want_o, want_stats) = paged_forward(nx, "fp32", Case(sq=6, skv=9), 4)
    nx.execute(g, ins + outs)
    nx.assert_close(outs[0], want_o, tolerance("sdpa", "fp32"))
    check_stats(outs[1], want_stats)


@pytest.mark.parametrize("what,match", [
    ("one_table", "needs both page_table_k and page_table_v"),
    ("int64", r"page_table_v 'tv' is \[2, 1, 3, 1\] of int64; a page table is int32"),
    ("short", r"page_table_k 'tk' holds 2 blocks of 4 keys, fewer than max_seq_len_kv 12"),
    ("no_max", "paged attention needs max_seq_len_kv"),
])
def test_bad_page_tables_are_refused_naming_them(what, match):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    q = g.tensor(name="q", dim=[2, 2, 4, 8])
    cache = g.tensor(name="cache", dim=[7, 2, 4, 8])
    tk = g.tensor(name="tk", dim=[2, 1, 2 if what == "short" else 3, 1], data_type=dt.INT32)
    tv = g.tensor(name="tv", dim=[2, 1, 3, 1],
                  data_type=dt.INT64 if what == "int64" else dt.INT32)
    kw = dict(paged_attention_k_table=tk, paged_attention_v_table=None if what == "one_table"
              else tv)
    if what != "no_max":
        kw["paged_attention_max_seq_len_kv"] = 12
    o, _ = g.sdpa(q, cache, cache, generate_stats=False, name="attn", **kw)
    o.set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match=match):
        g.validate()


def test_paged_max_seq_len_must_be_a_positive_int():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    q = g.tensor(name="q", dim=[1, 1, 4, 8])
    with pytest.raises(ValueError, match="paged_attention_max_seq_len_kv must be an int >= 1"):
        g.sdpa(q, q, q, generate_stats=False, paged_attention_max_seq_len_kv=0)


def test_float64(nx):
    check(nx, "fp64", Case(causal=True, bias=[1, 4, 7, 9], hk=2))


# ---- backward -------------------------------------------------------------------------------

def backward(nx, dtype, case, check_tol=None):
    """The forward's o and stats from the float64 reference (o rounded to the storage
    type, stats to float32) feed sdpa_backward; dq, dk, dv against the reference."""
    c = case
    q = nx.input([c.b, c.hq, c.sq, c.d], dtype, c.layout)
    k = nx.input([c.b, c.hk, c.skv, c.d], dtype, c.layout)
    v = nx.input([c.b, c.hv, c.skv, c.dv], dtype, c.layout)
    bias = nx.input(c.bias, dtype) if c.bias is not None else None
    scale = float(np.float32(c.scale))
    allowed = c.allowed()
    added = c.additive(bias.values if bias else None)
    o64, st64 = ref.sdpa(q.values, k.values, v.values, scale, added, allowed)
    o = nx.input(o64.shape, dtype, c.layout, values=o64) if np.all(o64 != 0) else \
        _exact_input(nx, o64, dtype, c.layout)
    st = _exact_input(nx, st64, "fp32" if dtype != "fp64" else "fp64", "packed")
    do = nx.input(o64.shape, dtype, c.layout)
    g = nx.graph(dtype)
    kw = c.kwargs()
    ins = [q, k, v, o, do, st] + ([bias] if bias else [])
    if bias:
        kw["bias"] = bias.bind(g, "bias")
    padding_mask(g, c, ins, kw)
    dq, dk, dv = g.sdpa_backward(q.bind(g, "q"), k.bind(g, "k"), v.bind(g, "v"), o.bind(g, "o"),
                                 do.bind(g, "dO"), st.bind(g, "stats"), attn_scale=c.scale,
                                 name="attn_bwd", **kw)
    want = ref.sdpa_backward(q.values, k.values, v.values, o.values, do.values, st.values,
                             scale, added, allowed)
    outs = [nx.output(t, w.shape, dtype, c.layout) for t, w in zip((dq, dk, dv), want)]
    nx.execute(g, ins + outs)
    for out, w in zip(outs, want):
        nx.assert_close(out, w, check_tol or tolerance("sdpa", dtype))


def _exact_input(nx, values, dtype, layout):
    """An input holding `values` (zeros and -inf allowed) rounded to dtype."""
    storage = STORAGES[dtype]
    view, base, mask = nx_allocate(values.shape, storage, layout)
    view[...] = storage.encode(values)
    return Operand(view, base, mask, storage, storage.decode(view))


def nx_allocate(shape, storage, layout):
    from conftest import _allocate
    return _allocate(shape, storage, layout)


def test_backward_plain(nx, dtype):
    backward(nx, dtype, Case())


def test_backward_gqa_causal_bias(nx, dtype):
    backward(nx, dtype, Case(hq=6, hk=2, hv=3, causal=True, bias=[1, 6, 7, 9]))


def test_backward_bottom_right_window_padding(nx):
    backward(nx, "fp32", Case(sq=8, skv=11, causal_br=True, window=3,
                              lens=([6, 8], [9, 11])))


def test_backward_rows_that_see_no_key(nx):
    backward(nx, "fp32", Case(sq=5, skv=6, lens=([5, 3], [2, 0]), causal=True))


def test_backward_bshd_mqa(nx, dtype):
    backward(nx, dtype, Case(layout="bshd", hq=4, hk=1, hv=1))


def test_backward_alibi(nx, dtype):
    backward(nx, dtype, Case(hq=6, hk=3, causal=True, alibi=True))
    backward(nx, "fp32", Case(hq=4, sq=9, skv=7, alibi=True, lens=([9, 4], [7, 5])))


def test_backward_float64(nx):
    backward(nx, "fp64", Case(hq=4, hk=2, causal=True, bias=[2, 1, 7, 9], d=16, dv=8))


@pytest.mark.parametrize("case", [
    Case(b=1, hq=2, sq=4, skv=5, d=3),
    Case(b=2, hq=4, hk=2, hv=1, sq=5, skv=6, d=4, dv=3, causal_br=True, bias=[1, 4, 5, 6]),
    Case(b=2, hq=2, sq=6, skv=7, d=4, window=2, causal=True, lens=([4, 6], [7, 5])),
], ids=["plain", "gqa_causal_bias", "window_padding"])
def test_reference_gradients_match_finite_differences(rng, case):
    """The float64 reference backward against <dO, o(x + t u) - o(x - t u)> / 2t for
    q, k and v, the forward recomputing everything."""
    c = case
    q = rng.standard_normal((c.b, c.hq, c.sq, c.d))
    k = rng.standard_normal((c.b, c.hk, c.skv, c.d))
    v = rng.standard_normal((c.b, c.hv, c.skv, c.dv))
    bias = rng.standard_normal(c.bias) if c.bias else None
    allowed = c.allowed()
    do = rng.standard_normal((c.b, c.hq, c.sq, c.dv))
    o, st = ref.sdpa(q, k, v, c.scale, bias, allowed)
    grads = ref.sdpa_backward(q, k, v, o, do, st, c.scale, bias, allowed)
    t = 1e-6
    for idx, grad in enumerate(grads):
        args = [q, k, v]
        u = rng.standard_normal(args[idx].shape)
        plus = [a + t * u if i == idx else a for i, a in enumerate(args)]
        minus = [a - t * u if i == idx else a for i, a in enumerate(args)]
        numeric = (np.sum(do * ref.sdpa(*plus, c.scale, bias, allowed)[0]) -
                   np.sum(do * ref.sdpa(*minus, c.scale, bias, allowed)[0])) / (2 * t)
        assert numeric == pytest.approx(np.sum(grad * u), rel=1e-6, abs=1e-8), "qkv"[idx]


# ---- the friendly layer, serialization, declines ---------------------------------------------

def test_graph_wrapper_attention_forward_and_backward(rng):
    """A training step's attention through hipdnn.Graph: O and Stats feed the backward
    in the same graph (Stats virtual, float32)."""
    q, k, v, do = (rng.standard_normal((2, 4, 16, 32)).astype(np.float32) for _ in range(4))
    with hipdnn.Graph(preferred_engine="reference_cpu") as g:
        o, stats = g.sdpa(q, k, v, attn_scale=32 ** -0.5, use_causal_mask=True,
                          generate_stats=True)
        dq, dk, dv = g.sdpa_backward(q, k, v, o, do, stats, attn_scale=32 ** -0.5,
                                     use_causal_mask=True)
        g.output(o, dq, dk, dv)
    got = g()
    scale = float(np.float32(32 ** -0.5))
    allowed = ref.sdpa_mask(2, 16, 16, right=0)
    o64, st64 = ref.sdpa(q, k, v, scale, None, allowed)
    o32 = ref.round_to(o64, "fp32")  # O is an output (float32) the backward reads
    want = ref.sdpa_backward(q, k, v, o32, do, ref.round_to(st64, "fp32"), scale, None,
                             allowed)
    from conftest import assert_close
    assert_close(got[0], o64, tolerance("sdpa", "fp32"))
    for a, w in zip(got[1:], want):
        assert_close(a, w, tolerance("sdpa", "fp32"))


def test_serialized_sdpa_runs_after_deserialize(rng):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    q = g.tensor(name="q", dim=[1, 2, 5, 8])
    k = g.tensor(name="k", dim=[1, 1, 6, 8])
    v = g.tensor(name="v", dim=[1, 1, 6, 8])
    o, st = g.sdpa(q, k, v, attn_scale=0.3, use_causal_mask_bottom_right=True,
                   sliding_window_length=3, generate_stats=True, name="attn")
    o.set_output(True)
    st.set_output(True)
    g2 = hipdnn.pygraph()
    g2.deserialize(g.serialize())
    g2.set_preferred_engine("reference_cpu")
    g2.build([hipdnn.heur_mode.A])
    arrays = {t.get_uid(): rng.standard_normal(t.get_dim()).astype(np.float32) for t in (q, k, v)}
    out = {t.get_uid(): np.full(t.get_dim(), np.nan, np.float32) for t in (o, st)}
    g2.execute({**arrays, **out}, np.empty(g2.get_workspace_size(), np.uint8))
    allowed = ref.sdpa_mask(1, 5, 6, left=3, right=0, bottom_right=True)
    want_o, want_st = ref.sdpa(arrays[q.get_uid()], arrays[k.get_uid()], arrays[v.get_uid()],
                               float(np.float32(0.3)), None, allowed)
    from conftest import assert_close
    assert_close(out[o.get_uid()], want_o, tolerance("sdpa", "fp32"))
    assert_close(out[st.get_uid()], want_st, tolerance("sdpa", "fp32"))


@pytest.mark.parametrize("kw,error,message", [
    # features hipdnn lacks: validate() passes, as cuDNN frontend's does, and
    # create_execution_plans() raises FeatureNotSupportedError (a NotImplementedError and a
    # cudnnGraphNotSupportedError, what cuDNN frontend's tests skip on); wrong arguments:
    # ValueError from sdpa()
    (dict(block_mask=object()), hipdnn.FeatureNotSupportedError,
     "sdpa: block_mask is not supported"),
    (dict(use_alibi_mask="yes"), TypeError, "use_alibi_mask: expected a bool"),
    (dict(use_causal_mask=True, use_causal_mask_bottom_right=True), ValueError,
     "cannot both be true"),
    (dict(sliding_window_length=0), ValueError, r"must be an int >= 1"),
    (dict(), ValueError, "exactly one of generate_stats and is_inference"),
])
def test_unsupported_arguments_are_refused(kw, error, message):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    q = g.tensor(name="q", dim=[1, 2, 4, 8])
    if "generate_stats" not in kw and message.startswith("exactly") is False:
        kw = dict(kw, generate_stats=False)
    with pytest.raises(error, match=message) as e:
        o, _ = g.sdpa(q, q, q, **kw)
        o.set_output(True)
        g.validate()
        g.build_operation_graph()
        assert error is hipdnn.FeatureNotSupportedError  # the ValueErrors come from sdpa()
        g.create_execution_plans([hipdnn.heur_mode.A, hipdnn.heur_mode.FALLBACK])
    if error is hipdnn.FeatureNotSupportedError:
        assert isinstance(e.value, NotImplementedError)
        assert isinstance(e.value, hipdnn.cudnnGraphNotSupportedError)
        assert "sdpa '0'" in str(e.value), str(e.value)  # the node, by its index
        # every later step says the same, none runs the graph without the feature
        for step in (g.check_support, g.build_plans, g.get_workspace_size, g.serialize):
            with pytest.raises(hipdnn.FeatureNotSupportedError, match=message):
                step()


def test_mismatched_head_dims_are_refused_naming_the_tensors():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    o, _ = g.sdpa(g.tensor(name="q", dim=[1, 2, 4, 8]), g.tensor(name="k", dim=[1, 2, 5, 16]),
                  g.tensor(name="v", dim=[1, 2, 5, 8]), generate_stats=False, name="attn")
    o.set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match=r"sdpa 'attn': q 'q' \[1, 2, 4, 8\], k 'k' "
                                                 r"\[1, 2, 5, 16\] and v 'v' \[1, 2, 5, 8\] "
                                                 r"do not fit"):
        g.validate()


def test_heads_that_do_not_divide_are_refused():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    o, _ = g.sdpa(g.tensor(name="q", dim=[1, 3, 4, 8]), g.tensor(name="k", dim=[1, 2, 5, 8]),
                  g.tensor(name="v", dim=[1, 2, 5, 8]), generate_stats=False, name="attn")
    o.set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match="query heads must be a multiple"):
        g.validate()


def test_sequence_lengths_need_the_padding_mask():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    q = g.tensor(name="q", dim=[2, 2, 4, 8])
    lq = g.tensor(name="lq", dim=[2, 1, 1, 1], data_type=dt.INT32)
    o, _ = g.sdpa(q, q, q, seq_len_q=lq, generate_stats=False, name="attn")
    o.set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match="seq_len_q 'lq' is set but use_padding_mask "
                                                 "is not"):
        g.validate()
