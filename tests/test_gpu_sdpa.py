"""The GPU engine's attention forward (sdpa, flash-attention style: plugins/hip/fa_kernels.h)
against float64 NumPy at DESIGN tolerances: fp32 / fp16 / bf16 storage, BHSD, BSHD and
packed QKV layouts, head dims 32 to 256, odd sequence lengths, causal masks at both
alignments, sliding windows and bands, padding masks, additive bias (full and broadcast),
GQA and MQA, stats on and off, attn_scale as a float, a by-value scalar or a tensor; the
declines, naming the node; and an sdpa inside a larger graph.

Every run copies each operand's whole allocation to the device, NaN poison in its gaps
included, and back (conftest.DeviceNumerics), so outputs are checked to be fully written
and nothing else, and inputs unchanged.  CI runs this file on the engine's host emulation
(tests/test_gpu_emulated.py), which checks the plan, the kernel choice, the indexing and
the masks, but not the kernels themselves (their sources are compiled by test_hip_jit.py).
"""
import numpy as np
import pytest

import hipdnn
import references as ref
import test_sdpa
import test_sdpa_dropout
import test_sdpa_mhas
import test_sdpa_ragged
from conftest import GPU_ENGINE, STORAGES, Operand, engine_log
from tolerances import tolerance

pytestmark = pytest.mark.gpu

dt = hipdnn.data_type
ALIGN = hipdnn.diagonal_alignment


class Case(test_sdpa.Case):
    """test_sdpa's attention problem with sizes for the GPU kernels: longer sequences, head
    dim 64, and the usual scale 1 / sqrt(d) unless one is given."""

    def __init__(self, b=2, hq=2, sq=17, skv=33, d=64, scale=None, **kw):
        super().__init__(b=b, hq=hq, sq=sq, skv=skv, d=d,
                         scale=d ** -0.5 if scale is None else scale, **kw)


def packed_qkv(gpu, dtype, c):
    """q, k and v as views of one [B, S, 3, H, D] allocation (a fused QKV projection's
    output), each copied to the device whole."""
    assert c.sq == c.skv and c.hq == c.hk == c.hv and c.d == c.dv
    storage = STORAGES[dtype]
    ops = []
    for which in range(3):
        base = storage.full((c.b, c.sq, 3, c.hq, c.d))
        values = gpu.random([c.b, c.sq, 3, c.hq, c.d])
        base[...] = storage.encode(values)
        view = base[:, :, which].transpose(0, 2, 1, 3)
        mask = np.zeros(base.shape, bool)
        mask[:, :, which] = True
        ops.append(Operand(view, base, mask, storage, storage.decode(view)))
    return ops


def lengths(g, name, values):
    """A seq_len input: int32 [B, 1, 1, 1] in device memory, checked unchanged."""
    storage = STORAGES["i32"]
    arr = np.asarray(values, np.int32).reshape(-1, 1, 1, 1).copy()
    op = Operand(arr, arr, np.ones(arr.shape, bool), storage, arr.astype(np.float64))
    op.tensor = g.tensor(name=name, dim=list(arr.shape), stride=[1, 1, 1, 1], data_type=dt.INT32)
    return op


def run(gpu, dtype, c, stats=True, scale_as="float", o_dtype=None):
    """Builds and runs sdpa on the GPU engine, checks o (and stats); the engine's log.
    scale_as: "float" (attn_scale=, a graph constant), "by_value" (given at execute) or
    "tensor" (fp32 in device memory)."""
    if c.layout == "packed_qkv":
        q, k, v = packed_qkv(gpu, dtype, c)
    else:
        q = gpu.input([c.b, c.hq, c.sq, c.d], dtype, c.layout)
        k = gpu.input([c.b, c.hk, c.skv, c.d], dtype, c.layout)
        v = gpu.input([c.b, c.hv, c.skv, c.dv], dtype, c.layout)
    g = gpu.graph(dtype)
    ins = [q, k, v]
    kw = c.kwargs()
    bias = None
    if c.bias is not None:
        bias = gpu.input(c.bias, dtype)
        ins.append(bias)
        kw["bias"] = bias.bind(g, "bias")
    scale = float(np.float32(c.scale))
    if scale_as == "float":
        kw["attn_scale"] = c.scale
    else:
        arr = np.array([scale], np.float32).reshape(1, 1, 1, 1)
        op = Operand(arr, arr, np.ones(arr.shape, bool), STORAGES["fp32"], arr.astype(np.float64))
        op.tensor = g.tensor(name="scale", dim=[1, 1, 1, 1], stride=[1, 1, 1, 1],
                             is_pass_by_value=scale_as == "by_value", data_type=dt.FLOAT)
        ins.append(op)
        kw["attn_scale"] = op.tensor
    test_sdpa.padding_mask(g, c, ins, kw, lengths)
    o, st = g.sdpa(q.bind(g, "q"), k.bind(g, "k"), v.bind(g, "v"), generate_stats=stats,
                   name="attn", **kw)
    want_o, want_stats = ref.sdpa(q.values, k.values, v.values, scale,
                                  c.additive(bias.values if bias else None), c.allowed())
    o_layout = "bshd" if c.layout == "packed_qkv" else c.layout
    outs = [gpu.output(o, want_o.shape, o_dtype or dtype, o_layout)]
    if stats:
        outs.append(gpu.output(st, want_stats.shape, "fp32"))
    else:
        assert st is None
    log = engine_log(lambda: gpu.execute(g, ins + outs))
    # the least precise of the inputs' and o's types sets the tolerance: bf16 inputs feed
    # the tensor cores (P too is rounded to them) whatever o is stored as
    gpu.assert_close(outs[0], want_o, max(tolerance("sdpa", dtype),
                                          tolerance("sdpa", o_dtype or dtype)))
    if stats:
        check_stats(outs[1], want_stats)
    return log


def check_stats(out, want):
    got = out.decoded()
    assert np.array_equal(np.isneginf(got), np.isneginf(want)), "stats: -inf rows differ"
    fin = np.isfinite(want)
    assert np.isfinite(got[fin]).all()
    err = np.abs(got[fin] - want[fin])
    tol = tolerance("sdpa", "fp32")
    assert (err <= tol + tol * np.abs(want[fin])).all(), f"stats off by up to {err.max():.3g}"


def on_tensor_cores(log):
    return any("on tensor cores" in m for m in log)


def ran(log, kernel):
    return any(f"first run of the {kernel} attention kernel" in m for m in log)


# ---- shapes --------------------------------------------------------------------------------

@pytest.mark.parametrize("d", [32, 64, 80, 128, 256])
def test_head_dims(gpu, dtype, d):
    log = run(gpu, dtype, Case(d=d, sq=33, skv=47))
    assert on_tensor_cores(log) == (dtype != "fp32"), log
    assert ran(log, "tensor-core" if dtype != "fp32" else "general"), log


@pytest.mark.parametrize("sizes", [(1, 1), (1, 257), (17, 33), (129, 257), (129, 1)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_odd_sequence_lengths(gpu, dtype, sizes):
    sq, skv = sizes
    run(gpu, dtype, Case(b=1, sq=sq, skv=skv, d=64))


def test_head_dims_that_take_the_general_kernel(gpu):
    # 72 and 40 are not multiples of 16: CUDA cores, whatever the storage
    log = run(gpu, "fp16", Case(d=72, dv=40, sq=20, skv=36))
    assert not on_tensor_cores(log) and ran(log, "general"), log


@pytest.mark.parametrize("dims", [(64, 32), (32, 128)], ids=["dv<d", "dv>d"])
def test_value_head_dim_differs(gpu, dtype, dims):
    d, dv = dims
    run(gpu, dtype, Case(d=d, dv=dv, sq=19, skv=40))


@pytest.mark.parametrize("layout", ["packed", "bshd", "packed_qkv"])
def test_layouts(gpu, dtype, layout):
    log = run(gpu, dtype, Case(hq=3, sq=37, skv=37, d=64, layout=layout))
    assert on_tensor_cores(log) == (dtype != "fp32"), log


def test_fp16_output_of_fp32_inputs(gpu):
    run(gpu, "fp32", Case(sq=9, skv=21, d=32), o_dtype="fp16")


# ---- masks ---------------------------------------------------------------------------------

@pytest.mark.parametrize("causal", ["top_left", "bottom_right"])
@pytest.mark.parametrize("sizes", [(129, 200), (200, 129), (70, 70)],
                         ids=["sq<skv", "sq>skv", "square"])
def test_causal(gpu, dtype, causal, sizes):
    sq, skv = sizes
    # bottom-right with s_q > s_kv takes a padding mask (test_sdpa says why); its first
    # s_q - s_kv rows see no key
    lens = ([sq], [skv]) if causal == "bottom_right" and sq > skv else None
    run(gpu, dtype, Case(b=1, sq=sq, skv=skv, causal=causal == "top_left",
                         causal_br=causal == "bottom_right", lens=lens))


@pytest.mark.parametrize("align", [ALIGN.TOP_LEFT, ALIGN.BOTTOM_RIGHT], ids=["tl", "br"])
def test_sliding_window_with_causal_mask(gpu, dtype, align):
    run(gpu, dtype, Case(b=1, sq=100, skv=150, causal=align == ALIGN.TOP_LEFT,
                         causal_br=align == ALIGN.BOTTOM_RIGHT, window=40))


@pytest.mark.parametrize("left,right", [(30, 5), (None, 70), (17, None)])
def test_diagonal_band(gpu, left, right):
    run(gpu, "bf16", Case(b=1, sq=90, skv=130, left=left, right=right,
                          align=ALIGN.BOTTOM_RIGHT))


def test_padding_masks(gpu, dtype):
    # sample 0 shorter on both sides, sample 1 whole; rows past seq_len_q give 0, -inf
    run(gpu, dtype, Case(sq=70, skv=90, lens=([40, 70], [65, 90])))


def test_padding_with_bottom_right_causal(gpu):
    run(gpu, "fp16", Case(sq=80, skv=100, lens=([50, 80], [99, 100]), causal_br=True))


def test_rows_that_see_no_key(gpu, dtype):
    # causal top-left with the keys cut to 2 by padding: rows see keys 0..min(i, 1); a
    # sample with no keys at all gives 0 and -inf everywhere
    run(gpu, dtype, Case(sq=20, skv=24, lens=([20, 3], [2, 0]), causal=True))


@pytest.mark.parametrize("bias", [[2, 2, 17, 33], [1, 2, 17, 33], [2, 1, 1, 33], [1, 1, 17, 33]],
                         ids=["full", "per_head", "per_key", "shared"])
def test_additive_bias(gpu, dtype, bias):
    run(gpu, dtype, Case(bias=bias))


def test_bias_with_causal_mask_and_padding(gpu):
    run(gpu, "bf16", Case(sq=65, skv=80, bias=[2, 2, 65, 80], causal_br=True,
                          lens=([60, 65], [70, 80])))


# ---- heads, stats, scale -------------------------------------------------------------------

@pytest.mark.parametrize("hq", [4, 6], ids=["heads_power_of_two", "heads_6"])
def test_alibi(gpu, dtype, hq):
    """ALiBi on both kernels (fp32 takes the general one), causal as cuDNN requires, and
    with bias and padding."""
    run(gpu, dtype, Case(hq=hq, sq=70, skv=70, causal=True, alibi=True))
    run(gpu, dtype, Case(hq=hq, sq=40, skv=90, alibi=True, bias=[1, hq, 40, 90],
                         lens=([40, 17], [90, 33])))


@pytest.mark.parametrize("block", [16, 64])
def test_paged_kv_caches(gpu, dtype, block):
    """K / V through shuffled page tables (entries past the lengths out of range) on the
    general kernel, which the plan picks for paged caches, against float64."""
    c = Case(hq=4, hk=2, sq=17, skv=150, lens=([17, 9], [150, 70]), causal_br=True)
    g, ins, outs, (want_o, want_stats) = test_sdpa.paged_forward(gpu, dtype, c, block,
                                                                 lengths=lengths)
    log = engine_log(lambda: gpu.execute(g, ins + outs))
    gpu.assert_close(outs[0], want_o, tolerance("sdpa", dtype))
    check_stats(outs[1], want_stats)
    assert not on_tensor_cores(log) and ran(log, "general"), log


def test_dropout(gpu, dtype):
    """Dropout on the general kernel, which the plan picks for it: o against float64 with
    the mask of philox.h's rule, rng_dump that mask element by element (the reference
    engine draws the same: test_sdpa_dropout.py), stats not dropped; GQA, padding and a
    bottom-right causal mask, BSHD."""
    c = Case(hq=4, hk=2, sq=33, skv=70, causal_br=True, lens=([33, 20], [70, 41]), layout="bshd")
    log = engine_log(lambda: test_sdpa_dropout.check_forward(gpu, dtype, c, lengths=lengths))
    assert not on_tensor_cores(log) and ran(log, "general"), log


@pytest.mark.parametrize("storage,by_value", [("i64", True), ("i32", False), ("i32", True)])
def test_dropout_seed_and_offset_forms(gpu, storage, by_value):
    """Seed and offset by value (a whole int64 bound at execute time) or in device memory,
    int32 or int64; a high probability, no stats."""
    test_sdpa_dropout.check_forward(gpu, "fp16", Case(sq=20, skv=45), prob=0.7, seed=(1 << 60) + 9
                                    if storage == "i64" else 77, offset=5, storage=storage,
                                    by_value=by_value, stats=False)


@pytest.mark.parametrize("layout", ["gaps", "tight", "t3hd"])
def test_ragged(gpu, dtype, layout):
    """Ragged q, k, v, o (test_mhas's THD layouts; test_sdpa_ragged.py): the general kernel,
    which the plan picks for them, reads each sample's rows from its offset, never the NaN
    rows between samples, and writes o's rows below the sample's length only; GQA, d_v !=
    d, a bottom-right causal mask, a sample of one row."""
    c = Case(b=3, hq=4, hk=2, sq=40, skv=70, dv=48, causal_br=True,
             lens=([33, 1, 40], [70, 41, 52])) if layout != "t3hd" else \
        Case(b=3, hq=2, sq=37, skv=37, causal=True, lens=([37, 5, 20], [37, 5, 20]))
    log = engine_log(lambda: test_sdpa_ragged.run_forward(
        gpu, dtype, c, gap=0 if layout == "tight" else 1, interleaved=layout == "t3hd",
        lengths=lengths))
    assert not on_tensor_cores(log) and ran(log, "general"), log


@pytest.mark.parametrize("packed", [False, True], ids=["tables", "packed_tables"])
def test_ragged_q_with_paged_kv_caches(gpu, dtype, packed):
    """cuDNN frontend's notebook 52: a ragged q, paged K / V caches, a dense o; and the
    tables packed too (test_mhas's paged_attention "_packed": each sample's own entries
    from its offset, the rest of the table -1, never read)."""
    c = Case(b=3, hq=4, hk=2, sq=20, skv=45, causal=True,
             lens=([20, 3, 11], [45, 17, 30] if packed else [45, 45, 45]))
    log = engine_log(lambda: test_sdpa_ragged.run_paged_with_ragged_q(
        gpu, dtype, c, 16, lengths=lengths, packed=packed))
    assert not on_tensor_cores(log) and ran(log, "general"), log


@pytest.mark.parametrize("heads", [(16, 2, 2), (4, 1, 1), (6, 3, 2)], ids=["gqa8", "mqa", "mixed"])
def test_grouped_heads(gpu, dtype, heads):
    hq, hk, hv = heads
    run(gpu, dtype, Case(b=1, hq=hq, hk=hk, hv=hv, sq=21, skv=40))


def test_without_stats(gpu, dtype):
    run(gpu, dtype, Case(causal=True), stats=False)


@pytest.mark.parametrize("scale_as", ["by_value", "tensor"])
def test_attn_scale_given_at_execute(gpu, scale_as):
    run(gpu, "fp16", Case(scale=0.3), scale_as=scale_as)


def test_a_view_not_16_byte_aligned_takes_the_general_kernel(gpu):
    # q one element into its allocation: the plan's tensor-core kernel cannot cp.async it
    c = Case(b=1, hq=2, sq=16, skv=24, d=32)
    storage = STORAGES["fp16"]
    n = c.b * c.hq * c.sq * c.d
    base = storage.full((n + 1,))
    view = base[1:].reshape(c.b, c.hq, c.sq, c.d)
    view[...] = storage.encode(gpu.random(view.shape))
    mask = np.zeros(base.shape, bool)
    mask[1:] = True
    q = Operand(view, base, mask, storage, storage.decode(view))
    k = gpu.input([c.b, c.hk, c.skv, c.d], "fp16")
    v = gpu.input([c.b, c.hv, c.skv, c.dv], "fp16")
    g = gpu.graph("fp16")
    o, _ = g.sdpa(q.bind(g, "q"), k.bind(g, "k"), v.bind(g, "v"), attn_scale=0.25,
                  generate_stats=False, name="attn")
    want, _ = ref.sdpa(q.values, k.values, v.values, float(np.float32(0.25)))
    out = gpu.output(o, want.shape, "fp16")
    log = engine_log(lambda: gpu.execute(g, [q, k, v, out]))
    gpu.assert_close(out, want, tolerance("sdpa", "fp16"))
    assert on_tensor_cores(log) and ran(log, "general"), log


# ---- inside a larger graph, and declines ---------------------------------------------------

def test_attention_then_a_pointwise_node(gpu, dtype):
    # o is virtual: the attention stage writes it to the workspace, a pointwise stage reads it
    c = Case(sq=24, skv=30, d=32)
    q = gpu.input([c.b, c.hq, c.sq, c.d], dtype)
    k = gpu.input([c.b, c.hk, c.skv, c.d], dtype)
    v = gpu.input([c.b, c.hv, c.skv, c.d], dtype)
    g = gpu.graph(dtype)
    o, _ = g.sdpa(q.bind(g, "q"), k.bind(g, "k"), v.bind(g, "v"), attn_scale=c.scale,
                  use_causal_mask=True, generate_stats=False, name="attn")
    y = g.scale(o, 2.0)
    want, _ = ref.sdpa(q.values, k.values, v.values, float(np.float32(c.scale)), None,
                       c.__class__(sq=24, skv=30, causal=True).allowed())
    out = gpu.output(y, want.shape, dtype)
    log = engine_log(lambda: gpu.execute(g, [q, k, v, out]))
    gpu.assert_close(out, 2.0 * want, tolerance("sdpa", dtype))
    assert any("stage 1 of 2" in m and "sdpa 'attn'" in m for m in log), log


def declined(g):
    """The GPU engine's reason for not running g."""
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([hipdnn.heur_mode.A])
    return dict(g.support_report()).get(GPU_ENGINE)


def attention_graph(io=dt.HALF, d=64, backward=False):
    g = hipdnn.pygraph(io_data_type=io, compute_data_type=dt.FLOAT)
    q = g.tensor(name="q", dim=[1, 2, 8, d])
    k = g.tensor(name="k", dim=[1, 2, 9, d])
    v = g.tensor(name="v", dim=[1, 2, 9, d])
    if backward:
        o = g.tensor(name="o", dim=[1, 2, 8, d])
        do = g.tensor(name="do", dim=[1, 2, 8, d])
        st = g.tensor(name="st", dim=[1, 2, 8, 1], data_type=dt.FLOAT)
        for t in g.sdpa_backward(q, k, v, o, do, st, attn_scale=0.5, name="attn_bwd"):
            t.set_output(True)
    else:
        o, _ = g.sdpa(q, k, v, attn_scale=0.5, generate_stats=False, name="attn")
        o.set_output(True)
    return g


@pytest.mark.parametrize("what,make,reason", [
    ("float64", lambda: attention_graph(io=dt.DOUBLE), "data type float64 not supported"),
    ("head dim 288", lambda: attention_graph(d=288), "head dims up to 256"),
    ("backward, head dim 288", lambda: attention_graph(d=288, backward=True),
     "head dims up to 256"),
])
def test_what_the_engine_lacks_is_declined_naming_the_node(gpu, what, make, reason):
    why = declined(make())
    assert why and reason in why and "'attn" in why, why


# ---- cuDNN frontend's test_mhas masks (test_sdpa_mhas.py says why the band rule is its) ----

MHAS_SIZES = [(5, 40), (40, 17), (33, 33), (1, 40)]  # the decode path, and the general one


@pytest.mark.parametrize("align,kind,padded,biased,sizes",
                         list(test_sdpa_mhas.combinations(MHAS_SIZES, refused_too=False)))
def test_mhas_combination(gpu, rng, align, kind, padded, biased, sizes):
    c = test_sdpa_mhas.mhas_case(rng, align, kind, padded, biased, sizes, hq=4, hk=2, d=64,
                                 case=Case)
    run(gpu, "fp16", c)


@pytest.mark.parametrize("align,kind,padded,biased,sizes",
                         [p for p in test_sdpa_mhas.combinations(MHAS_SIZES, refused_too=False)
                          if p.values[1] in test_sdpa_mhas.ALIBI_KINDS])
def test_mhas_alibi(gpu, rng, align, kind, padded, biased, sizes):
    c = test_sdpa_mhas.mhas_case(rng, align, kind, padded, biased, sizes, hq=6, hk=3, d=64,
                                 case=Case, alibi=True)
    run(gpu, "fp16", c)


# ---- large ---------------------------------------------------------------------------------

@pytest.mark.large
@pytest.mark.parametrize("d", [64, 128])
def test_long_sequences_causal(gpu, d):
    for dtype in ("fp16", "bf16"):
        log = run(gpu, dtype, Case(b=1, hq=4, hk=1, sq=1024, skv=1024, d=d, causal=True))
        assert on_tensor_cores(log), log


@pytest.mark.large
def test_many_blocks_take_eight_warps(gpu):
    # 3 x 16 heads x 768 / 128 query tiles: enough blocks for the 128-row tile
    log = run(gpu, "bf16", Case(b=3, hq=16, sq=768, skv=64, d=64))
    assert on_tensor_cores(log), log
