"""cuDNN frontend's ``cudnn.ops.causal_conv1d`` (its samples 60 and 61) in hipdnn:
``hipdnn.ops.causal_conv1d`` and ``causal_conv1d_backward`` on NumPy arrays, run on the
reference engine by the graphs of hipdnn/ops/_causal_conv1d_graphs.py (a grouped causal
convolution, bias, SiLU; its gradients), against float64 NumPy at DESIGN tolerances:
kernel sizes 2 to 4, both activations, sequences of 1 and shorter than the kernel, a
strided x, bias None; outputs poisoned first, inputs unchanged; one cached graph per
problem; cuDNN frontend's argument errors; importing and running without torch.
tests/test_gpu_causal_conv1d.py runs DeviceArrays on the GPU engine and torch tensors."""
import importlib

import numpy as np
import pytest

import hipdnn
from conftest import assert_close, python
from hipdnn.ops import _causal_conv1d_graphs as graphs
from tolerances import graph_tolerance

# the module (hipdnn.ops.causal_conv1d, the attribute, is the function)
module = importlib.import_module("hipdnn.ops.causal_conv1d")
TOL = {np.float32: "fp32", np.float16: "fp16"}


@pytest.fixture(autouse=True)
def fresh_caches():
    graphs._fprop_cache.clear()
    graphs._bprop_cache.clear()


# ---- float64 references ------------------------------------------------------------------

def pre_activation(x, w, b):
    """z[b, d, t] = bias[d] + sum_k w[d, k] x[b, d, t - K + 1 + k], x zero before t = 0."""
    x, w, b = (np.asarray(a, np.float64) for a in (x, w, b))
    k, t = w.shape[1], x.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (k - 1, 0)))
    return b[None, :, None] + sum(w[None, :, j, None] * xp[:, :, j:j + t] for j in range(k))


def reference_forward(x, w, b, activation):
    z = pre_activation(x, w, b)
    return z / (1 + np.exp(-z)) if activation == "silu" else z


def reference_backward(x, w, b, dy, activation):
    """(dx, dw, db) in float64: dz = dy * act'(z); dx[t] = sum_k w[k] dz[t + K - 1 - k];
    dw[d, k] = sum over b, t of dz[t] x[t - K + 1 + k]; db = sum of dz."""
    x, w, dy = (np.asarray(a, np.float64) for a in (x, w, dy))
    dz = dy
    if activation == "silu":
        s = 1 / (1 + np.exp(-pre_activation(x, w, b)))
        dz = dy * s * (1 + pre_activation(x, w, b) * (1 - s))
    k, t = w.shape[1], x.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (k - 1, 0)))
    dzp = np.pad(dz, ((0, 0), (0, 0), (0, k - 1)))
    dx = sum(w[None, :, j, None] * dzp[:, :, k - 1 - j:k - 1 - j + t] for j in range(k))
    dw = np.stack([(dz * xp[:, :, j:j + t]).sum(axis=(0, 2)) for j in range(k)], axis=1)
    return dx, dw, dz.sum(axis=(0, 2))


def check_forward(y, x, w, b, activation, dtype):
    ops = ["conv_fprop", "pointwise"]
    assert_close(y, reference_forward(x, w, b, activation), graph_tolerance(ops, dtype), "y")


def check_backward(grads, x, w, b, dy, activation, dtype):
    pointwise = ["pointwise"] if activation == "silu" else []
    for got, want, name, op in zip(grads, reference_backward(x, w, b, dy, activation),
                                   ("dx", "dweight", "dbias"),
                                   ("conv_dgrad", "conv_wgrad", "reduction")):
        assert_close(got, want, graph_tolerance([op] + pointwise, dtype), name)


def operands(rng, batch, dim, seq_len, k, dtype=np.float32):
    return [rng.standard_normal(s).astype(dtype)
            for s in ((batch, dim, seq_len), (dim, k), (dim,), (batch, dim, seq_len))]


@pytest.fixture
def poisoned(monkeypatch):
    """The operator's outputs allocated NaN-filled: any element left unwritten fails."""
    def empty(like, shape, kind):
        assert kind == "numpy"
        return np.full(shape, np.nan, like.dtype)
    monkeypatch.setattr(module, "_empty", empty)


# ---- forward and backward on the reference engine ----------------------------------------

SHAPES = {"short": (2, 5, 9), "seq_len_1": (3, 4, 1), "shorter_than_kernel": (1, 6, 2),
          "wide": (2, 24, 33)}


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["fp32", "fp16"])
@pytest.mark.parametrize("activation", ["silu", "identity"])
@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_forward_and_backward_match_float64(rng, poisoned, shape, k, activation, dtype):
    x, w, b, dy = operands(rng, *SHAPES[shape], k, dtype)
    before = [a.copy() for a in (x, w, b, dy)]
    y = hipdnn.ops.causal_conv1d(x, w, b, activation=activation)
    assert isinstance(y, np.ndarray) and y.dtype == dtype and y.shape == x.shape
    check_forward(y, x, w, b, activation, TOL[dtype])
    grads = hipdnn.ops.causal_conv1d_backward(x, w, b, dy, activation=activation)
    assert [(g.shape, g.dtype) for g in grads] == [(x.shape, dtype), (w.shape, dtype),
                                                   (b.shape, dtype)]
    check_backward(grads, x, w, b, dy, activation, TOL[dtype])
    for a, was in zip((x, w, b, dy), before):
        assert np.array_equal(a, was)
    entries = list(graphs._fprop_cache.values()) + list(graphs._bprop_cache.values())
    assert len(entries) == 2
    assert all(e.graph.get_memory_space() == hipdnn.memory_space.HOST for e in entries)


def test_a_strided_x_and_weight_are_read_in_place(rng, poisoned):
    # x a [batch, seq_len, dim] allocation seen as [batch, dim, seq_len], weight a
    # [K, dim] one seen as [dim, K]: the graphs take their strides, nothing is copied
    x = rng.standard_normal((2, 11, 6)).astype(np.float32).transpose(0, 2, 1)
    w = rng.standard_normal((3, 6)).astype(np.float32).T
    b, dy = rng.standard_normal(6).astype(np.float32), rng.standard_normal(x.shape)
    dy = dy.astype(np.float32)
    y = hipdnn.ops.causal_conv1d(x, w, b, "silu")
    check_forward(y, x, w, b, "silu", "fp32")
    check_backward(hipdnn.ops.causal_conv1d_backward(x, w, b, dy, "silu"), x, w, b, dy,
                   "silu", "fp32")
    (_, key), = [(k, k) for k in graphs._fprop_cache]
    assert ("x", ((2, 6, 11), (66, 1, 6), "<f4", "host")) in key[1]


def test_cudnn_frontends_defaults_bias_none_and_identity(rng):
    # cuDNN frontend: bias=None is zeros, activation defaults to "identity"
    x, w, b, dy = operands(rng, 2, 4, 7, 3)
    y = hipdnn.ops.causal_conv1d(x, w)
    check_forward(y, x, w, np.zeros(4), "identity", "fp32")
    dx, dw, db = hipdnn.ops.causal_conv1d_backward(x, w, None, dy, activation="silu")
    check_backward((dx, dw, db), x, w, np.zeros(4), dy, "silu", "fp32")


def test_one_graph_per_problem_reused_across_calls(rng):
    x, w, b, dy = operands(rng, 2, 4, 7, 3)
    hipdnn.ops.causal_conv1d(x, w, b, "silu")
    x2, w2, b2, _ = operands(rng, 2, 4, 7, 3)
    y2 = hipdnn.ops.causal_conv1d(x2, w2, b2, "silu")
    check_forward(y2, x2, w2, b2, "silu", "fp32")  # the cached graph, on new arrays
    assert len(graphs._fprop_cache) == 1
    hipdnn.ops.causal_conv1d(x, w, b, "identity")
    hipdnn.ops.causal_conv1d(x, w[:, :2], b, "silu")
    assert len(graphs._fprop_cache) == 3
    hipdnn.ops.causal_conv1d_backward(x, w, b, dy, "identity")
    hipdnn.ops.causal_conv1d_backward(x2, w2, b2, dy, "identity")
    assert len(graphs._bprop_cache) == 1 and module._fprop_cache is graphs._fprop_cache


# ---- arguments -----------------------------------------------------------------------------

def test_bad_arguments_raise_cudnn_frontends_errors():
    x, w, b = np.zeros((2, 8, 16), np.float32), np.zeros((8, 4), np.float32), \
        np.zeros(8, np.float32)
    op, bwd = hipdnn.ops.causal_conv1d, hipdnn.ops.causal_conv1d_backward
    with pytest.raises(ValueError, match="Unsupported activation 'relu'"):
        op(x, w, b, activation="relu")
    with pytest.raises(ValueError, match=r"Expected x\(3D\), weight\(2D\), bias\(1D\)"):
        op(x[0], w, b)
    with pytest.raises(ValueError, match="Channel mismatch: x has dim=8"):
        op(x, w[:4], b)
    with pytest.raises(ValueError, match="Bias mismatch: x has dim=8"):
        op(x, w, b[:4])
    with pytest.raises(TypeError, match="Dtype mismatch: x.dtype=float32, weight.dtype="
                                        "float16"):
        op(x, w.astype(np.float16), b)
    with pytest.raises(ValueError, match="Unsupported dtype float64"):
        op(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64))
    with pytest.raises(TypeError, match="must be a tensor, got list"):
        op([[0.0]], w, b)
    with pytest.raises(TypeError, match="takes torch tensors, hipdnn.DeviceArrays or NumPy "
                                        "arrays, got _Fake"):
        op(x, _Fake(), b)
    with pytest.raises(ValueError, match="Shape mismatch: dy has shape"):
        bwd(x, w, b, x[:, :, :4], "silu")
    with pytest.raises(ValueError, match="Dtype mismatch: grad_out.dtype=float16"):
        bwd(x, w, b, x.astype(np.float16), "silu")
    with pytest.raises(ValueError, match="Unsupported activation 'gelu'"):
        bwd(x, w, b, x, "gelu")


class _Fake:
    """Something with a shape that is no array hipdnn takes."""
    shape = (8, 4)


def test_the_module_imports_and_runs_without_torch():
    out = python("import sys\n"
            "sys.modules['torch'] = None  # as if not installed\n"
            "import numpy as np, hipdnn\n"
            "import hipdnn.ops\n"
            "assert sys.modules['hipdnn.ops.causal_conv1d']._torch_ops is None\n"
            "y = hipdnn.ops.causal_conv1d(np.ones((1, 2, 3), np.float32), "
            "np.ones((2, 2), np.float32), np.zeros(2, np.float32))\n"
            "print(y.tolist(), hipdnn.ops.__all__)\n")
    assert out.strip() == ("[[[1.0, 2.0, 2.0], [1.0, 2.0, 2.0]]] "
                                   "['causal_conv1d', 'causal_conv1d_backward']")


def test_a_cudnn_alias_of_hipdnn_runs_it_with_one_copy_of_the_caches():
    # the notebooks run with `import cudnn` giving hipdnn: cudnn.ops is hipdnn.ops
    out = python(
        "import sys, numpy as np, hipdnn\n"
        "sys.modules['cudnn'] = hipdnn\n"
        "import cudnn\n"
        "x, w = np.ones((1, 2, 3), np.float32), np.ones((2, 2), np.float32)\n"
        "y = cudnn.ops.causal_conv1d(x, w, np.zeros(2, np.float32), activation='silu')\n"
        "from hipdnn.ops import _causal_conv1d_graphs as g\n"
        "print(cudnn.ops is hipdnn.ops, len(g._fprop_cache), round(float(y[0, 0, 2]), 4))\n")
    assert out.split() == ["True", "1", "1.7616"]  # silu(2)
