"""Attention through hipdnn-ep (docs/onnxruntime.md, "Attention"): ONNX's Attention op
(opset 23; ONNX 1.12's node tests predate it) and the decomposed MatMul -> scale -> mask
-> Softmax -> MatMul pattern, each lowered as one hipdnn sdpa operation, on hipdnn-ep's
CPU device (reference_cpu) and on the fake GPU (the HIP engine's emulation).

Each case is checked against a float64 NumPy reference (ONNX's definition: softmax(Q K^T
* scale + mask) V, the causal band top-left as ONNX's reference implementation's
np.tril) and against ORT's CPU EP (ONNX Runtime 1.30 runs Attention-23), at the fp32
tolerance of tests/tolerances.py's sdpa row; the fused node's log must say the attention
ran as sdpa.  What sdpa has no form of (a KV cache, softcap, qk_matmul_output) stays with
ORT and still matches.
"""
import re

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from test_ort_ep import FLOAT, run, runner_available  # noqa: F401  runner_available: fixture
from test_ort_ep_models import devices
from tolerances import graph_tolerance

TOL = graph_tolerance(["sdpa", "pointwise"], "fp32")
# the CPU device and the fake GPU; on a GPU machine (HIPDNN_TEST_NO_FAKE=1,
# HIPDNN_ORT_DEVICE=gpu) the real GPU instead of the fake one
DEVICES = pytest.mark.parametrize("device", devices())


def onnx_model(nodes, inputs, outputs, inits=(), opset=23):
    g = helper.make_graph(nodes, "attention",
                          [helper.make_tensor_value_info(n, t, s) for n, s, t in inputs],
                          [helper.make_tensor_value_info(n, FLOAT, None) for n in outputs],
                          initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10 if opset >= 21 else 8
    return m


def reference(q, k, v, mask=None, scale=None, causal=False):
    """float64 attention over [B, H, S, D] (K / V heads repeated for GQA)."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    k = np.repeat(k, q.shape[1] // k.shape[1], axis=1)
    v = np.repeat(v, q.shape[1] // v.shape[1], axis=1)
    s = q @ k.transpose(0, 1, 3, 2) * (scale if scale is not None else 1 / np.sqrt(q.shape[-1]))
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def to_heads(x, h):
    b, s, hd = x.shape
    return x.reshape(b, s, h, hd // h).transpose(0, 2, 1, 3)


def check(tmp_path, m, feeds, want, device, sdpa=1, claimed=True):
    """hipdnn-ep's output against the float64 reference and ORT's CPU EP; the log's count
    of attentions run as sdpa."""
    cpu, _, _ = run(tmp_path, m, feeds, ep="cpu")
    got, assigned, err = run(tmp_path, m, feeds, device=device, log_level=1)
    for name in got:
        np.testing.assert_allclose(got[name][0], want, rtol=TOL, atol=TOL, err_msg=name)
        np.testing.assert_allclose(got[name][0], cpu[name][0], rtol=TOL, atol=TOL, err_msg=name)
    mine = [a for a in assigned if a[0] == "hipdnn"]
    assert (len(mine) == len(assigned)) == claimed, assigned
    counts = [int(c) for c in re.findall(r"(\d+) attention as sdpa", err)]
    assert sum(counts) == sdpa, err[-3000:]
    return assigned


def rnd(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# ---- ONNX's Attention (opset 23) ---------------------------------------------------------

CASES = {
    # name: (q shape, k shape, v shape, attributes, mask)
    "4d": ((2, 4, 5, 8), (2, 4, 6, 8), (2, 4, 6, 8), {}, None),
    "4d_causal": ((2, 4, 5, 8), (2, 4, 6, 8), (2, 4, 6, 8), {"is_causal": 1}, None),
    "4d_gqa_scale_dv": ((2, 4, 5, 8), (2, 2, 6, 8), (2, 2, 6, 3), {"scale": 0.3}, None),
    "3d": ((2, 5, 32), (2, 6, 32), (2, 6, 16), {"q_num_heads": 4, "kv_num_heads": 4}, None),
    "3d_gqa_causal": ((2, 5, 32), (2, 6, 16), (2, 6, 8),
                      {"q_num_heads": 4, "kv_num_heads": 2, "is_causal": 1}, None),
    "float_mask_2d": ((2, 4, 5, 8), (2, 4, 6, 8), (2, 4, 6, 8), {}, ("float", (5, 6))),
    "bool_mask_4d": ((2, 4, 5, 8), (2, 4, 6, 8), (2, 4, 6, 8), {}, ("bool", (2, 1, 5, 6))),
}


@DEVICES
@pytest.mark.parametrize("case", sorted(CASES))
def test_attention_op_runs_as_sdpa(tmp_path, case, device):
    qs, ks, vs, attrs, mask = CASES[case]
    rng = np.random.default_rng(sorted(CASES).index(case))
    feeds = {"q": rnd(rng, *qs), "k": rnd(rng, *ks), "v": rnd(rng, *vs)}
    inputs = [(n, a.shape, FLOAT) for n, a in feeds.items()]
    if mask:
        kind, shape = mask
        feeds["m"] = rnd(rng, *shape) if kind == "float" else rng.random(shape) > 0.3
        if kind == "bool":
            feeds["m"][..., 0] = True  # every row attends to something
        inputs.append(("m", shape, FLOAT if kind == "float" else TensorProto.BOOL))
    node = helper.make_node("Attention", [n for n, _, _ in inputs], ["y"], name="attention", **attrs)
    relu = helper.make_node("Relu", ["y"], ["z"], name="relu")
    m = onnx_model([node, relu], inputs, ["z"])
    if len(qs) == 3:
        q, k, v = (to_heads(feeds[n], attrs[h]) for n, h in
                   (("q", "q_num_heads"), ("k", "kv_num_heads"), ("v", "kv_num_heads")))
    else:
        q, k, v = feeds["q"], feeds["k"], feeds["v"]
    want = reference(q, k, v, feeds.get("m"), attrs.get("scale"), attrs.get("is_causal", 0) == 1)
    if len(qs) == 3:
        want = want.transpose(0, 2, 1, 3).reshape(qs[0], qs[1], -1)
    check(tmp_path, m, feeds, np.maximum(want, 0), device)


DECLINED = {  # attributes, inputs given, outputs
    "softcap": ({"softcap": 5.0}, 3, ["y"]),
    "qk_matmul_output": ({}, 3, ["y", "", "", "qk"]),
    "past_key_value": ({}, 6, ["y", "present_k", "present_v"]),
}


@pytest.mark.parametrize("case", sorted(DECLINED))
def test_attention_forms_sdpa_lacks_stay_with_ort(tmp_path, case):
    attrs, n_in, outs = DECLINED[case]
    rng = np.random.default_rng(7)
    feeds = {"q": rnd(rng, 1, 2, 3, 4), "k": rnd(rng, 1, 2, 3, 4), "v": rnd(rng, 1, 2, 3, 4)}
    inputs = [(n, a.shape, FLOAT) for n, a in feeds.items()]
    names = ["q", "k", "v"]
    if n_in == 6:
        feeds.update(pk=rnd(rng, 1, 2, 2, 4), pv=rnd(rng, 1, 2, 2, 4))
        inputs += [("pk", (1, 2, 2, 4), FLOAT), ("pv", (1, 2, 2, 4), FLOAT)]
        names += ["", "pk", "pv"]
    m = onnx_model([helper.make_node("Attention", names, outs, name="attention", **attrs)],
                   inputs, [o for o in outs if o])
    cpu, _, _ = run(tmp_path, m, feeds, ep="cpu")
    got, assigned, _ = run(tmp_path, m, feeds, device="cpu")
    assert assigned == [("CPUExecutionProvider", "0", "Attention", "attention")] or \
        all(a[0] != "hipdnn" for a in assigned), assigned
    for name in cpu:
        np.testing.assert_array_equal(got[name][0], cpu[name][0])


# ---- the decomposed pattern ------------------------------------------------------------------

def decomposed(scale_op="Mul", mask=False, k_transpose=False, rank=4, leak=False):
    """MatMul(Q, Kt) -> Mul / Div by a constant -> (Add mask) -> Softmax -> MatMul(., V) ->
    Relu; Kt an input, or K transposed by a Transpose node; leak: P is an output too."""
    nodes, inits = [], []
    kt = "kt"
    if k_transpose:
        perm = [0, 2, 3, 1] if rank == 4 else [0, 2, 1]
        nodes.append(helper.make_node("Transpose", ["k"], ["kt"], perm=perm, name="t"))
    nodes.append(helper.make_node("MatMul", ["q", kt], ["s"], name="mm1"))
    s = "s"
    if scale_op:
        c = 0.25 if scale_op == "Mul" else 4.0
        inits.append(("c", np.array(c, np.float32)))
        nodes.append(helper.make_node(scale_op, ["s", "c"], ["s2"], name="scale"))
        s = "s2"
    if mask:
        nodes.append(helper.make_node("Add", [s, "m"], ["s3"], name="mask"))
        s = "s3"
    nodes += [helper.make_node("Softmax", [s], ["p"], axis=-1, name="softmax"),
              helper.make_node("MatMul", ["p", "v"], ["o"], name="mm2"),
              helper.make_node("Relu", ["o"], ["y"], name="relu")]
    return nodes, inits, ["y", "p"] if leak else ["y"]


PATTERNS = {
    "mul_scale": {}, "div_scale": {"scale_op": "Div"}, "no_scale": {"scale_op": None},
    "mask": {"mask": True}, "k_transposed_by_node": {"k_transpose": True},
    "rank3": {"rank": 3, "k_transpose": True, "mask": True},
}


@DEVICES
@pytest.mark.parametrize("case", sorted(PATTERNS) + ["intermediate_also_an_output"])
def test_decomposed_attention_runs_as_one_sdpa(tmp_path, case, device):
    kw = PATTERNS.get(case, {"leak": True})
    rng = np.random.default_rng(11)
    nodes, inits, outs = decomposed(**kw)
    b, h, sq, skv, d = 2, 3, 5, 6, 4
    lead = (b, h) if kw.get("rank", 4) == 4 else (b * h,)
    q, k, v = rnd(rng, *lead, sq, d), rnd(rng, *lead, skv, d), rnd(rng, *lead, skv, d)
    feeds = {"q": q, "v": v}
    if kw.get("k_transpose"):
        feeds["k"] = np.ascontiguousarray(k.transpose(0, 2, 1, 3) if len(lead) == 2 else k)
    else:
        feeds["kt"] = np.ascontiguousarray(np.swapaxes(k, -1, -2))
    mask = rnd(rng, b, 1, 1, skv) if kw.get("mask") else None
    if kw.get("mask"):
        feeds["m"] = mask if len(lead) == 2 else mask.reshape(b, 1, skv).repeat(h, 0)
    m = onnx_model(nodes, [(n, a.shape, FLOAT) for n, a in feeds.items()], outs, inits, opset=17)
    scale = {None: 1.0, "Mul": 0.25, "Div": 0.25}[kw.get("scale_op", "Mul")]
    q4, k4, v4 = (a.reshape(b, h, -1, d) for a in (q, k, v))
    want = np.maximum(reference(q4, k4, v4, mask, scale), 0).reshape(*lead, sq, d)
    sdpa = 0 if case == "intermediate_also_an_output" else 1
    cpu, _, _ = run(tmp_path, m, feeds, ep="cpu")
    got, assigned, err = run(tmp_path, m, feeds, device=device, log_level=1)
    np.testing.assert_allclose(got["y"][0], want, rtol=TOL, atol=TOL)
    for name in cpu:
        np.testing.assert_allclose(got[name][0], cpu[name][0], rtol=TOL, atol=TOL, err_msg=name)
    assert all(a[0] == "hipdnn" for a in assigned), assigned
    assert sum(int(c) for c in re.findall(r"(\d+) attention as sdpa", err)) == sdpa, err[-3000:]
