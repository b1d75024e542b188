"""cuDNN frontend's ``cudnn.experimental.ops.sdpa.scaled_dot_product_attention`` on the GPU
(hipdnn/experimental/ops/): torch CUDA tensors in the style of cuDNN frontend's
test_cudnn_sdpa_op.py, forward and backward (autograd) against float64 NumPy at DESIGN
tolerances in fp16 / bf16 / fp32: plain, causal at both alignments, sliding window,
padding (seq_len_q / seq_len_kv), GQA and MQA, BSHD strides, head dim 128; one cached
graph per problem, the caller's torch stream, torch.compile (aot_eager: the fake kernels
and the autograd formula), the arguments hipdnn refuses.  The operator's graphs are also
run on DeviceArrays, which CI does on the engine's host emulation
(tests/test_gpu_emulated.py); the torch tests need torch with CUDA and a real GPU."""
import math

import numpy as np
import pytest

import hipdnn
import references as ref
import test_sdpa_op as cpu
from conftest import FAKE_GPU, assert_close, gpu_unavailable_reason, skip_or_fail_without_gpu
from hipdnn.experimental.ops import _sdpa_graphs as graphs
from tolerances import tolerance

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def need_gpu():
    reason = gpu_unavailable_reason()
    if reason:
        skip_or_fail_without_gpu(reason)
    graphs._fprop_cache.clear()
    graphs._bprop_cache.clear()


def on_device(entry):
    return entry.graph.get_memory_space() == hipdnn.memory_space.DEVICE


# ---- the operator's graphs on DeviceArrays (emulated in CI) ------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["fp32", "fp16"])
@pytest.mark.parametrize("name", ["plain", "causal_bottom_right", "sliding_window", "gqa",
                                  "padding_causal_bottom_right", "bshd_head_dim_16"])
def test_the_graphs_run_device_arrays_on_a_device_engine(rng, name, dtype):
    kw, mask = cpu.CASES[name]
    p = cpu.Problem(rng, dtype=dtype, **kw)
    outs, hits = cpu.run(p, 0.3, graphs.Mask(*mask), put=hipdnn.DeviceArray.from_numpy,
                         get=lambda a: a.numpy())
    assert hits == (False, False)
    cpu.check(p, 0.3, graphs.Mask(*mask), outs)
    entries = list(graphs._fprop_cache.values()) + list(graphs._bprop_cache.values())
    assert len(entries) == 2 and all(on_device(e) for e in entries)


# ---- torch CUDA tensors ------------------------------------------------------------------

def torch_cuda():
    torch = pytest.importorskip("torch")
    if FAKE_GPU or not torch.cuda.is_available():
        pytest.skip("PyTorch has no GPU here")
    return torch


def sdpa_module():
    from hipdnn.experimental.ops import sdpa
    return sdpa


TORCH_TOL = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}


def tensors(torch, rng, dtype, *shapes, layout="bhsd"):
    """Leaf CUDA tensors (requires_grad) of the shapes, in dtype, in BHSD or as BSHD
    allocations viewed as BHSD."""
    out = []
    for shape in shapes:
        a = torch.from_numpy(cpu.layout(rng.standard_normal(shape).astype(np.float32), layout))
        out.append(a.to("cuda", getattr(torch, dtype)).requires_grad_(True))
    return out


def f64(t):
    return t.detach().double().cpu().numpy()


def check_against_float64(torch, q, k, v, do, scale, mask, lens, dtype, **kw):
    """The operator's O and gradients against float64: O and Stats (the op's own, through
    torch.ops.hipdnn.sdpa) from the inputs, the gradients from the inputs, dO and the
    op's O and Stats, as a training step's backward sees them."""
    op = sdpa_module()
    o = op.scaled_dot_product_attention(q, k, v, scale=scale, **kw)
    o.backward(do)
    seq = {n: kw.get(n) for n in ("seq_len_q", "seq_len_kv")}
    o2, stats = torch.ops.hipdnn.sdpa(q, k, v, scale, mask.is_causal, mask.diagonal_alignment,
                                      mask.left_bound, mask.right_bound, *seq.values())
    torch.cuda.synchronize()
    assert torch.equal(o, o2)  # one cached graph, deterministic
    b, _, sq, _ = q.shape
    ok = cpu.allowed(mask, b, sq, k.shape[2], lens)
    tol = tolerance("sdpa", TORCH_TOL[dtype])
    want_o, want_stats = ref.sdpa(f64(q), f64(k), f64(v), scale, None, ok)
    assert_close(f64(o), want_o, tol, "o")
    empty = np.isneginf(want_stats)
    assert np.array_equal(np.isneginf(f64(stats)), empty)
    assert_close(f64(stats)[~empty], want_stats[~empty], tolerance("sdpa", "fp32"), "stats")
    want = ref.sdpa_backward(f64(q), f64(k), f64(v), f64(o), f64(do), f64(stats), scale,
                             None, ok)
    for name, t, w in zip(("dq", "dk", "dv"), (q, k, v), want):
        assert_close(f64(t.grad), w, tol, name)


TORCH_CASES = {
    "plain": (dict(), {}),
    "head_dim_128": (dict(d=128), {}),
    "causal_top_left": (dict(sq=96, skv=96), dict(is_causal=True)),
    "causal_bottom_right": (dict(sq=40, skv=96), dict(is_causal=True, diagonal_alignment=1)),
    "sliding_window": (dict(sq=128, skv=128), dict(is_causal=True, left_bound=32,
                                                   right_bound=0)),
    "gqa": (dict(hq=8, hk=2), dict(enable_gqa=True)),
    "mqa_causal": (dict(hq=4, hk=1), dict(enable_gqa=True, is_causal=True)),
    "padding_causal_bottom_right": (dict(lens=([40, 64], [50, 96])),
                                    dict(is_causal=True, diagonal_alignment=1)),
    "bshd": (dict(layout="bshd"), {}),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("name", list(TORCH_CASES))
def test_forward_and_backward_match_float64(rng, name, dtype):
    torch = torch_cuda()
    shape, kw = TORCH_CASES[name]
    kw = dict(kw)
    shape = {"b": 2, "hq": 4, "hk": None, "sq": 64, "skv": 96, "d": 64, "lens": None,
             "layout": "bhsd", **shape}
    b, hq, sq, skv, d = (shape[n] for n in ("b", "hq", "sq", "skv", "d"))
    hk = shape["hk"] or hq
    q, k, v, do = tensors(torch, rng, dtype, (b, hq, sq, d), (b, hk, skv, d), (b, hk, skv, d),
                          (b, hq, sq, d), layout=shape["layout"])
    do = do.detach()
    if shape["lens"]:
        for n, lens in zip(("seq_len_q", "seq_len_kv"), shape["lens"]):
            kw[n] = torch.tensor(lens, dtype=torch.int32, device="cuda").reshape(b, 1, 1, 1)
    mask = graphs.Mask(kw.get("is_causal", False), kw.get("diagonal_alignment", 0),
                       kw.get("left_bound", -1), kw.get("right_bound", -1))
    check_against_float64(torch, q, k, v, do, 1 / math.sqrt(d), mask, shape["lens"], dtype,
                          **kw)
    entries = list(graphs._fprop_cache.values()) + list(graphs._bprop_cache.values())
    assert len(entries) == 2 and all(on_device(e) for e in entries)


def test_a_second_call_reuses_the_graphs_and_new_shapes_add_one(rng):
    torch = torch_cuda()
    op = sdpa_module()
    q, k, v = tensors(torch, rng, "float16", *[(2, 4, 64, 64)] * 3)
    op.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()
    assert (len(op._fprop_cache), len(op._bprop_cache)) == (1, 1)
    q2, k2, v2 = tensors(torch, rng, "float16", *[(2, 4, 64, 64)] * 3)
    op.scaled_dot_product_attention(q2, k2, v2, is_causal=True).sum().backward()
    assert (len(op._fprop_cache), len(op._bprop_cache)) == (1, 1)
    q3, k3, v3 = tensors(torch, rng, "float16", *[(2, 4, 32, 64)] * 3)
    with torch.no_grad():
        op.scaled_dot_product_attention(q3, k3, v3, is_causal=True)
    assert (len(op._fprop_cache), len(op._bprop_cache)) == (2, 1)  # no backward ran


def test_o_sum_backward_equals_an_explicit_ones_gradient(rng):
    # o.sum().backward() hands an expanded dO (strides 0); the op makes it contiguous
    torch = torch_cuda()
    op = sdpa_module()
    q, k, v = tensors(torch, rng, "bfloat16", (1, 2, 48, 64), (1, 2, 80, 64), (1, 2, 80, 64))
    op.scaled_dot_product_attention(q, k, v).sum().backward()
    grads = [t.grad.clone() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    o = op.scaled_dot_product_attention(q, k, v)
    o.backward(torch.ones_like(o))
    assert all(torch.equal(g, t.grad) for g, t in zip(grads, (q, k, v)))


def test_work_runs_on_the_callers_stream(rng):
    torch = torch_cuda()
    op = sdpa_module()
    q, k, v = (t.detach() for t in tensors(torch, rng, "float16", *[(2, 4, 256, 64)] * 3))
    want = op.scaled_dot_product_attention(q, k, v)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        q2 = q * 1  # made on the side stream: hipdnn must run after it, on it
        got = op.scaled_dot_product_attention(q2, k, v)
    side.synchronize()
    assert torch.equal(got, want)


def test_torch_compile_traces_the_operator_and_its_backward(rng):
    torch = torch_cuda()
    op = sdpa_module()
    q, k, v = tensors(torch, rng, "float16", *[(2, 4, 64, 128)] * 3)
    eager = op.scaled_dot_product_attention(q, k, v, is_causal=True)
    eager.sum().backward()
    grads = [t.grad.clone() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    compiled = torch.compile(op.scaled_dot_product_attention, backend="aot_eager",
                             fullgraph=True)
    o = compiled(q, k, v, is_causal=True)
    o.sum().backward()
    assert torch.equal(o, eager)
    assert all(torch.equal(g, t.grad) for g, t in zip(grads, (q, k, v)))


@pytest.mark.parametrize("kw,error,match", [
    ("attn_mask", NotImplementedError, "attn_mask"),
    ("dropout_p", NotImplementedError, "dropout"),
    ("cumulative_seq_len_q", NotImplementedError, "cumulative_seq_len_q"),
    ("cumulative_seq_len_kv", NotImplementedError, "cumulative_seq_len_kv"),
    ("heads", ValueError, "enable_gqa"),
])
def test_what_hipdnn_cannot_honour_is_refused_by_name(rng, kw, error, match):
    torch = torch_cuda()
    op = sdpa_module()
    q, k, v = (t.detach() for t in tensors(torch, rng, "float16", *[(1, 4, 16, 64)] * 3))
    args = {"attn_mask": dict(attn_mask=torch.ones(1, 1, 16, 16, device="cuda")),
            "dropout_p": dict(dropout_p=0.1),
            "cumulative_seq_len_q": dict(cumulative_seq_len_q=torch.zeros(
                2, 1, 1, 1, dtype=torch.int32, device="cuda")),
            "cumulative_seq_len_kv": dict(cumulative_seq_len_kv=torch.zeros(
                2, 1, 1, 1, dtype=torch.int32, device="cuda")),
            "heads": {}}[kw]
    if kw == "heads":
        k, v = k[:, :2], v[:, :2]
    with pytest.raises(error, match=match):
        op.scaled_dot_product_attention(q, k, v, **args)
    assert len(op._fprop_cache) == 0
