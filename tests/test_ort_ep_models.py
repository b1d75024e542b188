"""Whole models through hipdnn-ep (docs/onnxruntime.md, "Whole models"): a ResNet-18-style
CNN, a BERT-style encoder layer and a ViT (patch embedding and one block), written with
python3-onnx and random weights (NumPy, seeded), run through ONNX Runtime with hipdnn-ep
and with ORT's CPU EP alone.

Every compute node (convolutions, products, normalizations, softmax, pooling, the
pointwise ops and the data movement between them) must be claimed, in one fused node, on
hipdnn-ep's CPU device and on the fake GPU (tests/test_ort_ep.py's fake CUDA driver with
the HIP engine's host emulation; on a GPU machine, with HIPDNN_TEST_NO_FAKE=1 and
HIPDNN_ORT_DEVICE=gpu, the real GPU); only BERT's embedding Gather stays with ORT.  Each test
prints the fraction of nodes hipdnn-ep took on each device.  Each model runs as written
(ORT's graph optimizations off) and as ORT rewrites it at level `all` (BatchNormalization
folded into Conv, constants folded), which is what an application gets by default.

Tolerance: each output must match ORT's CPU EP within tests/tolerances.py's graph
tolerance over the model's ops in fp32 (the loosest op's: batchnorm's 2e-4 for the CNN,
layernorm's 1e-4 for the transformers), relative and absolute; the differences seen are
near 1e-6, both sides summing in float32 in their own orders.
"""
import os
import re

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from test_ort_ep import (DEFAULT_DEVICE, FLOAT, run,  # noqa: F401  runner_available: fixture
                         runner_available)
from tolerances import graph_tolerance

CNN_TOL = graph_tolerance(["conv_fprop", "batchnorm", "pointwise", "resample", "reduction",
                           "matmul"], "fp32")
TRANSFORMER_TOL = graph_tolerance(["conv_fprop", "matmul", "layernorm", "pointwise",
                                   "reduction", "sdpa"], "fp32")


class Net:
    """Nodes and initializers of a model being written; names made unique by a counter."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, base):
        self.count += 1
        return f"{base}{self.count}"

    def const(self, base, a):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(a), n))
        return n

    def weight(self, base, *shape, scale=None):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        s = scale if scale is not None else 1.0 / np.sqrt(fan_in)
        return self.const(base, (self.rng.standard_normal(shape) * s).astype(np.float32))

    def op(self, op_type, inputs, n_out=1, **attrs):
        outs = [self.name(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=self.name(op_type), **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, inputs, outputs, opset=17):
        g = helper.make_graph(self.nodes, "net", inputs,
                              [helper.make_tensor_value_info(o, FLOAT, None) for o in outputs],
                              initializer=self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 9 if opset >= 20 else 8
        return m


# ---- ResNet-18 style ------------------------------------------------------------------------

def conv_bn(net, x, c_in, c_out, k, stride, relu=True):
    w = net.weight("w", c_out, c_in, k, k)
    y = net.op("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride],
               pads=[k // 2] * 4)
    scale = net.const("s", net.rng.uniform(0.5, 1.5, c_out).astype(np.float32))
    bias = net.const("b", (net.rng.standard_normal(c_out) * 0.1).astype(np.float32))
    mean = net.const("m", (net.rng.standard_normal(c_out) * 0.1).astype(np.float32))
    var = net.const("v", net.rng.uniform(0.5, 1.5, c_out).astype(np.float32))
    y = net.op("BatchNormalization", [y, scale, bias, mean, var], epsilon=1e-5)
    return net.op("Relu", [y]) if relu else y


def basic_block(net, x, c_in, c_out, stride):
    h = conv_bn(net, x, c_in, c_out, 3, stride)
    h = conv_bn(net, h, c_out, c_out, 3, 1, relu=False)
    skip = x if stride == 1 and c_in == c_out else conv_bn(net, x, c_in, c_out, 1, stride, relu=False)
    return net.op("Relu", [net.op("Add", [h, skip])])


def resnet18(seed, widths=(8, 16, 32, 64), classes=10):
    net = Net(seed)
    h = conv_bn(net, "x", 3, widths[0], 7, 2)
    h = net.op("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = widths[0]
    for i, w in enumerate(widths):
        for b in range(2):
            h = basic_block(net, h, c, w, 2 if i > 0 and b == 0 else 1)
            c = w
    h = net.op("Flatten", [net.op("GlobalAveragePool", [h])])
    y = net.op("Gemm", [h, net.weight("fc", classes, c), net.weight("fcb", classes, scale=0.1)],
               transB=1)
    net.nodes[-1].output[0] = "y"
    return net.model([helper.make_tensor_value_info("x", FLOAT, [2, 3, 32, 32])], ["y"]), y


# ---- transformer blocks ---------------------------------------------------------------------

def linear(net, x, d_in, d_out):
    return net.op("Add", [net.op("MatMul", [x, net.weight("w", d_in, d_out)]),
                          net.weight("b", d_out, scale=0.1)])


def layernorm(net, x, d):
    return net.op("LayerNormalization",
                  [x, net.const("g", net.rng.uniform(0.8, 1.2, d).astype(np.float32)),
                   net.const("be", (net.rng.standard_normal(d) * 0.1).astype(np.float32))],
                  axis=-1, epsilon=1e-5)


def gelu(net, x, form):
    """form "erf": x * 0.5 * (1 + erf(x / sqrt 2)), as PyTorch exports it; "none" or
    "tanh": ONNX's Gelu (opset 20) with that approximation."""
    if form != "erf":
        return net.op("Gelu", [x], approximate=form)
    e = net.op("Erf", [net.op("Div", [x, net.const("sqrt2", np.array(np.sqrt(2.0), np.float32))])])
    one = net.const("one", np.array(1.0, np.float32))
    half = net.const("half", np.array(0.5, np.float32))
    return net.op("Mul", [net.op("Mul", [x, half]), net.op("Add", [e, one])])


def attention(net, x, b, s, d, heads, mask=None):
    """Multi-head self-attention over x [b, s, d], decomposed as exporters write it."""
    dh = d // heads
    shape = net.const("shape", np.array([b, s, heads, dh], np.int64))

    def heads_of(t, perm):
        return net.op("Transpose", [net.op("Reshape", [t, shape])], perm=perm)
    q = heads_of(linear(net, x, d, d), [0, 2, 1, 3])
    kt = heads_of(linear(net, x, d, d), [0, 2, 3, 1])
    v = heads_of(linear(net, x, d, d), [0, 2, 1, 3])
    scores = net.op("Mul", [net.op("MatMul", [q, kt]),
                            net.const("scale", np.array(1.0 / np.sqrt(dh), np.float32))])
    if mask is not None:
        scores = net.op("Add", [scores, mask])
    ctx = net.op("MatMul", [net.op("Softmax", [scores], axis=-1), v])
    ctx = net.op("Reshape", [net.op("Transpose", [ctx], perm=[0, 2, 1, 3]),
                             net.const("merged", np.array([b, s, d], np.int64))])
    return linear(net, ctx, d, d)


def mlp(net, x, d, hidden, form):
    return linear(net, gelu(net, linear(net, x, d, hidden), form), hidden, d)


def bert_layer(seed, form, b=2, s=8, d=32, heads=4, hidden=64, vocab=50):
    """Embeddings (a Gather ORT keeps, plus positions), LayerNorm, then a post-LN encoder
    layer with an additive attention mask."""
    net = Net(seed)
    emb = net.op("Gather", [net.weight("emb", vocab, d, scale=1.0), "ids"])
    h = layernorm(net, net.op("Add", [emb, net.weight("pos", s, d, scale=1.0)]), d)
    h = layernorm(net, net.op("Add", [attention(net, h, b, s, d, heads, "mask"), h]), d)
    y = layernorm(net, net.op("Add", [mlp(net, h, d, hidden, form), h]), d)
    net.nodes[-1].output[0] = "y"
    inputs = [helper.make_tensor_value_info("ids", TensorProto.INT64, [b, s]),
              helper.make_tensor_value_info("mask", FLOAT, [b, 1, 1, s])]
    return net.model(inputs, ["y"], opset=20 if form != "erf" else 17), y


def vit(seed, b=2, img=16, patch=4, d=32, heads=4, hidden=64, classes=10):
    """Patch embedding (a convolution with stride = patch), positions, one pre-LN block,
    mean over the tokens, LayerNorm and the classifier."""
    net = Net(seed)
    n = (img // patch) ** 2
    t = net.op("Conv", ["x", net.weight("patch", d, 3, patch, patch), net.weight("pb", d, scale=0.1)],
               kernel_shape=[patch, patch], strides=[patch, patch])
    t = net.op("Transpose", [net.op("Reshape", [t, net.const("tokens", np.array([b, d, n], np.int64))])],
               perm=[0, 2, 1])
    t = net.op("Add", [t, net.weight("pos", n, d, scale=0.5)])
    t = net.op("Add", [t, attention(net, layernorm(net, t, d), b, n, d, heads)])
    t = net.op("Add", [t, mlp(net, layernorm(net, t, d), d, hidden, "erf")])
    pooled = layernorm(net, net.op("ReduceMean", [t], axes=[1], keepdims=0), d)
    y = net.op("Gemm", [pooled, net.weight("head", d, classes), net.weight("hb", classes, scale=0.1)])
    net.nodes[-1].output[0] = "y"
    return net.model([helper.make_tensor_value_info("x", FLOAT, [b, 3, img, img])], ["y"]), y


# ---- runs -----------------------------------------------------------------------------------

def took(assigned):
    mine = [a for a in assigned if a[0] == "hipdnn"]
    return len(mine), len(assigned), sorted({a[2] for a in assigned if a[0] != "hipdnn"})


def devices():
    """The CPU device, then the fake GPU; on a GPU machine (HIPDNN_TEST_NO_FAKE=1) the real
    GPU instead (None: run()'s default device, in the real environment) where
    HIPDNN_ORT_DEVICE=gpu asks for it, else the CPU alone."""
    if os.environ.get("HIPDNN_TEST_NO_FAKE") != "1":
        return ["cpu", "gpu"]
    return ["cpu", None] if DEFAULT_DEVICE == "gpu" else ["cpu"]


def check_model(tmp_path, m, feeds, tol, opt, stays=(), sdpa=0):
    """hipdnn-ep on its CPU device and on a GPU (devices()): every node but
    those of the op types in `stays` claimed, in one fused node, and the output equal to
    ORT's CPU EP within tol; ORT's graph optimizations at level `opt`.  sdpa: how many
    attentions (MatMul -> scale -> mask -> Softmax -> MatMul) the fused node's log says
    ran as one sdpa operation each."""
    want, _, _ = run(tmp_path, m, feeds, ep="cpu", opt=opt)
    for device in devices():
        got, assigned, err = run(tmp_path, m, feeds, device=device, opt=opt, log_level=1)
        assert [int(c) for c in re.findall(r"(\d+) attention as sdpa", err)] == [sdpa], err[-3000:]
        device = device or "real GPU"
        n, total, kept = took(assigned)
        print(f"\n{device} device, optimizations {opt}: hipdnn-ep took {n} of {total} nodes "
              f"({100.0 * n / total:.1f} %); ORT kept {kept or 'none'}")
        np.testing.assert_allclose(got["y"][0], want["y"][0], rtol=tol, atol=tol)
        assert kept == sorted(stays), assigned
        assert n == total - sum(1 for a in assigned if a[2] in stays)
        assert len({a[1] for a in assigned if a[0] == "hipdnn"}) == 1, assigned


OPT = pytest.mark.parametrize("opt", ["disable", "all"])


@OPT
def test_resnet18_style_cnn(tmp_path, opt):
    m, _ = resnet18(seed=1)
    x = np.random.default_rng(2).standard_normal((2, 3, 32, 32)).astype(np.float32)
    check_model(tmp_path, m, {"x": x}, CNN_TOL, opt)


@OPT
@pytest.mark.parametrize("form", ["erf", "none", "tanh"])
def test_bert_style_encoder_layer(tmp_path, form, opt):
    m, _ = bert_layer(seed=3, form=form)
    r = np.random.default_rng(4)
    mask = np.zeros((2, 1, 1, 8), np.float32)
    mask[1, ..., 6:] = -1e4  # the second sequence is two tokens shorter
    check_model(tmp_path, m, {"ids": r.integers(0, 50, (2, 8)).astype(np.int64), "mask": mask},
                TRANSFORMER_TOL, opt, stays=("Gather",), sdpa=1)


@OPT
def test_vit_patch_embedding_and_block(tmp_path, opt):
    m, _ = vit(seed=5)
    x = np.random.default_rng(6).standard_normal((2, 3, 16, 16)).astype(np.float32)
    check_model(tmp_path, m, {"x": x}, TRANSFORMER_TOL, opt, sdpa=1)
