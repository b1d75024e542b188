# %% [markdown]
# # 03 · Porting from cuDNN frontend
#
# `hipdnn.pygraph` keeps cuDNN frontend's Python names, keywords and build steps, and
# `hipdnn.Graph` is its `cudnn.Graph` wrapper. Code written for `cudnn` ports by changing
# two things:
#
# 1. the import: `import hipdnn as cudnn`;
# 2. the data: NumPy arrays where the code made torch tensors (the engines that run every
#    operation run on host memory; notebook 40 shows device memory).
#
# Everything between creating the data and reading the result stays as it was.
#
# ## A cuDNN frontend program
#
# Here is a program in the style of cuDNN frontend's own Python samples: a batched matmul
# with a bias and a relu, float16 in and out, float32 compute, every build step spelled out.
# It needs an NVIDIA GPU, cuDNN and PyTorch:
#
# ```python
# import cudnn
# import torch
#
# torch.manual_seed(1)
# handle = cudnn.create_handle()
#
# batch, m, n, k = 4, 64, 32, 128
# A_data = torch.randn(batch, m, k, device="cuda", dtype=torch.float16)
# B_data = torch.randn(batch, k, n, device="cuda", dtype=torch.float16)
# bias_data = torch.randn(1, 1, n, device="cuda", dtype=torch.float16)
#
# graph = cudnn.pygraph(handle=handle, name="matmul_bias_relu",
#                       io_data_type=cudnn.data_type.HALF,
#                       intermediate_data_type=cudnn.data_type.FLOAT,
#                       compute_data_type=cudnn.data_type.FLOAT)
# A = graph.tensor_like(A_data)
# B = graph.tensor_like(B_data)
# bias = graph.tensor_like(bias_data)
# C = graph.matmul(name="matmul", A=A, B=B)
# C_bias = graph.bias(name="bias", input=C, bias=bias)
# out = graph.relu(name="relu", input=C_bias)
# out.set_output(True).set_data_type(cudnn.data_type.HALF)
#
# graph.validate()
# graph.build_operation_graph()
# graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
# graph.check_support()
# graph.build_plans()
#
# out_data = torch.empty(batch, m, n, device="cuda", dtype=torch.float16)
# workspace = torch.empty(graph.get_workspace_size(), device="cuda", dtype=torch.uint8)
# graph.execute({A: A_data, B: B_data, bias: bias_data, out: out_data}, workspace,
#               handle=handle)
# torch.cuda.synchronize()
#
# reference = torch.relu(A_data.float() @ B_data.float() + bias_data.float())
# torch.testing.assert_close(out_data.float(), reference, atol=1e-2, rtol=1e-2)
# ```
#
# ## The same program on hipdnn
#
# The import changes, the lines that make torch tensors make NumPy arrays (each marked
# `# torch:`), and the check at the end uses NumPy. The graph, its build steps and the
# execute call are the lines above, character for character.
#
# (The first cell only makes sure `import hipdnn` works from a built checkout that is not
# installed, as the other notebooks do in their first cell.)

# %%
import sys
from pathlib import Path

try:
    import hipdnn  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path.cwd().parent))

# %%
import hipdnn as cudnn
import numpy as np

rng = np.random.default_rng(1)                      # torch: torch.manual_seed(1)
handle = cudnn.create_handle()

batch, m, n, k = 4, 64, 32, 128
A_data = rng.standard_normal((batch, m, k)).astype(np.float16)     # torch: torch.randn
B_data = rng.standard_normal((batch, k, n)).astype(np.float16)     # torch: torch.randn
bias_data = rng.standard_normal((1, 1, n)).astype(np.float16)      # torch: torch.randn

graph = cudnn.pygraph(handle=handle, name="matmul_bias_relu",
                      io_data_type=cudnn.data_type.HALF,
                      intermediate_data_type=cudnn.data_type.FLOAT,
                      compute_data_type=cudnn.data_type.FLOAT)
A = graph.tensor_like(A_data)
B = graph.tensor_like(B_data)
bias = graph.tensor_like(bias_data)
C = graph.matmul(name="matmul", A=A, B=B)
C_bias = graph.bias(name="bias", input=C, bias=bias)
out = graph.relu(name="relu", input=C_bias)
out.set_output(True).set_data_type(cudnn.data_type.HALF)

graph.validate()
graph.build_operation_graph()
graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
graph.check_support()
graph.build_plans()

out_data = np.full((batch, m, n), np.nan, np.float16)             # torch: torch.empty
workspace = np.empty(graph.get_workspace_size(), np.uint8)         # torch: torch.empty
graph.execute({A: A_data, B: B_data, bias: bias_data, out: out_data}, workspace,
              handle=handle)

reference = np.maximum(A_data.astype(np.float64) @ B_data.astype(np.float64)
                       + bias_data.astype(np.float64), 0.0)
np.testing.assert_allclose(out_data.astype(np.float64), reference, atol=1e-2, rtol=1e-2)
print("engine:", graph.get_engine_name(), "| max |error|:",
      float(np.abs(out_data - reference).max()))

# %% [markdown]
# Two details of the port:
#
# * `torch.cuda.synchronize()` is gone: a host engine has finished when `execute`
#   returns. On a GPU plan, hipdnn enqueues on the handle's stream like cuDNN does.
# * The output starts as NaN rather than uninitialised memory: `assert_allclose` would
#   catch an element never written, and the tolerance (1e-2 absolute and relative, the
#   sample's own) is the float16 matmul tolerance of hipdnn's tests.
#
# `graph.execute` takes tensors or their uids as keys, exactly as cuDNN frontend's does:

# %%
uid_pack = {A.get_uid(): A_data, B.get_uid(): B_data, bias.get_uid(): bias_data,
            out.get_uid(): np.full_like(out_data, np.nan)}
graph.execute(uid_pack, workspace, handle=handle)
assert np.array_equal(uid_pack[out.get_uid()], out_data)     # same plan, same bits
cudnn.destroy_handle(handle)

# %% [markdown]
# ## cuDNN frontend's helpers: `graph`, `jit`, `graph_cache`
#
# cuDNN frontend's samples often build graphs inside a function decorated with
# `cudnn.jit` (build the graph the function returns, give back its uids) and
# `cudnn.graph_cache` (one graph per key, built once). Both are here under the same names,
# and `cudnn.graph(handle)` is the same context manager (io float16 by default, as
# there). Again only the data changes.

# %%
handle = cudnn.create_handle()


@cudnn.jit(heur_modes=[cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
@cudnn.graph_cache(key_fn=lambda x, w: (x.shape, w.shape, x.dtype))
def conv_relu(x, w):
    with cudnn.graph(handle) as (g, _):
        X = g.tensor_like(x)
        W = g.tensor_like(w)
        Y = g.relu(input=g.conv_fprop(image=X, weight=W, padding=[1, 1], stride=[1, 1],
                                      dilation=[1, 1]))
        Y.set_output(True)
    return g, [X, W, Y]


def conv_reference(x, w):
    x, w = x.astype(np.float64), w.astype(np.float64)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    h, wd = x.shape[2], x.shape[3]
    y = sum(np.einsum("nchw,kc->nkhw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
            for i in range(3) for j in range(3))
    return np.maximum(y, 0.0)


for step in range(3):  # the same shapes every step: one graph, built once
    x = rng.standard_normal((2, 8, 10, 10)).astype(np.float16)
    w = rng.standard_normal((16, 8, 3, 3)).astype(np.float16)
    g, (x_uid, w_uid, y_uid) = conv_relu(x, w)
    y = np.full((2, 16, 10, 10), np.nan, np.float16)
    g.execute({x_uid: x, w_uid: w, y_uid: y}, np.empty(g.get_workspace_size(), np.uint8))
    np.testing.assert_allclose(y.astype(np.float64), conv_reference(x, w), rtol=1e-2,
                               atol=1e-2)
    print(f"step {step}: graph {id(g):#x}, cached graphs: {len(conv_relu.__wrapped__.cache)}")

assert len(conv_relu.__wrapped__.cache) == 1
cudnn.destroy_handle(handle)

# %% [markdown]
# ## Version gates and missing operations
#
# cuDNN frontend code often branches on the cuDNN version. `cudnn.backend_version()` is
# the cuDNN feature level hipdnn implements (9.5.0), so gates take the branch hipdnn can
# run; hipdnn's own version is `hipdnn.__version__`.
#
# An operation hipdnn does not have stops with an `AttributeError` naming it, at the line
# that calls it, rather than failing later in some other way. (`transpose`, say: a
# `reshape` whose result has the input's dims and strides permuted is the same view.)

# %%
print("cuDNN feature level:", cudnn.backend_version(), cudnn.backend_version_string(),
      "| hipdnn", cudnn.__version__)
if cudnn.backend_version() >= 90500:
    print("taking the >= 9.5.0 branch")

try:
    cudnn.pygraph().transpose
except AttributeError as e:
    print("AttributeError:", e)

# %% [markdown]
# Where the two differ (torch device tensors, knobs, behaviour notes, operations not yet
# here) is listed in `docs/porting_from_cudnn_frontend.md`.
