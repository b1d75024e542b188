"""Whole graphs as users write them, through hipdnn.Graph on NumPy arrays, against float64
NumPy: softmax from reductions and pointwise ops, rotary embedding from slices, pointwise
ops and a concatenation, a transformer MLP block, a single-head attention block built from
matmuls and that softmax, and a ResNet basic block forward (conv, batchnorm in training,
relu, conv, batchnorm, residual add, relu) and, in the same graph, its backward pass
(relu_backward, batchnorm_backward, conv_dgrad and conv_wgrad).

Each graph runs on whichever engine the heuristics pick (the reference engine without a
GPU); intermediates are fp32, storage fp32 or fp16.  Inputs are checked unchanged.
"""
import numpy as np
import pytest

import hipdnn
import references as ref
from conftest import assert_close
from tolerances import graph_tolerance

RM = hipdnn.reduction_mode
STORAGE = {"fp32": np.float32, "fp16": np.float16}


@pytest.fixture(params=list(STORAGE))
def storage(request):
    return request.param


def rand(rng, shape, dtype, scale=1.0):
    """Random values already rounded to the storage type, and their float64 copy."""
    a = (scale * rng.standard_normal(shape)).astype(STORAGE[dtype])
    return a, a.astype(np.float64)


def run(g, *arrays):
    """g(*arrays), with the inputs checked unchanged."""
    before = [a.copy() for a in arrays]
    out = g(*arrays)
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b)
    return out


def graph(dtype):
    """A Graph over `dtype` arrays whose virtual tensors are fp32."""
    return hipdnn.Graph(intermediate_data_type=hipdnn.data_type.FLOAT)


# ---- softmax ------------------------------------------------------------------------------

def softmax_of(g, x, dims):
    m = g.reduction(x, RM.MAX)
    m.set_dim(dims[:-1] + [1])
    e = g.exp(g.sub(x, m))
    s = g.reduction(e, RM.ADD)
    s.set_dim(dims[:-1] + [1])
    return g.div(e, s)


def softmax_ref(v):
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_softmax_from_reductions_and_pointwise_ops(rng, storage):
    x, xv = rand(rng, (3, 5, 67), storage, 3.0)
    with graph(storage) as g:
        softmax_of(g, g.input(x), [3, 5, 67])
    y = run(g, x)
    assert y.shape == x.shape and y.dtype == x.dtype
    assert_close(y.astype(np.float64), softmax_ref(xv),
                 graph_tolerance(["reduction", "pointwise"], storage), "softmax")


# ---- rotary embedding ---------------------------------------------------------------------

def test_rotary_embedding_from_slices_pointwise_ops_and_a_concatenation(rng, storage):
    # GPT-NeoX's rotation of halves: [x1, x2] -> [x1 cos - x2 sin, x2 cos + x1 sin]
    B, S, H, D = 2, 9, 3, 16
    x, xv = rand(rng, (B, S, H, D), storage)
    theta = np.arange(S)[:, None] * (10000.0 ** (-np.arange(D // 2) / (D // 2)))[None, :]
    cos = np.cos(theta).reshape(1, S, 1, D // 2).astype(STORAGE[storage])
    sin = np.sin(theta).reshape(1, S, 1, D // 2).astype(STORAGE[storage])
    with graph(storage) as g:
        X = g.input(x)
        whole = slice(None)
        x1 = g.slice(X, [whole, whole, whole, slice(0, D // 2)])
        x2 = g.slice(X, [whole, whole, whole, slice(D // 2, D)])
        C, Sn = g.input(cos), g.input(sin)
        y1 = g.sub(g.mul(x1, C), g.mul(x2, Sn))
        y2 = g.add(g.mul(x2, C), g.mul(x1, Sn))
        g.concatenate([y1, y2], axis=3)
    y = run(g, x, cos, sin)
    c, s = cos.astype(np.float64), sin.astype(np.float64)
    x1v, x2v = xv[..., :D // 2], xv[..., D // 2:]
    want = np.concatenate([x1v * c - x2v * s, x2v * c + x1v * s], axis=-1)
    assert_close(y.astype(np.float64), want, graph_tolerance(["pointwise"], storage), "rotary")


# ---- transformer MLP block ------------------------------------------------------------------

def gelu_ref(v):
    from math import erf, sqrt
    return v * 0.5 * (1.0 + np.vectorize(erf)(v / sqrt(2.0)))


def test_transformer_mlp_block(rng, storage):
    # y = x + gelu(x W1 + b1) W2 + b2, tokens [1, 37, 24], hidden 96
    T, D, F = 37, 24, 96
    x, xv = rand(rng, (1, T, D), storage)
    w1, w1v = rand(rng, (1, D, F), storage, D ** -0.5)
    b1, b1v = rand(rng, (1, 1, F), storage, 0.1)
    w2, w2v = rand(rng, (1, F, D), storage, F ** -0.5)
    b2, b2v = rand(rng, (1, 1, D), storage, 0.1)
    with graph(storage) as g:
        X = g.input(x)
        h = g.gelu(g.add(g.matmul(X, g.input(w1)), g.input(b1)))
        g.add(X, g.add(g.matmul(h, g.input(w2)), g.input(b2)))
    y = run(g, x, w1, b1, w2, b2)
    want = xv + (gelu_ref(xv @ w1v + b1v) @ w2v + b2v)  # h virtual: fp32 in the graph
    assert_close(y.astype(np.float64), want, 2 * graph_tolerance(["matmul", "pointwise"], storage),
                 "mlp")


# ---- attention block ----------------------------------------------------------------------

def test_single_head_attention_block_from_matmuls_and_softmax(rng, storage):
    # o = softmax(q k^T / sqrt(d)) v, then y = x + o Wo; q = x Wq, k^T = Wk^T x^T, v = x Wv
    B, S, D = 2, 13, 16
    x, xv = rand(rng, (B, S, D), storage)
    xt = np.ascontiguousarray(np.swapaxes(x, 1, 2))  # x^T [B, D, S], the same values
    wq, wqv = rand(rng, (1, D, D), storage, D ** -0.5)
    wkt, wktv = rand(rng, (1, D, D), storage, D ** -0.5)  # Wk^T
    wv, wvv = rand(rng, (1, D, D), storage, D ** -0.5)
    wo, wov = rand(rng, (1, D, D), storage, D ** -0.5)
    scale = np.full((1, 1, 1), D ** -0.5, STORAGE[storage])
    with graph(storage) as g:
        X, XT = g.input(x), g.input(xt)
        q = g.matmul(X, g.input(wq))
        kt = g.matmul(g.input(wkt), XT)
        v = g.matmul(X, g.input(wv))
        scores = g.mul(g.matmul(q, kt), g.input(scale))
        p = softmax_of(g, scores, [B, S, S])
        g.add(X, g.matmul(g.matmul(p, v), g.input(wo)))
    y = run(g, x, xt, wq, wkt, wv, scale, wo)  # inputs in order of first use
    qv, ktv, vv = xv @ wqv, wktv @ np.swapaxes(xv, 1, 2), xv @ wvv
    pv = softmax_ref((qv @ ktv) * float(scale.reshape(())))
    want = xv + (pv @ vv) @ wov
    assert_close(y.astype(np.float64), want,
                 2 * graph_tolerance(["matmul", "reduction", "pointwise"], storage), "attention")


# ---- ResNet basic block ---------------------------------------------------------------------

def conv3x3_ref(x, w):
    """Cross-correlation, padding 1, stride 1, NCHW x KCRS."""
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], h, wd))
    for r in range(3):
        for s in range(3):
            out += np.einsum("nchw,kc->nkhw", xp[:, :, r:r + h, s:s + wd], w[:, :, r, s])
    return out


def bn_train_ref(v, gamma, beta, eps):
    mean = v.mean(axis=(0, 2, 3), keepdims=True)
    var = v.var(axis=(0, 2, 3), keepdims=True)
    return (v - mean) / np.sqrt(var + eps) * gamma + beta


def test_resnet_basic_block_forward_with_training_batchnorm(rng, storage):
    N, C, H, W = 2, 8, 7, 6
    eps = 1e-5
    x, xv = rand(rng, (N, C, H, W), storage)
    w1, w1v = rand(rng, (C, C, 3, 3), storage, (9 * C) ** -0.5)
    w2, w2v = rand(rng, (C, C, 3, 3), storage, (9 * C) ** -0.5)
    g1, g1v = (a + 1 for a in rand(rng, (1, C, 1, 1), storage, 0.2))  # scales near 1
    be1, be1v = rand(rng, (1, C, 1, 1), storage, 0.1)
    g2, g2v = (a + 1 for a in rand(rng, (1, C, 1, 1), storage, 0.2))
    be2, be2v = rand(rng, (1, C, 1, 1), storage, 0.1)
    with graph(storage) as g:
        X = g.input(x)
        h = g.conv_fprop(X, g.input(w1), padding=[1, 1])
        h, mean1, inv1 = g.batchnorm(h, g.input(g1), g.input(be1), epsilon=eps)[:3]
        h = g.relu(h)
        h = g.conv_fprop(h, g.input(w2), padding=[1, 1])
        h, mean2, inv2 = g.batchnorm(h, g.input(g2), g.input(be2), epsilon=eps)[:3]
        g.output(g.relu(g.add(h, X)))
        # training statistics are results, as in cuDNN frontend: fp32
        g.output(mean1, inv1, mean2, inv2, data_type=hipdnn.data_type.FLOAT)
    y, m1, i1, m2, i2 = run(g, x, w1, g1, be1, w2, g2, be2)
    c1 = conv3x3_ref(xv, w1v)
    h = np.maximum(bn_train_ref(c1, g1v, be1v, eps), 0)
    c2 = conv3x3_ref(h, w2v)
    want = np.maximum(bn_train_ref(c2, g2v, be2v, eps) + xv, 0)
    tol = 2 * graph_tolerance(["conv_fprop", "batchnorm", "pointwise"], storage)
    assert_close(y.astype(np.float64), want, tol, "resnet block y")
    for got, c, name in ((m1, c1, "mean 1"), (m2, c2, "mean 2")):
        assert_close(got.reshape(-1), c.mean(axis=(0, 2, 3)), tol, name)
    for got, c, name in ((i1, c1, "inv_variance 1"), (i2, c2, "inv_variance 2")):
        assert_close(got.reshape(-1), 1 / np.sqrt(c.var(axis=(0, 2, 3)) + eps), tol, name)


def conv3x3_dgrad_ref(dy, w):
    """dx of conv3x3_ref: the correlation of dy with w flipped and transposed."""
    return conv3x3_ref(dy, np.ascontiguousarray(w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3)))


def conv3x3_wgrad_ref(x, dy):
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    dw = np.zeros((dy.shape[1], c, 3, 3))
    for r in range(3):
        for s in range(3):
            dw[:, :, r, s] = np.einsum("nkhw,nchw->kc", dy, xp[:, :, r:r + h, s:s + wd])
    return dw


def resnet_block_ref(x, w1, g1, b1, w2, g2, b2, eps):
    """Forward values the backward needs: (y, c1, bn1, a1, c2, s, stats)."""
    c1 = conv3x3_ref(x, w1)
    bn1, m1, i1 = ref.norm_forward("batch", c1, g1, b1, eps)
    a1 = np.maximum(bn1, 0)
    c2 = conv3x3_ref(a1, w2)
    bn2, m2, i2 = ref.norm_forward("batch", c2, g2, b2, eps)
    s = bn2 + x
    return np.maximum(s, 0), c1, bn1, a1, c2, s, (m1, i1, m2, i2)


def resnet_block_backward_ref(x, w1, g1, w2, g2, dy, fwd):
    """Hand-written backpropagation in float64: dx, dw1, dg1, db1, dw2, dg2, db2."""
    _, c1, bn1, a1, c2, s, (m1, i1, m2, i2) = fwd
    ds = dy * (s > 0)
    dc2, dg2, db2 = ref.norm_backward("batch", c2, ds, g2, m2, i2)
    da1 = conv3x3_dgrad_ref(dc2, w2)
    dw2 = conv3x3_wgrad_ref(a1, dc2)
    dbn1 = da1 * (bn1 > 0)
    dc1, dg1, db1 = ref.norm_backward("batch", c1, dbn1, g1, m1, i1)
    return (conv3x3_dgrad_ref(dc1, w1) + ds, conv3x3_wgrad_ref(x, dc1), dg1, db1, dw2, dg2,
            db2)


def test_resnet_block_reference_backward_matches_finite_differences(rng):
    """The float64 reference the next test trusts: <dy, y(p + t v) - y(p - t v)> / 2t
    against <dp, v> for the input and every parameter."""
    N, C, H, W = 2, 3, 5, 4
    eps = 1e-5
    x = rng.standard_normal((N, C, H, W))
    w1, w2 = (rng.standard_normal((C, C, 3, 3)) / 5 for _ in range(2))
    g1, g2 = (1 + 0.2 * rng.standard_normal((1, C, 1, 1)) for _ in range(2))
    b1, b2 = (0.1 * rng.standard_normal((1, C, 1, 1)) for _ in range(2))
    dy = rng.standard_normal((N, C, H, W))
    params = [x, w1, g1, b1, w2, g2, b2]
    fwd = resnet_block_ref(*params, eps)
    grads = resnet_block_backward_ref(x, w1, g1, w2, g2, dy, fwd)
    order = [0, 1, 2, 3, 4, 5, 6]  # grads come as x, w1, g1, b1, w2, g2, b2
    t = 1e-6
    for k, grad in zip(order, grads):
        v = rng.standard_normal(params[k].shape)
        plus = [p + t * v if i == k else p for i, p in enumerate(params)]
        minus = [p - t * v if i == k else p for i, p in enumerate(params)]
        numeric = (np.sum(dy * resnet_block_ref(*plus, eps)[0]) -
                   np.sum(dy * resnet_block_ref(*minus, eps)[0])) / (2 * t)
        assert numeric == pytest.approx(np.sum(grad * v), rel=1e-5, abs=1e-6), k


def test_resnet_basic_block_forward_and_backward(rng, storage):
    """A training step's graph: the block forward (statistics kept virtual, fp32) and its
    backward from dy, giving y, dx and every parameter's gradient."""
    N, C, H, W = 2, 8, 7, 6
    eps = 1e-5
    x, xv = rand(rng, (N, C, H, W), storage)
    w1, w1v = rand(rng, (C, C, 3, 3), storage, (9 * C) ** -0.5)
    w2, w2v = rand(rng, (C, C, 3, 3), storage, (9 * C) ** -0.5)
    g1, g1v = (a + 1 for a in rand(rng, (1, C, 1, 1), storage, 0.2))
    be1, be1v = rand(rng, (1, C, 1, 1), storage, 0.1)
    g2, g2v = (a + 1 for a in rand(rng, (1, C, 1, 1), storage, 0.2))
    be2, be2v = rand(rng, (1, C, 1, 1), storage, 0.1)
    dy, dyv = rand(rng, (N, C, H, W), storage)
    with graph(storage) as g:
        X, W1, W2, G1, G2 = g.input(x), g.input(w1), g.input(w2), g.input(g1), g.input(g2)
        c1 = g.conv_fprop(X, W1, padding=[1, 1])
        bn1, mean1, inv1 = g.batchnorm(c1, G1, g.input(be1), epsilon=eps)[:3]
        a1 = g.relu(bn1)
        c2 = g.conv_fprop(a1, W2, padding=[1, 1])
        bn2, mean2, inv2 = g.batchnorm(c2, G2, g.input(be2), epsilon=eps)[:3]
        s = g.add(bn2, X)
        y = g.relu(s)
        ds = g.relu_backward(g.input(dy), s)
        dc2, dg2, db2 = g.batchnorm_backward(ds, c2, G2, mean2, inv2)
        da1 = g.conv_dgrad(dc2, W2, padding=[1, 1])
        da1.set_dim([N, C, H, W])
        dw2 = g.conv_wgrad(a1, dc2, padding=[1, 1])
        dw2.set_dim([C, C, 3, 3])
        dbn1 = g.relu_backward(da1, bn1)
        dc1, dg1, db1 = g.batchnorm_backward(dbn1, c1, G1, mean1, inv1)
        dxc = g.conv_dgrad(dc1, W1, padding=[1, 1])
        dxc.set_dim([N, C, H, W])
        dw1 = g.conv_wgrad(X, dc1, padding=[1, 1])
        dw1.set_dim([C, C, 3, 3])
        g.output(y, g.add(dxc, ds), dw1, dg1, db1, dw2, dg2, db2)
    got = run(g, x, w1, w2, g1, g2, be1, be2, dy)  # inputs in order of first use
    fwd = resnet_block_ref(xv, w1v, g1v, be1v, w2v, g2v, be2v, eps)
    want = (fwd[0],) + resnet_block_backward_ref(xv, w1v, g1v, w2v, g2v, dyv, fwd)
    names = ["y", "dx", "dw1", "dscale1", "dbias1", "dw2", "dscale2", "dbias2"]
    tol = 2 * graph_tolerance(["conv_fprop", "conv_dgrad", "conv_wgrad", "batchnorm",
                               "norm_backward", "pointwise"], storage)
    for a, w, name in zip(got, want, names):
        assert a.shape == w.shape, name
        # gradients are sums over the batch: compared relative to their largest value
        assert_close(a.astype(np.float64) / np.abs(w).max(), w / np.abs(w).max(), tol, name)
