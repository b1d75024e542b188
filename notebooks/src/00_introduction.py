# %% [markdown]
# # 00 · Introduction: a convolution as a hipdnn graph
#
# hipdnn runs deep-learning operations described as **graphs**: you declare tensors and the
# operations between them, the library checks the graph, infers every shape, asks its
# **engines** which of them can run it, builds a **plan** with the one it picks, and runs
# the plan on your arrays.
#
# This notebook builds the smallest useful graph, one 2-D convolution, with
# `hipdnn.pygraph`: the API that mirrors cuDNN frontend's `cudnn.pygraph` (same names,
# keywords and build steps). It runs on NumPy arrays on any machine: the `reference_cpu`
# engine runs every operation on the CPU. Every result is checked against a float64 NumPy
# reference, with a tolerance stated up front.

# %%
import sys
from pathlib import Path

import numpy as np

try:
    import hipdnn
except ImportError:  # a built checkout that is not installed: use the one we are in
    sys.path.insert(0, str(Path.cwd().parent))
    import hipdnn

print("hipdnn", hipdnn.__version__, "from", Path(hipdnn.__file__).parent)
print("engines:", [e.name for e in hipdnn.engines()])

# %% [markdown]
# ## Inputs
#
# Random inputs, never zeros: a kernel that forgot to read an element, or read the wrong
# one, would go unnoticed on zeros. Magnitudes in [0.1, 1) with random signs.

# %%
rng = np.random.default_rng(0)


def rand(*shape, dtype=np.float32):
    """Uniform magnitudes in [0.1, 1) with random signs: never zero, never tiny."""
    values = rng.uniform(0.1, 1.0, shape) * rng.choice([-1.0, 1.0], shape)
    return values.astype(dtype)


N, C, H, W = 4, 3, 16, 16   # image: batch, channels, height, width
K, R, S = 8, 3, 3           # filter: output channels, kernel height, kernel width
x = rand(N, C, H, W)
w = rand(K, C, R, S)

# %% [markdown]
# ## The graph
#
# A graph has three data types: `io_data_type` for the tensors you pass in and get back,
# `intermediate_data_type` for tensors that only live inside the graph, and
# `compute_data_type` for the arithmetic.
#
# Tensors are declared by dims and strides (in **elements**, not bytes as NumPy gives
# them), or copied from an array with `tensor_like`.

# %%
dt = hipdnn.data_type
g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                   compute_data_type=dt.FLOAT, name="intro")

X = g.tensor(name="X", dim=[N, C, H, W], stride=[C * H * W, H * W, W, 1])
Wt = g.tensor_like(w, name="W")          # dims, strides and float32 from the array
print(X)
print(Wt)

Y = g.conv_fprop(image=X, weight=Wt, padding=[1, 1], stride=[1, 1], dilation=[1, 1],
                 name="conv")
print(Y)

# %% [markdown]
# ### Virtual and real tensors
#
# Every operation returns a new **virtual** tensor: a value inside the graph that is never
# handed to you, so an engine may keep it in registers or fuse it away. Its dims are not
# known yet (`[?]`): the backend infers them when the graph is built.
#
# A tensor you want back must be made **real** (non-virtual) by marking it as an output;
# every real tensor needs an array at execute time.

# %%
assert Y.get_is_virtual()
Y.set_output(True)
assert not Y.get_is_virtual()
print(Y)

# %% [markdown]
# ## Building, step by step
#
# The same steps as cuDNN frontend (`g.build([hipdnn.heur_mode.A])` runs them all):
#
# 1. `validate()` / `build_operation_graph()`: the backend checks the graph and infers
#    every dim, stride and data type left unset;
# 2. `create_execution_plans(modes)`: asks every engine whether it can run the graph, and
#    ranks those that can;
# 3. `check_support()`: raises if no engine can;
# 4. `build_plans()`: builds the plan that `execute()` will run.

# %%
g.validate()
g.build_operation_graph()
print("Y inferred:", Y.get_dim(), "strides", Y.get_stride())
assert Y.get_dim() == [N, K, H, W]      # padding 1 keeps a 3x3 convolution's size

g.create_execution_plans([hipdnn.heur_mode.A, hipdnn.heur_mode.FALLBACK])
print("support report:", g.support_report())   # (engine, None or why it declined)
g.check_support()
g.build_plans()
print("engine:", g.get_engine_name(), "| workspace:", g.get_workspace_size(), "bytes")
print(g)

# %% [markdown]
# ## The picture
#
# A graph draws itself in Jupyter (graphviz's `dot`; without it you see the text above):
# ops in boxes, tensors with their dims and data types, virtual tensors dashed and, once
# built, the engine and one cluster per kernel it runs. `get_kernel_groups()` is the
# engine's own account of which nodes each kernel runs, and `g.to_dot()` the Graphviz
# source (`python -m hipdnn draw graph.bin -o graph.svg` draws a serialized graph).

# %%
groups = g.get_kernel_groups()
for k in groups:
    print(f"kernel {k.kernel!r}: {', '.join(k.nodes)}")
assert sum(len(k.nodes) for k in groups) >= 1
assert "conv_fprop" in g.to_dot()
g

# %% [markdown]
# ## Running it
#
# `execute` takes a **variant pack**, `{tensor: array}`, and a workspace of at least
# `get_workspace_size()` bytes. Arrays are used in place, never copied; each is checked
# against its tensor (data type, shape, strides) first.
#
# The output starts as NaN ("poisoned"), so an element the engine failed to write shows up
# in the check below instead of passing by luck.

# %%
y = np.full(Y.get_dim(), np.nan, np.float32)
x_before, w_before = x.copy(), w.copy()
workspace = np.empty(g.get_workspace_size(), np.uint8)
g.execute({X: x, Wt: w, Y: y}, workspace)
assert np.array_equal(x, x_before) and np.array_equal(w, w_before), "inputs were modified"

# %% [markdown]
# ## The reference, and what "close" means
#
# The reference is computed in float64 from the same float32 values that went in. A
# convolution (as in every deep-learning library, a cross-correlation) of a padded image
# is a sum over the kernel's taps of shifted images times one filter column each.
#
# **Tolerances.** hipdnn's tests pass an element when
# `|out - ref| <= tol + tol * |ref|` (absolute and relative tolerance equal), with `tol`
# per operation and storage type (docs/architecture.md, "Tolerances"): 1e-5 for a float32
# convolution, 1e-2 for float16, 5e-2 for bfloat16. The reference engine computes in float64
# and rounds once into the output, so float32 results land far inside their bound.

# %%
def conv2d_reference(x, w, padding, stride=(1, 1), dilation=(1, 1)):
    """float64 NCHW x KCRS cross-correlation."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    (ph, pw), (sh, sw), (dh, dw) = padding, stride, dilation
    p = (h + 2 * ph - dh * (r - 1) - 1) // sh + 1
    q = (wd + 2 * pw - dw * (s - 1) - 1) // sw + 1
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    out = np.zeros((n, k, p, q))
    for i in range(r):
        for j in range(s):
            patch = xp[:, :, i * dh:i * dh + sh * (p - 1) + 1:sh,
                       j * dw:j * dw + sw * (q - 1) + 1:sw]
            out += np.einsum("nchw,kc->nkhw", patch, w[:, :, i, j])
    return out


def check(name, got, ref, tol):
    """Every element finite and within tol + tol * |ref| of the float64 reference."""
    got = np.asarray(got, np.float64)
    assert got.shape == ref.shape, f"{name}: shape {got.shape}, reference {ref.shape}"
    assert np.isfinite(got).all(), f"{name}: elements not finite (never written?)"
    err = np.abs(got - ref)
    ratio = float((err / (tol + tol * np.abs(ref))).max())
    print(f"{name}: max |error| {err.max():.2e}, {ratio:.2g} of the allowed bound (tol {tol:g})")
    assert ratio <= 1.0, f"{name}: out of tolerance {tol}"


check("conv fp32", y, conv2d_reference(x, w, padding=(1, 1)), tol=1e-5)

# %% [markdown]
# ## A plan is built once and run many times
#
# Building is the expensive part (checks, inference, engine choice). The plan then runs on
# any arrays of the same dims, strides and types: new data, same graph.

# %%
for trial in range(3):
    x2, w2 = rand(N, C, H, W), rand(K, C, R, S)
    y2 = np.full(Y.get_dim(), np.nan, np.float32)
    g.execute({X: x2, Wt: w2, Y: y2}, workspace)
    check(f"run {trial}", y2, conv2d_reference(x2, w2, padding=(1, 1)), tol=1e-5)

# %% [markdown]
# An array that does not match its tensor is refused before anything runs, with a message
# naming the tensor:

# %%
try:
    g.execute({X: x.astype(np.float16), Wt: w, Y: y}, workspace)
except ValueError as e:
    print(type(e).__name__ + ":", e)
    assert "'X'" in str(e)
else:
    raise AssertionError("a float16 array for a float32 tensor was accepted")

# %% [markdown]
# ## Strided convolution in float16
#
# The same steps with `io_data_type=HALF` (compute stays float32), a stride of 2 and a
# dilation of 2. The reference is computed from the **float16-rounded** inputs, so the only
# error measured is the computation's and the output's rounding, held to float16's
# tolerance of 1e-2.

# %%
x16, w16 = rand(N, C, H, W, dtype=np.float16), rand(K, C, R, S, dtype=np.float16)
g16 = hipdnn.pygraph(io_data_type=dt.HALF, intermediate_data_type=dt.FLOAT,
                     compute_data_type=dt.FLOAT)
X16, W16 = g16.tensor_like(x16, name="x"), g16.tensor_like(w16, name="w")
Y16 = g16.conv_fprop(image=X16, weight=W16, padding=[2, 2], stride=[2, 2], dilation=[2, 2])
Y16.set_output(True)
g16.build([hipdnn.heur_mode.A])
y16 = np.full(Y16.get_dim(), np.nan, np.float16)
g16.execute({X16: x16, W16: w16, Y16: y16}, np.empty(g16.get_workspace_size(), np.uint8))
print("Y:", Y16.get_dim(), Y16.get_data_type().name)
check("conv fp16", y16,
      conv2d_reference(x16, w16, padding=(2, 2), stride=(2, 2), dilation=(2, 2)), tol=1e-2)

# %% [markdown]
# ## Next
#
# * `01_graph_wrapper`: `hipdnn.Graph`, the same graphs with NumPy arrays in and out and
#   no variant packs;
# * `02_plugins_and_engines`: which engines there are and why one declines a graph;
# * `03_porting_from_cudnn_frontend`: cuDNN frontend code running on hipdnn.
