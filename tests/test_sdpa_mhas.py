"""sdpa on the masks cuDNN frontend's own attention test draws (test_mhas, in its
test/python; tools/cudnn_frontend_tests.py runs it on hipdnn), on the reference engine.

hipdnn follows the band rule (docs/architecture.md, "Attention"): a row sees the keys its
masks leave, and a row left none gives o = 0 and stats = -inf.  test_mhas's reference
departs from that rule in one place: when a left bound is set, query rows from
S_kv + left_bound - 1 on (whatever the alignment and the lengths; S_kv the tensor's) get a
zero query, no left-bound mask and p = 0, so o = 0 and stats = the log-sum-exp of their
scores without q (the bias, under the padding and right-bound masks); and a row every
mask empties is NaN.  cuDNN frontend's validate() refuses a left bound or a bottom-right
right bound with S_q > S_kv unless there is a padding mask, and test_mhas draws
seq_len_q <= seq_len_kv for those masks, so every row where the two rules part is past
seq_len_q, where test_mhas zeroes o and stats on both sides before comparing.  These
tests check that on every combination it draws: the engine against the band rule, the
band rule against a float64 port of test_mhas's reference on the rows it compares, o
equal on every row (so the gradients test_mhas's backward takes of its reference are
the band rule's too), and the refusals."""
import itertools

import numpy as np
import pytest

import hipdnn
import references as ref
from test_sdpa import Case, backward, check_stats, forward
from tolerances import tolerance

ALIGN = hipdnn.diagonal_alignment

SIZES = [(5, 12), (12, 5), (8, 8), (1, 12)]
# (left, right) as test_mhas draws them: left max(1, s_kv // 4) or 1, right 0 or s_kv // 4
BOUNDS = ["none", "left", "causal", "right", "left_causal", "left_right"]


def bounds(kind, skv):
    left, right = max(1, skv // 4), skv // 4
    return {"none": (None, None), "left": (left, None), "causal": (None, 0),
            "right": (None, right), "left_causal": (1, 0),
            "left_right": (left, right)}[kind]


def combinations(sizes=SIZES, refused_too=True):
    """pytest params (align, kind, padded, biased, (s_q, s_kv)) of every option test_mhas
    combines that hipdnn runs (no dropout, paged or ragged tensors; ALiBi: test_mhas_alibi)."""
    for align, kind, padded, biased, (sq, skv) in itertools.product(
            [ALIGN.TOP_LEFT, ALIGN.BOTTOM_RIGHT], BOUNDS, [False, True], [False, True], sizes):
        left, right = bounds(kind, skv)
        if sq == 1 and left is not None:
            continue  # test_mhas drops the left bound when s_q is 1
        if not refused_too and refused(align, left, right, padded, sq, skv):
            continue
        name = "br" if align == ALIGN.BOTTOM_RIGHT else "tl"
        yield pytest.param(align, kind, padded, biased, (sq, skv),
                           id=f"{name}-{kind}-{'pad' if padded else 'full'}-"
                              f"{'bias' if biased else 'nobias'}-{sq}x{skv}")


def mhas_case(rng, align, kind, padded, biased, sizes, hq=4, hk=2, d=8, scale=0.125,
              case=Case, alibi=False):
    """The attention problem test_mhas builds for these options; seq lengths drawn as it
    draws them (seq_len_q <= seq_len_kv under a left bound or a bottom-right right bound)."""
    sq, skv = sizes
    left, right = bounds(kind, skv)
    lens = None
    if padded:
        lq = rng.integers(1, sq + 1, 2)
        lk = rng.integers(1, skv + 1, 2)
        if left is not None or (right is not None and align == ALIGN.BOTTOM_RIGHT):
            lq = np.maximum(1, lq % lk)
        lens = (lq.tolist(), lk.tolist())
    return case(b=2, hq=hq, hk=hk, sq=sq, skv=skv, d=d, scale=scale, align=align,
                left=left, right=right, lens=lens,
                bias=[1, hq, sq, skv] if biased else None, alibi=alibi)


def refused(align, left, right, padded, sq, skv):
    """cuDNN frontend's (and pygraph's) refusal: rows without keys and no padding mask."""
    bottom_right = align == ALIGN.BOTTOM_RIGHT and right is not None
    return not padded and sq > skv and (bottom_right or left is not None)


def mhas_reference(q, k, v, scale, bias, c):
    """(o, stats) in float64 as test_mhas's reference computes them (NaN rows included)."""
    b, hq, sq, _ = q.shape
    skv = k.shape[2]
    k = np.repeat(np.asarray(k, np.float64), hq // k.shape[1], axis=1)
    v = np.repeat(np.asarray(v, np.float64), hq // v.shape[1], axis=1)
    q = np.array(q, np.float64)
    i = np.arange(sq)[:, None]
    j = np.arange(skv)[None, :]
    zero_rows = np.zeros(sq, bool) if c.left is None else np.arange(sq) >= skv + c.left - 1
    q[:, :, zero_rows] = 0
    lq, lk = (np.asarray(c.lens[0]), np.asarray(c.lens[1])) if c.lens else \
        (np.full(b, sq), np.full(b, skv))
    masked = np.zeros((b, 1, sq, skv), bool)
    for n in range(b):
        q[n, :, lq[n]:] = 0
        k[n, :, lk[n]:] = 0
        v[n, :, lk[n]:] = 0
        shift = 0
        if c.align == ALIGN.BOTTOM_RIGHT:
            shift = lk[n] - lq[n] if c.lens else skv - sq
        m = j >= (lk[n] if c.lens else skv)
        if c.right is not None:
            m = m | (j > i + shift + c.right)
        if c.left is not None:
            m = m | ((j <= i + shift - c.left) & ~zero_rows[:, None])
        masked[n, 0] = m
    s = scale * np.einsum("bhqd,bhkd->bhqk", q, k)
    if bias is not None:
        s = s + bias
    if getattr(c, "alibi", False):  # after the bias, before the masks, as test_mhas
        s = s + ref.alibi_bias(hq, sq, skv)
    s = np.where(masked, -np.inf, s)
    with np.errstate(invalid="ignore"):
        top = np.max(s, axis=-1, keepdims=True)
        e = np.exp(s - top)
        total = np.sum(e, axis=-1, keepdims=True)
        p = e / total
        p[:, :, zero_rows] = 0
        for n in range(b):
            p[n, :, lq[n]:] = 0
        return np.einsum("bhqk,bhkd->bhqd", p, v), top + np.log(total)


def compared(c, *arrays):
    """The arrays with the rows test_mhas zeroes before comparing (past seq_len_q) zeroed."""
    out = [np.array(a) for a in arrays]
    for n, m in enumerate(c.lens[0] if c.lens else []):
        for a in out:
            a[n, :, m:] = 0
    return out


def band_is_mhas(c, q, k, v, scale, bias, want_o, want_stats):
    """The band rule's (o, stats) is test_mhas's reference where test_mhas compares, with no
    NaN there, and o is its reference on every row."""
    mo, ms = mhas_reference(q, k, v, scale, bias, c)
    assert not np.isnan(mo).any(), "test_mhas's reference has NaN rows here"
    np.testing.assert_allclose(want_o, mo, rtol=1e-12, atol=1e-12)
    got_s, mhas_s = compared(c, want_stats, ms)
    assert not np.isnan(mhas_s).any()
    np.testing.assert_allclose(got_s, mhas_s, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("align,kind,padded,biased,sizes", list(combinations()))
def test_mhas_combination(nx, rng, align, kind, padded, biased, sizes):
    c = mhas_case(rng, align, kind, padded, biased, sizes)
    g, ins, outs, (want_o, want_stats) = forward(nx, "fp32", c)
    if refused(c.align, c.left, c.right, c.lens is not None, c.sq, c.skv):
        with pytest.raises(hipdnn.FeatureNotSupportedError, match="no padding mask"):
            g.validate()
        return
    nx.execute(g, ins + outs)
    nx.assert_close(outs[0], want_o, tolerance("sdpa", "fp32"))
    check_stats(outs[1], want_stats)
    scale = float(np.float32(c.scale))
    bias = ins[3].values if c.bias else None
    band_is_mhas(c, ins[0].values, ins[1].values, ins[2].values, scale, bias, want_o,
                 want_stats)


ALIBI_KINDS = {"none", "causal", "left_causal", "right"}


@pytest.mark.parametrize("align,kind,padded,biased,sizes",
                         [p for p in combinations([(5, 12), (8, 8), (12, 5)], refused_too=False)
                          if p.values[1] in ALIBI_KINDS])
def test_mhas_alibi(nx, rng, align, kind, padded, biased, sizes):
    """ALiBi (test_mhas's is_alibi) on the masks it combines with, 6 query heads (slopes
    past the power of two): the engine against the band rule with ALiBi's term, and that
    against test_mhas's reference rules."""
    c = mhas_case(rng, align, kind, padded, biased, sizes, hq=6, hk=3, alibi=True)
    g, ins, outs, (want_o, want_stats) = forward(nx, "fp32", c)
    nx.execute(g, ins + outs)
    nx.assert_close(outs[0], want_o, tolerance("sdpa", "fp32"))
    check_stats(outs[1], want_stats)
    bias = ins[3].values if c.bias else None
    band_is_mhas(c, ins[0].values, ins[1].values, ins[2].values, float(np.float32(c.scale)),
                 bias, want_o, want_stats)


def test_mhas_alibi_backward(nx, rng):
    """test_mhas's backward takes ALiBi with the top-left causal mask only."""
    backward(nx, "fp32", mhas_case(rng, ALIGN.TOP_LEFT, "causal", True, False, (8, 8), hq=6,
                                   hk=3, alibi=True))


def test_rows_where_the_rules_part_are_past_seq_len_q(rng):
    """The rows the two rules give differently exist (stats -inf against the zero query's
    log-sum-exp) and all lie past seq_len_q: a left bound with S_q > S_kv + left - 1."""
    c = Case(b=2, hq=2, sq=12, skv=5, d=8, left=2, lens=([4, 5], [5, 5]))
    q, k, v = (rng.standard_normal(s) for s in ([2, 2, 12, 8], [2, 2, 5, 8], [2, 2, 5, 8]))
    o, stats = ref.sdpa(q, k, v, 0.5, None, c.allowed())
    mo, ms = mhas_reference(q, k, v, 0.5, None, c)
    part = ~np.isclose(stats, ms)[..., 0]
    assert part[:, :, 6:].all()  # rows from 5 + 2 - 1 on, and padded rows
    assert not part[0, :, :4].any() and not part[1, :, :5].any()
    assert np.isneginf(stats[:, :, 6:]).all()
    np.testing.assert_allclose(ms[:, :, 6:], np.log(5))  # zero query: 5 keys, score 0
    np.testing.assert_allclose(o, mo, atol=1e-12)
    band_is_mhas(c, q, k, v, 0.5, None, o, stats)


BACKWARD = [("br", "left_causal", (12, 5)), ("tl", "left", (12, 5)),
            ("br", "left_right", (8, 8)), ("tl", "left_right", (5, 12)),
            ("br", "causal", (12, 5)), ("br", "right", (5, 12))]


@pytest.mark.parametrize("align,kind,sizes", BACKWARD, ids=["-".join(map(str, p[:2]))
                                                            + f"-{p[2][0]}x{p[2][1]}"
                                                            for p in BACKWARD])
def test_mhas_backward(nx, rng, align, kind, sizes):
    """test_mhas's backward masks with padding (their o being the band rule's on every
    row, its gradients are the band rule's): dq, dk, dv against the float64 reference."""
    a = ALIGN.BOTTOM_RIGHT if align == "br" else ALIGN.TOP_LEFT
    backward(nx, "fp32", mhas_case(rng, a, kind, True, False, sizes))
