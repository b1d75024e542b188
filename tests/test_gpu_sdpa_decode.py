"""The GPU engine's attention decode path (plugins/hip/fa_kernels_decode.h): few query rows
(S_q <= 16) against many keys, the query heads that share a key / value head packed into one
block's tiles, the keys split into ranges whose partial rows a second kernel sums (fp16 /
bf16 on tensor cores; fp32 and the cases the path does not take run the kernels of
test_gpu_sdpa.py).  Against float64 NumPy at DESIGN tolerances: S_q 1, 2 and 4 against
S_kv 1 to 4097, GQA 1, 4 and 8 and MQA, every mask, bias, scale form and stats, the ranges
the plan picks and counts forced through $HIPDNN_HIP_FA_SPLITS.

Every run copies each operand's whole allocation to the device and back, NaN poison in
its gaps included (conftest.DeviceNumerics): outputs fully written, inputs unchanged.  On
the host emulation (tests/test_gpu_emulated.py) the split kernel's grid, ranges and rows
are checked, and its partial rows are poisoned before it runs: a combine that reads one
the split kernel did not write fails."""
import pytest

from test_gpu_sdpa import ALIGN, Case, ran, run

pytestmark = pytest.mark.gpu


def decoded(log, split=None):
    """Whether the decode path ran: with its ranges summed (split True), in one (False)."""
    one, many = ran(log, "tensor-core decode"), ran(log, "tensor-core split-key decode")
    return {None: one or many, True: many, False: one}[split]


def plan_says_decode(log):
    return any("decode path" in m for m in log)


@pytest.fixture
def splits(monkeypatch):
    """Forces the plan's count of key ranges."""
    def force(n):
        monkeypatch.setenv("HIPDNN_HIP_FA_SPLITS", str(n))
    return force


# ---- shapes --------------------------------------------------------------------------------

@pytest.mark.parametrize("skv", [1, 63, 1000, 4097])
@pytest.mark.parametrize("sq", [1, 2, 4])
def test_query_rows_against_keys(gpu, dtype, sq, skv):
    log = run(gpu, dtype, Case(b=2, hq=8, hk=2, sq=sq, skv=skv))
    assert decoded(log) == (dtype != "fp32"), log


@pytest.mark.parametrize("heads", [(4, 4), (8, 2), (16, 2), (8, 1)],
                         ids=["mha", "gqa4", "gqa8", "mqa"])
def test_grouped_heads(gpu, dtype, heads):
    hq, hk = heads
    # sq 4: 4 to 32 packed rows, one or two warps
    log = run(gpu, dtype, Case(b=2, hq=hq, hk=hk, sq=4, skv=300, d=128))
    assert decoded(log) == (dtype != "fp32"), log


def test_head_dims(gpu):
    for d, dv in ((64, 32), (256, 256), (32, 128)):
        log = run(gpu, "bf16", Case(b=1, hq=4, hk=1, d=d, dv=dv, sq=1, skv=200))
        assert decoded(log), (d, dv, log)


def test_sixteen_queries_of_four_heads_fill_four_warps(gpu):
    log = run(gpu, "fp16", Case(b=1, hq=8, hk=2, sq=16, skv=150))
    assert decoded(log), log


@pytest.mark.parametrize("why", ["rows", "heads"])
def test_what_the_path_does_not_take_runs_the_tile_kernel(gpu, why):
    # 128 packed rows; key heads differing from value heads
    c = Case(b=1, hq=32, hk=1, sq=4, skv=90) if why == "rows" else \
        Case(b=1, hq=4, hk=1, hv=2, sq=2, skv=90)
    log = run(gpu, "bf16", c)
    assert not decoded(log) and not plan_says_decode(log) and ran(log, "tensor-core"), log


@pytest.mark.parametrize("layout", ["bshd", "packed"])
def test_layouts(gpu, layout):
    run(gpu, "bf16", Case(b=2, hq=8, hk=2, sq=2, skv=130, layout=layout))


# ---- ranges --------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 7, 300])
def test_forced_range_counts(gpu, splits, n):
    # 300: more than the keys' 16-key steps; one range a step then
    splits(n)
    log = run(gpu, "fp16", Case(b=1, hq=8, hk=2, sq=2, skv=1000, causal_br=True))
    assert decoded(log, split=n > 1), log


def test_the_plan_splits_long_key_sequences(gpu):
    log = run(gpu, "bf16", Case(b=1, hq=4, hk=1, sq=1, skv=2000))
    assert decoded(log, split=True), log


def test_a_view_not_16_byte_aligned_takes_the_general_kernel(gpu):
    # test_gpu_sdpa's case: S_q 16, the decode path's plan, q one element off
    from test_gpu_sdpa import test_a_view_not_16_byte_aligned_takes_the_general_kernel as t
    t(gpu)


# ---- masks, bias, scale, stats -------------------------------------------------------------

@pytest.mark.parametrize("causal", ["top_left", "bottom_right"])
@pytest.mark.parametrize("sq", [1, 4])
def test_causal(gpu, dtype, splits, causal, sq):
    # top-left: row i sees keys 0..i, a few in the first range; the others see nothing
    splits(5)
    log = run(gpu, dtype, Case(b=2, hq=8, hk=2, sq=sq, skv=700, causal=causal == "top_left",
                               causal_br=causal == "bottom_right"))
    assert decoded(log) == (dtype != "fp32"), log


@pytest.mark.parametrize("align", [ALIGN.TOP_LEFT, ALIGN.BOTTOM_RIGHT], ids=["tl", "br"])
def test_sliding_window(gpu, splits, align):
    splits(4)
    run(gpu, "bf16", Case(b=1, hq=8, hk=2, sq=4, skv=600, causal=align == ALIGN.TOP_LEFT,
                          causal_br=align == ALIGN.BOTTOM_RIGHT, window=100))


@pytest.mark.parametrize("left,right", [(300, 5), (None, 70), (17, None)])
def test_diagonal_band(gpu, splits, left, right):
    splits(3)
    run(gpu, "fp16", Case(b=1, hq=4, hk=1, sq=2, skv=500, left=left, right=right,
                          align=ALIGN.BOTTOM_RIGHT))


def test_padding_masks(gpu, dtype, splits):
    # sample 0: its keys end within the first of 4 ranges, its second query is padding;
    # sample 1: whole.  Ranges past a sample's keys see none
    splits(4)
    run(gpu, dtype, Case(b=2, hq=8, hk=2, sq=2, skv=900, lens=([1, 2], [100, 900])))


def test_padding_with_bottom_right_causal(gpu, splits):
    splits(6)
    run(gpu, "bf16", Case(b=2, hq=4, hk=2, sq=4, skv=800, lens=([3, 4], [450, 800]),
                          causal_br=True))


def test_rows_that_see_no_key(gpu, dtype):
    # a sample with no keys at all gives 0 and -inf everywhere
    run(gpu, dtype, Case(b=2, hq=4, hk=1, sq=2, skv=600, lens=([2, 2], [0, 5]), causal_br=True))


@pytest.mark.parametrize("bias", [[2, 8, 2, 400], [1, 8, 1, 400], [2, 1, 2, 400], [1, 1, 1, 400]],
                         ids=["full", "per_head", "per_query", "shared"])
def test_additive_bias(gpu, dtype, splits, bias):
    splits(3)
    run(gpu, dtype, Case(b=2, hq=8, hk=2, sq=2, skv=400, bias=bias))


def test_alibi(gpu, dtype, splits):
    splits(3)
    run(gpu, dtype, Case(b=2, hq=12, hk=4, sq=3, skv=400, alibi=True, causal_br=True))


def test_bias_with_causal_mask_and_padding(gpu):
    run(gpu, "fp16", Case(b=2, hq=8, hk=1, sq=4, skv=1200, bias=[2, 8, 4, 1200], causal_br=True,
                          lens=([4, 3], [1100, 1200])))


@pytest.mark.parametrize("scale_as", ["by_value", "tensor"])
def test_attn_scale_given_at_execute(gpu, scale_as):
    run(gpu, "bf16", Case(b=2, hq=8, hk=2, sq=1, skv=500, scale=0.3), scale_as=scale_as)


@pytest.mark.parametrize("n", [1, 4])
def test_without_stats(gpu, dtype, splits, n):
    splits(n)
    log = run(gpu, dtype, Case(b=2, hq=8, hk=2, sq=1, skv=500), stats=False)
    assert decoded(log, split=n > 1) == (dtype != "fp32"), log


def test_fp32_output_of_bf16_inputs(gpu):
    log = run(gpu, "bf16", Case(b=1, hq=8, hk=2, sq=1, skv=300), o_dtype="fp32")
    assert decoded(log), log


def test_plan_is_logged_as_the_decode_path(gpu):
    log = run(gpu, "bf16", Case(b=1, hq=8, hk=1, sq=1, skv=64))
    assert plan_says_decode(log) and decoded(log, split=False), log


# ---- large ---------------------------------------------------------------------------------

@pytest.mark.large
def test_the_benchmarks_decode_shape(gpu):
    # benchmarks/gpu_attention_bench.py's sdpa_fwd_decode case with B 4: GQA 8, 4096 keys
    log = run(gpu, "bf16", Case(b=4, hq=32, hk=4, sq=1, skv=4096, d=128))
    assert decoded(log, split=True), log
