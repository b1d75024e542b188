"""The GPU engine's attention backward (sdpa_backward: plugins/hip/fa_bwd_kernels.h, a dq
kernel then a dk / dv kernel) against float64 NumPy at DESIGN tolerances: fp32 / fp16 /
bf16 storage, BHSD, BSHD, packed QKV and strided layouts, head dims 32 to 256, odd
sequence lengths, causal masks at both alignments, sliding windows and bands, padding
masks, additive bias, GQA and MQA (dk, dv summed over the query heads of each head, H_k
and H_v apart too), attn_scale as a float, a by-value scalar or a tensor; the general
kernels where the tensor-core ones cannot run; the reference engine agreeing; repeated
runs bit-identical (no atomics); the declines, naming the node.

o and stats come from the float64 forward (o rounded to the storage type, stats to
float32), as a training step's forward leaves them.  Every run copies each operand's whole
allocation to the device, NaN poison in its gaps included, and back
(conftest.DeviceNumerics): outputs fully written and nothing else, inputs unchanged.  CI
runs this file on the engine's host emulation (tests/test_gpu_emulated.py), which checks
the plan, the kernel choice, the grids, the indexing and the masks but not the kernels
themselves (test_hip_jit.py compiles their sources)."""
import numpy as np
import pytest

import hipdnn
import references as ref
import test_gpu_sdpa as fwd
import test_sdpa
import test_sdpa_dropout
import test_sdpa_mhas
import test_sdpa_ragged
from conftest import GPU_ENGINE, STORAGES, Operand, _allocate, engine_log
from tolerances import tolerance

pytestmark = pytest.mark.gpu

dt = hipdnn.data_type
ALIGN = hipdnn.diagonal_alignment


class Case(fwd.Case):
    """test_gpu_sdpa's problem, smaller by default: the emulation walks every pair."""

    def __init__(self, b=2, hq=2, sq=17, skv=23, d=64, **kw):
        super().__init__(b=b, hq=hq, sq=sq, skv=skv, d=d, **kw)


def exact_input(values, dtype, layout):
    """An input holding `values` (zeros and -inf allowed) rounded to dtype."""
    storage = STORAGES[dtype]
    view, base, mask = _allocate(values.shape, storage, layout)
    view[...] = storage.encode(values)
    return Operand(view, base, mask, storage, storage.decode(view))


def inputs(gpu, dtype, c):
    """q, k, v (packed QKV: views of one allocation) in c's layout, dO, o and stats from
    the float64 forward, the bias; and the reference's mask."""
    if c.layout == "packed_qkv":
        q, k, v = fwd.packed_qkv(gpu, dtype, c)
        layout = "bshd"
    else:
        layout = c.layout
        q = gpu.input([c.b, c.hq, c.sq, c.d], dtype, layout)
        k = gpu.input([c.b, c.hk, c.skv, c.d], dtype, layout)
        v = gpu.input([c.b, c.hv, c.skv, c.dv], dtype, layout)
    bias = gpu.input(c.bias, dtype) if c.bias is not None else None
    allowed = c.allowed()
    o64, st64 = ref.sdpa(q.values, k.values, v.values, float(np.float32(c.scale)),
                         c.additive(bias.values if bias else None), allowed)
    o = exact_input(o64, dtype, layout)
    st = exact_input(st64, "fp32", "packed")
    do = gpu.input(o64.shape, dtype, layout)
    return q, k, v, o, do, st, bias, allowed, layout


def run(gpu, dtype, c, scale_as="float", out_dtype=None, engine=None):
    """Builds and runs sdpa_backward on the GPU engine (or `engine`), checks dq, dk, dv;
    returns (the engine's log, the outputs' values)."""
    q, k, v, o, do, st, bias, allowed, layout = inputs(gpu, dtype, c)
    g = gpu.graph(dtype)
    ins = [q, k, v, o, do, st]
    kw = c.kwargs()
    if bias:
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
    test_sdpa.padding_mask(g, c, ins, kw, fwd.lengths)
    grads = g.sdpa_backward(q.bind(g, "q"), k.bind(g, "k"), v.bind(g, "v"), o.bind(g, "o"),
                            do.bind(g, "dO"), st.bind(g, "stats"), name="attn_bwd", **kw)
    want = ref.sdpa_backward(q.values, k.values, v.values, o.values, do.values, st.values,
                             scale, c.additive(bias.values if bias else None), allowed)
    outs = [gpu.output(t, w.shape, out_dtype or dtype, layout) for t, w in zip(grads, want)]
    saved = gpu.engine
    gpu.engine = engine or saved
    try:
        log = engine_log(lambda: gpu.execute(g, ins + outs), engine=gpu.engine)
    finally:
        gpu.engine = saved
    for out, w in zip(outs, want):
        gpu.assert_close(out, w, tolerance("sdpa", out_dtype or dtype))
    return log, [out.decoded() for out in outs]


def on_tensor_cores(log):
    return any("on tensor cores" in m for m in log)


def ran(log, kernel):
    return any(f"first run of the {kernel} attention backward kernel" in m for m in log)


# ---- shapes --------------------------------------------------------------------------------

@pytest.mark.parametrize("d", [64, 128])
def test_head_dims_on_tensor_cores(gpu, dtype, d):
    log, _ = run(gpu, dtype, Case(d=d))
    assert on_tensor_cores(log) == (dtype != "fp32"), log
    assert ran(log, "tensor-core" if dtype != "fp32" else "general"), log


@pytest.mark.parametrize("dims", [(32, 32), (80, 48), (256, 256), (72, 40)],
                         ids=["d32", "d80_dv48", "d256", "d72_dv40"])
def test_other_head_dims(gpu, dims):
    # 32 and 80 / 48 on tensor cores; 256 and 72 / 40 the general kernels
    d, dv = dims
    log, _ = run(gpu, "fp16", Case(b=1, d=d, dv=dv, sq=19, skv=21))
    assert on_tensor_cores(log) == (d <= 128 and d % 16 == 0 and dv % 16 == 0), log


@pytest.mark.parametrize("sizes", [(1, 1), (1, 70), (70, 1), (65, 67)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_odd_sequence_lengths(gpu, dtype, sizes):
    sq, skv = sizes
    run(gpu, dtype, Case(b=1, sq=sq, skv=skv, d=32))


@pytest.mark.parametrize("layout", ["bshd", "packed_qkv", "strided"])
def test_layouts(gpu, dtype, layout):
    log, _ = run(gpu, dtype, Case(hq=3, sq=21, skv=21, d=32, layout=layout))
    # strided: d is not contiguous, the general kernels
    assert on_tensor_cores(log) == (dtype != "fp32" and layout != "strided"), log


def test_fp32_gradients_of_fp16_inputs(gpu):
    run(gpu, "fp16", Case(sq=9, skv=21, d=32), out_dtype="fp32")


# ---- masks ---------------------------------------------------------------------------------

@pytest.mark.parametrize("causal", ["top_left", "bottom_right"])
@pytest.mark.parametrize("sizes", [(40, 70), (70, 40), (45, 45)], ids=["sq<skv", "sq>skv", "square"])
def test_causal(gpu, dtype, causal, sizes):
    sq, skv = sizes
    # bottom-right with s_q > s_kv takes a padding mask (test_sdpa says why)
    lens = ([sq], [skv]) if causal == "bottom_right" and sq > skv else None
    run(gpu, dtype, Case(b=1, sq=sq, skv=skv, d=32, causal=causal == "top_left",
                         causal_br=causal == "bottom_right", lens=lens))


@pytest.mark.parametrize("align", [ALIGN.TOP_LEFT, ALIGN.BOTTOM_RIGHT], ids=["tl", "br"])
def test_sliding_window_with_causal_mask(gpu, dtype, align):
    run(gpu, dtype, Case(b=1, sq=50, skv=75, d=32, causal=align == ALIGN.TOP_LEFT,
                         causal_br=align == ALIGN.BOTTOM_RIGHT, window=20))


@pytest.mark.parametrize("left,right", [(30, 5), (None, 40), (17, None)])
def test_diagonal_band(gpu, left, right):
    run(gpu, "bf16", Case(b=1, sq=45, skv=70, d=32, left=left, right=right,
                          align=ALIGN.BOTTOM_RIGHT))


def test_padding_masks(gpu, dtype):
    # sample 0 shorter on both sides, sample 1 whole: padded rows and keys get 0
    run(gpu, dtype, Case(sq=40, skv=50, d=32, lens=([25, 40], [33, 50])))


def test_rows_that_see_no_key(gpu, dtype):
    # causal top-left with the keys cut to 2: rows see keys 0..min(i, 1); a sample with no
    # keys at all (stats -inf) gives 0 everywhere
    run(gpu, dtype, Case(sq=20, skv=24, d=32, lens=([20, 3], [2, 0]), causal=True))


@pytest.mark.parametrize("bias", [[2, 2, 17, 23], [1, 2, 17, 23], [2, 1, 1, 23]],
                         ids=["full", "per_head", "per_key"])
def test_additive_bias(gpu, dtype, bias):
    run(gpu, dtype, Case(bias=bias))


def test_bias_with_causal_mask_and_padding(gpu):
    run(gpu, "bf16", Case(sq=33, skv=40, d=32, bias=[2, 2, 33, 40], causal_br=True,
                          lens=([30, 33], [35, 40])))


# ---- heads, scale --------------------------------------------------------------------------

def test_alibi(gpu, dtype):
    run(gpu, dtype, Case(hq=6, hk=2, sq=45, skv=45, causal=True, alibi=True))
    run(gpu, dtype, Case(hq=4, sq=40, skv=70, alibi=True, lens=([40, 17], [70, 33])))


@pytest.mark.parametrize("heads", [(8, 2, 2), (4, 1, 1), (6, 3, 2), (6, 2, 3)],
                         ids=["gqa4", "mqa", "k3_v2", "k2_v3"])
def test_grouped_heads(gpu, dtype, heads):
    # dk, dv summed over each head's query heads; H_k != H_v: the general kernels, one
    # walk over key heads and one over value heads
    hq, hk, hv = heads
    log, _ = run(gpu, dtype, Case(b=1, hq=hq, hk=hk, hv=hv, sq=21, skv=30, d=32, causal=True))
    assert on_tensor_cores(log) == (dtype != "fp32" and hk == hv), log


def test_dropout(gpu, dtype):
    """test_mhas's flow on the GPU: the forward's rng_dump, then the backward given the same
    dropout (the general kernels, which the plan picks for it) against float64 gradients
    with that mask; H_k != H_v (dk and dv each their own walk), padding, causal."""
    c = Case(hq=4, hk=2, hv=1, sq=19, skv=27, causal=True, lens=([19, 11], [27, 20]))
    log = engine_log(lambda: test_sdpa_dropout.backward(gpu, dtype, c, lengths=fwd.lengths))
    assert not on_tensor_cores(log) and ran(log, "general"), log


@pytest.mark.parametrize("gap", [1, 0], ids=["gaps", "tight"])
def test_ragged(gpu, dtype, gap):
    """test_mhas's ragged flow: the forward, then the backward with ragged q, k, v, o, dO
    and dq, dk, dv (the general kernels, which the plan picks for them) against float64
    gradients, sample by sample; rows between samples NaN in the inputs and poisoned in
    the outputs stay so; H_k != H_v (dk and dv each their own walk), causal."""
    c = Case(b=3, hq=4, hk=2, hv=1, sq=19, skv=27, causal=True, lens=([19, 11, 1], [27, 20, 9]))
    log = engine_log(lambda: test_sdpa_ragged.run_backward(gpu, dtype, c, gap=gap,
                                                           lengths=fwd.lengths))
    assert not on_tensor_cores(log) and ran(log, "general"), log


def test_dropout_seed_by_value(gpu):
    test_sdpa_dropout.backward(gpu, "bf16", Case(sq=9, skv=40), prob=0.6, seed=(1 << 50) + 1,
                               offset=3, by_value=True, lengths=fwd.lengths)


@pytest.mark.parametrize("scale_as", ["by_value", "tensor"])
def test_attn_scale_given_at_execute(gpu, scale_as):
    run(gpu, "fp16", Case(scale=0.3, d=32), scale_as=scale_as)


def test_a_view_not_16_byte_aligned_takes_the_general_kernels(gpu):
    # dO one element into its allocation: the plan's tensor-core kernels cannot cp.async it
    c = Case(b=1, sq=16, skv=24, d=32)
    q, k, v, o, _, st, _, allowed, _ = inputs(gpu, "fp16", c)
    storage = STORAGES["fp16"]
    n = c.b * c.hq * c.sq * c.d
    base = storage.full((n + 1,))
    view = base[1:].reshape(c.b, c.hq, c.sq, c.d)
    view[...] = storage.encode(gpu.random(view.shape))
    mask = np.zeros(base.shape, bool)
    mask[1:] = True
    do = Operand(view, base, mask, storage, storage.decode(view))
    g = gpu.graph("fp16")
    grads = g.sdpa_backward(q.bind(g, "q"), k.bind(g, "k"), v.bind(g, "v"), o.bind(g, "o"),
                            do.bind(g, "dO"), st.bind(g, "stats"), attn_scale=c.scale,
                            name="attn_bwd")
    scale = float(np.float32(c.scale))
    want = ref.sdpa_backward(q.values, k.values, v.values, o.values, do.values, st.values, scale)
    outs = [gpu.output(t, w.shape, "fp16") for t, w in zip(grads, want)]
    log = engine_log(lambda: gpu.execute(g, [q, k, v, o, do, st] + outs))
    for out, w in zip(outs, want):
        gpu.assert_close(out, w, tolerance("sdpa", "fp16"))
    assert on_tensor_cores(log) and ran(log, "general"), log


# ---- determinism, the reference engine -----------------------------------------------------

def test_repeated_runs_are_bit_identical(gpu, rng):
    # GQA 4 with a causal mask: dk, dv are sums over four heads' rows; no atomics
    c = Case(b=1, hq=4, hk=1, hv=1, sq=40, skv=40, d=64, causal=True)
    seed = int(rng.integers(1 << 30))
    runs = []
    for _ in range(2):
        gpu.rng = np.random.default_rng(seed)
        runs.append(run(gpu, "bf16", c)[1])
    for a, b in zip(*runs):
        assert np.array_equal(a, b)


def test_gpu_and_reference_engines_agree(gpu, rng):
    c = Case(b=1, hq=4, hk=2, hv=2, sq=24, skv=30, d=32, causal_br=True, bias=[1, 4, 24, 30])
    seed = int(rng.integers(1 << 30))
    got = {}
    for engine in (GPU_ENGINE, "reference_cpu"):
        gpu.rng = np.random.default_rng(seed)
        got[engine] = run(gpu, "fp16", c, engine=engine)[1]
    for a, b in zip(got[GPU_ENGINE], got["reference_cpu"]):
        fwd_tol = tolerance("sdpa", "fp16")
        assert np.all(np.abs(a - b) <= 2 * (fwd_tol + fwd_tol * np.abs(b)))


# ---- inside a larger graph, and declines ---------------------------------------------------

def test_forward_and_backward_in_one_graph(gpu):
    # o and stats virtual: the forward stage writes them to the workspace, the backward
    # stages read them
    c = Case(b=1, sq=24, skv=24, d=32, causal=True)
    q = gpu.input([c.b, c.hq, c.sq, c.d], "bf16")
    k = gpu.input([c.b, c.hk, c.skv, c.d], "bf16")
    v = gpu.input([c.b, c.hv, c.skv, c.dv], "bf16")
    do = gpu.input([c.b, c.hq, c.sq, c.dv], "bf16")
    g = gpu.graph("bf16")
    qt, kt, vt = q.bind(g, "q"), k.bind(g, "k"), v.bind(g, "v")
    o, st = g.sdpa(qt, kt, vt, attn_scale=c.scale, use_causal_mask=True, generate_stats=True,
                   name="attn")
    o.set_data_type(dt.BFLOAT16)  # saved for the backward as a training step saves it
    st.set_data_type(dt.FLOAT)
    grads = g.sdpa_backward(qt, kt, vt, o, do.bind(g, "dO"), st, attn_scale=c.scale,
                            use_causal_mask=True, name="attn_bwd")
    scale = float(np.float32(c.scale))
    o64, st64 = ref.sdpa(q.values, k.values, v.values, scale, None, c.allowed())
    want = ref.sdpa_backward(q.values, k.values, v.values, ref.round_to(o64, "bf16"), do.values,
                             ref.round_to(st64, "fp32"), scale, None, c.allowed())
    outs = [gpu.output(t, w.shape, "bf16") for t, w in zip(grads, want)]
    log = engine_log(lambda: gpu.execute(g, [q, k, v, do] + outs))
    for out, w in zip(outs, want):
        gpu.assert_close(out, w, tolerance("sdpa", "bf16"))
    assert any("stage 2 of 2" in m and "sdpa_backward 'attn_bwd'" in m for m in log), log


@pytest.mark.parametrize("what,make,reason", [
    ("float64", lambda: fwd.attention_graph(io=dt.DOUBLE, backward=True),
     "data type float64 not supported"),
    ("head dim 288", lambda: fwd.attention_graph(d=288, backward=True), "head dims up to 256"),
])
def test_what_the_engine_lacks_is_declined_naming_the_node(gpu, what, make, reason):
    why = fwd.declined(make())
    assert why and reason in why and "'attn_bwd' (sdpa_backward)" in why, why


@pytest.mark.parametrize("align,kind,sizes", [
    ("br", "left_causal", (40, 17)), ("tl", "left", (40, 17)), ("br", "left_right", (33, 33)),
    ("tl", "left_right", (17, 40)), ("br", "causal", (40, 17)), ("br", "right", (17, 40))])
def test_mhas_masks_with_padding(gpu, rng, align, kind, sizes):
    """test_mhas's backward masks with its padding (test_sdpa_mhas.py: its reference's
    gradients are the band rule's)."""
    a = ALIGN.BOTTOM_RIGHT if align == "br" else ALIGN.TOP_LEFT
    run(gpu, "fp16", test_sdpa_mhas.mhas_case(rng, a, kind, True, False, sizes, case=Case))


# ---- large ---------------------------------------------------------------------------------

@pytest.mark.large
@pytest.mark.parametrize("d", [64, 128])
def test_long_sequences_causal_gqa(gpu, d):
    for dtype in ("fp16", "bf16"):
        log, _ = run(gpu, dtype, Case(b=1, hq=4, hk=1, hv=1, sq=512, skv=512, d=d, causal=True))
        assert on_tensor_cores(log), log
