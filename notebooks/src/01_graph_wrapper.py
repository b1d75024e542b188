# %% [markdown]
# # 01 · `hipdnn.Graph`: NumPy arrays in, NumPy arrays out
#
# `hipdnn.pygraph` (notebook 00) is cuDNN frontend's API: declare tensors, mark outputs,
# build, fill a variant pack, allocate a workspace, execute. `hipdnn.Graph` does the same
# with less ceremony:
#
# * operations take **arrays** directly: each array becomes a graph input (dims, strides
#   and data type taken from it), a Python float becomes a scalar;
# * the graph **builds when the `with` block exits**;
# * **calling** the graph allocates outputs and workspace and returns the output arrays.
#
# It is also cuDNN frontend's `cudnn.Graph` wrapper, so its naming of inputs and outputs
# (`"conv2d::image"`) works here too (last section).

# %%
import math
import sys
import time
from pathlib import Path

import numpy as np

try:
    import hipdnn
except ImportError:  # a built checkout that is not installed: use the one we are in
    sys.path.insert(0, str(Path.cwd().parent))
    import hipdnn

print("hipdnn", hipdnn.__version__, "from", Path(hipdnn.__file__).parent)

rng = np.random.default_rng(1)


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
    print(f"{name}: max |error| {err.max():.2e}, {ratio:.2g} of the allowed bound (tol {tol:g})")
    assert ratio <= 1.0, f"{name}: out of tolerance {tol}"


def conv2d_reference(x, w, pad):
    """float64 NCHW x KCRS cross-correlation, stride 1."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, _, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    p, q = h + 2 * pad - r + 1, wd + 2 * pad - s + 1
    out = np.zeros((n, k, p, q))
    for i in range(r):
        for j in range(s):
            out += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + p, j:j + q], w[:, :, i, j])
    return out

# %% [markdown]
# ## conv → bias → relu in three lines
#
# Inside the `with` block each operation returns a (virtual) tensor that the next one
# takes. The block's exit builds the graph: outputs are those marked with `fg.output(...)`,
# or else the last operation's results.

# %%
x = rand(8, 16, 12, 12)
w = rand(32, 16, 3, 3)
b = rand(1, 32, 1, 1)

with hipdnn.Graph() as fg:
    y = fg.relu(fg.add(fg.conv_fprop(x, w, padding=[1, 1]), b))

print("engine:", fg.engine_name)
print(fg)

# %% [markdown]
# ### Inputs and outputs
#
# `fg.inputs` lists the graph inputs in the order a call takes them: the order in which the
# arrays were first used. Unnamed nodes are named `"<op>.<count>"`, and their tensors
# `"<node>::<keyword or position>"` for inputs and `"<node>::<result>"` for results, as
# cuDNN frontend's wrapper names them.

# %%
for t in fg.inputs:
    print("input ", t.get_name(), t.get_dim())
for t in fg.outputs:
    print("output", t.get_name(), t.get_dim(), t.get_data_type().name)
assert [t.get_dim() for t in fg.inputs] == [list(x.shape), list(w.shape), list(b.shape)]

# %% [markdown]
# ### Calling it
#
# `fg()` with no arguments runs on the arrays given while building; `fg(x, w, b)` on new
# ones. Each call returns a **new** output array.

# %%
def reference(x, w, b):
    return np.maximum(conv2d_reference(x, w, 1) + b.astype(np.float64), 0.0)


out = fg()
check("fg()", out, reference(x, w, b), tol=1e-5)      # conv's fp32 tolerance

x2, w2, b2 = rand(8, 16, 12, 12), rand(32, 16, 3, 3), rand(1, 32, 1, 1)
out2 = fg(x2, w2, b2)
assert out2 is not out
check("fg(x2, w2, b2)", out2, reference(x2, w2, b2), tol=1e-5)

# %% [markdown]
# ### Reuse: build once, call many times
#
# The build (validation, shape inference, asking every engine, the plan) happens once. A
# call only checks the arrays against the plan, allocates the output and runs it: beyond
# the convolution itself, a few microseconds. Build graphs outside loops and call them
# inside.

# %%
t0 = time.perf_counter()
with hipdnn.Graph() as fg_again:
    fg_again.relu(fg_again.add(fg_again.conv_fprop(x, w, padding=[1, 1]), b))
build_s = time.perf_counter() - t0

t0 = time.perf_counter()
for _ in range(10):
    fg(x2, w2, b2)
call_s = (time.perf_counter() - t0) / 10
print(f"build: {build_s * 1e3:.2f} ms   one call: {call_s * 1e3:.2f} ms")

# %% [markdown]
# A call with the wrong number of arrays says which ones it expects:

# %%
try:
    fg(x2, w2)
except TypeError as e:
    print("TypeError:", e)
    assert "takes 3 input array(s)" in str(e)
else:
    raise AssertionError("a call with two arrays for three inputs was accepted")

# %% [markdown]
# ## The same array twice is one input; floats are scalars
#
# `fg.mul(x, x)` makes **one** input (the same array object), and a Python float becomes a
# pass-by-value scalar carried in the graph, not an input.

# %%
with hipdnn.Graph() as sq:
    sq.add(sq.mul(x, x), 0.5)

assert len(sq.inputs) == 1
x3 = rand(*x.shape)
check("x*x + 0.5", sq(x3), x3.astype(np.float64) ** 2 + 0.5, tol=1e-5)   # pointwise fp32

# %% [markdown]
# ## Several outputs
#
# `fg.output(a, b)` marks results as outputs, in the order calls return them (a tuple).
# Everything else stays virtual: here `x * s` is computed once and feeds both results
# without ever being written to memory.

# %%
s = rand(1, 16, 1, 1)
with hipdnn.Graph() as two:
    xs = two.mul(x, s)
    two.output(two.sigmoid(xs), two.tanh(xs))

sig, th = two()
ref_xs = x.astype(np.float64) * s
check("sigmoid", sig, 1.0 / (1.0 + np.exp(-ref_xs)), tol=1e-5)
check("tanh", th, np.tanh(ref_xs), tol=1e-5)

# %% [markdown]
# ## Data types follow the inputs
#
# Without `io_data_type`, outputs take the input arrays' common type: a float16 chain
# returns float16 (computed in float32, the default `compute_data_type`). Its tolerance is
# float16's (1e-3 for pointwise operations), against a reference computed from the
# float16 inputs.

# %%
x16 = rand(4, 64, dtype=np.float16)
with hipdnn.Graph() as h:
    h.gelu(h.mul(x16, x16))

y16 = h()
assert y16.dtype == np.float16
v = x16.astype(np.float64) ** 2
gelu = v * 0.5 * (1.0 + np.vectorize(math.erf)(v / math.sqrt(2.0)))   # x * Phi(x), exact
check("gelu(x*x) fp16", y16, gelu, tol=1e-3)

# %% [markdown]
# ## cuDNN frontend's `cudnn.Graph` names
#
# Code written for cuDNN frontend's wrapper names the positional order up front with
# `inputs=` / `outputs=` (`"<node>::<keyword>"`, or a tensor's own name), and may call the
# graph with a dict: outputs not given are allocated and added to it.

# %%
with hipdnn.Graph(inputs=["conv2d::image", "conv2d::weight"], outputs=["conv_out"]) as cg:
    Y = cg.conv_fprop(image=x, weight=w, padding=[1, 1], name="conv2d")
    Y.set_output(True).set_name("conv_out")

print([t.get_name() for t in cg.inputs], "->", [t.get_name() for t in cg.outputs])
check("positional", cg(x2, w2), conv2d_reference(x2, w2, 1), tol=1e-5)

result = cg({"conv2d::image": x2, "conv2d::weight": w2})
print(sorted(result))
check("dict call", result["conv2d::Y"], conv2d_reference(x2, w2, 1), tol=1e-5)

# %% [markdown]
# ## Underneath
#
# `fg.pygraph` is the `hipdnn.pygraph` the wrapper built, with everything notebook 00
# showed: `get_engine_name()`, `support_report()`, `serialize()`.

# %%
pg = fg.pygraph
print(pg.support_report(), pg.get_workspace_size(), "bytes of workspace")
print(len(fg.serialize()), "bytes of serialized plan")
