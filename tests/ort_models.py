"""Whole models written as ONNX with python3-onnx and random weights (NumPy, seeded), as
exporters write them: ResNet (basic blocks for 18 and 34, bottlenecks for 50 and 101), a
BERT-style encoder and a ViT.  tests/test_ort_ep_models.py builds them at small widths;
benchmarks/ort_model_bench.py at real ones (ResNet-50 at 224x224, BERT-base, ViT-B/16).
The same seed and arguments give the same model, byte for byte.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

FLOAT = TensorProto.FLOAT


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


# ---- ResNet ---------------------------------------------------------------------------------

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


def bottleneck(net, x, c_in, width, stride):
    """1x1 down to `width`, 3x3 (with the stride, as torchvision's ResNet v1.5), 1x1 up to
    4 * width, the residual Add."""
    c_out = 4 * width
    h = conv_bn(net, x, c_in, width, 1, 1)
    h = conv_bn(net, h, width, width, 3, stride)
    h = conv_bn(net, h, width, c_out, 1, 1, relu=False)
    skip = x if stride == 1 and c_in == c_out else conv_bn(net, x, c_in, c_out, 1, stride, relu=False)
    return net.op("Relu", [net.op("Add", [h, skip])])


# depth: (block, channel expansion, blocks per stage)
RESNETS = {18: (basic_block, 1, (2, 2, 2, 2)), 34: (basic_block, 1, (3, 4, 6, 3)),
           50: (bottleneck, 4, (3, 4, 6, 3)), 101: (bottleneck, 4, (3, 4, 23, 3))}


def resnet(seed, depth=18, widths=(8, 16, 32, 64), classes=10, batch=2, img=32):
    """conv 7x7/2 + batchnorm + relu stem, maxpool 3x3/2, four stages (the first block of
    stages 2-4 strided, 1x1 downsampling convolutions on the skip where the shape changes),
    global average pool, flatten, Gemm.  widths (64, 128, 256, 512) and classes 1000 are
    torchvision's resnet18/34/50/101."""
    block, expansion, counts = RESNETS[depth]
    net = Net(seed)
    h = conv_bn(net, "x", 3, widths[0], 7, 2)
    h = net.op("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = widths[0]
    for i, (w, n) in enumerate(zip(widths, counts)):
        for b in range(n):
            h = block(net, h, c, w, 2 if i > 0 and b == 0 else 1)
            c = w * expansion
    h = net.op("Flatten", [net.op("GlobalAveragePool", [h])])
    y = net.op("Gemm", [h, net.weight("fc", classes, c), net.weight("fcb", classes, scale=0.1)],
               transB=1)
    net.nodes[-1].output[0] = "y"
    return net.model([helper.make_tensor_value_info("x", FLOAT, [batch, 3, img, img])], ["y"]), y


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


def bert(seed, form="erf", b=2, s=8, d=32, heads=4, hidden=64, vocab=50, layers=1):
    """Embeddings (a Gather ORT keeps, plus positions), LayerNorm, then `layers` post-LN
    encoder layers with an additive attention mask (inputs ids [b, s] and mask
    [b, 1, 1, s]).  d 768, 12 heads, hidden 3072, 12 layers, vocab 30522: BERT-base's
    encoder (no token types, no pooler)."""
    net = Net(seed)
    emb = net.op("Gather", [net.weight("emb", vocab, d, scale=1.0), "ids"])
    h = layernorm(net, net.op("Add", [emb, net.weight("pos", s, d, scale=1.0)]), d)
    for _ in range(layers):
        h = layernorm(net, net.op("Add", [attention(net, h, b, s, d, heads, "mask"), h]), d)
        h = layernorm(net, net.op("Add", [mlp(net, h, d, hidden, form), h]), d)
    net.nodes[-1].output[0] = "y"
    inputs = [helper.make_tensor_value_info("ids", TensorProto.INT64, [b, s]),
              helper.make_tensor_value_info("mask", FLOAT, [b, 1, 1, s])]
    return net.model(inputs, ["y"], opset=20 if form != "erf" else 17), h


def vit(seed, b=2, img=16, patch=4, d=32, heads=4, hidden=64, classes=10, layers=1):
    """Patch embedding (a convolution with stride = patch), positions, `layers` pre-LN
    blocks, mean over the tokens, LayerNorm and the classifier.  224x224, 16x16 patches,
    d 768, 12 heads, hidden 3072, 12 layers, 1000 classes: ViT-B/16 (mean-pooled, no class
    token)."""
    net = Net(seed)
    n = (img // patch) ** 2
    t = net.op("Conv", ["x", net.weight("patch", d, 3, patch, patch), net.weight("pb", d, scale=0.1)],
               kernel_shape=[patch, patch], strides=[patch, patch])
    t = net.op("Transpose", [net.op("Reshape", [t, net.const("tokens", np.array([b, d, n], np.int64))])],
               perm=[0, 2, 1])
    t = net.op("Add", [t, net.weight("pos", n, d, scale=0.5)])
    for _ in range(layers):
        t = net.op("Add", [t, attention(net, layernorm(net, t, d), b, n, d, heads)])
        t = net.op("Add", [t, mlp(net, layernorm(net, t, d), d, hidden, "erf")])
    pooled = layernorm(net, net.op("ReduceMean", [t], axes=[1], keepdims=0), d)
    y = net.op("Gemm", [pooled, net.weight("head", d, classes), net.weight("hb", classes, scale=0.1)])
    net.nodes[-1].output[0] = "y"
    return net.model([helper.make_tensor_value_info("x", FLOAT, [b, 3, img, img])], ["y"]), y
