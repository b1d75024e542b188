# %% [markdown]
# # 20 · Normalization: layer, RMS and batch norms, forward and backward
#
# A norm computes statistics of `x` over some axes, then rescales:
#
# `y = (x - mean) * inv_variance * scale + bias`, with `inv_variance = 1 / sqrt(var + epsilon)`
#
# (RMS norm drops the mean: `y = x * inv_variance * scale`, with
# `inv_variance = 1 / sqrt(mean(x²) + epsilon)`).
# The norms differ in **which axes** the statistics run over:
#
# | norm | statistics over | `scale` / `bias` for x `[B, S, D]` or `[N, C, H, W]` |
# | --- | --- | --- |
# | layer, RMS | the axes where `scale` has x's size (the features) | `[1, 1, D]` |
# | batch | every axis but the channel | `[1, C, 1, 1]` |
#
# Each has two **phases**. In `TRAINING` the op also returns the statistics (`mean`,
# `inv_variance`), because the backward pass needs them; batchnorm also updates its
# running statistics. In `INFERENCE` only `y` comes out (batchnorm inference is its own op,
# `batchnorm_inference`, reading the running statistics).
#
# Every result below is checked against float64 NumPy. Tolerances (docs/architecture.md):
# 1e-4 for layer / RMS norms and for every backward output, 2e-4 for batchnorm, in float32.

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
TRAINING, INFERENCE = hipdnn.norm_forward_phase.TRAINING, hipdnn.norm_forward_phase.INFERENCE
rng = np.random.default_rng(20)
EPS = 1e-5


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
    print(f"{name:<26} max |error| {err.max():.2e}  {ratio:.2g} of the bound (tol {tol:g})")
    assert ratio <= 1.0, f"{name}: out of tolerance {tol}"


def f64(a):
    return np.asarray(a, np.float64)

# %% [markdown]
# ## The references
#
# One function per norm, in float64, written from the definitions above. `axes` are the
# normalized axes; the statistics keep x's rank with 1 on those axes, as hipdnn gives them.

# %%
def norm_forward(x, scale, bias, axes, eps=EPS, rms=False):
    x = f64(x)
    mean = np.zeros_like(x.mean(axis=axes, keepdims=True)) if rms else \
        x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    inv = 1.0 / np.sqrt(var + eps)
    y = (x - mean) * inv * f64(scale)
    if bias is not None:
        y = y + f64(bias)
    return y, mean, inv


def norm_backward(dy, x, scale, mean, inv, axes, rms=False):
    """dx, dscale, dbias from the statistics the forward saved."""
    dy, x, mean, inv = f64(dy), f64(x), f64(mean), f64(inv)
    xhat = (x - mean) * inv
    dxhat = dy * f64(scale)
    centre = 0.0 if rms else dxhat.mean(axis=axes, keepdims=True)
    dx = inv * (dxhat - centre - xhat * (dxhat * xhat).mean(axis=axes, keepdims=True))
    reduce = tuple(i for i in range(x.ndim) if np.shape(scale)[i] == 1)
    return dx, (dy * xhat).sum(axis=reduce, keepdims=True), dy.sum(axis=reduce, keepdims=True)

# %% [markdown]
# ## Layer norm, training phase
#
# `x` is `[B, S, D]` and `scale` / `bias` are `[1, 1, D]`, so the statistics run over `D`:
# one mean and one `inv_variance` per token, shape `[B, S, 1]`. In the training phase the op
# has three results; with no output marked, `hipdnn.Graph` returns all three.

# %%
B, S, D = 4, 16, 96
x = rand(B, S, D) * 2.0 + 0.5       # an offset, so the mean matters
scale, bias = rand(1, 1, D), rand(1, 1, D)

with hipdnn.Graph() as ln:
    ln.layernorm(TRAINING, x, scale, bias, epsilon=EPS)
y, mean, inv_variance = ln()
print("y", y.shape, "| mean", mean.shape, mean.dtype, "| inv_variance", inv_variance.shape)

y_ref, mean_ref, inv_ref = norm_forward(x, scale, bias, axes=(2,))
check("layernorm y", y, y_ref, 1e-4)
check("layernorm mean", mean, mean_ref, 1e-4)
check("layernorm inv_variance", inv_variance, inv_ref, 1e-4)

# %% [markdown]
# ## Layer norm, inference phase, and in float16
#
# In the inference phase the statistics are not outputs (the op returns `[y, None, None]`).
# In float16 storage the statistics are still computed in float32 or better and `y` is
# rounded once; the tolerance is float16's, 1e-2.

# %%
with hipdnn.Graph() as ln_inf:
    y_t, no_mean, no_inv = ln_inf.layernorm(INFERENCE, x, scale, bias, epsilon=EPS)
assert no_mean is None and no_inv is None
check("layernorm inference y", ln_inf(), y_ref, 1e-4)

x16, s16, b16 = (a.astype(np.float16) for a in (x, scale, bias))
with hipdnn.Graph() as ln16:
    ln16.layernorm(INFERENCE, x16, s16, b16, epsilon=EPS)
y16 = ln16()
assert y16.dtype == np.float16
check("layernorm float16 y", y16, norm_forward(x16, s16, b16, axes=(2,))[0], 1e-2)

# %% [markdown]
# ## RMS norm
#
# No mean, no bias by default (`bias=None`): the training phase gives `y` and
# `inv_variance` only.

# %%
with hipdnn.Graph() as rms:
    rms.rmsnorm(TRAINING, x, scale, None, epsilon=EPS)
y_rms, inv_rms = rms()
y_rms_ref, _, inv_rms_ref = norm_forward(x, scale, None, axes=(2,), rms=True)
check("rmsnorm y", y_rms, y_rms_ref, 1e-4)
check("rmsnorm inv_variance", inv_rms, inv_rms_ref, 1e-4)

# %% [markdown]
# ## Batch norm, training phase, with running statistics
#
# On `[N, C, H, W]` the statistics are per channel, over `N`, `H` and `W`. Given the
# running mean and variance and a `momentum`, the op also returns their next values:
#
# `next = (1 - momentum) * running + momentum * batch_statistic`
#
# where the batch variance is the **unbiased** one (divided by count - 1), as cuDNN and
# PyTorch do, while `inv_variance` uses the biased one. Five results in all.

# %%
N, C, H, W = 8, 6, 7, 7
xb = rand(N, C, H, W) * 1.5 + rand(1, C, 1, 1)
sb, bb = rand(1, C, 1, 1), rand(1, C, 1, 1)
running_mean = rand(1, C, 1, 1)
running_var = rng.uniform(0.5, 1.5, (1, C, 1, 1)).astype(np.float32)
MOMENTUM = 0.1

with hipdnn.Graph() as bn:
    bn.batchnorm(xb, sb, bb, in_running_mean=running_mean, in_running_var=running_var,
                 epsilon=EPS, momentum=MOMENTUM)
yb, mean_b, inv_b, next_mean, next_var = bn()

axes = (0, 2, 3)
yb_ref, mean_b_ref, inv_b_ref = norm_forward(xb, sb, bb, axes=axes)
count = N * H * W
unbiased = f64(xb).var(axis=axes, keepdims=True) * count / (count - 1)
check("batchnorm y", yb, yb_ref, 2e-4)
check("batchnorm mean", mean_b, mean_b_ref, 2e-4)
check("batchnorm inv_variance", inv_b, inv_b_ref, 2e-4)
check("next running mean", next_mean,
      (1 - MOMENTUM) * f64(running_mean) + MOMENTUM * mean_b_ref, 2e-4)
check("next running var", next_var,
      (1 - MOMENTUM) * f64(running_var) + MOMENTUM * unbiased, 2e-4)

# %% [markdown]
# ## Batch norm, inference
#
# At inference time a batchnorm reads no batch statistics: it is
# `y = (x - mean) * inv_variance * scale + bias` with the running statistics, a purely
# elementwise op (`batchnorm_inference`; the GPU engine fuses it with pointwise nodes
# around it). Its `inv_variance` input is `1 / sqrt(running_var + epsilon)`.

# %%
inv_running = (1.0 / np.sqrt(f64(next_var) + EPS)).astype(np.float32)
with hipdnn.Graph() as bn_inf:
    bn_inf.relu(bn_inf.batchnorm_inference(xb, next_mean, inv_running, sb, bb))
check("batchnorm_inference + relu", bn_inf(),
      np.maximum((f64(xb) - f64(next_mean)) * f64(inv_running) * f64(sb) + f64(bb), 0.0), 2e-4)

# %% [markdown]
# ## Backward passes
#
# The backward ops take the incoming gradient `dy`, the forward's `x` and `scale`, and the
# statistics the training phase saved (hipdnn does not recompute them), and give `dx`
# (shaped as x), `dscale` and `dbias` (shaped as scale: summed over the axes where scale
# has 1). With `xhat = (x - mean) * inv_variance` and `dxhat = dy * scale`:
#
# `dx = inv_variance * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))` over the
# normalized axes (RMS norm without the `mean(dxhat)` term),
# `dscale = sum(dy * xhat)`, `dbias = sum(dy)`.
#
# ### Is the reference right?
#
# Before trusting `norm_backward` as a yardstick, check it against the forward itself:
# for the loss `L = sum(dy * y(x))`, `dL/dx` is `dx`, and a central difference
# `(L(x + h) - L(x - h)) / 2h` on a few elements must agree with it.

# %%
dy = rand(B, S, D)


def loss(xv):
    return float((f64(dy) * norm_forward(xv, scale, bias, axes=(2,))[0]).sum())


_, m64, inv64 = norm_forward(x, scale, bias, axes=(2,))
dx_formula = norm_backward(dy, x, scale, m64, inv64, axes=(2,))[0]
h = 1e-5
for index in [(0, 0, 0), (1, 5, 17), (3, 15, 95)]:
    xp, xm = f64(x), f64(x)
    xp[index] += h
    xm[index] -= h
    numeric = (loss(xp) - loss(xm)) / (2 * h)
    print(f"dx{index}: formula {dx_formula[index]:+.8f}  finite difference {numeric:+.8f}")
    assert abs(numeric - dx_formula[index]) < 1e-6 * (1 + abs(numeric))

# %% [markdown]
# ### Layer norm backward
#
# From the `mean` and `inv_variance` the training-phase forward returned above (float32,
# fed to the reference as they are).

# %%
with hipdnn.Graph() as ln_bwd:
    ln_bwd.layernorm_backward(dy, x, scale, mean, inv_variance)
dx, dscale, dbias = ln_bwd()
dx_ref, dscale_ref, dbias_ref = norm_backward(dy, x, scale, mean, inv_variance, axes=(2,))
check("layernorm dx", dx, dx_ref, 1e-4)
check("layernorm dscale", dscale, dscale_ref, 1e-4)
check("layernorm dbias", dbias, dbias_ref, 1e-4)

# %% [markdown]
# ### RMS norm and batch norm backward
#
# `rmsnorm_backward` takes no mean, and gives `dbias` only when asked (`has_dbias`).

# %%
with hipdnn.Graph() as rms_bwd:
    dx_t, dscale_t, dbias_t = rms_bwd.rmsnorm_backward(dy, x, scale, inv_rms, has_dbias=False)
assert dbias_t is None
dx_r, dscale_r = rms_bwd()
dx_r_ref, dscale_r_ref, _ = norm_backward(dy, x, scale, 0.0, inv_rms, axes=(2,), rms=True)
check("rmsnorm dx", dx_r, dx_r_ref, 1e-4)
check("rmsnorm dscale", dscale_r, dscale_r_ref, 1e-4)

dyb = rand(N, C, H, W)
with hipdnn.Graph() as bn_bwd:
    bn_bwd.batchnorm_backward(dyb, xb, sb, mean_b, inv_b)
dxb, dsb, dbb = bn_bwd()
dxb_ref, dsb_ref, dbb_ref = norm_backward(dyb, xb, sb, mean_b, inv_b, axes=axes)
check("batchnorm dx", dxb, dxb_ref, 1e-4)
check("batchnorm dscale", dsb, dsb_ref, 1e-4)
check("batchnorm dbias", dbb, dbb_ref, 1e-4)

# %% [markdown]
# ## Forward and backward in one graph
#
# A training step's norm can be one graph: the statistics flow from the forward node to
# the backward node as **virtual** tensors and are never handed out. Every result must
# go somewhere, though: a virtual tensor that nothing reads is refused when the graph is
# built (the message names it), so `dscale` and `dbias` are outputs here too.

# %%
with hipdnn.Graph() as step:
    y_t, mean_t, inv_t = step.layernorm(TRAINING, x, scale, bias, epsilon=EPS)
    dx_t, dscale_t, dbias_t = step.layernorm_backward(dy, x, scale, mean_t, inv_t)
    step.output(y_t, dx_t, dscale_t, dbias_t)
assert mean_t.get_is_virtual() and inv_t.get_is_virtual()
y_s, dx_s, dscale_s, dbias_s = step()
bwd_ref = norm_backward(dy, x, scale, mean_ref, inv_ref, axes=(2,))
check("fused step y", y_s, y_ref, 1e-4)
for name, got, want in zip(("dx", "dscale", "dbias"), (dx_s, dscale_s, dbias_s), bwd_ref):
    check(f"fused step {name}", got, want, 1e-4)

# %% [markdown]
# Leaving `dscale` out shows that check:

# %%
try:
    with hipdnn.Graph() as partial:
        y_t, mean_t, inv_t = partial.layernorm(TRAINING, x, scale, bias, epsilon=EPS)
        dx_t, _, _ = partial.layernorm_backward(dy, x, scale, mean_t, inv_t)
        partial.output(y_t, dx_t)
except hipdnn.InvalidGraphError as e:
    print("InvalidGraphError:", e)
    assert "DSCALE" in str(e) and "never used" in str(e)
else:
    raise AssertionError("a graph with an unused virtual result was built")
