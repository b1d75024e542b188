# %% [markdown]
# # 30 · Scaled dot-product attention, forward and backward
#
# Attention over queries `q [B, H_q, S_q, D]`, keys `k [B, H_k, S_kv, D]` and values
# `v [B, H_v, S_kv, D_v]`:
#
# `s = attn_scale * q @ k^T` (plus an optional additive bias), masked where a query may not
# see a key, `p = softmax(s)` over the keys, `o = p @ v`.
#
# In hipdnn `sdpa` is **one operation** (cuDNN frontend lowers it to a dozen backend
# nodes): each engine picks its own fused kernel, or declines it in one line. The
# reference engine computes all of it in float64 and rounds each output once.
#
# * **Stats.** With `generate_stats=True` the forward also returns, per query row, the
#   log-sum-exp of its scores, `stats [B, H_q, S_q, 1]` (float32). The backward uses it
#   to recompute `p = exp(s - stats)` instead of storing the `S_q × S_kv` matrix.
# * **GQA / MQA.** `H_q` may be a multiple of `H_k` and `H_v`: query head `h` reads key
#   head `h // (H_q / H_k)` (grouped-query attention; multi-query when `H_k` is 1).
# * **Masks.** `use_causal_mask` lets query `i` see keys `j <= i`;
#   `use_causal_mask_bottom_right` aligns the diagonal with the last key instead, as
#   decoding with a cache needs when `S_q < S_kv`.
#
# Tolerance: 1e-4 for float32 attention, 2e-2 for float16 (docs/architecture.md).

# %%
import sys
from pathlib import Path

import numpy as np

try:
    import hipdnn
except ImportError:  # a built checkout that is not installed: use the one we are in
    sys.path.insert(0, str(Path.cwd().parent))
    import hipdnn

print("hipdnn", hipdnn.__version__, "engines:", [e.name for e in hipdnn.engines()])
rng = np.random.default_rng(30)


def rand(*shape, dtype=np.float32):
    """Uniform magnitudes in [0.1, 1) with random signs: never zero, never tiny."""
    values = rng.uniform(0.1, 1.0, shape) * rng.choice([-1.0, 1.0], shape)
    return values.astype(dtype)


def check(name, got, ref, tol):
    """Every element finite and within tol + tol * |ref| of the float64 reference."""
    got = np.asarray(got, np.float64)
    assert got.shape == ref.shape, f"{name}: shape {got.shape}, reference {ref.shape}"
    assert np.isfinite(got).all(), f"{name}: elements not finite"
    err = np.abs(got - ref)
    ratio = float((err / (tol + tol * np.abs(ref))).max())
    print(f"{name:<24} max |error| {err.max():.2e}  {ratio:.2g} of the bound (tol {tol:g})")
    assert ratio <= 1.0, f"{name}: out of tolerance {tol}"


def f64(a):
    return np.asarray(a, np.float64)

# %% [markdown]
# ## The reference
#
# Written from the definition, in float64. Key and value heads are repeated to the query
# heads for GQA; in the backward their gradients are summed back over each group.
# `allowed[i, j]` says whether query `i` sees key `j`.

# %%
def mask(sq, skv, causal=False, bottom_right=False):
    i, j = np.arange(sq)[:, None], np.arange(skv)[None, :]
    if causal:
        return j <= i
    if bottom_right:
        return j <= i + (skv - sq)
    return np.ones((sq, skv), bool)


def expand(t, heads):
    return np.repeat(f64(t), heads // t.shape[1], axis=1)


def sdpa_forward(q, k, v, scale, allowed):
    s = scale * f64(q) @ expand(k, q.shape[1]).swapaxes(-1, -2)
    s = np.where(allowed, s, -np.inf)
    row_max = s.max(axis=-1, keepdims=True)
    e = np.exp(s - row_max)
    total = e.sum(axis=-1, keepdims=True)
    return (e / total) @ expand(v, q.shape[1]), row_max + np.log(total)


def sdpa_backward(q, k, v, o, do, stats, scale, allowed):
    hq = q.shape[1]
    ke, ve = expand(k, hq), expand(v, hq)
    s = np.where(allowed, scale * f64(q) @ ke.swapaxes(-1, -2), -np.inf)
    p = np.exp(s - f64(stats))                      # the probabilities, from the stats
    dp = f64(do) @ ve.swapaxes(-1, -2)
    ds = p * (dp - (f64(do) * f64(o)).sum(axis=-1, keepdims=True))
    dq = scale * ds @ ke
    dk = scale * ds.swapaxes(-1, -2) @ f64(q)
    dv = p.swapaxes(-1, -2) @ f64(do)

    def fold(g, heads):  # sum the gradients of the query heads that share a key head
        b, _, n, d = g.shape
        return g.reshape(b, heads, hq // heads, n, d).sum(axis=2)
    return dq, fold(dk, k.shape[1]), fold(dv, v.shape[1])

# %% [markdown]
# ## Causal attention with grouped-query heads
#
# 8 query heads share 2 key/value heads. `attn_scale` given as a Python float becomes a
# float32 scalar in the graph, so the reference uses the same float32 value.

# %%
B, HQ, HK, S, D = 2, 8, 2, 48, 32
q, k, v = rand(B, HQ, S, D), rand(B, HK, S, D), rand(B, HK, S, D)
scale = float(np.float32(1.0 / np.sqrt(D)))

with hipdnn.Graph() as attn:
    o_t, stats_t = attn.sdpa(q, k, v, generate_stats=True, attn_scale=scale,
                             use_causal_mask=True, name="attn")
o, stats = attn()
print("o", o.shape, "| stats", stats.shape, stats.dtype, "| engine", attn.engine_name)

allowed = mask(S, S, causal=True)
o_ref, stats_ref = sdpa_forward(q, k, v, scale, allowed)
check("o (causal, GQA)", o, o_ref, 1e-4)
check("stats", stats, stats_ref, 1e-4)

# %% [markdown]
# What the mask does: the first query sees only the first key, so its output is exactly
# that key's value row, whatever the scores.

# %%
group = HQ // HK
for h in range(HQ):
    assert np.allclose(o[:, h, 0, :], v[:, h // group, 0, :], rtol=1e-6, atol=1e-6)
print("row 0 of every head is v[0] of its key head")

# %% [markdown]
# ## Decoding: a few queries against a long cache
#
# With 4 new queries and 64 cached keys, the bottom-right causal mask lets query `i` see
# keys `0 .. 60 + i`: the diagonal ends at the last key. Multi-query attention here: one
# key/value head for all query heads.

# %%
SQ, SKV = 4, 64
qd, kd, vd = rand(1, HQ, SQ, D), rand(1, 1, SKV, D), rand(1, 1, SKV, D)
with hipdnn.Graph() as decode:
    decode.sdpa(qd, kd, vd, generate_stats=False, attn_scale=scale,
                use_causal_mask_bottom_right=True)
od = decode()
check("o (bottom-right, MQA)", od,
      sdpa_forward(qd, kd, vd, scale, mask(SQ, SKV, bottom_right=True))[0], 1e-4)

# %% [markdown]
# ## Layouts: BSHD through strides
#
# Many models keep attention tensors as `[B, S, H, D]` (BSHD). hipdnn takes `q`, `k` and `v`
# with any strides, so a BSHD array is passed as a **transposed view**, `x.transpose(0, 2,
# 1, 3)`: the dims are `[B, H, S, D]`, the memory is untouched, no copy is made.

# %%
q_bshd = rand(B, S, HQ, D)
k_bshd, v_bshd = rand(B, S, HK, D), rand(B, S, HK, D)
qv, kv, vv = (t.transpose(0, 2, 1, 3) for t in (q_bshd, k_bshd, v_bshd))
assert not qv.flags.c_contiguous and np.shares_memory(qv, q_bshd)

with hipdnn.Graph() as bshd:
    bshd.sdpa(qv, kv, vv, generate_stats=False, attn_scale=scale, use_causal_mask=True)
print("q strides (elements):", bshd.inputs[0].get_stride())
check("o (BSHD views)", bshd(), sdpa_forward(qv, kv, vv, scale, allowed)[0], 1e-4)

# %% [markdown]
# ## Backward
#
# `sdpa_backward(q, k, v, o, dO, stats, ...)` takes the forward's inputs, output and stats
# with the same scale and mask, and gives `dQ`, `dK` and `dV`; with GQA, `dK` and `dV` have
# the key heads' shape, summed over the query heads that share them.
#
# First, is the backward reference right? A central difference of
# `L = sum(dO * o(q, k, v))` on a few elements of `k` (the gradient that has to be summed
# over the heads of a group) must agree with it.

# %%
do = rand(B, HQ, S, D)


def loss(kk):
    return float((f64(do) * sdpa_forward(q, kk, v, scale, allowed)[0]).sum())


o64, stats64 = sdpa_forward(q, k, v, scale, allowed)
_, dk_formula, _ = sdpa_backward(q, k, v, o64, do, stats64, scale, allowed)
h = 1e-6
for index in [(0, 0, 3, 5), (1, 1, 47, 31)]:
    kp, km = f64(k), f64(k)
    kp[index] += h
    km[index] -= h
    numeric = (loss(kp) - loss(km)) / (2 * h)
    print(f"dK{index}: formula {dk_formula[index]:+.8f}  finite difference {numeric:+.8f}")
    assert abs(numeric - dk_formula[index]) < 1e-6 * (1 + abs(numeric))

# %% [markdown]
# Then hipdnn's backward, from the forward's float32 `o` and `stats`:

# %%
with hipdnn.Graph() as attn_bwd:
    attn_bwd.sdpa_backward(q, k, v, o, do, stats, attn_scale=scale, use_causal_mask=True)
dq, dk, dv = attn_bwd()
print("dQ", dq.shape, "dK", dk.shape, "dV", dv.shape)

dq_ref, dk_ref, dv_ref = sdpa_backward(q, k, v, o, do, stats, scale, allowed)
check("dQ", dq, dq_ref, 1e-4)
check("dK", dk, dk_ref, 1e-4)
check("dV", dv, dv_ref, 1e-4)

# %% [markdown]
# ## float16
#
# Inputs and outputs in float16, computed in float64 inside the reference engine and
# rounded once; the reference starts from the float16 inputs.

# %%
q16, k16, v16 = (t.astype(np.float16) for t in (q, k, v))
with hipdnn.Graph() as attn16:
    attn16.sdpa(q16, k16, v16, generate_stats=False, attn_scale=scale, use_causal_mask=True)
o16 = attn16()
assert o16.dtype == np.float16
check("o float16", o16, sdpa_forward(q16, k16, v16, scale, allowed)[0], 2e-2)

# %% [markdown]
# ## What is not there (yet)
#
# ALiBi (`use_alibi_mask=True`), paged K/V caches (`paged_attention_k_table=` ...) and
# dropout (`dropout=(probability, seed, offset)`, `rng_dump=`) run; ragged offsets, block
# masks and score modifiers are refused by the
# Python layer with a `NotImplementedError` naming the argument, rather than ignored (a
# wrong argument is a `ValueError`; a feature not there yet is this):

# %%
try:
    with hipdnn.Graph() as g:
        g.sdpa(q, k, v, generate_stats=False, attn_scale=scale, block_mask=object())
except NotImplementedError as e:
    print("NotImplementedError:", e)
    assert "block_mask" in str(e)
else:
    raise AssertionError("block_mask was accepted")
