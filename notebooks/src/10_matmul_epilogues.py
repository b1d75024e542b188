# %% [markdown]
# # 10 · Matmul and its epilogues
#
# A dense layer is a matrix multiply followed by a few elementwise steps: add a bias,
# apply an activation, maybe add a residual. Those steps are the matmul's **epilogue**.
# Written as one graph, the intermediate results are **virtual**: no array is allocated
# for them and the engine may never write them to memory. The reference engine runs a
# chain of pointwise nodes as one fused pass over blocks of the output; a GPU engine can
# run them inside the matmul's own kernel (hipdnn's GPU matmul kernels are still to come,
# see the last cell).
#
# `matmul(A, B)` multiplies over the last two dims: `[..., M, K] @ [..., K, N] -> [..., M, N]`,
# and the batch dims in front broadcast as in NumPy.

# %%
import math
import sys
from pathlib import Path

import numpy as np

try:
    import hipdnn
except ImportError:  # a built checkout that is not installed: use the one we are in
    sys.path.insert(0, str(Path.cwd().parent))
    import hipdnn

print("hipdnn", hipdnn.__version__, "engines:", [e.name for e in hipdnn.engines()])
dt = hipdnn.data_type
rng = np.random.default_rng(10)
erf = np.vectorize(math.erf)


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
    print(f"{name:<22} max |error| {err.max():.2e}  {ratio:.2g} of the bound (tol {tol:g})")
    assert ratio <= 1.0, f"{name}: out of tolerance {tol}"


def f64(a):
    return np.asarray(a, np.float64)

# %% [markdown]
# ## A linear layer: `gelu(x @ W^T + b)`
#
# PyTorch keeps a linear layer's weight as `[out_features, in_features]`. Its transpose
# `w.T` is a NumPy **view** (the same memory, strides swapped); `hipdnn.Graph` takes its
# strides as they are, so nothing is copied. The 2-D weight broadcasts over the batch dim
# of `x`, and the bias `[1, 1, N]` over rows.
#
# **Tolerance.** A fused graph is held to the loosest tolerance of its operations: matmul
# and pointwise are both 1e-5 in float32.

# %%
B, S, K, N = 4, 32, 64, 48
x = rand(B, S, K)
w = rand(N, K)          # [out, in], as torch.nn.Linear stores it
b = rand(1, 1, N)

with hipdnn.Graph() as layer:
    h = layer.matmul(x, w.T)
    layer.gelu(layer.add(h, b))

for t in layer.inputs:
    print(f"{t.get_name():<16} dims {t.get_dim()} strides {t.get_stride()}")
print("engine:", layer.engine_name)

pre = f64(x) @ f64(w).T + f64(b)
check("gelu(x @ W^T + b)", layer(), pre * 0.5 * (1.0 + erf(pre / math.sqrt(2.0))), 1e-5)

# %% [markdown]
# ## A gallery of epilogues
#
# Each activation cuDNN frontend names is a pointwise op here, with the same keywords
# (`negative_slope`, `lower_clip` / `upper_clip` for clipped relus, `swish_beta`, ...).
# One graph per activation, each checked against its float64 definition.

# %%
def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


EPILOGUES = {
    "relu": (lambda g, t: g.relu(t), lambda v: np.maximum(v, 0.0)),
    "relu6 (clipped)": (lambda g, t: g.relu(t, lower_clip=0.0, upper_clip=6.0),
                        lambda v: np.clip(v, 0.0, 6.0)),
    "leaky_relu 0.1": (lambda g, t: g.leaky_relu(t, negative_slope=0.1),
                       lambda v: np.where(v > 0, v, 0.1 * v)),
    "gelu": (lambda g, t: g.gelu(t), lambda v: v * 0.5 * (1.0 + erf(v / math.sqrt(2.0)))),
    "gelu_approx_tanh": (lambda g, t: g.gelu_approx_tanh(t),
                         lambda v: 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi)
                                                            * (v + 0.044715 * v ** 3)))),
    "sigmoid": (lambda g, t: g.sigmoid(t), sigmoid),
    "tanh": (lambda g, t: g.tanh(t), np.tanh),
    "swish (silu)": (lambda g, t: g.swish(t, swish_beta=1.0), lambda v: v * sigmoid(v)),
    "softplus": (lambda g, t: g.softplus(t, softplus_beta=1.0), lambda v: np.log1p(np.exp(v))),
    "elu": (lambda g, t: g.elu(t, elu_alpha=1.0), lambda v: np.where(v > 0, v, np.expm1(v))),
}

x2 = rand(B, S, K)
for name, (op, reference) in EPILOGUES.items():
    with hipdnn.Graph() as g:
        op(g, g.add(g.matmul(x2, w.T), b))
    check(name, g(), reference(f64(x2) @ f64(w).T + f64(b)), 1e-5)

# %% [markdown]
# ## A transformer MLP block, residual included
#
# `y = x + (gelu(x @ W1 + b1) @ W2 + b2)`: two matmuls, each with its epilogue, and the
# hidden activation `[B, S, 4K]` never leaves the graph. `fg.output(...)` also returns
# the pre-activation `h`, to show that any intermediate can be made real when you need
# it (for a backward pass, say).

# %%
H = 4 * K
w1, b1 = rand(K, H) * 0.2, rand(1, 1, H)
w2, b2 = rand(H, K) * 0.2, rand(1, 1, K)

with hipdnn.Graph() as mlp:
    h = mlp.add(mlp.matmul(x, w1), b1)
    y = mlp.add(x, mlp.add(mlp.matmul(mlp.gelu(h), w2), b2))
    mlp.output(y, h)

y_out, h_out = mlp()
h_ref = f64(x) @ f64(w1) + f64(b1)
y_ref = f64(x) + (h_ref * 0.5 * (1.0 + erf(h_ref / math.sqrt(2.0)))) @ f64(w2) + f64(b2)
check("h = x @ W1 + b1", h_out, h_ref, 1e-5)
check("y (block output)", y_out, y_ref, 1e-5)
print(mlp.pygraph)

# %% [markdown]
# ## Half precision and bfloat16
#
# With float16 or bfloat16 inputs and outputs, the multiply still accumulates in float32
# (`compute_data_type`) and the result is rounded once into the output type. The
# tolerances grow with the storage type's precision: matmul 1e-2 in float16, 2e-2 in
# bfloat16. References are computed from the rounded inputs.
#
# NumPy has no bfloat16: a bfloat16 array is a `uint16` array of bit patterns, made with
# `hipdnn.to_bfloat16` (round to nearest even) and read back with `hipdnn.from_bfloat16`.
# Say which `uint16` arrays are bfloat16 with `input(..., data_type=BFLOAT16)`.

# %%
x16, w16, b16 = x.astype(np.float16), w.astype(np.float16), b.astype(np.float16)
with hipdnn.Graph() as g16:
    g16.relu(g16.add(g16.matmul(x16, w16.T), b16))
y16 = g16()
assert y16.dtype == np.float16
check("float16", y16, np.maximum(f64(x16) @ f64(w16).T + f64(b16), 0.0), 1e-2)

xb, wb, bb = (hipdnn.to_bfloat16(a) for a in (x, np.ascontiguousarray(w.T), b))
with hipdnn.Graph(io_data_type=dt.BFLOAT16) as gbf:
    X, W, Bb = (gbf.input(a, data_type=dt.BFLOAT16) for a in (xb, wb, bb))
    gbf.relu(gbf.add(gbf.matmul(X, W), Bb))
ybf = gbf()
assert ybf.dtype == np.uint16                     # bit patterns
xv, wv, bv = (f64(hipdnn.from_bfloat16(a)) for a in (xb, wb, bb))
check("bfloat16", hipdnn.from_bfloat16(ybf), np.maximum(xv @ wv + bv, 0.0), 2e-2)

# %% [markdown]
# ## INT8 with INT32 accumulation: exact
#
# Quantized layers multiply int8 values and accumulate in int32. Each product of two int8
# values is at most 2^14, so every sum here is an exact integer: the check is equality,
# no tolerance. (The reference engine declines a reduction long enough to overflow an
# int32 accumulator, and says so.)

# %%
qa = rng.integers(-128, 128, (16, 512)).astype(np.int8)
qb = rng.integers(-128, 128, (512, 24)).astype(np.int8)
g = hipdnn.pygraph()
A, Bq = g.tensor_like(qa, name="a"), g.tensor_like(qb, name="b")
C = g.matmul(A=A, B=Bq, compute_data_type=dt.INT32, name="qmm")
C.set_output(True).set_data_type(dt.INT32)
g.build([hipdnn.heur_mode.A])
c = np.full(C.get_dim(), -1, np.int32)
g.execute({A: qa, Bq: qb, C: c}, None)
exact = qa.astype(np.int64) @ qb.astype(np.int64)
assert np.array_equal(c, exact)
print("int8 x int8 -> int32: exact,", c.size, "sums, largest |sum|", int(np.abs(exact).max()))

# %% [markdown]
# ## Which engine runs a matmul
#
# Every engine is asked. Today the GPU engine `hip` runs memory-bound graphs and declines
# matmuls with its reason (its compute-bound kernels come later), so matmul graphs run on
# `reference_cpu`; on a machine with the GPU engine its reason shows here.

# %%
for engine, reason in layer.pygraph.support_report():
    print(f"{engine}: {'accepts' if reason is None else reason}")
assert layer.engine_name == "reference_cpu"
