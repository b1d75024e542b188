"""hipdnn-ep's ONNX ops past the first slice (docs/onnxruntime.md, "What it claims"):
pooling, the normalizations' optional outputs, softmax on any axis, the pointwise and
data-movement ops.  Each model is claimed whole (CPU fallback off) and its outputs must
match a float64 NumPy reference and ORT's CPU EP; declined forms must stay with ORT,
with the reason in hipdnn-ep's log.  The runner and helpers are tests/test_ort_ep.py's.
"""
import itertools

import numpy as np
import pytest

from test_ort_ep import (FLOAT, compare, helper, model, numpy_helper, rand,  # noqa: F401
                         rng, run, runner_available)  # rng, runner_available: fixtures
from test_ort_ep_models import devices  # the CPU device, then the fake GPU (or a real one)

TOL = dict(rtol=1e-4, atol=1e-5)


def claimed_whole(tmp_path, m, feeds, want, fused_nodes=1, tol=TOL):
    """m claimed whole by hipdnn-ep, equal to ORT's CPU EP and to `want` (name -> float64
    reference)."""
    got, _ = compare(tmp_path, m, feeds, fused_nodes=fused_nodes)
    for name, ref in want.items():
        assert got[name][0].shape == ref.shape, name
        np.testing.assert_allclose(got[name][0], ref, err_msg=name, **tol)
    return got


def declined(tmp_path, m, feeds, reason):
    """m runs with its node on ORT's CPU EP, hipdnn-ep's log saying why."""
    _, assigned, err = run(tmp_path, m, feeds, log_level=1)
    assert all(a[0] != "hipdnn" for a in assigned), assigned
    assert reason in err, err[-3000:]


# ---- pooling ----------------------------------------------------------------------------

def pool_ref(x, kind, k, s, pre, post, ceil=False, include_pad=False):
    """float64 pooling over the spatial dims of x [N, C, ...]: kind max or avg."""
    x = x.astype(np.float64)
    sp = x.ndim - 2
    outs = []
    for i in range(sp):
        span = x.shape[2 + i] + pre[i] + post[i] - k[i]
        o = span // s[i] + 1
        if ceil and span % s[i] and o * s[i] < x.shape[2 + i] + pre[i]:
            o += 1
        outs.append(o)
    y = np.empty(x.shape[:2] + tuple(outs))
    for idx in itertools.product(*[range(o) for o in outs]):
        lo = [idx[i] * s[i] - pre[i] for i in range(sp)]
        hi = [min(lo[i] + k[i], x.shape[2 + i] + post[i]) for i in range(sp)]
        inside = tuple(slice(max(lo[i], 0), min(hi[i], x.shape[2 + i])) for i in range(sp))
        win = x[(slice(None), slice(None)) + inside].reshape(x.shape[0], x.shape[1], -1)
        if kind == "max":
            y[(slice(None), slice(None)) + idx] = win.max(axis=2)
        else:
            count = np.prod([hi[i] - lo[i] for i in range(sp)]) if include_pad else win.shape[2]
            y[(slice(None), slice(None)) + idx] = win.sum(axis=2) / count
    return y


POOL_CASES = [
    # op, x shape, attributes, reference's (kernel, strides, pre, post, ceil, include_pad)
    ("MaxPool", (2, 3, 7, 6), dict(kernel_shape=[3, 2]), ([3, 2], [1, 1], [0, 0], [0, 0])),
    ("MaxPool", (1, 2, 9, 9), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 2, 1]),
     ([3, 3], [2, 2], [1, 0], [2, 1])),
    ("MaxPool", (1, 2, 8, 7), dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
     ([3, 3], [2, 2], [0, 0], [0, 0], True)),
    ("MaxPool", (2, 2, 10), dict(kernel_shape=[4], strides=[3]), ([4], [3], [0], [0])),
    ("MaxPool", (1, 2, 4, 5, 6), dict(kernel_shape=[2, 2, 3], pads=[1, 0, 1, 1, 1, 0]),
     ([2, 2, 3], [1, 1, 1], [1, 0, 1], [1, 1, 0])),
    ("MaxPool", (1, 3, 7, 7), dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
     ([3, 3], [2, 2], [1, 1], [1, 1])),
    ("AveragePool", (2, 3, 7, 6), dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
     ([3, 3], [1, 1], [1, 1], [1, 1])),
    ("AveragePool", (2, 3, 7, 6), dict(kernel_shape=[3, 3], pads=[1, 1, 2, 2], count_include_pad=1),
     ([3, 3], [1, 1], [1, 1], [2, 2], False, True)),
    ("AveragePool", (1, 2, 8, 8), dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1,
                                       pads=[1, 1, 1, 1], count_include_pad=1),
     ([3, 3], [2, 2], [1, 1], [1, 1], True, True)),
    ("AveragePool", (1, 2, 6, 6), dict(kernel_shape=[2, 2], auto_pad="SAME_LOWER"),
     ([2, 2], [1, 1], [1, 1], [0, 0])),
    ("AveragePool", (1, 2, 5, 6), dict(kernel_shape=[3, 2], strides=[2, 1], auto_pad="VALID"),
     ([3, 2], [2, 1], [0, 0], [0, 0])),
]


@pytest.mark.parametrize("op,xs,attrs,ref", POOL_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(POOL_CASES)])
def test_pool_matches_float64_reference(tmp_path, rng, op, xs, attrs, ref):
    node = helper.make_node(op, ["x"], ["y"], name="pool", **attrs)
    m = model([node], [("x", list(xs))], [("y", None)])
    x = rand(rng, *xs)
    kind = "max" if op == "MaxPool" else "avg"
    claimed_whole(tmp_path, m, {"x": x}, {"y": pool_ref(x, kind, *ref)})


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
@pytest.mark.parametrize("xs", [(2, 3, 5), (2, 3, 4, 5), (1, 2, 3, 4, 2)])
def test_global_pool_reduces_the_spatial_dims(tmp_path, rng, op, xs):
    m = model([helper.make_node(op, ["x"], ["y"], name="gp")], [("x", list(xs))], [("y", None)])
    x = rand(rng, *xs)
    axes = tuple(range(2, len(xs)))
    x64 = x.astype(np.float64)
    want = x64.mean(axis=axes, keepdims=True) if "Average" in op else x64.max(axis=axes, keepdims=True)
    claimed_whole(tmp_path, m, {"x": x}, {"y": want})


def test_resnet_stem_and_head_is_one_fused_node(tmp_path, rng):
    """conv -> relu -> maxpool ... global average pool -> flatten -> gemm."""
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", pads=[3, 3, 3, 3],
                              strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("GlobalAveragePool", ["p"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "Wf", "Bf"], ["y"], name="fc", transB=1)]
    m = model(nodes, [("x", [2, 3, 16, 16])], [("y", None)],
              [("W", rand(rng, 4, 3, 7, 7)), ("B", rand(rng, 4)), ("Wf", rand(rng, 5, 4)),
               ("Bf", rand(rng, 5))])
    compare(tmp_path, m, {"x": rand(rng, 2, 3, 16, 16)}, fused_nodes=1)


@pytest.mark.parametrize("attrs,reason", [
    (dict(kernel_shape=[2, 2], dilations=[2, 2]), "dilations[0] is 2; hipdnn's pooling has no dilation"),
    (dict(kernel_shape=[3, 2], dilations=[1, 2], pads=[1, 1, 1, 1]), "dilations[1] is 2"),
])
def test_pool_forms_hipdnn_lacks_stay_with_ort(tmp_path, rng, attrs, reason):
    m = model([helper.make_node("MaxPool", ["x"], ["y"], name="pool", **attrs)],
              [("x", [1, 2, 6, 6])], [("y", None)])
    declined(tmp_path, m, {"x": rand(rng, 1, 2, 6, 6)}, reason)


def test_maxpool_indices_stay_with_ort(tmp_path, rng):
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], name="pool", kernel_shape=[2, 2])
    g = helper.make_graph([node], "t", [helper.make_tensor_value_info("x", FLOAT, [1, 2, 4, 4])],
                          [helper.make_tensor_value_info("y", FLOAT, None),
                           helper.make_tensor_value_info("i", 7, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    declined(tmp_path, m, {"x": rand(rng, 1, 2, 4, 4)}, "output Indices is used")


# ---- normalization statistics, softmax on any axis ----------------------------------------

def layernorm_ref(x, scale, bias, axis, eps):
    x = x.astype(np.float64)
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    inv = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)
    return (x - mean) * inv * scale + bias, mean, inv


def layernorm_graph(xs, axis, outputs):
    node = helper.make_node("LayerNormalization", ["x", "s", "b"], outputs, name="ln", axis=axis,
                       epsilon=1e-3)
    return model([node], [("x", list(xs))], [(o, None) for o in outputs if o],
                 opset=17), node


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
@pytest.mark.parametrize("outputs", [["y", "mean", "inv"], ["y", "", "inv"], ["y", "mean"]],
                         ids=["both", "inv", "mean"])
def test_layernorm_gives_mean_and_inv_std_dev(tmp_path, rng, axis, outputs):
    xs = (2, 3, 4, 5)
    pshape = xs[axis % 4:]
    s, b = rand(rng, *pshape), rand(rng, *pshape)
    m, _ = layernorm_graph(xs, axis, outputs)
    m.graph.initializer.extend([numpy_helper.from_array(s, "s"), numpy_helper.from_array(b, "b")])
    x = rand(rng, *xs)
    y, mean, inv = layernorm_ref(x, s, b, axis, 1e-3)
    want = {"y": y, "mean": mean, "inv": inv}
    claimed_whole(tmp_path, m, {"x": x}, {o: want[o] for o in outputs if o})


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_rms_normalization_opset_23(tmp_path, rng, axis, device):
    """RMSNormalization (opset 23) as norm_forward's RMS_NORM: x / sqrt(mean(x^2) + eps)
    * scale over the dims from axis on."""
    xs = (2, 3, 4, 5)
    s = rand(rng, *xs[axis % 4:])
    node = helper.make_node("RMSNormalization", ["x", "s"], ["y"], name="rms", axis=axis,
                            epsilon=1e-3)
    m = model([node], [("x", list(xs))], [("y", None)], [("s", s)], opset=23)
    m.ir_version = 10
    x = rand(rng, *xs)
    x64 = x.astype(np.float64)
    ms = (x64 ** 2).mean(axis=tuple(range(axis % 4, 4)), keepdims=True)
    want = x64 / np.sqrt(ms + 1e-3) * s
    got = compare(tmp_path, m, {"x": x}, fused_nodes=1, device=device)[0]
    np.testing.assert_allclose(got["y"][0], want, **TOL)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("xs", [(2, 3, 7), (2, 3, 4, 5), (1, 2, 3, 4, 2)])
def test_instance_normalization(tmp_path, rng, xs, device):
    """InstanceNormalization as norm_forward's INSTANCE_NORM: per sample and channel over
    the spatial dims, then scale and B per channel."""
    c = xs[1]
    s, b = rand(rng, c), rand(rng, c)
    node = helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], name="in",
                            epsilon=1e-3)
    m = model([node], [("x", list(xs))], [("y", None)], [("s", s), ("b", b)])
    x = rand(rng, *xs)
    x64 = x.astype(np.float64)
    axes = tuple(range(2, len(xs)))
    mean = x64.mean(axis=axes, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=axes, keepdims=True)
    p = (1, c) + (1,) * (len(xs) - 2)
    want = (x64 - mean) / np.sqrt(var + 1e-3) * s.reshape(p) + b.reshape(p)
    got = compare(tmp_path, m, {"x": x}, fused_nodes=1, device=device)[0]
    np.testing.assert_allclose(got["y"][0], want, **TOL)


def batchnorm_training_ref(x, s, b, rm, rv, eps, mom):
    """ONNX's training mode in float64: batch statistics per channel (the variance biased),
    running = running * momentum + batch * (1 - momentum)."""
    x = x.astype(np.float64)
    axes = (0,) + tuple(range(2, x.ndim))
    p = (1, -1) + (1,) * (x.ndim - 2)
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    y = (x - mean.reshape(p)) / np.sqrt(var.reshape(p) + eps) * s.reshape(p) + b.reshape(p)
    return y, rm * mom + mean * (1 - mom), rv * mom + var * (1 - mom)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("xs", [(2, 3, 4, 5), (6, 4), (1, 3, 1, 1), (2, 2, 3, 2, 2)],
                         ids=["nchw", "nc", "one_value", "ncdhw"])
def test_batchnorm_training_mode_updates_running_stats(tmp_path, rng, xs, device):
    """BatchNormalization training_mode=1 (opset 15) as norm_forward's BATCH_NORM with its
    running statistics: hipdnn's momentum is 1 - ONNX's and its running variance unbiased,
    so running_var goes in and out rescaled; over one value per channel (no unbiased
    variance) the running statistics are pointwise nodes."""
    c = xs[1]
    s, b, rm = rand(rng, c), rand(rng, c), rand(rng, c)
    rv = rng.uniform(0.5, 1.5, size=c).astype(np.float32)
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "rm", "rv"],
                            ["y", "orm", "orv"], name="bn", training_mode=1, epsilon=1e-3,
                            momentum=0.8)
    m = model([node], [("x", list(xs))], [("y", None), ("orm", None), ("orv", None)],
              [("s", s), ("b", b), ("rm", rm), ("rv", rv)], opset=15)
    x = rand(rng, *xs)
    y, orm, orv = batchnorm_training_ref(x, s, b, rm, rv, 1e-3, 0.8)
    got = compare(tmp_path, m, {"x": x}, fused_nodes=1, device=device)[0]
    for name, want in (("y", y), ("orm", orm), ("orv", orv)):
        np.testing.assert_allclose(got[name][0], want, err_msg=name, **TOL)


def softmax_ref(x, axes, log=False):
    x = x.astype(np.float64)
    d = x - x.max(axis=axes, keepdims=True)
    z = np.exp(d).sum(axis=axes, keepdims=True)
    return d - np.log(z) if log else np.exp(d) / z


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis,opset", [(0, 13), (1, 13), (-2, 13), (3, 13), (1, 11), (2, 11)])
def test_softmax_on_any_axis(tmp_path, rng, op, axis, opset):
    xs = (2, 3, 4, 5)
    m = model([helper.make_node(op, ["x"], ["y"], name="sm", axis=axis)], [("x", list(xs))],
              [("y", None)], opset=opset)
    x = rand(rng, *xs) * 4
    a = axis % 4
    axes = (a,) if opset >= 13 else tuple(range(a, 4))
    claimed_whole(tmp_path, m, {"x": x}, {"y": softmax_ref(x, axes, op == "LogSoftmax")})


# ---- elementwise ops ----------------------------------------------------------------------

UNARY = {
    "Erf": None, "Sqrt": np.sqrt, "Exp": np.exp, "Log": np.log, "Neg": np.negative,
    "Abs": np.abs, "Reciprocal": np.reciprocal, "Floor": np.floor, "Ceil": np.ceil,
    "Sin": np.sin, "Cos": np.cos, "Identity": lambda x: x,
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_op_matches_float64(tmp_path, rng, op):
    import math
    x = rand(rng, 3, 4, 5) * 3
    if op in ("Sqrt", "Log"):
        x = np.abs(x)
    f = UNARY[op] or np.vectorize(math.erf)
    m = model([helper.make_node(op, ["x"], ["y"], name="u")], [("x", [3, 4, 5])], [("y", None)])
    claimed_whole(tmp_path, m, {"x": x}, {"y": f(x.astype(np.float64))})


@pytest.mark.parametrize("op,ref", [
    ("Min", lambda *a: np.minimum.reduce(np.broadcast_arrays(*a))),
    ("Max", lambda *a: np.maximum.reduce(np.broadcast_arrays(*a))),
    ("Sum", lambda *a: sum(a)), ("Mean", lambda *a: sum(a) / len(a))])
@pytest.mark.parametrize("shapes", [[(3, 4)], [(2, 3, 4), (4,)], [(3, 1), (1, 4), (2, 1, 1)]])
def test_variadic_ops_broadcast(tmp_path, rng, op, ref, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    xs = [rand(rng, *s) for s in shapes]
    m = model([helper.make_node(op, names, ["y"], name="v")],
              [(n, list(s)) for n, s in zip(names, shapes)], [("y", None)])
    claimed_whole(tmp_path, m, dict(zip(names, xs)),
                  {"y": ref(*[x.astype(np.float64) for x in xs])})


@pytest.mark.parametrize("lo,hi", [(-0.3, 0.5), (-0.2, None), (None, 0.4), (None, None)])
def test_clip_with_constant_bounds(tmp_path, rng, lo, hi):
    ins, inits = ["x"], []
    for name, v in (("lo", lo), ("hi", hi)):
        ins.append(name if v is not None else "")
        if v is not None:
            inits.append((name, np.array(v, np.float32)))
    m = model([helper.make_node("Clip", ins, ["y"], name="clip")], [("x", [3, 5])],
              [("y", None)], inits)
    x = rand(rng, 3, 5)
    want = np.clip(x.astype(np.float64), -np.inf if lo is None else lo, np.inf if hi is None else hi)
    claimed_whole(tmp_path, m, {"x": x}, {"y": want})


@pytest.mark.parametrize("op,attrs,ref", [
    ("LeakyRelu", dict(alpha=0.1), lambda x: np.where(x < 0, 0.1 * x, x)),
    ("HardSigmoid", dict(alpha=0.3, beta=0.4), lambda x: np.clip(0.3 * x + 0.4, 0, 1)),
    ("HardSwish", {}, lambda x: x * np.clip(x / 6 + 0.5, 0, 1)),
    ("Pow", None, None),
])
def test_activations_match_float64(tmp_path, rng, op, attrs, ref):
    x = rand(rng, 2, 3, 4) * 4
    if op == "Pow":
        e = rand(rng, 3, 1)
        m = model([helper.make_node("Pow", ["x", "e"], ["y"], name="p")], [("x", [2, 3, 4])],
                  [("y", None)], [("e", e)])
        x = np.abs(x)
        want = np.power(x.astype(np.float64), e.astype(np.float64))
    else:
        m = model([helper.make_node(op, ["x"], ["y"], name="a", **attrs)], [("x", [2, 3, 4])],
                  [("y", None)])
        want = ref(x.astype(np.float64))
    claimed_whole(tmp_path, m, {"x": x}, {"y": want})


def test_cast_float_to_float16_and_back(tmp_path, rng):
    from onnx import TensorProto
    nodes = [helper.make_node("Cast", ["x"], ["h"], name="to16", to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["h"], ["y"], name="to32", to=TensorProto.FLOAT)]
    m = model(nodes, [("x", [4, 5])], [("y", None)])
    x = rand(rng, 4, 5)
    claimed_whole(tmp_path, m, {"x": x}, {"y": x.astype(np.float16).astype(np.float64)},
                  tol=dict(rtol=1e-3, atol=1e-4))


@pytest.mark.parametrize("op,ref", [
    ("ReduceProd", lambda x, a: np.prod(x, axis=a, keepdims=True)),
    ("ReduceL1", lambda x, a: np.abs(x).sum(axis=a, keepdims=True)),
    ("ReduceL2", lambda x, a: np.sqrt((x * x).sum(axis=a, keepdims=True)))])
def test_more_reductions(tmp_path, rng, op, ref):
    m = model([helper.make_node(op, ["x"], ["y"], name="r", axes=[1])], [("x", [3, 4, 2])],
              [("y", None)], opset=13)
    x = rand(rng, 3, 4, 2)
    claimed_whole(tmp_path, m, {"x": x}, {"y": ref(x.astype(np.float64), (1,))})
