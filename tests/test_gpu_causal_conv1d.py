"""cuDNN frontend's ``cudnn.ops.causal_conv1d`` (samples 60 and 61) on the GPU engine:
``hipdnn.ops.causal_conv1d`` and ``causal_conv1d_backward`` on DeviceArrays in fp32 /
fp16 / bf16 against float64 NumPy at DESIGN tolerances (kernel sizes 2 to 4, both
activations, sequences of 1 and shorter than the kernel, a strided x), outputs poisoned,
inputs unchanged, each graph one device plan (the convolution with its bias and SiLU
epilogue; SiLU's derivative, dgrad, wgrad and the bias sum); CI runs these on the
engine's host emulation (tests/test_gpu_emulated.py).  Then torch CUDA tensors as the
notebooks call it: forward and autograd backward, y.sum().backward(), one cached graph
per problem, torch.compile; those need torch with CUDA and a real GPU."""
import importlib

import numpy as np
import pytest

import hipdnn
import references as ref
import test_causal_conv1d as cpu
from conftest import FAKE_GPU, gpu_unavailable_reason, skip_or_fail_without_gpu
from hipdnn.ops import _causal_conv1d_graphs as graphs

pytestmark = pytest.mark.gpu
module = importlib.import_module("hipdnn.ops.causal_conv1d")


@pytest.fixture(autouse=True)
def need_gpu():
    reason = gpu_unavailable_reason()
    if reason:
        skip_or_fail_without_gpu(reason)
    graphs._fprop_cache.clear()
    graphs._bprop_cache.clear()


def to_device(values, dtype):
    """A DeviceArray of float64 values rounded to dtype, and those rounded values."""
    rounded = ref.round_to(values, dtype)
    if dtype == "bf16":
        return hipdnn.DeviceArray.from_numpy(ref.bfloat16_bits(rounded),
                                             data_type=hipdnn.data_type.BFLOAT16), rounded
    return hipdnn.DeviceArray.from_numpy(rounded.astype(cpu_dtype(dtype))), rounded


def cpu_dtype(dtype):
    return {"fp32": np.float32, "fp16": np.float16}[dtype]


def values(a, dtype):
    """float64 values of a DeviceArray of dtype."""
    host = a.numpy()
    return ref.bfloat16_values(host) if dtype == "bf16" else host.astype(np.float64)


@pytest.fixture
def poisoned(monkeypatch):
    """The operator's outputs allocated with every byte 0xFF (NaN in each float type)."""
    def empty(like, shape, kind):
        assert kind == "device"
        out = hipdnn.DeviceArray.empty(shape, hipdnn.data_type(like.data_type))
        out.fill_bytes(0xFF)
        return out
    monkeypatch.setattr(module, "_empty", empty)


def kernels(cache):
    (entry,) = cache.values()
    assert entry.graph.get_memory_space() == hipdnn.memory_space.DEVICE
    return [(k.detail.split()[0], k.nodes) for k in entry.graph.get_kernel_groups()]


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("activation", ["silu", "identity"])
@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("shape", ["short", "seq_len_1", "shorter_than_kernel", "wide"])
def test_device_arrays_forward_and_backward_match_float64(rng, poisoned, shape, k,
                                                          activation, dtype):
    batch, dim, seq_len = cpu.SHAPES[shape]
    arrays = [to_device(rng.standard_normal(s), dtype)
              for s in ((batch, dim, seq_len), (dim, k), (dim,), (batch, dim, seq_len))]
    (x, xv), (w, wv), (b, bv), (dy, dyv) = arrays
    y = hipdnn.ops.causal_conv1d(x, w, b, activation=activation)
    assert isinstance(y, hipdnn.DeviceArray) and y.shape == x.shape
    assert y.data_type == x.data_type
    cpu.check_forward(values(y, dtype), xv, wv, bv, activation, dtype)
    grads = hipdnn.ops.causal_conv1d_backward(x, w, b, dy, activation=activation)
    assert [(g.shape, g.data_type) for g in grads] == [
        (a.shape, x.data_type) for a in (x, w, b)]
    cpu.check_backward([values(g, dtype) for g in grads], xv, wv, bv, dyv, activation, dtype)
    for a, v in arrays:
        np.testing.assert_array_equal(values(a, dtype), v)
    silu = ["silu"] if activation == "silu" else []
    assert kernels(graphs._fprop_cache) == [("conv_fprop", ["causal_conv", "bias"] + silu)]
    first = [("conv_fprop", ["causal_conv", "bias", "silu_backward"])] if silu else []
    assert kernels(graphs._bprop_cache) == first + [
        ("conv_dgrad", ["dgrad"]), ("conv_wgrad", ["wgrad"]), ("reduction", ["dbias"])]


def test_a_channels_last_x_is_read_in_place(rng, poisoned):
    # x a [batch, seq_len, dim] allocation seen as [batch, dim, seq_len]
    batch, dim, seq_len, k = 2, 8, 13, 4
    wide, xv = to_device(rng.standard_normal((batch, seq_len, dim)), "fp16")
    x = wide.as_strided([batch, dim, seq_len], [seq_len * dim, 1, dim])
    xv = xv.transpose(0, 2, 1)
    (w, wv), (b, bv), (dy, dyv) = [to_device(rng.standard_normal(s), "fp16")
                                   for s in ((dim, k), (dim,), (batch, dim, seq_len))]
    y = hipdnn.ops.causal_conv1d(x, w, b, "silu")
    cpu.check_forward(values(y, "fp16"), xv, wv, bv, "silu", "fp16")
    grads = hipdnn.ops.causal_conv1d_backward(x, w, b, dy, "silu")
    cpu.check_backward([values(g, "fp16") for g in grads], xv, wv, bv, dyv, "silu", "fp16")


def test_mixed_kinds_are_refused(rng):
    x = np.zeros((1, 4, 5), np.float32)
    w = hipdnn.DeviceArray.from_numpy(np.zeros((4, 2), np.float32))
    with pytest.raises(TypeError, match="must be of one kind"):
        hipdnn.ops.causal_conv1d(x, w, np.zeros(4, np.float32))


def test_a_second_call_reuses_the_device_graphs(rng):
    def run():
        x, _ = to_device(rng.standard_normal((2, 16, 32)), "bf16")
        w, _ = to_device(rng.standard_normal((16, 4)), "bf16")
        b, _ = to_device(rng.standard_normal(16), "bf16")
        hipdnn.ops.causal_conv1d_backward(x, w, b, hipdnn.ops.causal_conv1d(x, w, b, "silu"),
                                          "silu")
    run()
    run()
    assert (len(graphs._fprop_cache), len(graphs._bprop_cache)) == (1, 1)


# ---- torch CUDA tensors, as the notebooks call it ----------------------------------------

def torch_cuda():
    torch = pytest.importorskip("torch")
    if FAKE_GPU or not torch.cuda.is_available():
        pytest.skip("PyTorch has no GPU here")
    return torch


TORCH_TOL = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}


def leaves(torch, rng, dtype, *shapes):
    """Leaf CUDA tensors (requires_grad) in dtype, and their float64 values."""
    out = []
    for shape in shapes:
        t = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
        t = t.to("cuda", getattr(torch, dtype)).requires_grad_(True)
        out.append((t, t.detach().double().cpu().numpy()))
    return out


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("activation", ["silu", "identity"])
@pytest.mark.parametrize("k", [3, 4])
def test_torch_forward_and_autograd_match_float64(rng, dtype, activation, k):
    torch = torch_cuda()
    batch, dim, seq_len = 2, 256, 1024  # notebooks 60 / 61's test configurations
    (x, xv), (w, wv), (b, bv), (dy, dyv) = leaves(
        torch, rng, dtype, (batch, dim, seq_len), (dim, k), (dim,), (batch, dim, seq_len))
    y = hipdnn.ops.causal_conv1d(x, w, b, activation=activation)
    assert y.dtype == x.dtype and y.shape == x.shape and y.is_cuda
    cpu.check_forward(y.detach().double().cpu().numpy(), xv, wv, bv, activation,
                      TORCH_TOL[dtype])
    y.backward(dy.detach())
    grads = [t.grad.double().cpu().numpy() for t in (x, w, b)]
    assert [t.grad.dtype for t in (x, w, b)] == [x.dtype] * 3
    cpu.check_backward(grads, xv, wv, bv, dyv, activation, TORCH_TOL[dtype])


def test_torch_sum_backward_equals_an_explicit_ones_gradient(rng):
    # y.sum().backward() hands an expanded dy (strides 0); the operator makes it dense
    torch = torch_cuda()
    (x, _), (w, _), (b, _) = leaves(torch, rng, "bfloat16", (2, 64, 128), (64, 4), (64,))
    hipdnn.ops.causal_conv1d(x, w, b, "silu").sum().backward()
    got = [t.grad.clone() for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    hipdnn.ops.causal_conv1d(x, w, b, "silu").backward(torch.ones(2, 64, 128, device="cuda",
                                                                  dtype=torch.bfloat16))
    for g, t in zip(got, (x, w, b)):
        assert torch.equal(g, t.grad)
    assert (len(graphs._fprop_cache), len(graphs._bprop_cache)) == (1, 1)


def test_torch_compile_matches_eager(rng):
    torch = torch_cuda()
    (x, _), (w, _), (b, _), (dy, _) = leaves(torch, rng, "bfloat16", (2, 64, 128), (64, 4),
                                             (64,), (2, 64, 128))

    def step(x, w, b, dy):
        x, w, b = (t.detach().requires_grad_(True) for t in (x, w, b))
        y = hipdnn.ops.causal_conv1d(x, w, b, activation="silu")
        y.backward(dy)
        return y.detach(), x.grad, w.grad, b.grad

    eager = step(x, w, b, dy.detach())
    compiled = torch.compile(step, backend="aot_eager")(x, w, b, dy.detach())
    for e, c in zip(eager, compiled):
        assert torch.equal(e, c)


def test_torch_tensors_must_be_on_cuda(rng):
    torch = pytest.importorskip("torch")
    x, w, b = torch.zeros(1, 4, 5), torch.zeros(4, 2), torch.zeros(4)
    with pytest.raises(ValueError, match="All tensors must be on CUDA"):
        hipdnn.ops.causal_conv1d(x, w, b)
