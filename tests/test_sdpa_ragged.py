"""Ragged attention tensors (cuDNN frontend's THD layouts: tensor.set_ragged_offset) on the
reference engine against float64 NumPy.  A ragged [B, H, S, D] tensor keeps sample b's
rows from element offset[b] on (offset: int32 / int64 [B + 1, 1, 1, 1], a graph input):
element (b, h, s, d) at offset[b] + h * stride[1] + s * stride[2] + d * stride[3], and only
the rows below the sample's sequence length (seq_len_q / seq_len_kv of the padding mask)
are its own.  The buffers here lay the samples out with poisoned rows between them (and
packed tight, as test_mhas's exclusive prefix sums do, and interleaved as its t3hd
layout): inputs' poison (NaN) must never be read, outputs' poison never written; o, stats
and dq, dk, dv are compared, row by row, with the float64 attention of the unpacked
samples.  Then the refusals (naming the tensor) and the serialized graph (version 3)."""
import numpy as np
import pytest

import hipdnn
import references as ref
import test_op_table
import test_sdpa
from conftest import STORAGES, Operand, assert_close
from tolerances import tolerance

dt = hipdnn.data_type
Case = test_sdpa.Case


class Layout:
    """Where a ragged buffer keeps its rows: `width` elements a token row (H * D, or
    3 * H * D interleaved), the tensor `head_at` elements into each row, sample b's rows
    from row start[b] on with `gap` poisoned rows before each sample; the tensor's batch
    stride is S + gap rows (S with no gap: test_mhas's tensors)."""

    def __init__(self, b, s, lens, width, gap=1):
        self.b, self.s, self.lens, self.width = b, s, list(lens), width
        self.batch_rows = s + gap  # the tensor's batch stride, in rows
        self.rows = b * (s + gap) + gap  # the buffer's
        self.start, r = [], gap
        for n in self.lens:
            self.start.append(r)
            r += n + gap
        assert r <= self.rows
        self.offsets = [x * width for x in self.start] + [r * width]

    def index(self, b, h, d, head_at):
        """Flat indices [L_b, H, D] of sample b's elements in the buffer."""
        rows = (np.arange(self.start[b], self.start[b] + self.lens[b]) * self.width)
        return (head_at + rows[:, None, None] + np.arange(h)[None, :, None] * d +
                np.arange(d)[None, None, :])

    def mask(self, h, d, head_at):
        m = np.zeros(self.rows * self.width, bool)
        for b in range(self.b):
            m[self.index(b, h, d, head_at)] = True
        return m


def offsets_input(g, name, lay, storage="i64"):
    st = STORAGES[storage]
    arr = np.asarray(lay.offsets, st.np_dtype).reshape(-1, 1, 1, 1)
    op = Operand(arr, arr, np.ones(arr.shape, bool), st, arr.astype(np.float64))
    op.tensor = g.tensor(name=name, dim=list(arr.shape), stride=[1, 1, 1, 1],
                         data_type=st.data_type)
    return op


def _view(base, lay, h, d, head_at):
    item = base.itemsize
    return np.lib.stride_tricks.as_strided(
        base[head_at:], (lay.b, h, lay.s, d),
        [lay.batch_rows * lay.width * item, d * item, lay.width * item, item],
        writeable=True)


def ragged_input(nx, dtype, lay, h, d, head_at=0, base=None, values=None):
    """An input in `lay` ([B, h, S, d]): random values in each sample's rows, NaN around
    them (in `base` where given: interleaved tensors share one); .values is the padded
    float64 [B, h, S, d], 0 past each length."""
    st = STORAGES[dtype]
    if base is None:
        base = st.full(lay.rows * lay.width)
    padded = np.zeros((lay.b, h, lay.s, d))
    for b in range(lay.b):
        n = lay.lens[b]
        vals = nx.random((n, h, d)) if values is None else values[b, :, :n].transpose(1, 0, 2)
        base[lay.index(b, h, d, head_at)] = st.encode(vals)
        padded[b, :, :n] = st.decode(base[lay.index(b, h, d, head_at)]).transpose(1, 0, 2)
    op = Operand(_view(base, lay, h, d, head_at), base, lay.mask(h, d, head_at), st, padded)
    return op


def ragged_output(tensor, dtype, lay, h, d, head_at=0, base=None, mask=None):
    """A poisoned output buffer in `lay`; the engine may write each sample's rows only
    (`mask`: every tensor's rows, where outputs share `base`)."""
    st = STORAGES[dtype]
    if base is None:
        base = st.full(lay.rows * lay.width)
    view = _view(base, lay, h, d, head_at)
    tensor.set_output(True).set_data_type(st.data_type).set_dim(list(view.shape))
    tensor.set_stride([x // base.itemsize for x in view.strides])
    op = Operand(view, base, lay.mask(h, d, head_at) if mask is None else mask, st)
    op.tensor = tensor
    return op


def unpack(op, lay, h, d, head_at=0):
    """The output's samples, padded to float64 [B, h, S, d] with NaN past each length."""
    out = np.full((lay.b, h, lay.s, d), np.nan)
    for b in range(lay.b):
        got = op.storage.decode(op.base[lay.index(b, h, d, head_at)])
        out[b, :, :lay.lens[b]] = got.transpose(1, 0, 2)
    return out


def close_rows(got, want, lens, tol, name):
    """got and want over each sample's first lens[b] rows (axis 2)."""
    for b, n in enumerate(lens):
        assert_close(got[b, :, :n], want[b, :, :n], tol, f"{name} (sample {b})")


def build_forward(nx, dtype, c, gap=1, interleaved=False, storage="i64", stats=True,
                  lengths=test_sdpa.int_input):
    """sdpa with ragged q, k, v, o: (graph, operands, o, stats, layouts, reference)."""
    lq, lk = c.lens
    g = nx.graph(dtype)
    if interleaved:  # test_mhas's t3hd: q, k, v rows side by side, one offsets tensor
        assert c.hq == c.hk == c.hv and c.d == c.dv and lq == lk and c.sq == c.skv
        lay_q = lay_k = Layout(c.b, c.sq, lq, 3 * c.hq * c.d, gap)
        q = ragged_input(nx, dtype, lay_q, c.hq, c.d, 0)
        k = ragged_input(nx, dtype, lay_q, c.hk, c.d, c.hq * c.d, base=q.base)
        v = ragged_input(nx, dtype, lay_q, c.hv, c.dv, 2 * c.hq * c.d, base=q.base)
        for op in (q, k, v):  # one buffer: all three written before it is kept
            op.before = op.base.copy()
        offs = [offsets_input(g, "qkv_offsets", lay_q, storage)] * 3
    else:
        lay_q = Layout(c.b, c.sq, lq, c.hq * c.d, gap)
        lay_k = Layout(c.b, c.skv, lk, c.hk * c.d, gap)
        lay_v = Layout(c.b, c.skv, lk, c.hv * c.dv, gap)
        q = ragged_input(nx, dtype, lay_q, c.hq, c.d)
        k = ragged_input(nx, dtype, lay_k, c.hk, c.d)
        v = ragged_input(nx, dtype, lay_v, c.hv, c.dv)
        offs = [offsets_input(g, n + "_offsets", lay, storage)
                for n, lay in (("q", lay_q), ("k", lay_k), ("v", lay_v))]
    lay_o = Layout(c.b, c.sq, lq, c.hq * c.dv, gap)
    o_off = offsets_input(g, "o_offsets", lay_o, storage)
    for op, name, off in zip((q, k, v), "qkv", offs):
        op.bind(g, name).set_ragged_offset(off.tensor)
    ins = [q, k, v] + list({id(o): o for o in offs + [o_off]}.values())
    kw = c.kwargs()
    test_sdpa.padding_mask(g, c, ins, kw, lengths)
    o, st = g.sdpa(q.tensor, k.tensor, v.tensor, generate_stats=stats, attn_scale=c.scale,
                   name="attn", **kw)
    o_op = ragged_output(o, dtype, lay_o, c.hq, c.dv)
    o.set_ragged_offset(o_off.tensor)
    want = ref.sdpa(q.values, k.values, v.values, float(np.float32(c.scale)), None,
                    c.allowed())
    outs = [o_op] + ([nx.output(st, want[1].shape, "fp32")] if stats else [])
    return g, ins, outs, (lay_q, lay_o), want, (q, k, v, o_off)


def run_forward(nx, dtype, c, **kw):
    g, ins, outs, (lay_q, lay_o), want, parts = build_forward(nx, dtype, c, **kw)
    nx.execute(g, ins + outs)
    got = unpack(outs[0], lay_o, c.hq, c.dv)
    close_rows(got, want[0], c.lens[0], tolerance("sdpa", dtype), "o")
    if len(outs) > 1:
        test_sdpa.check_stats(outs[1], want[1])
    return g, outs, lay_o, got, parts


CASES = {
    "plain": Case(b=3, hq=2, sq=6, skv=7, d=8, lens=([4, 6, 1], [7, 2, 5])),
    "gqa_dv": Case(b=2, hq=4, hk=2, hv=1, sq=5, skv=9, d=8, dv=12, lens=([5, 3], [4, 9])),
    "causal": Case(b=2, hq=2, sq=7, skv=7, d=16, causal=True, lens=([6, 3], [6, 3])),
    "bottom_right": Case(b=2, hq=3, sq=5, skv=8, d=8, causal_br=True, lens=([3, 5], [8, 5])),
    "window": Case(b=3, hq=2, sq=6, skv=6, d=8, window=2, lens=([5, 2, 6], [5, 2, 6])),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_ragged_forward(nx, dtype, case):
    run_forward(nx, dtype, CASES[case])


@pytest.mark.parametrize("storage", ["i32", "i64"])
def test_ragged_forward_packed_tight_as_test_mhas(nx, storage):
    # no rows between samples: offsets are the exclusive prefix sums of the lengths times
    # H * D, so a write past a sample's length would land on the next sample's rows
    c = Case(b=3, hq=2, hk=1, sq=6, skv=8, d=8, dv=16, lens=([5, 1, 6], [8, 3, 2]))
    g, outs, lay_o, got, _ = run_forward(nx, "fp16", c, gap=0, storage=storage)
    assert lay_o.offsets == [0, 5 * 32, 6 * 32, 12 * 32]
    tail = outs[0].base[lay_o.offsets[-1]:]
    assert np.isnan(tail.astype(np.float32)).all(), "o was written past the last sample"


def test_ragged_forward_interleaved_t3hd(nx, dtype):
    c = Case(b=2, hq=2, sq=7, skv=7, d=8, lens=([7, 4], [7, 4]))
    run_forward(nx, dtype, c, interleaved=True)


def test_ragged_without_stats(nx):
    run_forward(nx, "fp32", CASES["plain"], stats=False)


def packed_table(g, name, table, lens, block):
    """test_mhas's convert_uniform_to_ragged_page_tables: each sample's used entries
    (ceil(L_kv / block)) one after another in a [B, 1, blocks, 1] int32 buffer (the rest
    -1, never read), the offsets their exclusive prefix sums; (table operand, offsets
    operand)."""
    b, nb = table.shape[0], table.shape[2]
    used = [-(-n // block) for n in lens]
    starts = np.concatenate([[0], np.cumsum(used)]).astype(np.int32)
    flat = np.full(b * nb, -1, np.int32)
    for i in range(b):
        flat[starts[i]:starts[i + 1]] = table[i, 0, :used[i], 0]
    op = test_sdpa.table_input(g, name, flat.reshape(b, 1, nb, 1))
    arr = starts.reshape(-1, 1, 1, 1).copy()
    off = Operand(arr, arr, np.ones(arr.shape, bool), STORAGES["i32"], arr.astype(np.float64))
    off.tensor = g.tensor(name=name + "_offsets", dim=list(arr.shape), stride=[1, 1, 1, 1],
                          data_type=dt.INT32)
    op.tensor.set_ragged_offset(off.tensor)
    return op, off


def run_paged_with_ragged_q(nx, dtype, c, block, lengths=test_sdpa.int_input, packed=False):
    """cuDNN frontend's notebook 52: a ragged (packed) q, k and v as paged caches read
    through their tables, o dense; `packed`: the tables packed too (test_mhas's
    paged_attention "_packed")."""
    g = nx.graph(dtype)
    lay = Layout(c.b, c.sq, c.lens[0], c.hq * c.d)
    q = ragged_input(nx, dtype, lay, c.hq, c.d)
    off = offsets_input(g, "q_offsets", lay)
    q.bind(g, "q").set_ragged_offset(off.tensor)
    caches, tables, ins, kw = [], [], [q, off], c.kwargs()
    for name, h, d in (("k", c.hk, c.d), ("v", c.hv, c.dv)):
        container, table = test_sdpa.page(nx.rng, nx.random([c.b, h, c.skv, d]), block,
                                          c.lens[1])
        op = nx.input(container.shape, dtype, values=container)
        if packed:
            t, t_off = packed_table(g, f"page_table_{name}", table, c.lens[1], block)
            t.uniform = table
            ins.append(t_off)
        else:
            t = test_sdpa.table_input(g, f"page_table_{name}", table)
            t.uniform = table
        caches.append(op)
        tables.append(t)
        ins += [op, t]
    kw.update(paged_attention_k_table=tables[0].tensor, paged_attention_v_table=tables[1].tensor,
              paged_attention_max_seq_len_kv=c.skv, attn_scale=c.scale)
    test_sdpa.padding_mask(g, c, ins, kw, lengths)
    o, st = g.sdpa(q.tensor, caches[0].bind(g, "k_cache"), caches[1].bind(g, "v_cache"),
                   generate_stats=True, name="attn", **kw)
    k64, v64 = (test_sdpa.unpage(op.values, t.uniform.astype(np.int64), c.skv)
                for op, t in zip(caches, tables))
    want = ref.sdpa(q.values, k64, v64, float(np.float32(c.scale)), None, c.allowed())
    outs = [nx.output(o, want[0].shape, dtype), nx.output(st, want[1].shape, "fp32")]
    nx.execute(g, ins + outs)
    close_rows(outs[0].decoded(), want[0], c.lens[0], tolerance("sdpa", dtype), "o")
    test_sdpa.check_stats(outs[1], want[1])


@pytest.mark.parametrize("block", [1, 4])
def test_ragged_q_with_paged_kv_caches(nx, dtype, block):
    run_paged_with_ragged_q(nx, dtype, Case(b=3, hq=4, hk=2, sq=6, skv=13, causal=True,
                                            lens=([6, 2, 4], [13, 13, 13])), block)


@pytest.mark.parametrize("ragged_q", [False, True])
@pytest.mark.parametrize("block", [1, 4])
def test_packed_page_tables(nx, dtype, block, ragged_q):
    """Page tables packed (ragged offsets on the tables: sample b's entries from
    offset[b], only its ceil(L_kv / block) own ones read; the rest of the buffer -1)."""
    c = Case(b=3, hq=4, hk=2, sq=6, skv=13, causal_br=True, lens=([6, 2, 4], [13, 3, 9]))
    run_paged_with_ragged_q(nx, dtype, c, block, packed=True)


def test_packed_page_table_offsets_outside_the_table_are_refused(nx):
    c = Case(b=2, hq=2, sq=4, skv=8, lens=([4, 2], [8, 8]))
    with pytest.raises(hipdnn.HipdnnError, match=r"page_table_k's ragged offset\[1\] = 99 puts "
                                                 r"its 2 entries outside the table's \d+"):
        orig = packed_table

        def bad(g, name, table, lens, block):
            op, off = orig(g, name, table, lens, block)
            if name == "page_table_k":
                off.array[1, 0, 0, 0] = 99
                off.before = off.base.copy()
            return op, off
        globals()["packed_table"] = bad
        try:
            run_paged_with_ragged_q(nx, "fp32", c, 4, packed=True)
        finally:
            globals()["packed_table"] = orig


# ---- backward --------------------------------------------------------------------------------

def run_backward(nx, dtype, c, gap=1, interleaved=False, lengths=test_sdpa.int_input):
    """test_mhas's flow: the ragged forward on the engine, then sdpa_backward with ragged
    q, k, v, o, dO (o's offsets) and dq, dk, dv (q's, k's, v's offsets), poisoned."""
    g, outs, lay_o, o_vals, (q, k, v, o_off) = run_forward(nx, dtype, c, gap=gap,
                                                           interleaved=interleaved,
                                                           lengths=lengths)
    lq, lk = c.lens
    stats = outs[1]
    gb = nx.graph(dtype)
    # the forward's o buffer as it is (poison between samples) and a ragged dO like it
    o = Operand(outs[0].array, outs[0].base, outs[0].mask, outs[0].storage,
                np.nan_to_num(o_vals))
    do = ragged_input(nx, dtype, lay_o, c.hq, c.dv)
    st = test_sdpa._exact_input(nx, stats.decoded(), "fp32", "packed")
    offs = {}

    def offsets_of(lay):
        key = tuple(lay.offsets)
        if key not in offs:
            offs[key] = offsets_input(gb, f"offsets{len(offs)}", lay)
        return offs[key].tensor

    lay_q = Layout(c.b, c.sq, lq, 3 * c.hq * c.d if interleaved else c.hq * c.d, gap)
    lay_k = lay_q if interleaved else Layout(c.b, c.skv, lk, c.hk * c.d, gap)
    lay_v = lay_q if interleaved else Layout(c.b, c.skv, lk, c.hv * c.dv, gap)
    heads = (0, c.hq * c.d, 2 * c.hq * c.d) if interleaved else (0, 0, 0)
    for op, name, lay in ((q, "q", lay_q), (k, "k", lay_k), (v, "v", lay_v), (o, "o", lay_o),
                          (do, "dO", lay_o)):
        op.bind(gb, name).set_ragged_offset(offsets_of(lay))
    kw = c.kwargs()
    bins = [q, k, v, o, do, st]
    o.before = o.base.copy()
    test_sdpa.padding_mask(gb, c, bins, kw, lengths)
    dq, dk, dv = gb.sdpa_backward(q.tensor, k.tensor, v.tensor, o.tensor, do.tensor,
                                  st.bind(gb, "stats"),
                                  attn_scale=c.scale, name="attn_bwd",
                                  max_total_seq_len_q=64, max_total_seq_len_kv=64, **kw)
    grads = []
    base = STORAGES[dtype].full(lay_q.rows * lay_q.width) if interleaved else None
    union = None
    if interleaved:
        union = lay_q.mask(c.hq, c.d, 0) | lay_q.mask(c.hq, c.d, heads[1]) | \
            lay_q.mask(c.hq, c.d, heads[2])
    for t, lay, h, d, at in ((dq, lay_q, c.hq, c.d, heads[0]), (dk, lay_k, c.hk, c.d, heads[1]),
                             (dv, lay_v, c.hv, c.dv, heads[2])):
        grads.append(ragged_output(t, dtype, lay, h, d, at, base=base, mask=union))
        t.set_ragged_offset(offsets_of(lay))
    bins += list(offs.values())
    want = ref.sdpa_backward(q.values, k.values, v.values, o.values, do.values, st.values,
                             float(np.float32(c.scale)), None, c.allowed())
    nx.execute(gb, bins + grads)
    for op, w, lay, h, d, at, lens, name in (
            (grads[0], want[0], lay_q, c.hq, c.d, heads[0], lq, "dq"),
            (grads[1], want[1], lay_k, c.hk, c.d, heads[1], lk, "dk"),
            (grads[2], want[2], lay_v, c.hv, c.dv, heads[2], lk, "dv")):
        close_rows(unpack(op, lay, h, d, at), w, lens, tolerance("sdpa", dtype), name)
    return gb


@pytest.mark.parametrize("case", ["plain", "gqa_dv", "causal", "bottom_right"])
def test_ragged_backward(nx, dtype, case):
    run_backward(nx, dtype, CASES[case])


def test_ragged_backward_packed_tight(nx):
    run_backward(nx, "fp32", CASES["gqa_dv"], gap=0)


def test_ragged_backward_interleaved_t3hd(nx, dtype):
    run_backward(nx, dtype, Case(b=2, hq=2, sq=6, skv=6, d=8, lens=([6, 3], [6, 3])),
                 interleaved=True)


# ---- refusals ---------------------------------------------------------------------------------

def _graph_with(edit):
    """A small ragged sdpa graph, `edit(g, t)` applied first (t: its tensors by name);
    returns the graph after validate()."""
    g = hipdnn.pygraph(io_data_type=dt.HALF, compute_data_type=dt.FLOAT)
    t = {n: g.tensor(name=n, dim=[2, 2, 4, 8], stride=[64, 8, 16, 1]) for n in "qkv"}
    t["off"] = g.tensor(name="offsets", dim=[3, 1, 1, 1], stride=[1, 1, 1, 1],
                        data_type=dt.INT64)
    t["lq"] = g.tensor(name="seq_len_q", dim=[2, 1, 1, 1], data_type=dt.INT32)
    t["lk"] = g.tensor(name="seq_len_kv", dim=[2, 1, 1, 1], data_type=dt.INT32)
    kw = dict(use_padding_mask=True, seq_len_q=t["lq"], seq_len_kv=t["lk"])
    for n in "qkv":
        t[n].set_ragged_offset(t["off"])
    edit(g, t, kw)
    o, _ = g.sdpa(t["q"], t["k"], t["v"], generate_stats=False, attn_scale=0.5, name="attn",
                  **kw)
    o.set_output(True)
    g.validate()
    return g


def _no_padding(g, t, kw):
    kw.clear()


def _bad_offsets_shape(g, t, kw):
    t["off2"] = g.tensor(name="offsets2", dim=[2, 1, 1, 1], data_type=dt.INT64)
    t["k"].set_ragged_offset(t["off2"])


def _float_offsets(g, t, kw):
    t["off2"] = g.tensor(name="offsets2", dim=[3, 1, 1, 1], data_type=dt.FLOAT)
    t["v"].set_ragged_offset(t["off2"])


def _ragged_bias(g, t, kw):
    t["bias"] = g.tensor(name="bias", dim=[1, 2, 4, 4])
    t["bias"].set_ragged_offset(t["off"])
    kw["bias"] = t["bias"]


@pytest.mark.parametrize("edit, match", [
    (_no_padding, r"'q' is ragged but use_padding_mask is not set"),
    (_bad_offsets_shape, r"k 'k' has ragged offset 'offsets2' \[2, 1, 1, 1\] of int64; it "
                         r"must be int32 or int64 \[B \+ 1, 1, 1, 1\] = \[3, 1, 1, 1\]"),
    (_float_offsets, r"v 'v' has ragged offset 'offsets2' \[3, 1, 1, 1\] of float"),
    (_ragged_bias, r"bias 'bias' has a ragged offset; only the token tensors"),
])
def test_bad_ragged_graphs_are_refused_naming_the_tensor(edit, match):
    with pytest.raises(hipdnn.InvalidGraphError, match=match):
        _graph_with(edit)


def test_ragged_offsets_only_on_attention():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    a = g.tensor(name="a", dim=[1, 4, 4])
    off = g.tensor(name="offsets", dim=[2, 1, 1, 1], data_type=dt.INT64)
    a.set_ragged_offset(off)
    c = g.matmul(a, a, name="mm")
    c.set_output(True)
    with pytest.raises(hipdnn.InvalidGraphError,
                       match=r"matmul 'mm': tensor 'a' \(uid \d+\) has a ragged offset; only "
                             r"sdpa and sdpa_backward read ragged tensors"):
        g.validate()


def test_set_ragged_offset_checks_its_argument():
    g = hipdnn.pygraph()
    q = g.tensor(name="q", dim=[1, 1, 2, 8])
    with pytest.raises(TypeError, match="set_ragged_offset: expected a tensor of this graph"):
        q.set_ragged_offset([0, 2])
    with pytest.raises(TypeError, match="set_ragged_offset: expected a tensor of this graph"):
        q.set_ragged_offset(hipdnn.pygraph().tensor(dim=[2, 1, 1, 1]))
    with pytest.raises(ValueError, match="cannot hold its own offsets"):
        q.set_ragged_offset(q)


@pytest.mark.parametrize("value", [0, -64, 1.5, True])
def test_max_total_seq_len_must_be_a_positive_int(value):
    g = hipdnn.pygraph(io_data_type=dt.HALF)
    t = [g.tensor(name=n, dim=[1, 1, 4, 8]) for n in ("q", "k", "v", "o", "dO")]
    st = g.tensor(name="stats", dim=[1, 1, 4, 1], data_type=dt.FLOAT)
    with pytest.raises(ValueError, match="max_total_seq_len_q must be an int >= 1"):
        g.sdpa_backward(*t, st, max_total_seq_len_q=value)


def test_offsets_outside_the_tensor_are_refused_at_execute(nx):
    c = CASES["plain"]
    g, ins, outs, lays, want, parts = build_forward(nx, "fp32", c)
    q_off = next(op for op in ins if op.tensor.get_name() == "q_offsets")
    q_off.array[1, 0, 0, 0] = q_off.array[-1, 0, 0, 0] + c.hq * c.d  # past the tensor
    nx.build(g)
    with pytest.raises(hipdnn.HipdnnError,
                       match=r"node 'attn': q's ragged offset\[1\] = \d+ puts its 6 rows "
                             r"outside the tensor's \d+ elements"):
        nx.run(g, ins + outs)


# ---- serialization --------------------------------------------------------------------------

def test_serialized_ragged_graph_is_version_3_and_runs_after_deserialize(nx):
    c = CASES["gqa_dv"]
    g, ins, outs, (lay_q, lay_o), want, _ = build_forward(nx, "fp32", c)
    data = g.serialize()
    assert test_op_table._format_version(data) == 3
    g2 = hipdnn.pygraph()
    g2.deserialize(data)
    for name in "qkv":
        t = next(t for t in g2._tensors if t.get_name() == name)
        assert t.get_ragged_offset() is not None
        assert t.get_ragged_offset().get_name() == name + "_offsets"
    assert g2.serialize() == data
    g2.set_preferred_engine("reference_cpu")
    g2.build([hipdnn.heur_mode.A])
    pack = {op.tensor.get_uid(): op.array for op in ins + outs}
    g2.execute(pack, np.empty(g2.get_workspace_size(), np.uint8))
    close_rows(unpack(outs[0], lay_o, c.hq, c.dv), want[0], c.lens[0],
               tolerance("sdpa", "fp32"), "o")


def test_a_graph_without_ragged_tensors_stays_version_2():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    q = g.tensor(name="q", dim=[1, 2, 5, 8])
    o, _ = g.sdpa(q, q, q, attn_scale=0.3, generate_stats=False, name="attn")
    o.set_output(True)
    assert test_op_table._format_version(g.serialize()) == 2
